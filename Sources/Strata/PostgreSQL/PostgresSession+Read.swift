/// Reads on PostgreSQL: the statements a ``CompiledFetch`` holds, run on one snapshot,
/// their rows written by the object writer in place.
extension PostgresSession: CompiledReads {
    func fetchBuffer(_ f: ObjectQueries, args: [SQLValue], pending: PendingReplay?) throws -> JSONBuffer {
        try read(pending, oneStatement: f.prefetchedSQL.isEmpty) {
            // Each prefetched relationship in one statement, over the owners' query (its arguments).
            let once = !f.prefetchedOnceSQL.isEmpty
            var prefetched = f.prefetchedSQL.indices.map {
                PostgresRowCursor(connection: connection, sql: once ? f.prefetchedOnceSQL[$0] : f.prefetchedSQL[$0], args: once && f.prefetchedOnceBinds ? args : [],
                                  ownerColumn: f.prefetchedOwnerColumns[$0], once: once)
            }
            var rows = PostgresRowCursor(connection: connection, hashed: f.objectsKey, args: args)
            let writer = ObjectWriter(f)
            try writer.write(&rows, prefetched: &prefetched)
            return writer.takeBatch()
        }
    }

    public func fetchJSON(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try fetchBuffer(q, pending: pending).bytes
    }

    public func fetchBuffer(_ q: CompiledFetch, pending: PendingReplay?) throws -> JSONBuffer {
        try fetchBuffer(q.objectQueries, args: q.args, pending: pending)
    }

    public func count(_ q: CompiledFetch, pending: PendingReplay?) throws -> Int64 {
        let (sql, args) = q.counted
        return try count(sql: sql, args: args, pending: pending)
    }

    /// An aggregation's dictionaries, as a JSON array.
    public func resultBuffer(_ q: ResultQuery, pending: PendingReplay?) throws -> JSONBuffer {
        try read(pending, oneStatement: true) {
            var rows = PostgresRowCursor(connection: connection, sql: q.sql, args: q.args)
            return try ResultWriter.write(&rows, q)
        }
    }

    func count(sql: String, args: [SQLValue], pending: PendingReplay?) throws -> Int64 {
        try read(pending, oneStatement: true) {
            guard case .int(let n)? = try connection.scalar(sql, args) else { return 0 }
            return n
        }
    }

    public func identifiersJSON(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending, oneStatement: true) { try identifiers(root: q.root, sql: q.identifiersSQL, args: q.args).bytes }
    }

    func identifiersJSON(root: Entity, sql: String, args: [SQLValue], pending: PendingReplay?) throws -> [UInt8] {
        try read(pending, oneStatement: true) { try identifiers(root: root, sql: sql, args: args).bytes }
    }

    public func identifierList(_ q: CompiledFetch, pending: PendingReplay?) throws -> [ObjectID] {
        try read(pending, oneStatement: true) { try identifiers(root: q.root, sql: q.identifiersSQL, args: q.args).ids }
    }

    /// The rows' identifiers; a row of a hierarchy whose entity name is none of its entities is damage.
    func identifiers(root: Entity, sql: String, args: [SQLValue]) throws -> (bytes: [UInt8], ids: [ObjectID]) {
        var w = JSONWriter()
        var ids: [ObjectID] = []
        w.beginArray()
        let rows = try connection.query(sql, args)
        for r in 0..<rows.count {
            let pk = rows.int64(r, 0)
            let e: Entity
            if !root.isInHierarchy {
                e = root
            } else {
                guard let named = root.descendant(named: rows.string(r, 1)) else { throw PostgresSession.unknownEntity(root, pk: pk) }
                e = named
            }
            let id = ObjectID(entity: e, pk: pk)
            id.write(to: &w)
            ids.append(id)
        }
        w.endArray()
        return (w.bytes, ids)
    }

    /// The SQL of a fetch, its parameter count and PostgreSQL's plan (EXPLAIN's text lines), as JSON.
    public func explain(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) { let (sql, args) = q.explained; return try connection.explainJSON(sql, args) }
    }

    public func related(_ id: ObjectID, _ rel: Relationship, pending: PendingReplay?) throws -> [ObjectID]? {
        try read(pending) {
            guard let concrete = try PostgresWriter.concreteEntity(connection, dialect, root: id.entity.root, pk: id.pk),
                  concrete.isKind(of: id.entity) else { return nil }
            return try PostgresWriter.related(connection, dialect, id, rel)
        }
    }

    public func objectJSON(_ id: ObjectID, pending: PendingReplay?) throws -> [UInt8]? {
        try read(pending) {
            guard let concrete = try PostgresWriter.concreteEntity(connection, dialect, root: id.entity.root, pk: id.pk),
                  concrete.isKind(of: id.entity) else { return nil }
            let object = ObjectQueries(object: concrete, dialect: dialect)
            var rows = PostgresRowCursor(connection: connection, sql: object.objectsSQL, args: [.int(id.pk)])
            var none: [PostgresRowCursor] = []
            let writer = ObjectWriter(object)
            try writer.write(&rows, prefetched: &none, limit: 1)
            let array = writer.takeBatch().bytes
            guard array.count > 2 else { return nil }
            return Array(array[1..<(array.count - 1)])
        }
    }

    // MARK: Prepared reads and cursors

    public func prepare(_ q: CompiledFetch) throws -> PreparedRead { StorePreparedRead(session: self, compiled: q) }

    /// On a connection of its own, a batch at a time (``PostgresObjectCursor``). With pending
    /// changes (written in the cursor's transaction, their rows would hold up every later read of
    /// the context that writes them too, until the cursor ends), inside a transaction (the
    /// caller's: another connection would not see what it wrote) and for a migration stage (its
    /// hook), the objects are read at once on this snapshot and handed out in batches.
    public func openCursor(_ q: CompiledFetch, pending: PendingReplay?) throws -> ObjectCursor {
        if pending != nil || isInTransaction || !watchesVersion { return MaterializedCursor(try fetchJSON(q, pending: pending), sectioned: q.isSectioned) }
        guard let own = try pgStore.makeSession() as? PostgresSession else {
            throw StrataError(.internal, "the store made a session of another kind")
        }
        return try PostgresObjectCursor.open(session: own, compiled: q)
    }
}
