extension SQLiteSession {
    /// Runs a row query and writes its objects with `writer`, then reads the
    /// identifiers of the relationships the writer has no values for yet (one
    /// query per relationship, owners bound as the keys of the rows written).
    func readObjects(_ writer: inout ObjectWriter, sql: String, args: [SQLValue]) throws {
        let stmt = try connection.statement(sql)
        defer { stmt.reset() }
        stmt.bind(args)
        var cursor = SQLiteRowCursor(statement: stmt, folder: sqliteStore.externalFolder)
        try writer.write(&cursor)
        guard writer.isDeferred else { return }
        let keys = writer.keys
        guard !keys.isEmpty else { return }
        for (i, rel) in writer.plan.deferred.enumerated() where !writer.hasRelated(i) {
            writer.setRelated(i, try relatedIdentifiers(rel, owners: keys))
        }
    }

    static func pkArray(_ pks: [Int64]) -> SQLValue {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (i, pk) in pks.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendInt(pk, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    /// `FROM … ` of a relationship's related rows as (owner, row) with the row aliased `d`, and the owner expression.
    func relatedSource(_ rel: Relationship, ownerTable: Entity) -> (owner: String, from: String, order: String) {
        let dest = dialect.quote(dialect.table(rel.destination))
        switch rel.placement {
        case .inRow:
            let col = dialect.column(.link(rel))
            return ("o._pk", "\(dialect.quote(dialect.table(ownerTable))) o JOIN \(dest) d ON d._pk = o.\(dialect.quote(col))", "o._pk")
        case .inInverseRows:
            let col = dialect.column(.link(rel.inverse ?? rel))
            return ("d.\(dialect.quote(col))", "\(dest) d", "d.\(dialect.quote(col)), d._pk")
        case .inPairs:
            let (table, ownerCol, targetCol) = dialect.pairTable(rel)
            return ("j.\(dialect.quote(ownerCol))", "\(dialect.quote(table)) j JOIN \(dest) d ON d._pk = j.\(dialect.quote(targetCol))", "j.\(dialect.quote(ownerCol)), d._pk")
        }
    }

    /// Identifiers related through `rel` for each owner key (one query, owners bound as one JSON array).
    func relatedIdentifiers(_ rel: Relationship, owners: [Int64]) throws -> RelatedValues {
        let src = relatedSource(rel, ownerTable: rel.entity)
        return try relatedIdentifiers(rel, src, where: dialect.inJSONArray(src.owner, parameter: dialect.parameter(1)),
                                      args: [SQLiteSession.pkArray(owners)])
    }

    /// Identifiers related through `rel` for the owners a fetch matches (its keys as a subquery).
    func relatedIdentifiers(_ rel: Relationship, of q: CompiledFetch) throws -> RelatedValues {
        let src = relatedSource(rel, ownerTable: rel.entity)
        return try relatedIdentifiers(rel, src, where: "\(src.owner) IN (\(q.keysSQL))", args: q.args)
    }

    private func relatedIdentifiers(_ rel: Relationship, _ src: (owner: String, from: String, order: String),
                                    where condition: String, args: [SQLValue]) throws -> RelatedValues {
        let sql = SQLiteDialect.select("\(src.owner), d._pk, d._entity", from: src.from, where: condition, orderBy: src.order)
        let stmt = try connection.statement(sql)
        defer { stmt.reset() }
        stmt.bind(args)
        var cursor = SQLiteRowCursor(statement: stmt, folder: sqliteStore.externalFolder)
        return try ObjectWriter.identifiers(&cursor, toMany: rel.isToMany)
    }

    // MARK: Reads

    /// The objects a descriptor matches, as a JSON array.
    public func fetchJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        try fetchJSON(d, CompiledFetch(d, dialect: dialect), ObjectPlan(d), pending: pending)
    }

    /// The objects of a compiled fetch (a prepared fetch compiles once and binds each run's values).
    func fetchJSON(_ d: FetchDescriptor, _ q: CompiledFetch, _ plan: ObjectPlan, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) {
            var related = [RelatedValues?](repeating: nil, count: plan.deferred.count)
            for rel in d.prefetch {
                // One query per relationship: the related rows of every matching owner, owners given by the fetch as a subquery.
                let src = relatedSource(rel, ownerTable: d.entity)
                let relPlan = ObjectPlan(entities: rel.destination.descendants, leading: 1)
                let sql = SQLiteDialect.select(selectList(relPlan, alias: "d", leading: [src.owner], dialect: dialect), from: src.from,
                                               where: "\(src.owner) IN (\(q.keysSQL))", orderBy: src.order)
                var writer = ObjectWriter(plan: relPlan, grouping: rel.isToMany ? .toMany : .toOne)
                try readObjects(&writer, sql: sql, args: q.args)
                let objects = writer.finishGroups()
                if let i = plan.deferred.firstIndex(where: { $0 === rel }) { related[i] = objects }
            }
            // The other relationships: identifiers, one query per relationship, owners again the fetch's keys.
            for (i, rel) in plan.deferred.enumerated() where related[i] == nil {
                related[i] = try relatedIdentifiers(rel, of: q)
            }
            var writer = ObjectWriter(plan: plan, related: related)
            try readObjects(&writer, sql: q.objectsSQL(plan), args: q.args)
            return writer.finishArray()
        }
    }

    public func count(_ d: FetchDescriptor, pending: PendingReplay?) throws -> Int64 {
        try count(d, CompiledFetch(d, dialect: dialect), pending: pending)
    }

    func count(_ d: FetchDescriptor, _ q: CompiledFetch, pending: PendingReplay?) throws -> Int64 {
        try read(pending) {
            let sql = d.fetchLimit == nil && d.fetchOffset == 0
                ? SQLiteDialect.count(from: q.source, where: q.condition)
                : SQLiteDialect.count(of: q.keysSQL)
            guard case .int(let n)? = try connection.statement(sql).scalar(q.args) else { return 0 }
            return n
        }
    }

    public func identifiersJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        try identifiersJSON(d, CompiledFetch(d, dialect: dialect), pending: pending)
    }

    func identifiersJSON(_ d: FetchDescriptor, _ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) { try identifiers(d, q).bytes }
    }

    public func identifierList(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [ObjectID] {
        try read(pending) { try identifiers(d).ids }
    }

    /// Matching identifiers (call inside `read`).
    func identifiers(_ d: FetchDescriptor, _ compiled: CompiledFetch? = nil) throws -> (bytes: [UInt8], ids: [ObjectID]) {
        let q = compiled ?? CompiledFetch(d, dialect: dialect)
        var w = JSONWriter()
        var ids: [ObjectID] = []
        w.beginArray()
        let root = d.entity.root
        try connection.statement(q.select("t._pk, t._entity")).query(q.args) { s in
            guard let e = root.descendant(named: s.text(1)) else { return }
            let id = ObjectID(entity: e, pk: s.int64(0))
            id.write(to: &w)
            ids.append(id)
        }
        w.endArray()
        return (w.bytes, ids)
    }

    /// The SQL of a fetch, its parameter count and SQLite's query plan, as JSON.
    public func explain(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) {
            let q = CompiledFetch(d, dialect: dialect)
            return try connection.explainJSON(q.objectsSQL(ObjectPlan(d)), q.args)
        }
    }

    /// One object as JSON, or nil when it does not exist.
    public func objectJSON(_ id: ObjectID, pending: PendingReplay?) throws -> [UInt8]? {
        try read(pending) {
            guard let concrete = try SQLiteWriter.concreteEntity(connection, dialect, root: id.entity.root, pk: id.pk), concrete.isKind(of: id.entity) else { return nil }
            let plan = ObjectPlan(entities: [concrete])
            let sql = SQLiteDialect.select(selectList(plan, alias: "t", dialect: dialect), from: "\(dialect.quote(dialect.table(concrete))) t",
                                           where: "t._pk = \(dialect.parameter(1))")
            let related = try plan.deferred.map { try relatedIdentifiers($0, owners: [id.pk]) }
            var writer = ObjectWriter(plan: plan, grouping: .toOne, related: related)
            try readObjects(&writer, sql: sql, args: [.int(id.pk)])
            let objects = writer.finishGroups()
            guard let range = objects.ranges[0] else { return nil }
            return Array(objects.bytes[range])
        }
    }
}

extension Connection {
    /// How SQLite runs a statement: `{"sql": …, "parameterCount": n, "queryPlan":
    /// [{"id", "parent", "detail"}]}` (the rows of EXPLAIN QUERY PLAN).
    func explainJSON(_ sql: String, _ args: [SQLValue]) throws -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("sql"); w.string(sql)
        w.key("parameterCount"); w.int(Int64(args.count))
        w.key("queryPlan")
        w.beginArray()
        try statement(SQLiteDialect.queryPlan(sql)).query(args) { s in
            w.beginObject()
            w.key("id"); w.int(s.int64(0))
            w.key("parent"); w.int(s.int64(1))
            w.key("detail"); w.string(s.text(3))
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.bytes
    }
}

extension ObjectPlan {
    /// The plan of a fetch's objects.
    init(_ d: FetchDescriptor) {
        self.init(entities: d.entities, properties: d.propertiesToFetch, prefetched: d.prefetch)
    }
}
