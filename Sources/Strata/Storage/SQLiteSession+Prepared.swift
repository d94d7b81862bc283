/// Prepared fetches and cursors on SQLite.
extension SQLiteSession {
    public func prepare(_ q: CompiledFetch) throws -> PreparedRead {
        StorePreparedRead(session: self, compiled: q)
    }

    public func openCursor(_ q: CompiledFetch, pending: PendingReplay?) throws -> ObjectCursor {
        // Inside a transaction (a migration stage's hook) or on an in-memory store's one
        // connection, a statement left open between calls would see the caller's own later
        // writes: the objects are read at once, on this snapshot, and handed out in batches.
        let materialized = locked { connection.isInTransaction } || sqliteStore.sharesConnection
        if materialized { return MaterializedCursor(try fetchJSON(q, pending: pending), sectioned: q.isSectioned) }
        // Its own connection, holding one read transaction from the first batch to the last.
        guard let own = try sqliteStore.makeSession() as? SQLiteSession else {
            throw StrataError(.internal, "the store made a session of another kind")
        }
        return try SQLiteObjectCursor(session: own, compiled: q, pending: pending)
    }
}

/// A cursor on its own connection: one read transaction (and the pending changes'
/// overlay) from opening to the last batch; each batch steps the one statement on.
final class SQLiteObjectCursor: ObjectCursor {
    private let session: SQLiteSession
    /// The resumable writer and its cursors (the objects query, one per prefetched relationship);
    /// nil once every row was read or the cursor was closed.
    private var reading: (writer: ObjectWriter, rows: SQLiteRowCursor, prefetched: [SQLiteRowCursor])?

    init(session: SQLiteSession, compiled: CompiledFetch, pending: PendingReplay?) throws {
        self.session = session
        try session.lockedRead {
            let c = session.connection
            try c.beginRead()
            do {
                // BEGIN is deferred: the snapshot is taken by the first read, made here (not at the
                // first batch), and it checks that the store still holds the container's version.
                try session.checkStoredVersion()
                if let pending { try pending(SQLiteWriter(session: session, saving: false)) }
                // Not from the connection's cache: the cursor holds them between calls.
                reading = try session.objectCursors(compiled.objectQueries, args: compiled.args, cached: false)
            } catch {
                c.endRead()
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
        session.connection.endRead()
    }
}
