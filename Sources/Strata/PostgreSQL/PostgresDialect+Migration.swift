/// What PostgreSQL spells its own way in migration steps (``StorageMigration``; the
/// ISO statements are ``MigrationDialect``'s). It changes tables in place where
/// SQLite rebuilds them: a column goes with `ALTER TABLE … DROP COLUMN` (no row
/// rewritten; the indexes over it go with it), and an index kept in place takes the
/// name the new layout gives it (the writer finds a unique constraint by that name),
/// as a table's primary key does when the table is renamed. Values are always bound
/// (`$n` is the statement's n-th argument): lists of entity names as `text[]`
/// literals, renames as a JSON object read with `->>`; a hierarchy's key sequence
/// moves with `setval`.
///
/// Names of the store's own that could outgrow PostgreSQL's 63 bytes (a table being
/// built, a primary key, an index) are shortened the same way everywhere
/// (``PostgresDialect/identifier(_:)``).
extension PostgresDialect: MigrationDialect {
    private func q(_ identifier: String) -> String { quote(identifier) }
    private var qKey: String { q(StoreLayout.key) }
    private var qEntity: String { q(StoreLayout.entity) }
    /// `$n` holds a `text[]` literal of entity names (``nameList(_:)``).
    func isOneOf(_ expression: String, names n: Int) -> String { "\(expression) = ANY(CAST($\(n) AS text[]))" }
    /// `$n` holds a JSON object old name → new name.
    func renamed(_ expression: String, through n: Int) -> String { "coalesce(CAST($\(n) AS jsonb) ->> \(expression), \(expression))" }

    var dropsColumnsInPlace: Bool { true }

    func buildingName(_ table: String) -> String { PostgresDialect.identifier("_strata_new_" + table) }
    func storedIndexName(_ name: String) -> String { PostgresDialect.indexName(name) }
    func nameList(_ names: [String]) -> SQLValue { PostgresDialect.nameArray(names) }

    // MARK: Tables, columns, indexes

    /// The table and its primary key constraint, named after it.
    func renameTable(_ from: String, to: String) -> [String] {
        ["ALTER TABLE \(q(from)) RENAME TO \(q(to))",
         "ALTER TABLE \(q(to)) RENAME CONSTRAINT \(q(PostgresDialect.primaryKeyName(from))) TO \(q(PostgresDialect.primaryKeyName(to)))"]
    }
    func addColumn(_ table: String, _ column: StoreLayout.Column) -> String {
        "ALTER TABLE \(q(table)) ADD COLUMN \(q(column.name)) \(PostgresDialect.storedType(column))"
    }
    /// A unique index is a constraint of its table (``createIndex(_:on:)``).
    func dropIndex(_ i: StoreLayout.Index, on table: String) -> String {
        i.isUnique ? "ALTER TABLE \(q(table)) DROP CONSTRAINT \(q(i.name))" : "DROP INDEX \(q(i.name))"
    }
    func createSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> [String] { [createSearchIndex(s, on: table) as String] }
    func dropSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> String { "DROP INDEX \(q(PostgresDialect.indexName(s.name)))" }
    /// Renaming a unique constraint's index renames the constraint too.
    func renameIndex(_ i: StoreLayout.Index, to name: String, on table: String) -> String? {
        "ALTER INDEX \(q(i.name)) RENAME TO \(q(name))"
    }

    // MARK: Rows

    func copyPairs(into: String, from table: String, owner: String, target: String) -> String {
        "INSERT INTO \(q(into)) (\(q(StoreLayout.source)), \(q(StoreLayout.target))) SELECT p.\(q(owner)), p.\(q(target)) FROM \(q(table)) AS p "
            + "WHERE p.\(q(owner)) IS NOT NULL AND p.\(q(target)) IS NOT NULL ON CONFLICT DO NOTHING"
    }
    func renameEntities(_ table: String) -> String {
        "UPDATE \(q(table)) SET \(qEntity) = CAST($1 AS jsonb) ->> \(qEntity) WHERE CAST($1 AS jsonb) ? \(qEntity)"
    }

    // MARK: Key sequences and external storage

    /// The next key a sequence gives (sequences are set with `is_called` false: the value is the next key).
    private func nextKey(_ table: String) -> String {
        "(SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM \(q(PostgresDialect.sequenceName(table))))"
    }

    /// The sequence of `table` (made when missing) moves past every row of the table and past
    /// `from`'s next key: it never goes back, and is not touched when it is past them already
    /// (`setval` is not transactional: a stage that fails later leaves it as it was).
    func continueSequence(_ table: String, from: String) -> [(sql: String, args: [SQLValue])] {
        let sequence = q(PostgresDialect.sequenceName(table))
        let past = ["(SELECT coalesce(max(\(qKey)), 0) + 1 FROM \(q(table)))"] + (from == table ? [] : [nextKey(from)])
        return [("CREATE SEQUENCE IF NOT EXISTS \(sequence)", []),
                ("SELECT setval(CAST($1 AS regclass), n.next, false) FROM (SELECT greatest(\(past.joined(separator: ", "))) AS next) AS n "
                 + "WHERE n.next > \(nextKey(table))", [.text(sequence)])]
    }
    func dropSequence(_ table: String) -> [(sql: String, args: [SQLValue])] {
        [("DROP SEQUENCE IF EXISTS \(q(PostgresDialect.sequenceName(table)))", [])]
    }
    /// Every value is in its row (`bytea`): no file to bring back.
    func externalRows(_ table: String, _ column: String) -> String? { nil }

    /// The table's check (``PostgresDialect/entityCheck(_:)``) dropped when it has one, and made
    /// again: validated against every row when it is made.
    func entityCheck(_ table: String, _ entities: [String]) -> (drop: String, add: String)? {
        ("ALTER TABLE \(q(table)) DROP CONSTRAINT IF EXISTS \(q(PostgresDialect.entityCheckName))",
         "ALTER TABLE \(q(table)) ADD \(entityCheck(entities) as String)")
    }

    // MARK: What the store has

    /// The indexes and unique constraints of table `$1` (not its primary key): name, uniqueness
    /// and one row per column, in order.
    static let indexColumns = "SELECT i.relname, x.indisunique, a.attname FROM pg_catalog.pg_index x "
        + "JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid JOIN pg_catalog.pg_class t ON t.oid = x.indrelid "
        + "CROSS JOIN LATERAL unnest(CAST(x.indkey AS int2[])) WITH ORDINALITY AS k(attnum, n) "
        + "JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
        + "WHERE t.relnamespace = \(PostgresDialect.currentNamespace) AND t.relname = $1 AND NOT x.indisprimary ORDER BY i.relname, k.n"
}

/// A PostgreSQL connection as a migration's steps run on it, inside the stage's transaction.
struct PostgresMigrationConnection: MigrationConnection {
    let connection: PGConnection
    var dialect: any MigrationDialect { PostgresDialect() }

    /// Statements without arguments (DDL) run as they are; the others are prepared once per connection.
    @discardableResult
    func run(_ sql: String, _ args: [SQLValue]) throws -> Int64 {
        if args.isEmpty { return try connection.execute(script: sql) }
        return try connection.query(sql, args).changed
    }

    func prepare(_ sql: String) throws -> (_ args: [SQLValue]) throws -> Int64 {
        let c = connection
        return { args in try c.query(sql, args).changed }
    }

    func rows(_ sql: String, _ args: [SQLValue], limit: Int) throws -> [[SQLValue]] {
        let r = try connection.query(sql, args)
        return (0..<min(r.count, Int32(clamping: limit))).map { row in (0..<r.columns).map { r.value(row, $0) } }
    }

    /// Inside a savepoint: a failed statement aborts PostgreSQL's transaction, which the
    /// savepoint brings back to where it was.
    func attempt(_ sql: String) throws {
        try connection.execute(script: "SAVEPOINT strata_attempt")
        do {
            try connection.execute(script: sql)
        } catch {
            _ = try? connection.execute(script: "ROLLBACK TO SAVEPOINT strata_attempt")
            _ = try? connection.execute(script: "RELEASE SAVEPOINT strata_attempt")
            throw error
        }
        try connection.execute(script: "RELEASE SAVEPOINT strata_attempt")
    }

    /// Never asked: the dialect plans no step for external storage.
    func inlineFiles(table: String, column: String, attribute: Attribute, rows: String) throws {}

    /// The indexes and unique constraints a table has (not its primary key), with their columns.
    static func indexes(_ c: PGConnection, _ table: String) throws -> [StoreLayout.Index] {
        let r = try c.query(PostgresDialect.indexColumns, [.text(table)])
        var out: [StoreLayout.Index] = []
        var columns: [String] = []
        var current: (name: String, unique: Bool)?
        for row in 0..<r.count {
            let name = r.string(row, 0)
            if current?.name != name {
                if let current { out.append(StoreLayout.Index(name: current.name, columns: columns, isUnique: current.unique)) }
                current = (name, r.int64(row, 1) != 0)
                columns = []
            }
            columns.append(r.string(row, 2))
        }
        if let current { out.append(StoreLayout.Index(name: current.name, columns: columns, isUnique: current.unique)) }
        return out
    }
}
