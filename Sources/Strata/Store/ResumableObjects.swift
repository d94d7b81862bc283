/// A store session a ``ResumableObjects`` cursor reads through: its lock, and its lock for
/// reads (whose failure, when another container migrated the store, says so).
protocol CursorSession: AnyObject {
    func locked<T>(_ body: () throws -> T) rethrows -> T
    func lockedRead<T>(_ body: () throws -> T) throws -> T
}

/// A cursor whose objects are written a batch at a time from row cursors held open between
/// calls, on a session of its own whose read (a transaction of the store's) stays open from
/// opening to the last batch: each batch resumes the object writer where the last one
/// stopped. `finish` ends that read, once, after the last batch, at `close` or when the cursor
/// goes away. Each store opens its read and its row cursors, then hands them over here.
final class ResumableObjects<Session: CursorSession, Rows: RowCursor>: ObjectCursor {
    private let session: Session
    /// The resumable writer and its cursors (the objects' rows, one per prefetched relationship);
    /// nil once every row was read or the cursor was closed.
    private var reading: (writer: ObjectWriter, rows: Rows, prefetched: [Rows])?
    private let finish: () -> Void

    init(session: Session, writer: ObjectWriter, rows: Rows, prefetched: [Rows], finish: @escaping () -> Void) {
        self.session = session
        self.finish = finish
        reading = (writer, rows, prefetched)
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
        finish()
    }
}
