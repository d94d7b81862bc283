/// Backup, integrity check and vacuum of a PostgreSQL store (``StoreMaintenance``).
extension PostgresStore: StoreMaintenance {
    /// The store's own tables (no view or index): what a vacuum visits.
    static let plainTables = "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relnamespace = \(PostgresDialect.currentNamespace) AND c.relkind = 'r' ORDER BY 1"

    /// Refused: a PostgreSQL store lives in a server, whose own tools copy it consistently
    /// while it is written (pg_dump of the store's schema, or pg_basebackup of the cluster).
    public func backup(to destination: String, overwrite: Bool) throws {
        throw StrataError(.invalid, "strata_backup copies SQLite store files; the PostgreSQL schema '\(namespace)' is backed up with the server's "
                          + "tools: pg_dump --schema='\(namespace)' (a consistent copy while others write), or pg_basebackup for the whole cluster")
    }

    /// The tables against the stored schema (`table`), then the shared checks (links, pairs,
    /// values), all on one REPEATABLE READ snapshot of a connection of the check's own.
    public func checkIntegrity(_ report: inout IntegrityReport) throws {
        let c = try connect()
        try c.execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", reported: false)
        defer { _ = try? c.execute(script: "ROLLBACK", reported: false) }
        do {
            try PostgresStorageCheck.verify(try PostgresCatalog.read(c, locking: false), layout: StoreLayout(schema), location: "the PostgreSQL schema '\(namespace)'", version: schema.version)
        } catch let e as StrataError where e.code == .corrupt {
            // Tables that do not match cannot be read as the schema says: the other checks would only repeat it.
            report.add(.table, e.message)
            return
        }
        try IntegrityCheck.run(PostgresIntegrityRows(connection: c, dialect: dialect), schema: schema, &report)
    }

    /// `VACUUM (ANALYZE)` of every table of the store's schema, on a connection of its own
    /// (VACUUM runs outside any transaction). It takes no lock that blocks reads or writes of rows.
    public func vacuum() throws {
        guard !isReadOnly else { throw StrataError(.readOnly, "the PostgreSQL schema '\(namespace)' is opened read-only: it cannot be vacuumed") }
        let c = try connect()
        let rows = try c.query(PostgresStore.plainTables)
        let tables = (0..<rows.count).map { dialect.quote(rows.string($0, 0)) }
        guard !tables.isEmpty else { return }
        _ = try c.execute(script: "VACUUM (ANALYZE) " + tables.joined(separator: ", "))
    }

    /// The integrity check's queries, each result read in place.
    private struct PostgresIntegrityRows: IntegrityRows {
        let connection: PGConnection
        let dialect: any QueryDialect
        func rows(_ sql: String, _ args: [SQLValue]) throws -> PostgresRowCursor {
            PostgresRowCursor(connection: connection, sql: sql, args: args)
        }
    }
}
