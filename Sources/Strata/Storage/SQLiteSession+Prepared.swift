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
        return try own.resumableCursor(q, pending: pending)
    }

    /// A cursor on this session's connection (the cursor's own): one read transaction (and the
    /// pending changes' overlay) from opening to the last batch; each batch steps the one statement on.
    private func resumableCursor(_ compiled: CompiledFetch, pending: PendingReplay?) throws -> ObjectCursor {
        try lockedRead {
            let c = connection
            try c.beginRead()
            do {
                // BEGIN is deferred: the snapshot is taken by the first read, made here (not at the
                // first batch), and it checks that the store still holds the container's version.
                try checkStoredVersion()
                if let pending { try pending(SQLiteWriter(session: self, saving: false)) }
                // Not from the connection's cache: the cursor holds them between calls.
                let r = try objectCursors(compiled.objectQueries, args: compiled.args, cached: false)
                return ResumableObjects(session: self, writer: r.writer, rows: r.rows, prefetched: r.prefetched) { c.endRead() }
            } catch {
                c.endRead()
                throw error
            }
        }
    }
}

extension SQLiteSession: CursorSession {}

