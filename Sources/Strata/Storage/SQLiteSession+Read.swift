import CSQLite

/// The SQL and output plan for writing rows of some entities of one table as JSON objects.
final class RowPlan {
    enum Kind {
        case attribute(Attribute)
        /// A to-one link held in the row; `entityColumn` reads the target's concrete entity when the destination has subentities.
        case foreignKey(Relationship, entityColumn: Int32?)
    }
    struct Column { let key: [UInt8]; let index: Int32; let kind: Kind }
    struct EntityPlan {
        let entity: Entity
        var columns: [Column] = []
        var constants: [(key: [UInt8], json: [UInt8])] = []
        /// Relationships written after the row: ids read in one query per relationship, or prefetched objects.
        var deferred: [Relationship] = []
    }

    let root: Entity
    let alias: String
    /// `pk, entity, columns…` (after the leading columns).
    let selectList: String
    let leading: Int32
    var plans: [String: EntityPlan] = [:]
    let single: EntityPlan?
    let deferred: [Relationship]

    static func keyBytes(_ name: String) -> [UInt8] {
        var w = JSONWriter()
        w.key(name)
        return w.bytes
    }

    /// - Parameters:
    ///   - properties: names to read (nil: all).
    ///   - prefetched: relationships returned as objects (always read).
    ///   - leading: SQL expressions selected before the row (e.g. the owner of a prefetched object).
    init(entities: [Entity], alias: String = "t", properties: [String]? = nil, prefetched: [Relationship] = [], leading: [String] = []) {
        let root = entities[0].root
        self.root = root
        self.alias = alias
        self.leading = Int32(leading.count)
        var select = leading + ["\(alias)._pk", "\(alias)._entity"]
        var columnIndex: [String: Int32] = [:]
        var entityColumnIndex: [String: Int32] = [:]
        func column(_ name: String) -> Int32 {
            if let i = columnIndex[name] { return i }
            let i = Int32(select.count)
            select.append("\(alias).\(quote(name))")
            columnIndex[name] = i
            return i
        }
        func wanted(_ name: String) -> Bool { properties.map { $0.contains(name) } ?? true }
        var allDeferred: [Relationship] = []
        for e in entities {
            var plan = EntityPlan(entity: e)
            for a in e.attributes where wanted(a.name) {
                if a.isTransient {
                    var w = JSONWriter()
                    if let d = a.defaultJSON { d.write(to: &w) } else { w.null() }
                    plan.constants.append((RowPlan.keyBytes(a.name), w.bytes))
                } else {
                    plan.columns.append(Column(key: RowPlan.keyBytes(a.name), index: column(a.name), kind: .attribute(a)))
                }
            }
            for r in e.relationships {
                let isPrefetched = prefetched.contains { $0 === r }
                guard wanted(r.name) || isPrefetched else { continue }
                if let col = r.foreignKeyColumn, !isPrefetched {
                    let i = column(col)
                    var entityColumn: Int32?
                    if r.destination.root.isInHierarchy {
                        // A scalar subquery, not a join: SQLite joins at most 64 tables, and an entity may hold more links.
                        if let j = entityColumnIndex[col] { entityColumn = j } else {
                            let ra = "r\(alias)\(entityColumnIndex.count)"
                            let j = Int32(select.count)
                            select.append("(SELECT \(ra)._entity FROM \(quote(r.destination.tableName)) \(ra) WHERE \(ra)._pk = \(alias).\(quote(col)))")
                            entityColumnIndex[col] = j
                            entityColumn = j
                        }
                    }
                    plan.columns.append(Column(key: RowPlan.keyBytes(r.name), index: i, kind: .foreignKey(r, entityColumn: entityColumn)))
                } else {
                    plan.deferred.append(r)
                    if !allDeferred.contains(where: { $0 === r }) { allDeferred.append(r) }
                }
            }
            plans[e.name] = plan
        }
        single = entities.count == 1 && !root.isInHierarchy ? plans[entities[0].name] : nil
        deferred = allDeferred
        selectList = select.joined(separator: ", ")
    }
}

/// Objects written as JSON, each a byte range of `bytes`, with its owner (for prefetched objects).
struct ObjectBatch {
    var bytes: [UInt8] = []
    var items: [(owner: Int64, pk: Int64, range: Range<Int>)] = []

    /// Objects grouped by owner: a JSON array (to-many) or the object (to-one).
    func byOwner(toMany: Bool) -> [Int64: [UInt8]] {
        var out: [Int64: [UInt8]] = [:]
        for item in items {
            let json = bytes[item.range]
            if toMany {
                if var existing = out[item.owner] {
                    existing.removeLast()
                    existing.append(UInt8(ascii: ","))
                    existing.append(contentsOf: json)
                    existing.append(UInt8(ascii: "]"))
                    out[item.owner] = existing
                } else {
                    out[item.owner] = [UInt8(ascii: "[")] + json + [UInt8(ascii: "]")]
                }
            } else if out[item.owner] == nil {
                out[item.owner] = Array(json)
            }
        }
        return out
    }

    /// A JSON array of every object, in order.
    var array: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + items.count + 2)
        out.append(UInt8(ascii: "["))
        for (n, item) in items.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: bytes[item.range])
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}

/// A descriptor compiled to SQL: `FROM … WHERE … ORDER BY … LIMIT …` with its arguments.
struct CompiledFetch {
    let root: Entity
    /// Joins the predicate and sort keys need (alias `t` is the fetched row).
    let joins: String
    let whereSQL: String
    let orderSQL: String
    let limitSQL: String
    let args: [SQLValue]

    init(_ d: FetchDescriptor) {
        root = d.entity.root
        var c = PredicateCompiler(root: d.entity)
        var conditions: [String] = []
        let entities = d.entities
        if root.isInHierarchy && entities.count != root.descendants.count {
            conditions.append("t._entity IN (\(entities.map { c.bind(.text($0.name)) }.joined(separator: ", ")))")
        }
        // A predicate folded to true is no condition at all (docs/predicates.md §3).
        if let p = d.predicate, p.constantValue != true { conditions.append(c.predicate(p)) }
        var order: [String] = []
        for key in d.sortBy {
            let col = c.column(key.ref)
            var collate = ""
            if case .attribute(let a) = key.ref.end {
                if a.type == .decimal { collate = " COLLATE strata_decimal" }
                else if (a.type == .string || a.type == .url) && key.comparator == .localizedStandard { collate = " COLLATE strata_standard" }
            }
            order.append("\(col)\(collate) \(key.reverse ? "DESC" : "ASC")")
        }
        order.append("t._pk ASC")
        var limit = ""
        if let l = d.fetchLimit { limit = " LIMIT \(c.bind(.int(Int64(l))))" } else if d.fetchOffset > 0 { limit = " LIMIT -1" }
        if d.fetchOffset > 0 { limit += " OFFSET \(c.bind(.int(Int64(d.fetchOffset))))" }
        joins = c.rootJoins.joined(separator: " ")
        whereSQL = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        orderSQL = " ORDER BY " + order.joined(separator: ", ")
        limitSQL = limit
        args = c.args
    }

    var from: String { "FROM \(quote(root.name)) t" + (joins.isEmpty ? "" : " " + joins) }

    /// The primary keys of the matching rows, in order (usable as a subquery).
    var keysSQL: String { "SELECT t._pk \(from)\(whereSQL)\(orderSQL)\(limitSQL)" }

    func objectsSQL(_ plan: RowPlan) -> String {
        "SELECT \(plan.selectList) FROM \(quote(root.name)) t"
            + (joins.isEmpty ? "" : " " + joins) + whereSQL + orderSQL + limitSQL
    }
}

extension SQLiteSession {
    struct ObjectSpan { let owner: Int64; let pk: Int64; let entity: Entity; let start: Int; let end: Int }

    /// Writes every row of `stmt` as a JSON object without its closing brace.
    func writeRows(_ plan: RowPlan, sql: String, args: [SQLValue], into out: inout JSONWriter) throws -> [ObjectSpan] {
        var spans: [ObjectSpan] = []
        let stmt = try connection.statement(sql)
        defer { stmt.reset() }
        stmt.bind(args)
        let pkColumn = plan.leading
        let idPrefix = Array("{\"_id\":".utf8)
        let entityKey = Array("\"_entity\":".utf8)
        while try stmt.step() {
            let pk = stmt.int64(pkColumn)
            let ep: RowPlan.EntityPlan
            if let s = plan.single { ep = s } else {
                guard let p = plan.plans[stmt.text(pkColumn + 1)] else { continue }
                ep = p
            }
            let start = out.bytes.count
            out.bytes.append(contentsOf: idPrefix)
            out.needsComma = false
            ObjectID(entity: ep.entity, pk: pk).write(to: &out)
            out.rawKey(entityKey)
            out.string(ep.entity.name)
            for c in ep.columns {
                out.rawKey(c.key)
                try writeColumn(stmt, c, pk: pk, into: &out)
            }
            for (key, json) in ep.constants {
                out.rawKey(key)
                out.bytes.append(contentsOf: json)
                out.needsComma = true
            }
            let owner = plan.leading > 0 ? stmt.int64(0) : 0
            spans.append(ObjectSpan(owner: owner, pk: pk, entity: ep.entity, start: start, end: out.bytes.count))
        }
        return spans
    }

    @inline(__always)
    private func writeColumn(_ s: Statement, _ c: RowPlan.Column, pk: Int64, into w: inout JSONWriter) throws {
        let i = c.index
        let type = s.columnType(i)
        if type == SQLITE_NULL { w.null(); return }
        switch c.kind {
        case .attribute(let a):
            switch a.type {
            case .string, .url, .uuid, .decimal:
                w.string(utf8: s.textBuffer(i))
            case .int: w.int(s.int64(i))
            case .bool: w.bool(s.int64(i) != 0)
            case .double: w.double(s.double(i))
            case .date: ValueCodec.writeDate(s.double(i), to: &w)
            case .json: w.raw(bytes: s.textBuffer(i))
            case .data:
                if type == SQLITE_TEXT, a.externalStorage, let folder = sqliteStore.externalFolder {
                    // The column names a file in the store's folder (checked: the store file is untrusted).
                    let bytes = try folder.read(s.textBuffer(i), of: a, pk: pk)
                    w.beginRawString()
                    bytes.withUnsafeBytes { Base64.encode($0, into: &w.bytes) }
                    w.endRawString()
                } else {
                    w.beginRawString()
                    Base64.encode(s.blobBuffer(i), into: &w.bytes)
                    w.endRawString()
                }
            }
        case .foreignKey(let r, let entityColumn):
            let target = s.int64(i)
            w.beginRawString()
            if let ec = entityColumn, s.columnType(ec) != SQLITE_NULL {
                w.bytes.append(contentsOf: s.textBuffer(ec))
            } else {
                // No subentities, or a dangling link (noAction): the declared destination.
                w.bytes.append(contentsOf: r.destination.name.utf8)
            }
            w.bytes.append(UInt8(ascii: "/"))
            JSONWriter.appendInt(target, to: &w.bytes)
            w.endRawString()
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
        let dest = quote(rel.destination.tableName)
        switch rel.storage {
        case .foreignKey(let col):
            return ("o._pk", "\(quote(ownerTable.tableName)) o JOIN \(dest) d ON d._pk = o.\(quote(col))", "o._pk")
        case .inverseForeignKey(let col):
            return ("d.\(quote(col))", "\(dest) d", "d.\(quote(col)), d._pk")
        case .joinTable(let table, let ownerCol, let targetCol):
            return ("j.\(quote(ownerCol))", "\(quote(table)) j JOIN \(dest) d ON d._pk = j.\(quote(targetCol))", "j.\(quote(ownerCol)), d._pk")
        }
    }

    /// Identifiers related through `rel` for each owner key (one query, owners bound as one JSON array).
    func relatedIdentifiers(_ rel: Relationship, owners: [Int64]) throws -> [Int64: [UInt8]] {
        let src = relatedSource(rel, ownerTable: rel.entity)
        let sql = "SELECT \(src.owner), d._pk, d._entity FROM \(src.from) WHERE \(src.owner) IN (SELECT value FROM json_each(?1)) ORDER BY \(src.order)"
        var result: [Int64: [UInt8]] = [:]
        var current: Int64 = 0
        var buf: [UInt8] = []
        var first = true
        try connection.statement(sql).query([SQLiteSession.pkArray(owners)]) { s in
            let owner = s.int64(0)
            if first || owner != current {
                if !first { buf.append(UInt8(ascii: "]")); result[current] = buf }
                buf = [UInt8(ascii: "[")]
                current = owner
                first = false
            } else {
                buf.append(UInt8(ascii: ","))
            }
            buf.append(UInt8(ascii: "\""))
            buf.append(contentsOf: s.textBuffer(2))
            buf.append(UInt8(ascii: "/"))
            JSONWriter.appendInt(s.int64(1), to: &buf)
            buf.append(UInt8(ascii: "\""))
        }
        if !first { buf.append(UInt8(ascii: "]")); result[current] = buf }
        return result
    }

    /// Runs a row query and completes each object with its deferred relationships.
    /// - Parameter prefetched: objects of prefetched relationships by owner key.
    func readObjects(_ plan: RowPlan, sql: String, args: [SQLValue],
                     prefetched: [(Relationship, [Int64: [UInt8]])] = []) throws -> ObjectBatch {
        var rows = JSONWriter(capacity: 4096)
        let spans = try writeRows(plan, sql: sql, args: args, into: &rows)
        var related: [(Relationship, [Int64: [UInt8]])] = prefetched
        if !spans.isEmpty {
            let pks = spans.map(\.pk)
            for rel in plan.deferred where !prefetched.contains(where: { $0.0 === rel }) {
                related.append((rel, try relatedIdentifiers(rel, owners: pks)))
            }
        }
        var batch = ObjectBatch()
        batch.bytes.reserveCapacity(rows.bytes.count + spans.count * 2)
        let null: [UInt8] = Array("null".utf8)
        let empty: [UInt8] = Array("[]".utf8)
        rows.bytes.withUnsafeBufferPointer { all in
            for span in spans {
                let start = batch.bytes.count
                batch.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: all[span.start..<span.end]))
                for (rel, map) in related where span.entity.relationshipByName[rel.name] === rel {
                    batch.bytes.append(UInt8(ascii: ","))
                    batch.bytes.append(contentsOf: RowPlan.keyBytes(rel.name))
                    if let v = map[span.pk] {
                        if !rel.isToMany && v.first == UInt8(ascii: "[") {
                            batch.bytes.append(contentsOf: v.dropFirst().dropLast())
                        } else {
                            batch.bytes.append(contentsOf: v)
                        }
                    } else {
                        batch.bytes.append(contentsOf: rel.isToMany ? empty : null)
                    }
                }
                batch.bytes.append(UInt8(ascii: "}"))
                batch.items.append((span.owner, span.pk, start..<batch.bytes.count))
            }
        }
        return batch
    }

    // MARK: Reads

    /// The objects a descriptor matches, as a JSON array.
    public func fetchJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) {
            let q = CompiledFetch(d)
            let plan = RowPlan(entities: d.entities, properties: d.propertiesToFetch, prefetched: d.prefetch)
            var prefetched: [(Relationship, [Int64: [UInt8]])] = []
            for rel in d.prefetch {
                // One query per relationship: the related rows of every matching owner, owners given by the fetch as a subquery.
                let src = relatedSource(rel, ownerTable: d.entity)
                let relPlan = RowPlan(entities: rel.destination.descendants, alias: "d", leading: [src.owner])
                let sql = "SELECT \(relPlan.selectList) FROM \(src.from)"
                    + " WHERE \(src.owner) IN (\(q.keysSQL)) ORDER BY \(src.order)"
                let batch = try readObjects(relPlan, sql: sql, args: q.args)
                prefetched.append((rel, batch.byOwner(toMany: rel.isToMany)))
            }
            return try readObjects(plan, sql: q.objectsSQL(plan), args: q.args, prefetched: prefetched).array
        }
    }

    public func count(_ d: FetchDescriptor, pending: PendingReplay?) throws -> Int64 {
        try read(pending) {
            let q = CompiledFetch(d)
            let sql = d.fetchLimit == nil && d.fetchOffset == 0
                ? "SELECT count(*) \(q.from)\(q.whereSQL)"
                : "SELECT count(*) FROM (\(q.keysSQL))"
            guard case .int(let n)? = try connection.statement(sql).scalar(q.args) else { return 0 }
            return n
        }
    }

    public func identifiersJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        try read(pending) {
            try identifiers(d).bytes
        }
    }

    public func identifierList(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [ObjectID] {
        try read(pending) { try identifiers(d).ids }
    }

    /// Matching identifiers (call inside `read`).
    func identifiers(_ d: FetchDescriptor) throws -> (bytes: [UInt8], ids: [ObjectID]) {
        let q = CompiledFetch(d)
        let sql = "SELECT t._pk, t._entity \(q.from)\(q.whereSQL)\(q.orderSQL)\(q.limitSQL)"
        var w = JSONWriter()
        var ids: [ObjectID] = []
        w.beginArray()
        try connection.statement(sql).query(q.args) { s in
            guard let e = schema.entity(named: s.text(1)) else { return }
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
            let q = CompiledFetch(d)
            let plan = RowPlan(entities: d.entities, properties: d.propertiesToFetch, prefetched: d.prefetch)
            let sql = q.objectsSQL(plan)
            var w = JSONWriter()
            w.beginObject()
            w.key("sql"); w.string(sql)
            w.key("parameterCount"); w.int(Int64(q.args.count))
            w.key("queryPlan")
            w.beginArray()
            try connection.statement("EXPLAIN QUERY PLAN " + sql).query(q.args) { s in
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

    /// One object as JSON, or nil when it does not exist.
    public func objectJSON(_ id: ObjectID, pending: PendingReplay?) throws -> [UInt8]? {
        try read(pending) {
            guard let concrete = try SQLiteWriter.concreteEntity(connection, dialect, root: id.entity.root, pk: id.pk), concrete.isKind(of: id.entity) else { return nil }
            let plan = RowPlan(entities: [concrete])
            let sql = "SELECT \(plan.selectList) FROM \(quote(concrete.tableName)) t WHERE t._pk = ?1"
            let batch = try readObjects(plan, sql: sql, args: [.int(id.pk)])
            guard let item = batch.items.first else { return nil }
            return Array(batch.bytes[item.range])
        }
    }
}
