/// What a PostgreSQL store's schema holds, as opening the store reads it in one round trip
/// (``read(_:locking:)``): its relations, the columns of its tables, its indexes and the
/// store's metadata. The open reads it once and hands it to every check of that open — the
/// stored state (``PostgresStore/readState(_:namespace:catalog:)``), the storage check
/// (``PostgresStorageCheck``), the functions' version and the store's UUID — until the open
/// writes anything, after which each reads again.
struct PostgresCatalog {
    /// The relations of the schema (tables, views, materialized and foreign tables).
    var tables: Set<String> = []
    /// Each ordinary table's columns (name, `format_type`), in column order.
    var columns: [String: [(String, String)]] = [:]
    /// The schema's indexes.
    var indexes: Set<String> = []
    /// `strata_metadata`'s rows by key (a NULL value as nil; of two rows with one key, the
    /// later), when it was read.
    var metadata: [String: String?] = [:]
    /// Why `strata_metadata` could not be read (none when it was, or when it was not asked for).
    var metadataFailure: StrataError?

    /// The schema's relations and indexes, each table's columns with them and their numbers (one
    /// statement). Unsorted: ``read(_:locking:)`` puts each table's columns in column order (sorting
    /// on the server costs a fresh connection about 0.1 ms more).
    static let relations = "SELECT c.relname, c.relkind, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnum "
        + "FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND c.relkind = 'r' "
        + "AND a.attnum > 0 AND NOT a.attisdropped "
        + "WHERE c.relnamespace = \(PostgresDialect.currentNamespace) AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'i')"

    /// Reads the catalog in one round trip, first taking the store's lock (``PostgresStore/lockStore``,
    /// a statement of its own, so that what follows is read after it) when `locking`.
    /// `strata_metadata` is read in the same round trip outside a transaction (where a schema
    /// without it fails only that statement, the last); inside one, after it, when the schema
    /// has it, so that the transaction is never failed by a read.
    ///
    /// - Throws: what PostgreSQL answers to the lock or the catalog's statement; `.io` when the
    ///   connection fails.
    static func read(_ c: PGConnection, locking: Bool) throws -> PostgresCatalog {
        let withMetadata = !c.isInTransaction
        let script = (locking ? [PostgresStore.lockStore] : []) + [relations] + (withMetadata ? [PostgresDialect.allMetadata] : [])
        let (results, failure) = try c.run(script: script)
        let first = locking ? 1 : 0
        guard results.count > first else { throw failure ?? StrataError(.io, "the PostgreSQL server sent no catalog") }
        var catalog = PostgresCatalog()
        let rows = results[first]
        var numbered: [String: [(number: Int, column: (String, String))]] = [:]
        for r in 0..<rows.count {
            let name = rows.string(r, 0)
            switch rows.string(r, 1) {
            case "i": catalog.indexes.insert(name)
            case let kind:
                catalog.tables.insert(name)
                if kind == "r", !rows.isNull(r, 2) {
                    numbered[name, default: []].append((Int(rows.string(r, 4)) ?? 0, (rows.string(r, 2), rows.string(r, 3))))
                }
            }
        }
        catalog.columns = inColumnOrder(numbered)
        if withMetadata {
            if results.count > first + 1 { catalog.metadata = metadata(results[first + 1]) } else { catalog.metadataFailure = failure }
        } else if catalog.tables.contains("strata_metadata") {
            do { catalog.metadata = metadata(try c.query(PostgresDialect.allMetadata)) } catch let e as StrataError { catalog.metadataFailure = e }
        }
        return catalog
    }

    /// Each table's columns (name, type) in column order, from their numbers, whatever order the rows came in.
    static func inColumnOrder(_ numbered: [String: [(number: Int, column: (String, String))]]) -> [String: [(String, String)]] {
        numbered.mapValues { $0.sorted { $0.number < $1.number }.map(\.column) }
    }

    /// `key, value` rows as a dictionary.
    private static func metadata(_ rows: PGRows) -> [String: String?] {
        var out: [String: String?] = [:]
        for r in 0..<rows.count { out[rows.string(r, 0)] = .some(rows.isNull(r, 1) ? nil : rows.string(r, 1)) }
        return out
    }

    /// A metadata value (nil when missing or NULL).
    func value(_ key: String) -> String? { metadata[key] ?? nil }
}
