/// The SQL of the store's own statements: transactions, store files and
/// metadata, the writer's row and link primitives, and the read overlay.
/// Identifiers are quoted here; values are always bound (`?N`).
extension SQLiteDialect {
    static func q(_ identifier: String) -> String { SQLiteDialect().quote(identifier) }

    // MARK: Transactions

    static func begin(immediate: Bool) -> String { immediate ? "BEGIN IMMEDIATE" : "BEGIN" }
    static let commit = "COMMIT"
    static let rollback = "ROLLBACK"
    func savepoint(_ name: String) -> String { "SAVEPOINT \(quote(name))" }
    func releaseSavepoint(_ name: String) -> String { "RELEASE \(quote(name))" }
    func rollbackToSavepoint(_ name: String) -> String { "ROLLBACK TO \(quote(name))" }

    // MARK: Store files

    static let walMode = "PRAGMA journal_mode=WAL"
    static let journalMode = "PRAGMA journal_mode"
    static let fullSync = "PRAGMA synchronous=FULL"
    static let normalSync = "PRAGMA synchronous=NORMAL"
    /// The connection's page cache limit (`PRAGMA cache_size`: a negative number of KiB, or pages).
    static let cacheSize = "PRAGMA cache_size"
    static func cacheSize(_ limit: Int64) -> String { "PRAGMA cache_size=\(limit)" }
    static let schemaObjectCount = "SELECT count(*) FROM sqlite_master"
    /// Reads the database header (a file that is not a database fails with SQLITE_NOTADB).
    static let schemaVersion = "PRAGMA schema_version"
    /// Every object of the main database's schema, as `StoredSchemaCheck` reads it.
    static let schemaObjects = "SELECT type, name, tbl_name, sql FROM sqlite_master"
    static let userVersion = "PRAGMA user_version"
    static let applicationID = "PRAGMA application_id"
    static let metadataDDL = [
        "CREATE TABLE IF NOT EXISTS strata_metadata (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS strata_sequence (entity TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID",
    ]
    static let readMetadata = "SELECT value FROM strata_metadata WHERE key = ?1"
    static let allMetadata = "SELECT key, value FROM strata_metadata"
    static let writeMetadata = "INSERT INTO strata_metadata (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    /// Starts the key sequence of a root table (`?1`) if it has none.
    static let startSequence = "INSERT OR IGNORE INTO strata_sequence (entity, next) VALUES (?1, 1)"
    /// Reserves a block of keys (`?2` of them) for a root table (`?1`), returning the end of the block.
    /// A sequence that is not a positive integer, or that the block would take past the largest
    /// integer (SQLite's sum is then a real), returns something other than an integer: damage.
    static let reserveKeys =
        "INSERT INTO strata_sequence (entity, next) VALUES (?1, 1 + ?2) ON CONFLICT(entity) DO UPDATE SET next = "
            + "CASE WHEN typeof(next) = 'integer' AND next >= 1 THEN next + ?2 ELSE 'damaged' END RETURNING next"
    /// Makes sure keys below `?2` of a root table (`?1`) are never reserved again.
    static let keepKeys =
        "INSERT INTO strata_sequence (entity, next) VALUES (?1, ?2) ON CONFLICT(entity) DO UPDATE SET next = max(next, ?2)"
    /// The values of a column that name external-storage files (text, not inline bytes).
    static func fileNames(_ table: String, _ column: String) -> String {
        "SELECT \(q(column)) FROM \(q(table)) WHERE typeof(\(q(column))) = 'text'"
    }

    /// The rows of a column that name external-storage files, with their key and entity, in key order.
    static func fileRows(_ table: String, _ column: String) -> String {
        "SELECT _pk, _entity, \(q(column)) FROM \(q(table)) WHERE typeof(\(q(column))) = 'text' ORDER BY _pk"
    }
    /// Whether some row of a column names the file `?1`.
    static func namesFile(_ table: String, _ column: String) -> String {
        "SELECT 1 FROM \(q(table)) WHERE \(q(column)) = ?1 LIMIT 1"
    }

    // MARK: Maintenance

    /// SQLite's own check of the file (pages, records, indexes), at most `limit` findings.
    static func integrityCheck(limit: Int) -> String { "PRAGMA integrity_check(\(max(limit, 1)))" }
    static let vacuum = "VACUUM"

    /// Rows of the objects of entities `?1` (a JSON array) sharing the values of `columns`
    /// (none null) with another: key, entity, then the values, grouped by value and in key order.
    static func duplicateObjects(_ table: String, _ columns: [String]) -> String {
        let cols = columns.map(q).joined(separator: ", ")
        let kinds = entityIn(q(StoreLayout.entity), 1)
        let notNull = columns.map { "\(q($0)) IS NOT NULL" }.joined(separator: " AND ")
        let tuple = columns.count == 1 ? cols : "(\(cols))"
        return "SELECT \(q(StoreLayout.key)), \(q(StoreLayout.entity)), \(cols) FROM \(q(table)) WHERE \(kinds) AND \(notNull) AND \(tuple) IN "
            + "(SELECT \(cols) FROM \(q(table)) WHERE \(kinds) AND \(notNull) GROUP BY \(cols) HAVING count(*) > 1) ORDER BY \(cols), \(q(StoreLayout.key))"
    }

    // MARK: Reads (shapes from the fetch compiler)

    /// `SELECT list FROM source [WHERE condition] [ORDER BY order]` and a paging clause (with its leading space).
    static func select(_ list: String, from source: String, where condition: String? = nil, orderBy order: String? = nil, paging: String = "") -> String {
        "SELECT \(list) FROM \(source)" + (condition.map { " WHERE \($0)" } ?? "") + (order.map { " ORDER BY \($0)" } ?? "") + paging
    }
    /// The number of rows of `source` matching `condition`.
    static func count(from source: String, where condition: String?) -> String { select("count(*)", from: source, where: condition) }
    /// The number of rows a query returns.
    static func count(of query: String) -> String { "SELECT count(*) FROM (\(query))" }
    /// SQLite's plan of a query: rows of (id, parent, notused, detail).
    static func queryPlan(_ query: String) -> String { "EXPLAIN QUERY PLAN " + query }
    /// A scalar subquery: the entity of the row of `table` (aliased `alias`) whose key is `key`.
    static func entity(of table: String, alias: String, key: String) -> String {
        "(SELECT \(alias)._entity FROM \(q(table)) \(alias) WHERE \(alias)._pk = \(key))"
    }

    // The statements the fetch compiler borrows (``QueryDialect``).

    func select(_ list: String, from source: String, where condition: String?, orderBy order: String?, paging: String) -> String {
        SQLiteDialect.select(list, from: source, where: condition, orderBy: order, paging: paging)
    }
    func count(from source: String, where condition: String?) -> String { SQLiteDialect.count(from: source, where: condition) }
    func count(of query: String) -> String { SQLiteDialect.count(of: query) }
    func entity(of table: String, alias: String, key: String) -> String { SQLiteDialect.entity(of: table, alias: alias, key: key) }

    // MARK: Rows (the key `_pk` is always ?1)

    /// `_pk = ?n`.
    static func keyIs(_ n: Int = 1) -> String { "_pk = ?\(n)" }
    /// `_pk` in the JSON array of keys bound as `?n`.
    static func keyIn(_ n: Int) -> String { SQLiteDialect().inJSONArray("_pk", parameter: "?\(n)") }

    /// Inserts `_pk`, `_entity` and `columns` as ?1, ?2, ?3…
    static func insertRow(into table: String, columns: [String]) -> String {
        let cols = ["_pk", "_entity"] + columns
        return "INSERT INTO \(table) (\(cols.map(q).joined(separator: ", "))) VALUES (\((1...cols.count).map { "?\($0)" }.joined(separator: ", ")))"
    }
    /// Sets `columns` to ?2, ?3… in the row `_pk = ?1`.
    static func updateRow(_ table: String, columns: [String]) -> String {
        "UPDATE \(table) SET \(columns.enumerated().map { "\(q($1)) = ?\($0 + 2)" }.joined(separator: ", ")) WHERE _pk = ?1"
    }
    /// Sets `columns` to ?2, ?3… in the rows matching `condition` (which binds ?1).
    static func updateRows(_ table: String, columns: [String], where condition: String) -> String {
        "UPDATE \(table) SET \(columns.enumerated().map { "\(q($1)) = ?\($0 + 2)" }.joined(separator: ", ")) WHERE \(condition)"
    }
    static func deleteRows(_ table: String, where condition: String) -> String { "DELETE FROM \(table) WHERE \(condition)" }
    /// Some columns of the row `_pk = ?1` (of the table as this connection sees it).
    static func selectRow(_ table: String, columns: [String]) -> String {
        "SELECT \(columns.map(q).joined(separator: ", ")) FROM \(q(table)) WHERE _pk = ?1"
    }
    static func rowExists(_ table: String) -> String { "SELECT 1 FROM \(q(table)) WHERE _pk = ?1" }
    /// 1 when the table holds any row.
    static func anyRow(_ table: String) -> String { "SELECT 1 FROM \(q(table)) LIMIT 1" }
    static func rowEntity(_ table: String) -> String { "SELECT _entity FROM \(q(table)) WHERE _pk = ?1" }
    /// The first row whose `columns` equal ?1, ?2…: its key and entity.
    static func findUnique(_ table: String, columns: [String]) -> String {
        "SELECT _pk, _entity FROM \(q(table)) WHERE \(columns.enumerated().map { "\(q($1)) = ?\($0 + 1)" }.joined(separator: " AND ")) LIMIT 1"
    }

    /// 1 when a row other than `?(n + 1)` holds the values `?1 … ?n` in `columns`.
    static func uniqueHolder(_ table: String, columns: [String]) -> String {
        "SELECT 1 FROM \(q(table)) WHERE \(columns.enumerated().map { "\(q($1)) = ?\($0 + 1)" }.joined(separator: " AND ")) AND _pk <> ?\(columns.count + 1) LIMIT 1"
    }

    // MARK: Links

    /// Sets a link column to `?2` in the rows matching `condition`.
    static func setLink(_ table: String, _ column: String, where condition: String) -> String {
        "UPDATE \(table) SET \(q(column)) = ?2 WHERE \(condition)"
    }
    /// `column = ?1`, except the rows `keeping` names: none, one key bound as ?2,
    /// or the JSON array of keys bound as ?2.
    static func linksTo(_ column: String, keeping: Int) -> String {
        switch keeping {
        case 0: return "\(q(column)) = ?1"
        case 1: return "\(q(column)) = ?1 AND _pk <> ?2"
        default: return "\(q(column)) = ?1 AND NOT (\(keyIn(2)))"
        }
    }
    /// Clears a link column in the rows matching `condition`, returning their keys and entities.
    static func clearLinks(_ table: String, _ column: String, where condition: String) -> String {
        "UPDATE \(table) SET \(q(column)) = NULL WHERE \(condition) RETURNING _pk, _entity"
    }
    /// For each row key in the array `?1`: the target its link column holds.
    static func linkOfRow(_ table: String, _ column: String) -> String {
        "SELECT \(q(column)) FROM \(q(table)) WHERE _pk = ?1"
    }
    /// `column = ?1` in a join table.
    static func pairSide(_ column: String) -> String { "\(q(column)) = ?1" }
    /// `owner = ?1 AND target IN (the JSON array ?2)`.
    static func pairsOf(_ owner: String, _ target: String) -> String {
        "\(q(owner)) = ?1 AND " + SQLiteDialect().inJSONArray(q(target), parameter: "?2")
    }
    static func deletePairs(_ table: String, where condition: String, returning column: String) -> String {
        "DELETE FROM \(table) WHERE \(condition) RETURNING \(q(column))"
    }
    /// Adds (?1, t) for each t of the JSON array ?2, keeping pairs already there.
    static func insertPairs(_ table: String, _ owner: String, _ target: String) -> String {
        "INSERT OR IGNORE INTO \(table) (\(q(owner)), \(q(target))) SELECT ?1, value FROM json_each(?2)"
    }

    // MARK: The read overlay (SQLiteWriter)

    /// The overlay's table of written rows of `table`, and of hidden keys.
    static func overlayRows(_ table: String) -> String { "temp." + q(table + ".rows") }
    static func overlayHidden(_ table: String) -> String { "temp." + q(table + ".hidden") }

    /// Creates the overlay of `table`: its rows table, hidden keys and the view that shadows it.
    static func createOverlay(_ table: String, isJoin: Bool) -> [String] {
        let t = q(table)
        let key = isJoin ? "_source, _target" : "_pk"
        let keyExpr = isJoin ? "(_source, _target)" : "_pk"
        return [
            "CREATE TEMP TABLE \(q(table + ".rows")) AS SELECT * FROM main.\(t) WHERE 0",
            "CREATE UNIQUE INDEX temp.\(q(table + ".rows.key")) ON \(q(table + ".rows")) (\(key))",
            isJoin ? "CREATE TEMP TABLE \(q(table + ".hidden")) (_source INTEGER, _target INTEGER, PRIMARY KEY (_source, _target)) WITHOUT ROWID"
                   : "CREATE TEMP TABLE \(q(table + ".hidden")) (_pk INTEGER PRIMARY KEY)",
            "CREATE TEMP VIEW \(t) AS SELECT * FROM main.\(t) WHERE \(keyExpr) NOT IN (SELECT \(key) FROM \(overlayHidden(table)))"
                + " UNION ALL SELECT * FROM \(overlayRows(table))",
        ]
    }

    /// Copies the store rows of `table` matching `condition` that are not hidden yet into the overlay…
    static func copyIntoOverlay(_ table: String, isJoin: Bool, where condition: String) -> String {
        let key = isJoin ? "_source, _target" : "_pk"
        let keyExpr = isJoin ? "(_source, _target)" : "_pk"
        return "INSERT INTO \(overlayRows(table)) SELECT * FROM main.\(q(table)) WHERE (\(condition)) AND \(keyExpr) NOT IN (SELECT \(key) FROM \(overlayHidden(table)))"
    }
    /// …and hides them.
    static func hideInOverlay(_ table: String, isJoin: Bool, where condition: String) -> String {
        "INSERT OR IGNORE INTO \(overlayHidden(table)) SELECT \(isJoin ? "_source, _target" : "_pk") FROM main.\(q(table)) WHERE (\(condition))"
    }
}
