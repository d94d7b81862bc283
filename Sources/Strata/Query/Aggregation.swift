/// Core Data's dictionary results, as keys of a fetch descriptor (docs/JSON.md §5,
/// "Aggregates and groups"):
///
///     {"entity": "Trip", "groupBy": ["destination"],
///      "aggregates": [{"name": "trips", "function": "count"},
///                     {"name": "items", "function": "count", "keyPath": "bucketList"},
///                     {"name": "total", "function": "sum", "keyPath": "bucketList.cost"}],
///      "having": {">": [{"key": "trips"}, 1]},
///      "sortBy": [{"key": "total", "order": "reverse"}]}
///
/// gives `[{"destination": "Paris", "trips": 3, "items": 7, "total": "1250.5"}, …]`: one
/// dictionary per group of the matching objects (one in all without `groupBy`), its group keys
/// then its aggregates. `"distinct": true` with `propertiesToFetch` groups by those properties
/// (SELECT DISTINCT). A descriptor with any of these keys is an aggregation.
public struct Aggregation {
    public enum Function: String, CaseIterable, Sendable { case count, sum, avg, min, max }

    /// What an aggregate reads from each object of a group.
    enum Value {
        /// The objects themselves (`count` without a key path).
        case objects
        /// An attribute of the object, through to-one hops.
        case keyPath(KeyPathRef)
        /// The related objects of a to-many key path (`bucketList`), or an attribute of
        /// theirs (`bucketList.cost`, `value`: its key path from the related object).
        case related(KeyPathRef, value: KeyPathRef?)
    }

    /// One key of every result dictionary, in order: the group keys, then the aggregates.
    struct Column {
        let name: String
        /// The type of the value written (an aggregate's result type).
        let type: AttributeType
        /// A group key's key path (to an attribute); nil for an aggregate.
        let group: KeyPathRef?
        let function: Function?
        let value: Value
        /// A sum, whose NULL means it failed (``ExactSum``, ``DecimalSum``).
        var failsWhenNil: Bool { function == .sum }
    }

    /// A sort of the results, by a column.
    struct Order {
        let column: Int
        let reverse: Bool
        let comparator: FetchDescriptor.SortKey.Comparator
    }

    private(set) var columns: [Column] = []
    private(set) var groupCount = 0
    var having: TypedPredicate?
    /// The entity `having` is checked against: one attribute per column of an identifier's name
    /// (kept alive with its schema: entities refer to each other unowned).
    private(set) var scope: Schema?
    var order: [Order] = []

    var groupKeys: ArraySlice<Column> { columns[0..<groupCount] }
    var aggregates: ArraySlice<Column> { columns[groupCount...] }

    static let keys = ["groupBy", "aggregates", "having", "distinct"]
    /// The most group keys plus aggregates one descriptor takes.
    static let maxColumns = 64
}

extension Aggregation {
    /// Decodes `groupBy`, `aggregates`, `distinct` (with `propertiesToFetch`) and `having`, in that
    /// order; nil when the descriptor has none of them.
    static func decode(_ o: inout ObjectReader, schema: Schema, entity e: Entity, checker: inout PredicateChecker,
                       bindings: [String: JSONValue]) throws -> Aggregation? {
        let groupBy = try o.array("groupBy")
        let aggregates = try o.array("aggregates")
        let distinct = try o.bool("distinct") ?? false
        let having = o.value("having")
        var properties: [JSONValue]?
        if distinct {
            guard let p = try o.array("propertiesToFetch"), !p.isEmpty else {
                throw StrataError(.invalid, "'distinct' needs 'propertiesToFetch': the properties whose distinct combinations are returned",
                                  entity: e.name, path: "/distinct")
            }
            properties = p
        }
        guard groupBy != nil || aggregates != nil || distinct || (having != nil && having != .null) else { return nil }
        if !distinct, o.value("propertiesToFetch") != nil {
            throw StrataError(.invalid, "'propertiesToFetch' does not apply to an aggregation: each result holds its group keys and aggregates (for distinct values, add \"distinct\": true)",
                              entity: e.name, path: "/propertiesToFetch")
        }
        if distinct && (groupBy != nil || aggregates != nil) {
            throw StrataError(.invalid, "'distinct' takes 'propertiesToFetch' alone: with 'groupBy' or 'aggregates', the groups are already distinct",
                              entity: e.name, path: "/distinct")
        }
        var a = Aggregation()
        for (i, item) in (properties ?? groupBy ?? []).enumerated() {
            let p = JSONPath() / (distinct ? "propertiesToFetch" : "groupBy") / i
            try a.append(try groupKey(item, at: p, of: e, checker: &checker), at: p)
        }
        a.groupCount = a.columns.count
        for (i, item) in (aggregates ?? []).enumerated() {
            let p = JSONPath() / "aggregates" / i
            try a.append(try aggregate(item, at: p, of: e, schema: schema, checker: &checker), at: p / "name")
        }
        if let having, having != .null {
            try a.decodeHaving(having, entity: e, bindings: bindings)
        }
        return a
    }

    private mutating func append(_ c: Column, at p: JSONPath) throws {
        if columns.contains(where: { $0.name == c.name }) {
            throw StrataError(.invalid, "'\(c.name)' names two results of the aggregation (give each group key and aggregate its own name)",
                              path: p.description)
        }
        guard columns.count < Aggregation.maxColumns else {
            throw StrataError(.invalid, "an aggregation takes at most \(Aggregation.maxColumns) group keys and aggregates", path: p.description)
        }
        columns.append(c)
    }

    /// A result name given by the caller: an identifier (it names a SQL column and a key in `having`).
    private static func checkName(_ name: String, at p: JSONPath, entity e: Entity) throws {
        do { try SchemaDecoder.checkIdentifier(name, "result", p, entity: e.name) } catch var error as StrataError {
            error.code = .invalid
            throw error
        }
    }

    /// A group key: a key path, or `{"name", "keyPath"}`; it ends at an attribute, through to-one hops.
    private static func groupKey(_ item: JSONValue, at p: JSONPath, of e: Entity, checker: inout PredicateChecker) throws -> Column {
        var name: String, keyPath: String, keyAt = p
        switch item {
        case .string(let s):
            name = s; keyPath = s
        case .object:
            var o = try ObjectReader(item, path: p, what: "group key")
            guard let k = try o.string("keyPath") else { throw StrataError(.invalid, "group key needs 'keyPath'", entity: e.name, path: (p / "keyPath").description) }
            guard let n = try o.string("name") else { throw StrataError(.invalid, "group key needs 'name'", entity: e.name, path: (p / "name").description) }
            try o.finish()
            try checkName(n, at: p / "name", entity: e)
            name = n; keyPath = k; keyAt = p / "keyPath"
        default:
            throw StrataError(.invalid, "expected a key path, or an object {\"name\", \"keyPath\"}", entity: e.name, path: p.description)
        }
        let ref = try attributePath(keyPath, at: keyAt, of: e, checker: &checker, what: "group by")
        guard case .attribute(let a) = ref.end else { preconditionFailure("attributePath ends at an attribute") }
        return Column(name: name, type: a.type, group: ref, function: nil, value: .keyPath(ref))
    }

    /// A key path from the fetched object to a stored attribute that can be compared, through to-one hops.
    private static func attributePath(_ keyPath: String, at p: JSONPath, of e: Entity, checker: inout PredicateChecker,
                                      what: String) throws -> KeyPathRef {
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let at = SourceLocation(jsonPath: p.description)
        let ref: KeyPathRef
        do {
            ref = try checker.resolve(scope: 0, plain: parts, at: at)
            try checker.countJoins(ref, at)
        } catch var error as StrataError {
            error.entity = error.entity ?? e.name
            error.path = p.description
            throw error
        }
        guard case .attribute(let a) = ref.end else {
            throw StrataError(.invalid, "cannot \(what) '\(keyPath)': it is not an attribute (name an attribute, through to-one relationships)",
                              entity: e.name, attribute: keyPath, path: p.description)
        }
        try checkReadable(a, keyPath, at: p, what: what, entity: e)
        return ref
    }

    private static func checkReadable(_ a: Attribute, _ keyPath: String, at p: JSONPath, what: String, entity e: Entity) throws {
        let reason: String?
        if a.isTransient { reason = "it is transient (not stored)" }
        else if a.type == .json { reason = "it is a json attribute" }
        else if a.isComposite { reason = "it is a composite: name one of its fields (e.g. '\(a.fields[0].name)')" }
        else if a.externalStorage { reason = "it uses external storage" }
        else { reason = nil }
        if let reason {
            throw StrataError(.invalid, "cannot \(what) '\(keyPath)': \(reason)", entity: e.name, attribute: a.name, path: p.description)
        }
    }

    /// `{"name", "function", "keyPath"}`: `keyPath` may pass one to-many relationship (the
    /// aggregate then reads every related object of the group's objects); `count` may leave it
    /// out (the objects) or end at the to-many (the related objects).
    private static func aggregate(_ item: JSONValue, at p: JSONPath, of e: Entity, schema: Schema,
                                  checker: inout PredicateChecker) throws -> Column {
        var o = try ObjectReader(item, path: p, what: "aggregate")
        guard let name = try o.string("name") else { throw StrataError(.invalid, "aggregate needs 'name'", entity: e.name, path: (p / "name").description) }
        try checkName(name, at: p / "name", entity: e)
        guard let fname = try o.string("function") else {
            throw StrataError(.invalid, "aggregate '\(name)' needs 'function' (count, sum, avg, min, max)", entity: e.name, path: (p / "function").description)
        }
        guard let f = Function(rawValue: fname) else {
            throw StrataError(.invalid, "unknown aggregate function '\(fname)' (known: count, sum, avg, min, max)", entity: e.name, path: (p / "function").description)
        }
        let keyPath = try o.string("keyPath")
        try o.finish()
        let kp = p / "keyPath"
        guard let keyPath else {
            guard f == .count else {
                throw StrataError(.invalid, "aggregate '\(name)': '\(f.rawValue)' needs 'keyPath' (only count counts the objects themselves)", entity: e.name, path: kp.description)
            }
            return Column(name: name, type: .int, group: nil, function: f, value: .objects)
        }
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // The first to-many relationship on the way, if any, splits the key path.
        var value = Value.objects
        var attribute: Attribute?
        for i in 1...parts.count {
            let at = SourceLocation(jsonPath: kp.description)
            let prefix: KeyPathRef
            do { prefix = try checker.resolve(scope: 0, plain: Array(parts[0..<i]), at: at) } catch var error as StrataError {
                error.entity = error.entity ?? e.name
                error.path = kp.description
                throw error
            }
            guard case .toMany(let rel) = prefix.end else {
                if i == parts.count {
                    let ref = try attributePath(keyPath, at: kp, of: e, checker: &checker, what: "aggregate")
                    if case .attribute(let a) = ref.end { attribute = a }
                    value = .keyPath(ref)
                }
                continue
            }
            do { try checker.countJoins(prefix, at) } catch var error as StrataError {
                error.entity = error.entity ?? e.name
                throw error
            }
            let rest = Array(parts[i...])
            if rest.isEmpty {
                guard f == .count else {
                    throw StrataError(.invalid, "aggregate '\(name)': '\(f.rawValue)' of '\(keyPath)' needs an attribute of the related objects (e.g. '\(keyPath).\(rel.destination.attributes.first?.name ?? "value")')",
                                      entity: e.name, path: kp.description)
                }
                value = .related(prefix, value: nil)
                break
            }
            var inner = PredicateChecker(schema: schema, root: rel.destination, bindings: [:])
            let ref = try attributePath(rest.joined(separator: "."), at: kp, of: rel.destination, checker: &inner, what: "aggregate")
            if case .attribute(let a) = ref.end { attribute = a }
            value = .related(prefix, value: ref)
            break
        }
        let type = try resultType(f, attribute, name: name, keyPath: keyPath, at: kp, entity: e)
        return Column(name: name, type: type, group: nil, function: f, value: value)
    }

    /// The type of `f`'s result over `a`'s values (nil: related objects counted).
    private static func resultType(_ f: Function, _ a: Attribute?, name: String, keyPath: String, at p: JSONPath, entity e: Entity) throws -> AttributeType {
        if f == .count { return .int }
        guard let t = a?.type else { preconditionFailure("only count reads no attribute") }
        let takes: [AttributeType], what: String
        switch f {
        case .sum, .avg: takes = [.int, .double, .decimal]; what = "ints, doubles and decimals"
        default: takes = [.int, .double, .decimal, .date]; what = "ints, doubles, decimals and dates"
        }
        guard takes.contains(t) else {
            throw StrataError(.invalid, "aggregate '\(name)': '\(f.rawValue)' of '\(keyPath)' (a \(t.rawValue)) is not supported: \(f.rawValue) takes \(what)",
                              entity: e.name, attribute: keyPath, path: p.description)
        }
        if f == .avg && t != .decimal { return .double }
        return t
    }

    /// `having`: a predicate (JSON or `#Predicate` text) over the results, checked against an
    /// entity that has one attribute per column named by an identifier (group keys with to-one
    /// hops need a `name` to be named here).
    private mutating func decodeHaving(_ value: JSONValue, entity e: Entity, bindings: [String: JSONValue]) throws {
        var attributes: [JSONValue] = []
        for c in columns where (try? Aggregation.checkName(c.name, at: JSONPath(), entity: e)) != nil {
            attributes.append(.object([("name", .string(c.name)), ("type", .string(c.type.rawValue)), ("optional", .bool(true))]))
        }
        let json = JSONValue.object([("version", .string("having")), ("entities", .array([
            .object([("name", .string(e.name)), ("attributes", .array(attributes))])]))])
        let s = try SchemaDecoder.decode(json, path: JSONPath())
        scope = s
        let groupEntity = s.entities[0]
        var checker = PredicateChecker(schema: s, root: groupEntity, bindings: bindings)
        having = try FetchDescriptor.check(value, checker: &checker, path: JSONPath() / "having", entity: e)
    }

    /// `sortBy` of an aggregation: each key names a result (a group key or an aggregate).
    mutating func decodeSortBy(_ items: [JSONValue], entity e: Entity) throws {
        for (i, item) in items.enumerated() {
            let p = JSONPath() / "sortBy" / i
            let (key, reverse, comparator) = try FetchDescriptor.sortOptions(item, at: p)
            guard let column = columns.firstIndex(where: { $0.name == key }) else {
                throw StrataError(.invalid, "cannot sort by '\(key)': an aggregation sorts by its results (\(columns.map(\.name).joined(separator: ", ")))",
                                  entity: e.name, path: (p / "key").description)
            }
            order.append(Order(column: column, reverse: reverse, comparator: comparator))
        }
    }
}
