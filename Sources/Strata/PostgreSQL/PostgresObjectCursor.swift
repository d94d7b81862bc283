/// A cursor on a connection of its own: one REPEATABLE READ READ ONLY transaction from
/// opening to the last batch, the objects query a server-side cursor of it. Each batch
/// fetches the next rows (``fetchSize`` at a time) and their prefetched
/// relationships, so the client holds about one batch, not the whole result
/// (``ResumableObjects``). (A read of pending changes is read at once instead:
/// ``PostgresSession/openCursor(_:pending:)``.)
enum PostgresObjectCursor {
    /// The server-side cursor's name (one per connection, which is the cursor's alone).
    static let name = "strata_objects"
    /// The rows of one FETCH (and the most owners of one batch of prefetched rows).
    static let fetchSize = 1000

    /// Opens the cursor of `compiled` on `session`, the cursor's own.
    static func open(session: PostgresSession, compiled: CompiledFetch) throws -> ObjectCursor {
        try session.lockedRead {
            let c = session.connection
            try c.execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", reported: false)
            do {
                // The first statement takes the snapshot, and checks that the store still holds the container's version.
                try session.checkStoredVersion()
                let f = compiled.objectQueries
                try c.execute("DECLARE \(name) NO SCROLL CURSOR FOR \(f.objectsSQL)", compiled.args)
                let rows = PostgresRowCursor(connection: c, sql: "FETCH FORWARD \(fetchSize) FROM \(name)", args: [], continues: true)
                let prefetched = f.prefetchedSQL.indices.map {
                    PostgresRowCursor(connection: c, sql: f.prefetchedSQL[$0], args: [], ownerColumn: f.prefetchedOwnerColumns[$0])
                }
                return ResumableObjects(session: session, writer: ObjectWriter(f), rows: rows,
                                        prefetched: prefetched) { _ = try? c.execute(script: "ROLLBACK", reported: false) }
            } catch {
                _ = try? c.execute(script: "ROLLBACK", reported: false)
                throw error
            }
        }
    }
}

extension PostgresSession: CursorSession {}
