/// A SQLite connection as a migration's steps run on it (``StorageMigration/run(_:on:stage:report:)``),
/// inside the stage's transaction: each statement prepared when it runs, a copy's
/// statement once for all its batches.
struct SQLiteMigrationConnection: MigrationConnection {
    let connection: Connection
    /// The store's external-storage folder (nil in memory).
    let folder: ExternalFolder?
    var dialect: any MigrationDialect { SQLiteDialect() }

    @discardableResult
    func run(_ sql: String, _ args: [SQLValue]) throws -> Int64 {
        try Statement(connection: connection, sql: sql).execute(args)
        return Int64(connection.changes)
    }

    func prepare(_ sql: String) throws -> (_ args: [SQLValue]) throws -> Int64 {
        let s = try Statement(connection: connection, sql: sql)
        let c = connection
        return { args in
            try s.execute(args)
            return Int64(c.changes)
        }
    }

    func rows(_ sql: String, _ args: [SQLValue], limit: Int) throws -> [[SQLValue]] {
        let s = try Statement(connection: connection, sql: sql)
        defer { s.reset() }
        s.bind(args)
        var out: [[SQLValue]] = []
        while out.count < limit, try s.step() { out.append((0..<s.columnCount).map { s.value(at: $0) }) }
        return out
    }

    /// SQLite undoes a failed statement and nothing else: the transaction goes on.
    func attempt(_ sql: String) throws {
        try Statement(connection: connection, sql: sql).execute()
    }

    func inlineFiles(table: String, column: String, attribute: Attribute, rows sql: String) throws {
        guard let folder else { return }
        var rows: [(Int64, [UInt8])] = []
        try Statement(connection: connection, sql: sql).query { s in rows.append((s.int64(0), Array(s.text(1).utf8))) }
        let update = try Statement(connection: connection, sql: SQLiteDialect().setColumn(table, column))
        for (pk, name) in rows {
            let bytes = try folder.read(name, of: attribute, pk: pk)
            try update.execute([.blob(bytes), .int(pk)])
        }
    }
}
