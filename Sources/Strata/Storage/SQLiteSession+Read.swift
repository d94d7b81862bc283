extension SQLiteSession: CompiledReads {
    static func pkArray(_ pks: [Int64]) -> SQLValue {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (i, pk) in pks.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendInt(pk, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    /// The object writer and cursors of a fetch's queries (call inside `read`): the objects query,
    /// and per prefetched relationship a statement of the related rows of one owner (`?1`), run per
    /// owner row. Identifiers of the other relationships are read by the objects query itself (one
    /// pass). Reset the returned cursors' statements when done (`finishObjects`).
    /// - Parameter cached: false prepares statements of their own (a cursor holds them between calls).
    func objectCursors(_ f: ObjectQueries, args: [SQLValue], cached: Bool = true) throws
        -> (writer: ObjectWriter, rows: SQLiteRowCursor, prefetched: [SQLiteRowCursor]) {
        func statement(_ sql: HashedSQL) throws -> Statement {
            cached ? try connection.statement(sql) : try Statement(connection: connection, sql: sql.text)
        }
        var prefetched: [SQLiteRowCursor] = []
        for sql in f.prefetchedKeys {
            prefetched.append(SQLiteRowCursor(statement: try statement(sql), folder: sqliteStore.externalFolder))
        }
        let stmt = try statement(f.objectsKey)
        stmt.bind(args)
        return (ObjectWriter(f), SQLiteRowCursor(statement: stmt, folder: sqliteStore.externalFolder), prefetched)
    }

    /// Resets the statements of `objectCursors`.
    func finishObjects(_ rows: SQLiteRowCursor, _ prefetched: [SQLiteRowCursor]) {
        rows.statement.reset()
        for c in prefetched { c.statement.reset() }
    }

    // MARK: Reads

    /// The objects a descriptor matches, as a JSON array.
    public func fetchJSON(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try fetchBuffer(q, pending: pending).bytes
    }

    /// The objects a descriptor matches, as a JSON array in one buffer the caller may take over.
    public func fetchBuffer(_ q: CompiledFetch, pending: PendingReplay?) throws -> JSONBuffer {
        try fetchBuffer(q.objectQueries, args: q.args, pending: pending)
    }

    /// The objects of a fetch's queries with these arguments (a prepared fetch makes its queries once).
    func fetchBuffer(_ f: ObjectQueries, args: [SQLValue], pending: PendingReplay?) throws -> JSONBuffer {
        // Without prefetching, the objects query is the only statement.
        try read(pending, oneStatement: f.prefetchedSQL.isEmpty) {
            var (writer, rows, prefetched) = try objectCursors(f, args: args)
            defer { finishObjects(rows, prefetched) }
            try writer.write(&rows, prefetched: &prefetched)
            return writer.takeBatch()
        }
    }

    public func count(_ q: CompiledFetch, pending: PendingReplay?) throws -> Int64 {
        let (sql, args) = q.counted
        return try count(sql: sql, args: args, pending: pending)
    }

    /// An aggregation's dictionaries, as a JSON array.
    public func resultBuffer(_ q: ResultQuery, pending: PendingReplay?) throws -> JSONBuffer {
        try read(pending, oneStatement: true) {
            let stmt = try connection.statement(q.sql)
            defer { stmt.reset() }
            stmt.bind(q.args)
            var rows = SQLiteRowCursor(statement: stmt, folder: sqliteStore.externalFolder)
            return try ResultWriter.write(&rows, q)
        }
    }

    func count(sql: String, args: [SQLValue], pending: PendingReplay?) throws -> Int64 {
        try read(pending, oneStatement: true) {
            let value: SQLValue?
            do { value = try connection.statement(sql).scalar(args) } catch { throw SQLFunctions.damage(error) }
            guard case .int(let n)? = value else { return 0 }
            return n
        }
    }

    public func identifiersJSON(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending, oneStatement: true) { try identifiers(q).bytes }
    }

    func identifiersJSON(root: Entity, sql: String, args: [SQLValue], pending: PendingReplay?) throws -> [UInt8] {
        try read(pending, oneStatement: true) { try identifiers(root: root, sql: sql, args: args).bytes }
    }

    public func identifierList(_ q: CompiledFetch, pending: PendingReplay?) throws -> [ObjectID] {
        try read(pending, oneStatement: true) { try identifiers(q).ids }
    }

    /// Matching identifiers (call inside `read`).
    func identifiers(_ q: CompiledFetch) throws -> (bytes: [UInt8], ids: [ObjectID]) {
        try identifiers(root: q.root, sql: q.identifiersSQL, args: q.args)
    }

    /// The rows' identifiers; a row of a hierarchy whose entity name is none of its entities is damage
    /// (as for fetch and get), a lone entity's rows are all of it (its `_entity` is not read).
    func identifiers(root: Entity, sql: String, args: [SQLValue]) throws -> (bytes: [UInt8], ids: [ObjectID]) {
        var w = JSONWriter()
        var ids: [ObjectID] = []
        w.beginArray()
        do {
            try connection.statement(sql).query(args) { s in
                let pk = s.int64(0)
                let e: Entity
                if !root.isInHierarchy {
                    e = root
                } else {
                    guard let named = root.descendant(named: s.text(1)) else { throw SQLiteSession.unknownEntity(root, pk: pk) }
                    e = named
                }
                let id = ObjectID(entity: e, pk: pk)
                id.write(to: &w)
                ids.append(id)
            }
        } catch {
            throw SQLFunctions.damage(error)
        }
        w.endArray()
        return (w.bytes, ids)
    }

    /// A row of `root`'s hierarchy whose entity name is none of its entities.
    static func unknownEntity(_ root: Entity, pk: Int64) -> StrataError {
        StrataError(.corrupt, "\(root.name)/\(pk): the row's entity name is not an entity of \(root.name)'s hierarchy (the store file is damaged)",
                    entity: root.name)
    }

    /// The SQL of a fetch, its parameter count and SQLite's query plan, as JSON.
    public func explain(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) { let (sql, args) = q.explained; return try connection.explainJSON(sql, args) }
    }

    /// One object as JSON, or nil when it does not exist.
    public func related(_ id: ObjectID, _ rel: Relationship, pending: PendingReplay?) throws -> [ObjectID]? {
        try read(pending) {
            guard let concrete = try SQLiteWriter.concreteEntity(connection, dialect, root: id.entity.root, pk: id.pk),
                  concrete.isKind(of: id.entity) else { return nil }
            return try SQLiteWriter.related(connection, dialect, id, rel)
        }
    }

    public func objectJSON(_ id: ObjectID, pending: PendingReplay?) throws -> [UInt8]? {
        try read(pending) {
            guard let concrete = try SQLiteWriter.concreteEntity(connection, dialect, root: id.entity.root, pk: id.pk), concrete.isKind(of: id.entity) else { return nil }
            let object = ObjectQueries(object: concrete, dialect: dialect)
            let stmt = try connection.statement(object.objectsKey)
            defer { stmt.reset() }
            stmt.bind([.int(id.pk)])
            var rows = SQLiteRowCursor(statement: stmt, folder: sqliteStore.externalFolder)
            var none: [SQLiteRowCursor] = []
            let writer = ObjectWriter(object)
            try writer.write(&rows, prefetched: &none, limit: 1)
            let array = writer.takeBatch().bytes
            // `[{…}]`: the object; `[]`: none.
            guard array.count > 2 else { return nil }
            return Array(array[1..<(array.count - 1)])
        }
    }
}

extension Connection {
    /// How SQLite runs a statement: `{"sql": …, "parameterCount": n, "queryPlan":
    /// [{"id", "parent", "detail"}]}` (the rows of EXPLAIN QUERY PLAN).
    func explainJSON(_ sql: String, _ args: [SQLValue]) throws -> [UInt8] {
        var plan = ExplainedQuery(sql: sql, parameterCount: args.count)
        try statement(SQLiteDialect.queryPlan(sql)).query(args) { s in plan.step(id: s.int64(0), parent: s.int64(1), detail: s.text(3)) }
        return plan.finish()
    }
}
