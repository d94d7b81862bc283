import CSQLite

/// What a fetch reads (the full descriptor grows in the Query layer).
public struct FetchRequest {
    public var entity: Entity
    public var includeSubentities = true
    public var includePendingChanges = true

    public init(entity: Entity) { self.entity = entity }

    /// The concrete entities whose rows match.
    var entities: [Entity] { includeSubentities ? entity.descendants : [entity] }
}

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
        /// Relationships read in a second query per relationship (never per row).
        var deferred: [Relationship] = []
    }

    let root: Entity
    let selectSQL: String
    var plans: [String: EntityPlan] = [:]
    let single: EntityPlan?
    let deferred: [Relationship]

    static func keyBytes(_ name: String) -> [UInt8] {
        var w = JSONWriter()
        w.key(name)
        return w.bytes
    }

    init(entities: [Entity]) {
        let root = entities[0].root
        self.root = root
        var select = ["t._pk", "t._entity"]
        var columnIndex: [String: Int32] = [:]
        var joins: [String] = []
        var joinIndex: [String: Int32] = [:]
        func column(_ name: String) -> Int32 {
            if let i = columnIndex[name] { return i }
            let i = Int32(select.count)
            select.append("t.\(quote(name))")
            columnIndex[name] = i
            return i
        }
        var allDeferred: [Relationship] = []
        for e in entities {
            var plan = EntityPlan(entity: e)
            for a in e.attributes {
                if a.isTransient {
                    var w = JSONWriter()
                    if let d = a.defaultJSON { d.write(to: &w) } else { w.null() }
                    plan.constants.append((RowPlan.keyBytes(a.name), w.bytes))
                } else {
                    plan.columns.append(Column(key: RowPlan.keyBytes(a.name), index: column(a.name), kind: .attribute(a)))
                }
            }
            for r in e.relationships {
                if let col = r.foreignKeyColumn {
                    let i = column(col)
                    var entityColumn: Int32?
                    if r.destination.root.isInHierarchy {
                        if let j = joinIndex[col] { entityColumn = j } else {
                            let alias = "j\(joins.count)"
                            joins.append("LEFT JOIN \(quote(r.destination.tableName)) \(alias) ON \(alias)._pk = t.\(quote(col))")
                            let j = Int32(select.count)
                            select.append("\(alias)._entity")
                            joinIndex[col] = j
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
        selectSQL = "SELECT \(select.joined(separator: ", ")) FROM \(quote(root.name)) t" + (joins.isEmpty ? "" : " " + joins.joined(separator: " "))
    }
}

extension SQLiteSession {
    struct ObjectSpan { let pk: Int64; let entity: Entity; let start: Int; let end: Int }

    /// Writes every matching row as a JSON object (without its closing brace) into `out`.
    func writeRows(_ plan: RowPlan, sql: String, args: [SQLValue], into out: inout JSONWriter) throws -> [ObjectSpan] {
        var spans: [ObjectSpan] = []
        let stmt = try connection.statement(sql)
        defer { stmt.reset() }
        stmt.bind(args)
        while try stmt.step() {
            let pk = stmt.int64(0)
            let ep: RowPlan.EntityPlan
            if let s = plan.single { ep = s } else {
                guard let p = plan.plans[stmt.text(1)] else { continue }
                ep = p
            }
            let start = out.bytes.count
            out.bytes.append(contentsOf: [UInt8(ascii: "{")] + Array("\"_id\":".utf8))
            out.needsComma = false
            ObjectID(entity: ep.entity, pk: pk).write(to: &out)
            out.rawKey(Array("\"_entity\":".utf8))
            out.string(ep.entity.name)
            for c in ep.columns {
                out.rawKey(c.key)
                try writeColumn(stmt, c, into: &out)
            }
            for (key, json) in ep.constants {
                out.rawKey(key)
                out.bytes.append(contentsOf: json)
                out.needsComma = true
            }
            spans.append(ObjectSpan(pk: pk, entity: ep.entity, start: start, end: out.bytes.count))
        }
        return spans
    }

    @inline(__always)
    private func writeColumn(_ s: Statement, _ c: RowPlan.Column, into w: inout JSONWriter) throws {
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
                if type == SQLITE_TEXT, let dir = sqliteStore.externalDirectory {
                    let bytes = try ExternalStorage.read(directory: dir, name: s.text(i))
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
            var name = r.destination.name
            if let ec = entityColumn {
                if s.columnType(ec) == SQLITE_NULL { w.null(); return }  // dangling link (noAction)
                name = s.text(ec)
            }
            w.beginRawString()
            w.bytes.append(contentsOf: name.utf8)
            w.bytes.append(UInt8(ascii: "/"))
            JSONWriter.appendInt(target, to: &w.bytes)
            w.endRawString()
        }
    }

    /// Identifiers related through `rel` for each owner key in `owners` (one query, bound as a JSON array).
    func relatedIdentifiers(_ rel: Relationship, owners: [Int64]) throws -> [Int64: [UInt8]] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (i, pk) in owners.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendInt(pk, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        let list = SQLValue.text(String(decoding: bytes, as: UTF8.self))
        let dest: Entity = rel.destination
        let sql: String
        switch rel.storage {
        case .foreignKey:
            return [:]
        case .inverseForeignKey(let col):
            sql = "SELECT \(quote(col)), _pk, _entity FROM \(quote(dest.tableName)) WHERE \(quote(col)) IN (SELECT value FROM json_each(?1)) ORDER BY \(quote(col)), _pk"
        case .joinTable(let table, let ownerCol, let targetCol):
            sql = "SELECT j.\(quote(ownerCol)), d._pk, d._entity FROM \(quote(table)) j JOIN \(quote(dest.tableName)) d ON d._pk = j.\(quote(targetCol)) WHERE j.\(quote(ownerCol)) IN (SELECT value FROM json_each(?1)) ORDER BY j.\(quote(ownerCol)), d._pk"
        }
        var result: [Int64: [UInt8]] = [:]
        var current: Int64 = 0
        var buf: [UInt8] = []
        var first = true
        try connection.statement(sql).query([list]) { s in
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
            let name = s.textBuffer(2)
            buf.append(contentsOf: name)
            buf.append(UInt8(ascii: "/"))
            JSONWriter.appendInt(s.int64(1), to: &buf)
            buf.append(UInt8(ascii: "\""))
        }
        if !first { buf.append(UInt8(ascii: "]")); result[current] = buf }
        return result
    }

    /// Runs `sql` (a SELECT built on `plan.selectSQL`) and writes the objects.
    /// - Parameter asArray: a JSON array of objects, or (false) the first object alone.
    func writeObjects(_ plan: RowPlan, sql: String, args: [SQLValue], asArray: Bool) throws -> (json: [UInt8], count: Int) {
        var rows = JSONWriter(capacity: 4096)
        let spans = try writeRows(plan, sql: sql, args: args, into: &rows)
        var related: [(Relationship, [Int64: [UInt8]])] = []
        if !plan.deferred.isEmpty && !spans.isEmpty {
            let owners = spans.map(\.pk)
            for rel in plan.deferred {
                related.append((rel, try relatedIdentifiers(rel, owners: owners)))
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(rows.bytes.count + spans.count * 2 + 2)
        if asArray { out.append(UInt8(ascii: "[")) }
        let toOneNull: [UInt8] = Array("null".utf8)
        let toManyEmpty: [UInt8] = Array("[]".utf8)
        rows.bytes.withUnsafeBufferPointer { all in
            for (n, span) in spans.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[span.start..<span.end]))
                for (rel, map) in related where span.entity.relationshipByName[rel.name] === rel {
                    out.append(UInt8(ascii: ","))
                    out.append(contentsOf: RowPlan.keyBytes(rel.name))
                    if let ids = map[span.pk] {
                        if rel.isToMany { out.append(contentsOf: ids) } else { out.append(contentsOf: ids.dropFirst().dropLast()) }
                    } else {
                        out.append(contentsOf: rel.isToMany ? toManyEmpty : toOneNull)
                    }
                }
                out.append(UInt8(ascii: "}"))
                if !asArray { break }
            }
        }
        if asArray { out.append(UInt8(ascii: "]")) }
        return (out, spans.count)
    }

    /// SQL restricting rows of `root`'s table to the concrete entities `entities`.
    func entityFilter(_ entities: [Entity]) -> (sql: String, args: [SQLValue]) {
        let root = entities[0].root
        if !root.isInHierarchy || entities.count == root.descendants.count { return ("", []) }
        if entities.count == 1 { return ("t._entity = ?", [.text(entities[0].name)]) }
        return ("t._entity IN (\(entities.map { _ in "?" }.joined(separator: ", ")))", entities.map { .text($0.name) })
    }

    // MARK: Reads

    /// All objects of a request as a JSON array.
    func fetchJSON(_ request: FetchRequest, changes: [Change]) throws -> [UInt8] {
        try withChangesApplied(request.includePendingChanges ? changes : []) {
            let entities = request.entities
            let plan = RowPlan(entities: entities)
            let filter = entityFilter(entities)
            let sql = plan.selectSQL + (filter.sql.isEmpty ? "" : " WHERE " + filter.sql) + " ORDER BY t._pk"
            return try writeObjects(plan, sql: sql, args: filter.args, asArray: true).json
        }
    }

    func count(_ request: FetchRequest, changes: [Change]) throws -> Int64 {
        try withChangesApplied(request.includePendingChanges ? changes : []) {
            let filter = entityFilter(request.entities)
            let sql = "SELECT count(*) FROM \(quote(request.entity.tableName)) t" + (filter.sql.isEmpty ? "" : " WHERE " + filter.sql)
            guard case .int(let n)? = try connection.statement(sql).scalar(filter.args) else { return 0 }
            return n
        }
    }

    func identifiersJSON(_ request: FetchRequest, changes: [Change]) throws -> [UInt8] {
        try withChangesApplied(request.includePendingChanges ? changes : []) {
            let filter = entityFilter(request.entities)
            let sql = "SELECT t._pk, t._entity FROM \(quote(request.entity.tableName)) t" + (filter.sql.isEmpty ? "" : " WHERE " + filter.sql) + " ORDER BY t._pk"
            var w = JSONWriter()
            w.beginArray()
            try connection.statement(sql).query(filter.args) { s in
                w.beginRawString()
                w.bytes.append(contentsOf: s.textBuffer(1))
                w.bytes.append(UInt8(ascii: "/"))
                JSONWriter.appendInt(s.int64(0), to: &w.bytes)
                w.endRawString()
            }
            w.endArray()
            return w.bytes
        }
    }

    /// One object as JSON, or nil when it does not exist.
    func objectJSON(_ id: ObjectID, changes: [Change]) throws -> [UInt8]? {
        try withChangesApplied(changes) {
            guard let concrete = try concreteEntity(root: id.entity.root, pk: id.pk), concrete.isKind(of: id.entity) else { return nil }
            let plan = RowPlan(entities: [concrete])
            let result = try writeObjects(plan, sql: plan.selectSQL + " WHERE t._pk = ?1", args: [.int(id.pk)], asArray: false)
            return result.count == 0 ? nil : result.json
        }
    }
}

extension FetchRequest {
    /// Decodes a fetch descriptor (DESIGN §4). Unknown keys are errors naming their path.
    public static func decode(_ json: UnsafeBufferPointer<UInt8>, schema: Schema) throws -> FetchRequest {
        let value = try JSONValue.parse(json)
        var o = try ObjectReader(value, path: JSONPath(), what: "fetch descriptor")
        guard let name = try o.string("entity") else {
            throw StrataError(.invalid, "fetch descriptor is missing 'entity'", path: "/entity")
        }
        guard let e = schema.entity(named: name) else {
            throw StrataError(.invalid, "unknown entity '\(name)' in fetch descriptor", entity: name, path: "/entity")
        }
        var request = FetchRequest(entity: e)
        request.includeSubentities = try o.bool("includeSubentities") ?? true
        request.includePendingChanges = try o.bool("includePendingChanges") ?? true
        try o.finish()
        return request
    }
}
