/// A cursor on a connection of its own: one REPEATABLE READ READ ONLY transaction from
/// opening to the last batch, the objects query a server-side cursor of it. Each batch
/// fetches the next rows (``fetchSize`` at a time) and their prefetched
/// relationships, so the client holds about one batch, not the whole result. (A read of
/// pending changes is read at once instead: ``PostgresSession/openCursor(_:pending:)``.)
final class PostgresObjectCursor: ObjectCursor {
    private let session: PostgresSession
    /// The resumable writer and its cursors (the server-side cursor's rows, one per prefetched
    /// relationship); nil once every row was read or the cursor was closed.
    private var reading: (writer: ObjectWriter, rows: PostgresRowCursor, prefetched: [PostgresRowCursor])?

    /// The server-side cursor's name (one per connection, which is the cursor's alone).
    static let name = "strata_objects"
    /// The rows of one FETCH (and the most owners of one batch of prefetched rows).
    static let fetchSize = 1000

    init(session: PostgresSession, compiled: CompiledFetch) throws {
        self.session = session
        try session.lockedRead {
            let c = session.connection
            try c.execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", reported: false)
            do {
                // The first statement takes the snapshot, and checks that the store still holds the container's version.
                try session.checkStoredVersion()
                let f = compiled.objectQueries
                try c.execute("DECLARE \(PostgresObjectCursor.name) NO SCROLL CURSOR FOR \(f.objectsSQL)", compiled.args)
                let rows = PostgresRowCursor(connection: c, sql: "FETCH FORWARD \(PostgresObjectCursor.fetchSize) FROM \(PostgresObjectCursor.name)",
                                             args: [], continues: true)
                let prefetched = f.prefetchedSQL.indices.map {
                    PostgresRowCursor(connection: c, sql: f.prefetchedSQL[$0], args: [], ownerColumn: f.prefetchedOwnerColumns[$0])
                }
                reading = (ObjectWriter(f), rows, prefetched)
            } catch {
                _ = try? c.execute(script: "ROLLBACK", reported: false)
                throw error
            }
        }
    }

    deinit { close() }

    func next(_ limit: Int) throws -> JSONBuffer {
        try session.lockedRead {
            guard var r = reading else { return JSONBuffer.copying(Array("[]".utf8)) }
            do {
                // Each row is written with its relationships: the writer stops after `limit` objects.
                let more = try r.writer.write(&r.rows, prefetched: &r.prefetched, limit: limit)
                let batch = r.writer.takeBatch()
                if more { reading = r } else { end() }
                return batch
            } catch {
                end()
                throw error
            }
        }
    }

    func close() { session.locked { end() } }

    private func end() {
        guard reading != nil else { return }
        reading = nil
        _ = try? session.connection.execute(script: "ROLLBACK", reported: false)
    }
}
