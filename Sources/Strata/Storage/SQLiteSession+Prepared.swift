/// Prepared fetches and cursors on SQLite.
extension SQLiteSession {
    public func prepare(_ d: FetchDescriptor) throws -> PreparedRead {
        SQLitePreparedRead(session: self, descriptor: d)
    }

    public func openCursor(_ d: FetchDescriptor, pending: PendingReplay?) throws -> ObjectCursor {
        // Inside a transaction (a migration stage's hook) or on an in-memory store's one
        // connection, a statement left open between calls would see the caller's own later
        // writes: the objects are read at once, on this snapshot, and handed out in batches.
        let materialized = locked { connection.isInTransaction } || sqliteStore.sharesConnection
        if materialized { return MaterializedCursor(try fetchJSON(d, pending: pending)) }
        // Its own connection, holding one read transaction from the first batch to the last.
        guard let own = try sqliteStore.makeSession() as? SQLiteSession else {
            throw StrataError(.internal, "the store made a session of another kind")
        }
        return try SQLiteObjectCursor(session: own, descriptor: d, pending: pending)
    }

    /// The objects of `plan` for the owners `keys`, grouped by owner (a prefetched relationship of a batch).
    func relatedObjects(_ rel: Relationship, owners keys: [Int64]) throws -> RelatedValues {
        let src = relatedSource(rel, ownerTable: rel.entity)
        let relPlan = ObjectPlan(entities: rel.destination.descendants, leading: 1)
        let sql = SQLiteDialect.select(selectList(relPlan, alias: "d", leading: [src.owner], dialect: dialect), from: src.from,
                                       where: dialect.inJSONArray(src.owner, parameter: dialect.parameter(1)), orderBy: src.order)
        var writer = ObjectWriter(plan: relPlan, grouping: rel.isToMany ? .toMany : .toOne)
        try readObjects(&writer, sql: sql, args: [SQLiteSession.pkArray(keys)])
        return writer.finishGroups()
    }
}

/// A descriptor compiled once: SQL, plan and argument slots; each run binds its values.
final class SQLitePreparedRead: PreparedRead {
    let session: SQLiteSession
    let descriptor: FetchDescriptor
    let compiled: CompiledFetch
    let plan: ObjectPlan

    init(session: SQLiteSession, descriptor: FetchDescriptor) {
        self.session = session
        self.descriptor = descriptor
        compiled = CompiledFetch(descriptor, dialect: session.dialect)
        plan = ObjectPlan(descriptor)
    }

    func fetchJSON(_ values: [SQLValue], pending: PendingReplay?) throws -> [UInt8] {
        try session.fetchJSON(descriptor, compiled.binding(values), plan, pending: pending)
    }

    func count(_ values: [SQLValue], pending: PendingReplay?) throws -> Int64 {
        try session.count(descriptor, compiled.binding(values), pending: pending)
    }

    func identifiersJSON(_ values: [SQLValue], pending: PendingReplay?) throws -> [UInt8] {
        try session.identifiersJSON(descriptor, compiled.binding(values), pending: pending)
    }
}

/// A row cursor that ends after `limit` rows (one batch of a live statement).
private struct BatchCursor<Base: RowCursor>: RowCursor {
    var base: Base
    var remaining: Int
    /// Whether the statement had no more rows.
    var exhausted = false

    mutating func next() throws -> Bool {
        guard remaining > 0 else { return false }
        guard try base.next() else { exhausted = true; return false }
        remaining -= 1
        return true
    }

    func kind(_ column: Int32) -> ColumnKind { base.kind(column) }
    func int64(_ column: Int32) -> Int64 { base.int64(column) }
    func double(_ column: Int32) -> Double { base.double(column) }
    func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> { base.text(column) }
    func blob(_ column: Int32) -> UnsafeRawBufferPointer { base.blob(column) }
    func externalData(_ reference: UnsafeBufferPointer<UInt8>, of attribute: Attribute, pk: Int64) throws -> [UInt8] {
        try base.externalData(reference, of: attribute, pk: pk)
    }
}

/// A cursor on its own connection: one read transaction (and the pending changes'
/// overlay) from opening to the last batch; each batch steps the one statement on.
final class SQLiteObjectCursor: ObjectCursor {
    private let session: SQLiteSession
    private let descriptor: FetchDescriptor
    private let plan: ObjectPlan
    /// Nil once every row was read or the cursor was closed.
    private var statement: Statement?

    init(session: SQLiteSession, descriptor: FetchDescriptor, pending: PendingReplay?) throws {
        self.session = session
        self.descriptor = descriptor
        plan = ObjectPlan(descriptor)
        let q = CompiledFetch(descriptor, dialect: session.dialect)
        try session.locked {
            let c = session.connection
            try c.beginRead()
            do {
                if let pending { try pending(SQLiteWriter(session: session, saving: false)) }
                // Not from the connection's cache: the cursor holds it between calls.
                let s = try Statement(connection: c, sql: q.objectsSQL(plan))
                s.bind(q.args)
                statement = s
            } catch {
                c.endRead()
                throw error
            }
        }
    }

    deinit { close() }

    func next(_ limit: Int) throws -> [UInt8] {
        try session.locked {
            guard let statement else { return Array("[]".utf8) }
            do {
                var writer = ObjectWriter(plan: plan)
                var rows = BatchCursor(base: SQLiteRowCursor(statement: statement, folder: session.sqliteStore.externalFolder), remaining: limit)
                try writer.write(&rows)
                if writer.isDeferred {
                    let keys = writer.keys
                    if !keys.isEmpty {
                        for (i, rel) in plan.deferred.enumerated() {
                            let prefetched = descriptor.prefetch.contains { $0 === rel }
                            writer.setRelated(i, prefetched ? try session.relatedObjects(rel, owners: keys)
                                                            : try session.relatedIdentifiers(rel, owners: keys))
                        }
                    }
                }
                if rows.exhausted { end() }
                return writer.finishArray()
            } catch {
                end()
                throw error
            }
        }
    }

    func close() { session.locked { end() } }

    private func end() {
        guard statement != nil else { return }
        statement = nil
        session.connection.endRead()
    }
}

/// The objects of a fetch read at once, handed out in batches.
final class MaterializedCursor: ObjectCursor {
    private var bytes: [UInt8]
    /// Where the next element starts (after `[` or a `,`).
    private var position = 1
    private let lock = Lock()

    init(_ array: [UInt8]) { bytes = array }

    func next(_ limit: Int) throws -> [UInt8] {
        lock.withLock {
            var out: [UInt8] = [UInt8(ascii: "[")]
            guard limit > 0 else { return out + [UInt8(ascii: "]")] }
            var count = 0
            var depth = 0
            var inString = false
            var escaped = false
            let start = position
            var end = position
            scan: while end < bytes.count {
                let b = bytes[end]
                if inString {
                    if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                } else {
                    switch b {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        if depth == 0 { break scan }  // the array's end
                        depth -= 1
                    case UInt8(ascii: ","):
                        if depth == 0 {
                            count += 1
                            if count == limit { break scan }
                        }
                    default: break
                    }
                }
                end += 1
            }
            out.append(contentsOf: bytes[start..<end])
            out.append(UInt8(ascii: "]"))
            // Past the separating comma, or at the closing bracket for good.
            position = end < bytes.count && bytes[end] == UInt8(ascii: ",") ? end + 1 : end
            if position >= bytes.count - 1 { bytes = [UInt8(ascii: "["), UInt8(ascii: "]")]; position = 1 }
            return out
        }
    }

    func close() { lock.withLock { bytes = [UInt8(ascii: "["), UInt8(ascii: "]")]; position = 1 } }
}
