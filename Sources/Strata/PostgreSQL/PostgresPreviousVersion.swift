/// The version before a migration stage, kept readable for the stage's didMigrate hook
/// (`"fromVersion"`) on PostgreSQL.
///
/// On a store file a second connection reads the last commit while the stage's transaction
/// is open. On PostgreSQL it cannot: the stage's DDL holds the tables it changes until the
/// stage commits, so a second connection would wait for the hook that waits for it. Instead,
/// at the stage's start, before anything of it runs, the old version's tables are copied
/// into temporary tables of the stage's own connection (`ON COMMIT DROP`: gone when the stage
/// commits or rolls back), each with its primary key. The stage's statements search the
/// store's schema first (`search_path = store, pg_temp`); a read of the old version searches
/// the copies first, with prepared statements of its own.
///
/// The copy costs one pass over the store, paid only by stages with a didMigrate hook.
struct PostgresPreviousVersion {
    private let quotedNamespace: String
    private let scope: String

    private static let setPath = "SELECT set_config('search_path', $1, true)"

    /// Copies the tables of `layout` (the stage's old version) on `c`, inside the stage's transaction.
    init(_ c: PGConnection, layout: StoreLayout, namespace: String, versionHash: String) throws {
        let d = PostgresDialect()
        quotedNamespace = d.quote(namespace)
        scope = "previous " + versionHash + " "
        _ = try c.query(PostgresPreviousVersion.setPath, [.text(quotedNamespace + ", pg_temp")], reported: false)
        for t in layout.tables {
            let name = d.quote(t.name)
            try c.execute(script: "CREATE TEMPORARY TABLE \(name) ON COMMIT DROP AS TABLE \(quotedNamespace).\(name)")
            try c.execute(script: "ALTER TABLE pg_temp.\(name) ADD PRIMARY KEY (\(t.primaryKey.map(d.quote).joined(separator: ", ")))")
            // Temporary tables are never analyzed by the server itself.
            try c.execute(script: "ANALYZE pg_temp.\(name)")
        }
    }

    /// Runs `body` (the old version's reads) with the copies first in the search path.
    func reading<T>(_ c: PGConnection, _ body: () throws -> T) throws -> T {
        _ = try c.query(PostgresPreviousVersion.setPath, [.text("pg_temp, " + quotedNamespace)], reported: false)
        c.statementScope = scope
        defer {
            c.statementScope = ""
            _ = try? c.query(PostgresPreviousVersion.setPath, [.text(quotedNamespace + ", pg_temp")], reported: false)
        }
        return try body()
    }
}
