/// What to write for the rows of some entities of one hierarchy, computed
/// once per read from the schema: per entity, the columns to encode, the
/// transient constants and the relationships written after the row.
///
/// The plan names what a row must provide (`selections`); the store turns
/// that into its own query. A row is: the leading columns, the primary key,
/// the concrete entity name, then one result column per selection.
///
/// Everything the row loop touches is a trivial value: keys and fixed JSON
/// text live in one byte pool and are addressed by ranges, so writing a row
/// retains nothing.
struct ObjectPlan {
    /// A value a row must provide, in result order after the key and entity name.
    enum Selection {
        /// A stored column of the table.
        case column(String)
        /// The concrete entity name of the row that a to-one link (a column of this table) names.
        case linkedEntity(Relationship)
    }

    enum Encoding: UInt8 { case text, int, bool, double, date, json, data, externalData, link }

    struct Member {
        /// `,"name":`
        let key: Range<Int>
        let index: Int32
        let type: Encoding
        /// Links: the column with the target's concrete entity (-1: the declared destination).
        let entityColumn: Int32
        /// Links: the declared destination's name.
        let fallback: Range<Int>
        /// External data: index in `externalAttributes`.
        let attribute: Int
    }

    struct EntityPlan {
        /// The entity name as a row gives it.
        let name: Range<Int>
        /// `{"_id":"Name/`
        let idPrefix: Range<Int>
        /// `","_entity":"Name"`
        let entityPart: Range<Int>
        /// Every transient constant (`,"key":value`), written after the columns.
        let constants: Range<Int>
        let columns: Range<Int>
        /// Indices in `deferred` of the relationships this entity has.
        let deferred: Range<Int>
    }

    private(set) var pool: [UInt8] = []
    private(set) var columns = ContiguousArray<Member>()
    private(set) var entities = ContiguousArray<EntityPlan>()
    private(set) var deferredIndices = ContiguousArray<Int>()
    /// `,"name":` of each deferred relationship.
    private(set) var deferredKeys = ContiguousArray<Range<Int>>()
    /// Relationships written after the row: identifiers read in one query per relationship, or prefetched objects.
    private(set) var deferred: [Relationship] = []
    private(set) var externalAttributes: [Attribute] = []
    private(set) var selections: [Selection] = []
    /// Leading columns before the primary key.
    let leading: Int32
    /// Whether every row is of `entities[0]` (no entity-name lookup per row).
    let isSingle: Bool

    private mutating func add(_ bytes: some Sequence<UInt8>) -> Range<Int> {
        let start = pool.count
        pool.append(contentsOf: bytes)
        return start..<pool.count
    }

    private static func keyBytes(_ name: String) -> [UInt8] {
        var w = JSONWriter()
        w.bytes.append(UInt8(ascii: ","))
        w.key(name)
        return w.bytes
    }

    /// - Parameters:
    ///   - properties: names to read (nil: all).
    ///   - prefetched: relationships returned as objects (always read, written after the row).
    ///   - leading: how many values a row has before its primary key (e.g. the owner of a prefetched object).
    init(entities list: [Entity], properties: [String]? = nil, prefetched: [Relationship] = [], leading: Int = 0) {
        self.leading = Int32(leading)
        isSingle = list.count == 1 && !list[0].root.isInHierarchy
        let first = Int32(leading + 2)
        var columnIndex: [String: Int32] = [:]
        var entityColumnIndex: [String: Int32] = [:]
        func wanted(_ name: String) -> Bool { properties.map { $0.contains(name) } ?? true }
        // Prefetched relationships come first, in the order asked for, then the others as met.
        for r in prefetched where !deferred.contains(where: { $0 === r }) && list.contains(where: { $0.relationshipByName[r.name] === r }) {
            deferred.append(r)
            deferredKeys.append(add(ObjectPlan.keyBytes(r.name)))
        }
        for e in list {
            let name = add(e.name.utf8)
            let idPrefix = add(Array("{\"_id\":\"".utf8) + Array(e.name.utf8) + [UInt8(ascii: "/")])
            var part = Array("\",\"_entity\":".utf8)
            var w = JSONWriter()
            w.string(e.name)
            part += w.bytes
            let entityPart = add(part)
            let columnsStart = columns.count
            let deferredStart = deferredIndices.count
            for a in e.attributes where wanted(a.name) && !a.isTransient {
                let index: Int32
                if let i = columnIndex[a.name] { index = i } else {
                    index = first + Int32(selections.count)
                    selections.append(.column(a.name))
                    columnIndex[a.name] = index
                }
                let type: Encoding
                var attribute = -1
                switch a.type {
                case .string, .url, .uuid, .decimal: type = .text
                case .int: type = .int
                case .bool: type = .bool
                case .double: type = .double
                case .date: type = .date
                case .json: type = .json
                case .data:
                    if a.externalStorage {
                        type = .externalData
                        attribute = externalAttributes.count
                        externalAttributes.append(a)
                    } else {
                        type = .data
                    }
                }
                columns.append(Member(key: add(ObjectPlan.keyBytes(a.name)), index: index, type: type, entityColumn: -1, fallback: 0..<0, attribute: attribute))
            }
            for r in e.relationships {
                let isPrefetched = prefetched.contains { $0 === r }
                guard wanted(r.name) || isPrefetched else { continue }
                if r.isHeldInRow, !isPrefetched {
                    let col = r.name
                    let index: Int32
                    if let i = columnIndex[col] { index = i } else {
                        index = first + Int32(selections.count)
                        selections.append(.column(col))
                        columnIndex[col] = index
                    }
                    var entityColumn: Int32 = -1
                    if r.destination.root.isInHierarchy {
                        if let j = entityColumnIndex[col] { entityColumn = j } else {
                            entityColumn = first + Int32(selections.count)
                            selections.append(.linkedEntity(r))
                            entityColumnIndex[col] = entityColumn
                        }
                    }
                    columns.append(Member(key: add(ObjectPlan.keyBytes(r.name)), index: index, type: .link,
                                          entityColumn: entityColumn, fallback: add(r.destination.name.utf8), attribute: -1))
                } else {
                    let d: Int
                    if let i = deferred.firstIndex(where: { $0 === r }) { d = i } else {
                        d = deferred.count
                        deferred.append(r)
                        deferredKeys.append(add(ObjectPlan.keyBytes(r.name)))
                    }
                    deferredIndices.append(d)
                }
            }
            deferredIndices[deferredStart...].sort()
            let constantsStart = pool.count
            for a in e.attributes where wanted(a.name) && a.isTransient {
                var w = JSONWriter()
                if let d = a.defaultJSON { d.write(to: &w) } else { w.null() }
                _ = add(ObjectPlan.keyBytes(a.name) + w.bytes)
            }
            entities.append(EntityPlan(name: name, idPrefix: idPrefix, entityPart: entityPart,
                                       constants: constantsStart..<pool.count, columns: columnsStart..<columns.count,
                                       deferred: deferredStart..<deferredIndices.count))
        }
    }
}

/// JSON values of a relationship per owner key, all in one buffer: an array of
/// objects or identifiers (to-many), or one object or identifier (to-one).
struct RelatedValues {
    var bytes: [UInt8] = []
    var ranges: [Int64: Range<Int>] = [:]
}

/// Writes rows as JSON objects (docs/JSON.md): `_id`, `_entity`, attributes
/// encoded by type, to-one links as identifiers, and relationships read after
/// the rows (identifiers, or prefetched objects nested under their owner).
///
/// When the values of every relationship read after the rows are known before
/// them, objects are written straight into the result; otherwise rows go to a
/// scratch buffer and each object is copied once into the result, completed
/// with its relationships.
struct ObjectWriter {
    enum Grouping {
        /// One JSON array of every object, in row order.
        case array
        /// Per owner (rows ordered by owner): an array of objects.
        case toMany
        /// Per owner: the first object.
        case toOne
    }

    private struct Span {
        let owner: Int64
        let pk: Int64
        let entity: Int
        let start: Int
        let end: Int
    }

    let plan: ObjectPlan
    let grouping: Grouping
    private var out = JSONWriter(capacity: 4096)
    /// Rows of deferred objects, without their closing brace.
    private var rows = JSONWriter(capacity: 0)
    private var spans = ContiguousArray<Span>()
    private var ranges: [Int64: Range<Int>] = [:]
    private var owner: Int64 = 0
    private var groupStart = -1
    private var objects = 0
    /// Values of `plan.deferred`, by index (set them with `setRelated` after `write`).
    private var related: [RelatedValues?]

    /// - Parameter related: values of `plan.deferred` known before the rows, by index; with all of
    ///   them, objects are written straight into the result.
    init(plan: ObjectPlan, grouping: Grouping = .array, related: [RelatedValues?] = []) {
        self.plan = plan
        self.grouping = grouping
        self.related = plan.deferred.indices.map { $0 < related.count ? related[$0] : nil }
        if grouping == .array { out.bytes.append(UInt8(ascii: "[")) }
    }

    /// Whether `write` keeps objects open for relationships whose values are not known yet.
    private(set) var isDeferred = false

    /// The primary keys of the rows written (when deferred).
    var keys: [Int64] { spans.map(\.pk) }

    func hasRelated(_ index: Int) -> Bool { related[index] != nil }
    mutating func setRelated(_ index: Int, _ values: RelatedValues) { related[index] = values }

    /// Writes every row of `cursor`.
    mutating func write<C: RowCursor>(_ cursor: inout C) throws {
        let plan = self.plan
        let pkColumn = plan.leading
        let related = self.related
        isDeferred = related.contains { $0 == nil }
        let direct = !isDeferred
        try plan.pool.withUnsafeBufferPointer { pool in
            try plan.columns.withUnsafeBufferPointer { columns in
                try plan.entities.withUnsafeBufferPointer { entities in
                    while try cursor.next() {
                        let pk = cursor.int64(pkColumn)
                        var ei = 0
                        if !plan.isSingle {
                            let name = cursor.text(pkColumn + 1)
                            ei = -1
                            for i in 0..<entities.count where ObjectWriter.equal(name, pool, entities[i].name) { ei = i; break }
                            if ei < 0 { continue }
                        }
                        let owner = plan.leading > 0 ? cursor.int64(0) : 0
                        if direct {
                            guard open(owner) else { continue }
                            try ObjectWriter.writeObject(cursor, pk: pk, entities[ei], plan, pool, columns, into: &out)
                            ObjectWriter.appendRelated(pk: pk, entities[ei], plan, related, pool, to: &out.bytes)
                            out.bytes.append(UInt8(ascii: "}"))
                            close(owner)
                        } else {
                            let start = rows.bytes.count
                            try ObjectWriter.writeObject(cursor, pk: pk, entities[ei], plan, pool, columns, into: &rows)
                            spans.append(Span(owner: owner, pk: pk, entity: ei, start: start, end: rows.bytes.count))
                        }
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ pool: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        guard a.count == r.count else { return false }
        for i in 0..<a.count where a[i] != pool[r.lowerBound + i] { return false }
        return true
    }

    @inline(__always)
    private static func append(_ pool: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: pool[r]))
    }

    /// One object without its closing brace.
    @inline(__always)
    private static func writeObject<C: RowCursor>(_ c: C, pk: Int64, _ e: ObjectPlan.EntityPlan, _ plan: ObjectPlan, _ pool: UnsafeBufferPointer<UInt8>,
                                           _ columns: UnsafeBufferPointer<ObjectPlan.Member>, into w: inout JSONWriter) throws {
        ObjectWriter.append(pool, e.idPrefix, to: &w.bytes)
        JSONWriter.appendInt(pk, to: &w.bytes)
        ObjectWriter.append(pool, e.entityPart, to: &w.bytes)
        for k in e.columns {
            let col = columns[k]
            ObjectWriter.append(pool, col.key, to: &w.bytes)
            w.needsComma = false
            let i = col.index
            let kind = c.kind(i)
            if kind == .null { w.null(); continue }
            switch col.type {
            case .text: w.string(utf8: c.text(i))
            case .int: w.int(c.int64(i))
            case .bool: w.bool(c.int64(i) != 0)
            case .double: w.double(c.double(i))
            case .date: ValueCodec.writeDate(c.double(i), to: &w)
            case .json: w.raw(bytes: c.text(i))
            case .data, .externalData:
                w.beginRawString()
                if col.type == .externalData && kind == .text {
                    // The column names where the value lives (the backend checks it: the store is untrusted).
                    let bytes = try c.externalData(c.text(i), of: plan.externalAttributes[col.attribute], pk: pk)
                    bytes.withUnsafeBytes { Base64.encode($0, into: &w.bytes) }
                } else {
                    Base64.encode(c.blob(i), into: &w.bytes)
                }
                w.endRawString()
            case .link:
                let target = c.int64(i)
                w.beginRawString()
                if col.entityColumn >= 0, c.kind(col.entityColumn) != .null {
                    w.bytes.append(contentsOf: c.text(col.entityColumn))
                } else {
                    // No subentities, or a dangling link (noAction): the declared destination.
                    ObjectWriter.append(pool, col.fallback, to: &w.bytes)
                }
                w.bytes.append(UInt8(ascii: "/"))
                JSONWriter.appendInt(target, to: &w.bytes)
                w.endRawString()
            }
        }
        ObjectWriter.append(pool, e.constants, to: &w.bytes)
    }

    /// `,"name":value` of each relationship of `e` read after the rows: `[]` or `null` when an owner has none.
    @inline(__always)
    private static func appendRelated(pk: Int64, _ e: ObjectPlan.EntityPlan, _ plan: ObjectPlan, _ related: [RelatedValues?],
                                      _ pool: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        for k in e.deferred {
            let d = plan.deferredIndices[k]
            append(pool, plan.deferredKeys[d], to: &bytes)
            if let values = related[d], let r = values.ranges[pk] {
                values.bytes.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[r])) }
            } else if plan.deferred[d].isToMany {
                bytes.append(UInt8(ascii: "[")); bytes.append(UInt8(ascii: "]"))
            } else {
                bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            }
        }
    }

    /// Starts an object of `owner` in the result; false when it is not written (a second object of a to-one).
    @inline(__always)
    private mutating func open(_ owner: Int64) -> Bool {
        switch grouping {
        case .array:
            if objects > 0 { out.bytes.append(UInt8(ascii: ",")) }
        case .toMany:
            if groupStart >= 0 && owner == self.owner {
                out.bytes.append(UInt8(ascii: ","))
            } else {
                closeGroup()
                self.owner = owner
                groupStart = out.bytes.count
                out.bytes.append(UInt8(ascii: "["))
            }
        case .toOne:
            if ranges[owner] != nil { return false }
            groupStart = out.bytes.count
        }
        objects += 1
        return true
    }

    @inline(__always)
    private mutating func close(_ owner: Int64) {
        if grouping == .toOne { ranges[owner] = groupStart..<out.bytes.count }
    }

    private mutating func closeGroup() {
        guard grouping == .toMany, groupStart >= 0 else { return }
        out.bytes.append(UInt8(ascii: "]"))
        ranges[owner] = groupStart..<out.bytes.count
        groupStart = -1
    }

    /// Completes deferred objects with their relationships.
    private mutating func assemble() {
        guard isDeferred else { return }
        let spans = self.spans
        let related = self.related
        let plan = self.plan
        let scratch = rows.bytes
        rows = JSONWriter(capacity: 0)
        out.bytes.reserveCapacity(out.bytes.count + scratch.count + spans.count * 2)
        scratch.withUnsafeBufferPointer { rows in
            plan.pool.withUnsafeBufferPointer { pool in
                for span in spans {
                    guard open(span.owner) else { continue }
                    out.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: rows[span.start..<span.end]))
                    ObjectWriter.appendRelated(pk: span.pk, plan.entities[span.entity], plan, related, pool, to: &out.bytes)
                    out.bytes.append(UInt8(ascii: "}"))
                    close(span.owner)
                }
            }
        }
    }

    /// A JSON array of every object (grouping `.array`).
    mutating func finishArray() -> [UInt8] {
        assemble()
        out.bytes.append(UInt8(ascii: "]"))
        return out.bytes
    }

    /// The objects by owner (grouping `.toMany` or `.toOne`).
    mutating func finishGroups() -> RelatedValues {
        assemble()
        closeGroup()
        return RelatedValues(bytes: out.bytes, ranges: ranges)
    }

    /// The identifiers of related rows by owner, from rows of (owner, key, concrete entity name) ordered by owner.
    static func identifiers<C: RowCursor>(_ c: inout C, toMany: Bool) throws -> RelatedValues {
        var result = RelatedValues()
        var current: Int64 = 0
        var start = -1
        while try c.next() {
            let owner = c.int64(0)
            if start >= 0 && owner == current {
                if !toMany { continue }
                result.bytes.append(UInt8(ascii: ","))
            } else {
                if start >= 0 {
                    if toMany { result.bytes.append(UInt8(ascii: "]")) }
                    result.ranges[current] = start..<result.bytes.count
                }
                current = owner
                start = result.bytes.count
                if toMany { result.bytes.append(UInt8(ascii: "[")) }
            }
            result.bytes.append(UInt8(ascii: "\""))
            result.bytes.append(contentsOf: c.text(2))
            result.bytes.append(UInt8(ascii: "/"))
            JSONWriter.appendInt(c.int64(1), to: &result.bytes)
            result.bytes.append(UInt8(ascii: "\""))
        }
        if start >= 0 {
            if toMany { result.bytes.append(UInt8(ascii: "]")) }
            result.ranges[current] = start..<result.bytes.count
        }
        return result
    }
}
