/// SwiftData's FetchDescriptor, as JSON (DESIGN §4, docs/JSON.md §5):
///
///     {"entity": "Trip",
///      "predicate": {"and": [{"is": "PersonalTrip"}, {">=": [{"key": "endDate"}, {"var": "now"}]}]},
///      "bindings": {"now": "2026-11-22T00:00:00Z"},
///      "sortBy": [{"key": "startDate", "order": "forward"}],
///      "fetchLimit": 1, "fetchOffset": 0,
///      "propertiesToFetch": ["name"],
///      "relationshipKeyPathsForPrefetching": ["livingAccommodation"],
///      "includeSubentities": true, "includePendingChanges": true}
public struct FetchDescriptor {
    public struct SortKey {
        public enum Comparator: String { case localizedStandard, binary }
        let ref: KeyPathRef
        public let reverse: Bool
        public let comparator: Comparator
    }

    public let entity: Entity
    let predicate: TypedPredicate?
    public internal(set) var sortBy: [SortKey] = []
    public internal(set) var fetchLimit: Int?
    public internal(set) var fetchOffset: Int = 0
    /// Names of the properties to read; nil reads all.
    public internal(set) var propertiesToFetch: [String]?
    /// To-one and to-many relationships whose objects are returned inline.
    public internal(set) var prefetch: [Relationship] = []
    public var includeSubentities = true
    public var includePendingChanges = true
    /// Reads the objects as an earlier version laid them out (a didMigrate hook of a
    /// stage from that version: ``ModelContext/descriptor(_:)`` decodes it against that version).
    public var fromVersion: String?
    /// The variables of a descriptor decoded for a prepared fetch (``TypedExpression/parameter`` slots).
    var slots: [PredicateChecker.Slot] = []

    public init(entity: Entity) {
        self.entity = entity
        self.predicate = nil
    }

    init(entity: Entity, predicate: TypedPredicate?) {
        self.entity = entity
        self.predicate = predicate
    }

    /// The concrete entities whose rows match.
    var entities: [Entity] { includeSubentities ? entity.descendants : [entity] }

    static let keys = ["entity", "predicate", "bindings", "sortBy", "fetchLimit", "fetchOffset", "propertiesToFetch",
                       "relationshipKeyPathsForPrefetching", "includeSubentities", "includePendingChanges", "fromVersion"]

    /// Decodes and checks a descriptor. Unknown keys, entities, key paths and
    /// type errors are `.invalid` errors naming the JSON path.
    public static func decode(_ json: UnsafeBufferPointer<UInt8>, schema: Schema) throws -> FetchDescriptor {
        let value = try JSONValue.parse(json)
        return try decode(value, schema: schema)
    }

    public static func decode(_ value: JSONValue, schema: Schema) throws -> FetchDescriptor {
        try decode(value, schema: schema, predicatePath: JSONPath() / "predicate")
    }

    /// - Parameters:
    ///   - predicatePath: where the predicate sits in the caller's input (for error paths).
    ///   - slotted: variables become slots whose values each run gives (a prepared fetch);
    ///     throws ``PredicateChecker/NeedsValues`` where only values can decide the check.
    static func decode(_ value: JSONValue, schema: Schema, predicatePath: JSONPath, slotted: Bool = false) throws -> FetchDescriptor {
        var o = try ObjectReader(value, path: JSONPath(), what: "fetch descriptor")
        guard let name = try o.string("entity") else {
            throw StrataError(.invalid, "fetch descriptor is missing 'entity'", path: "/entity")
        }
        guard let e = schema.entity(named: name) else {
            throw StrataError(.invalid, "unknown entity '\(name)' in fetch descriptor (the schema has: \(schema.entities.map(\.name).joined(separator: ", ")))",
                              entity: name, path: "/entity")
        }
        var bindings: [String: JSONValue] = [:]
        if let b = o.value("bindings"), b != .null {
            guard case .object(let members) = b else {
                throw StrataError(.invalid, "'bindings' must be an object of variable names to values", path: "/bindings")
            }
            for (k, v) in members { bindings[k] = v }
        }
        var checker = PredicateChecker(schema: schema, root: e, bindings: bindings)
        if slotted { checker.slots = [] }
        var predicate: TypedPredicate?
        if let p = o.value("predicate"), p != .null {
            predicate = try check(p, checker: &checker, path: predicatePath, entity: e)
        }
        var d = FetchDescriptor(entity: e, predicate: predicate)
        d.slots = checker.slots ?? []
        d.includeSubentities = try o.bool("includeSubentities") ?? true
        d.includePendingChanges = try o.bool("includePendingChanges") ?? true
        d.fromVersion = try o.string("fromVersion")
        if let limit = try o.int("fetchLimit") {
            guard limit >= 0 else { throw StrataError(.invalid, "'fetchLimit' must not be negative", path: "/fetchLimit") }
            d.fetchLimit = Int(limit)
        }
        if let offset = try o.int("fetchOffset") {
            guard offset >= 0 else { throw StrataError(.invalid, "'fetchOffset' must not be negative", path: "/fetchOffset") }
            d.fetchOffset = Int(offset)
        }
        for (i, item) in (try o.array("sortBy") ?? []).enumerated() {
            let p = JSONPath() / "sortBy" / i
            var so = try ObjectReader(item, path: p, what: "sort descriptor")
            guard let key = try so.string("key") else { throw StrataError(.invalid, "sort descriptor needs 'key'", path: (p / "key").description) }
            let order = try so.string("order") ?? "forward"
            guard order == "forward" || order == "reverse" else {
                throw StrataError(.invalid, "'order' must be \"forward\" or \"reverse\", not '\(order)'", path: (p / "order").description)
            }
            let comparatorName = try so.string("comparator") ?? "localizedStandard"
            guard let comparator = SortKey.Comparator(rawValue: comparatorName) else {
                throw StrataError(.invalid, "'comparator' must be \"localizedStandard\" or \"binary\"", path: (p / "comparator").description)
            }
            try so.finish()
            let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let keyAt = SourceLocation(jsonPath: (p / "key").description)
            let ref = try checker.resolve(scope: 0, path: parts, at: keyAt)
            // Sort keys join their to-one hops in the same query as the predicate.
            do { try checker.countJoins(ref, keyAt) } catch var error as StrataError {
                error.entity = e.name
                throw error
            }
            guard case .attribute(let a) = ref.end else {
                throw StrataError(.invalid, "cannot sort by '\(key)': it is not an attribute", path: (p / "key").description)
            }
            if a.type == .json { throw StrataError(.invalid, "cannot sort by json attribute '\(key)'", path: (p / "key").description) }
            if a.externalStorage {
                throw StrataError(.invalid, "cannot sort by '\(key)': it uses external storage, whose values cannot be compared or sorted",
                                  entity: e.name, attribute: a.name, path: (p / "key").description)
            }
            d.sortBy.append(SortKey(ref: ref, reverse: order == "reverse", comparator: comparator))
        }
        let candidates = d.entities
        if let props = try o.array("propertiesToFetch") {
            var names: [String] = []
            for (i, item) in props.enumerated() {
                guard case .string(let n) = item else {
                    throw StrataError(.invalid, "expected a property name", path: "/propertiesToFetch/\(i)")
                }
                guard candidates.contains(where: { $0.attributeByName[n] != nil || $0.relationshipByName[n] != nil }) else {
                    throw StrataError(.invalid, "'\(n)' is not a property of '\(e.name)'", entity: e.name, attribute: n, path: "/propertiesToFetch/\(i)")
                }
                names.append(n)
            }
            d.propertiesToFetch = names
        }
        for (i, item) in (try o.array("relationshipKeyPathsForPrefetching") ?? []).enumerated() {
            let p = "/relationshipKeyPathsForPrefetching/\(i)"
            guard case .string(let n) = item else { throw StrataError(.invalid, "expected a relationship name", path: p) }
            if n.contains(".") {
                throw StrataError(.invalid, "prefetching takes relationships of '\(e.name)' itself; nested path '\(n)' is not supported", path: p)
            }
            guard let r = candidates.lazy.compactMap({ $0.relationshipByName[n] }).first else {
                throw StrataError(.invalid, "'\(n)' is not a relationship of '\(e.name)'", entity: e.name, attribute: n, path: p)
            }
            if !d.prefetch.contains(where: { $0 === r }) { d.prefetch.append(r) }
        }
        try o.finish()
        return d
    }

    /// A predicate in JSON or `#Predicate` text, checked against `entity`.
    static func check(_ p: JSONValue, checker: inout PredicateChecker, path: JSONPath, entity: Entity) throws -> TypedPredicate {
        do {
            let tree = try PredicateJSON.predicate(p, path)
            try checker.checkKeyPaths(tree)
            let typed = try checker.check(tree)
            // SQLite binds at most 250,000 parameters (Debian's build; 32,766 by default elsewhere).
            let parameters = PredicateCompiler.parameterCount(typed)
            if parameters > PredicateChecker.maxParameters {
                throw checker.fail("predicate too large: it compares with \(parameters) values, at most \(PredicateChecker.maxParameters) (equalities of one key path joined with || count as one)", tree.location)
            }
            return typed
        } catch var e as StrataError {
            if e.path == nil { e.path = path.description }  // text predicates: the position is in the message
            if e.entity == nil { e.entity = entity.name }
            throw e
        }
    }
}

extension FetchDescriptor {
    /// The objects `strata_delete_where` deletes: `predicate` is a predicate
    /// (JSON or `#Predicate` text as a JSON string), or an object
    /// `{"predicate": …, "bindings": {…}, "includeSubentities": true}`; nil deletes every object of the entity.
    public static func decodeDeletion(entity name: String, predicate json: UnsafeBufferPointer<UInt8>?, schema: Schema) throws -> FetchDescriptor {
        guard schema.entity(named: name) != nil else {
            throw StrataError(.invalid, "unknown entity '\(name)'", entity: name)
        }
        guard let json else { return try decode(.object([("entity", .string(name))]), schema: schema) }
        let value = try JSONValue.parse(json)
        let allowed = ["predicate", "bindings", "includeSubentities"]
        if case .object(let members) = value, members.contains(where: { $0.0 == "predicate" }) {
            if let bad = members.first(where: { !allowed.contains($0.0) })?.0 {
                throw StrataError(.invalid, "unknown key '\(bad)' in delete request (known: predicate, bindings, includeSubentities)", path: "/\(bad)")
            }
            return try decode(.object(members + [("entity", .string(name))]), schema: schema)
        }
        return try decode(.object([("entity", .string(name)), ("predicate", value)]), schema: schema, predicatePath: JSONPath())
    }
}
