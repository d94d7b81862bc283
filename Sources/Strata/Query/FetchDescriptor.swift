/// SwiftData's FetchDescriptor, as JSON (DESIGN §4, docs/JSON.md §5):
///
///     {"entity": "Trip",
///      "predicate": {"and": [{"is": "PersonalTrip"}, {">=": [{"key": "endDate"}, {"var": "now"}]}]},
///      "bindings": {"now": "2026-11-22T00:00:00Z"},
///      "sortBy": [{"key": "startDate", "order": "forward"}],
///      "fetchLimit": 1, "fetchOffset": 0,
///      "propertiesToFetch": ["name"],
///      "relationshipKeyPathsForPrefetching": ["livingAccommodation"],
///      "includeRelationshipIdentifiers": true,
///      "includeSubentities": true, "includePendingChanges": true}
public struct FetchDescriptor {
    public struct SortKey {
        public enum Comparator: String { case localizedStandard, binary }
        let ref: KeyPathRef
        public let reverse: Bool
        public let comparator: Comparator
        /// `$relevance`: the search text of the predicate's one `matches` (whose attribute `ref` is).
        var relevanceOf: TypedExpression? = nil
    }

    public let entity: Entity
    let predicate: TypedPredicate?
    public internal(set) var sortBy: [SortKey] = []
    public internal(set) var fetchLimit: Int?
    public internal(set) var fetchOffset: Int = 0
    /// Names of the properties to read; nil reads all.
    public internal(set) var propertiesToFetch: [String]?
    /// Relationships whose objects are returned inline, each with the relationships of those
    /// objects returned inline in turn (`"trip.bucketList"`).
    public internal(set) var prefetchTree: [PrefetchNode] = []
    /// The relationships of the fetched objects whose objects are returned inline.
    public internal(set) var prefetch: [Relationship] {
        get { prefetchTree.map(\.relationship) }
        set { prefetchTree = newValue.map { PrefetchNode(relationship: $0) } }
    }
    /// False leaves the relationships that are not prefetched out of every object written
    /// (neither read nor written): `"includeRelationshipIdentifiers": false`.
    public var includeRelationshipIdentifiers = true
    public var includeSubentities = true
    public var includePendingChanges = true
    /// Reads the objects as an earlier version laid them out (a didMigrate hook of a
    /// stage from that version: ``ModelContext/descriptor(_:)`` decodes it against that version).
    public var fromVersion: String?
    /// Group keys and aggregates (or distinct values): the fetch returns dictionaries, not objects.
    public internal(set) var aggregation: Aggregation?
    /// `sectionBy`: the key path the objects are sectioned by, as the first order of the fetch
    /// (its direction and comparator those of `sortBy`'s first key when that is the same key
    /// path, else forward, localizedStandard); nil returns a plain array.
    public internal(set) var sectionBy: SortKey?
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
                       "relationshipKeyPathsForPrefetching", "includeRelationshipIdentifiers", "includeSubentities", "includePendingChanges", "fromVersion",
                       "sectionBy"] + Aggregation.keys

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
    ///
    /// Keys are read, and the first error found, in this order: entity, bindings, predicate,
    /// the options, paging, sortBy, sectionBy, propertiesToFetch, relationshipKeyPathsForPrefetching,
    /// then any unknown key.
    static func decode(_ value: JSONValue, schema: Schema, predicatePath: JSONPath, slotted: Bool = false) throws -> FetchDescriptor {
        var o = try ObjectReader(value, path: JSONPath(), what: "fetch descriptor")
        let e = try decodeEntity(&o, schema: schema)
        let bindings = try decodeBindings(&o)
        var checker = PredicateChecker(schema: schema, root: e, bindings: bindings)
        if slotted { checker.slots = [] }
        var predicate: TypedPredicate?
        if let p = o.value("predicate"), p != .null {
            predicate = try check(p, checker: &checker, path: predicatePath, entity: e)
        }
        var d = FetchDescriptor(entity: e, predicate: predicate)
        d.slots = checker.slots ?? []
        try d.decodeOptions(&o)
        try d.decodePaging(&o)
        if var a = try Aggregation.decode(&o, schema: schema, entity: e, checker: &checker, bindings: bindings) {
            if slotted {
                let key = o.members.first { Aggregation.keys.contains($0.0) }?.0 ?? "aggregates"
                throw StrataError(.invalid, "an aggregation ('\(key)') cannot be prepared: run it with strata_fetch", entity: e.name, path: "/\(key)")
            }
            try a.decodeSortBy(try o.array("sortBy") ?? [], entity: e)
            if o.value("sectionBy") != nil {
                throw StrataError(.invalid, "'sectionBy' does not apply to an aggregation (it sections objects; group by the key instead)",
                                  entity: e.name, path: "/sectionBy")
            }
            if let p = try o.array("relationshipKeyPathsForPrefetching"), !p.isEmpty {
                throw StrataError(.invalid, "'relationshipKeyPathsForPrefetching' does not apply to an aggregation (it returns dictionaries, not objects)",
                                  entity: e.name, path: "/relationshipKeyPathsForPrefetching")
            }
            d.aggregation = a
            try o.finish(allowed: ["includeRelationshipIdentifiers"])
            return d
        }
        try d.decodeSortBy(&o, checker: &checker)
        try d.decodeSectionBy(&o, checker: &checker)
        let candidates = d.entities
        d.propertiesToFetch = try decodePropertiesToFetch(&o, of: e, candidates: candidates)
        d.prefetchTree = try decodePrefetch(&o, of: e, candidates: candidates)
        try o.finish()
        return d
    }

    /// `entity`: an entity of `schema`, required.
    private static func decodeEntity(_ o: inout ObjectReader, schema: Schema) throws -> Entity {
        guard let name = try o.string("entity") else {
            throw StrataError(.invalid, "fetch descriptor is missing 'entity'", path: "/entity")
        }
        guard let e = schema.entity(named: name) else {
            throw StrataError(.invalid, "unknown entity '\(name)' in fetch descriptor (the schema has: \(schema.entities.map(\.name).joined(separator: ", ")))",
                              entity: name, path: "/entity")
        }
        return e
    }

    /// `bindings`: an object of variable names to values (absent or null: none).
    private static func decodeBindings(_ o: inout ObjectReader) throws -> [String: JSONValue] {
        var bindings: [String: JSONValue] = [:]
        if let b = o.value("bindings"), b != .null {
            guard case .object(let members) = b else {
                throw StrataError(.invalid, "'bindings' must be an object of variable names to values", path: "/bindings")
            }
            for (k, v) in members { bindings[k] = v }
        }
        return bindings
    }

    /// The flags and `fromVersion`, each of its type when present (flags default to true).
    private mutating func decodeOptions(_ o: inout ObjectReader) throws {
        includeSubentities = try o.bool("includeSubentities") ?? true
        includeRelationshipIdentifiers = try o.bool("includeRelationshipIdentifiers") ?? true
        includePendingChanges = try o.bool("includePendingChanges") ?? true
        fromVersion = try o.string("fromVersion")
    }

    /// `fetchLimit` and `fetchOffset`: integers, not negative, when present.
    private mutating func decodePaging(_ o: inout ObjectReader) throws {
        if let limit = try o.int("fetchLimit") {
            guard limit >= 0 else { throw StrataError(.invalid, "'fetchLimit' must not be negative", path: "/fetchLimit") }
            fetchLimit = Int(limit)
        }
        if let offset = try o.int("fetchOffset") {
            guard offset >= 0 else { throw StrataError(.invalid, "'fetchOffset' must not be negative", path: "/fetchOffset") }
            fetchOffset = Int(offset)
        }
    }

    /// `sortBy`: sort descriptors in order, each key resolved by `checker` (its to-one hops
    /// counted with the predicate's joins) to an attribute that can be sorted by.
    private mutating func decodeSortBy(_ o: inout ObjectReader, checker: inout PredicateChecker) throws {
        for (i, item) in (try o.array("sortBy") ?? []).enumerated() {
            sortBy.append(try FetchDescriptor.sortKey(item, at: JSONPath() / "sortBy" / i, of: entity, checker: &checker, predicate: predicate))
        }
    }

    /// `sectionBy`: a key path (to-one hops allowed) to a string, int or date attribute, resolved
    /// as a sort key is; the order and comparator of `sortBy`'s first key when it names the same
    /// key path. Refusals name `/sectionBy`.
    private mutating func decodeSectionBy(_ o: inout ObjectReader, checker: inout PredicateChecker) throws {
        guard let v = o.value("sectionBy"), v != .null else { return }
        let p = JSONPath() / "sectionBy"
        guard case .string(let path) = v else {
            throw StrataError(.invalid, "'sectionBy' must be a key path string, found \(v.typeName)", entity: entity.name, path: p.description)
        }
        var key: SortKey
        do {
            key = try FetchDescriptor.sortKey(.object([("key", .string(path))]), at: p, of: entity, checker: &checker, predicate: nil)
        } catch var error as StrataError {
            error.path = p.description
            error.message = "'sectionBy': " + error.message
            throw error
        }
        guard case .attribute(let a) = key.ref.end, [.string, .url, .uuid, .int, .date].contains(a.type) else {
            throw StrataError(.invalid, "'sectionBy': cannot section by '\(path)': sections are keyed by strings, integers and dates",
                              entity: entity.name, path: p.description)
        }
        if let first = sortBy.first, first.ref.sameKeyPath(as: key.ref) { key = first }
        sectionBy = key
    }

    /// The members of a sort descriptor `{"key", "order", "comparator"}` at `p`, checked in that order
    /// (the key is resolved by the caller: a key path, or an aggregation's result).
    static func sortOptions(_ item: JSONValue, at p: JSONPath) throws -> (key: String, reverse: Bool, comparator: SortKey.Comparator) {
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
        return (key, order == "reverse", comparator)
    }

    /// One sort descriptor at `p`: its key a key path to an attribute that sorts, or `$relevance`.
    private static func sortKey(_ item: JSONValue, at p: JSONPath, of e: Entity, checker: inout PredicateChecker,
                                predicate: TypedPredicate?) throws -> SortKey {
        let (key, reverse, comparator) = try sortOptions(item, at: p)
        if key == "$relevance" { return try relevanceKey(at: p, reverse: reverse, comparator: comparator, predicate: predicate) }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let keyAt = SourceLocation(jsonPath: (p / "key").description)
        let ref = try checker.resolve(scope: 0, plain: parts, at: keyAt)
        // Sort keys join their to-one hops in the same query as the predicate.
        do { try checker.countJoins(ref, keyAt) } catch var error as StrataError {
            error.entity = e.name
            throw error
        }
        guard case .attribute(let a) = ref.end else {
            throw StrataError(.invalid, "cannot sort by '\(key)': it is not an attribute", path: (p / "key").description)
        }
        if a.type == .json { throw StrataError(.invalid, "cannot sort by json attribute '\(key)'", path: (p / "key").description) }
        if a.isComposite {
            throw StrataError(.invalid, "cannot sort by composite attribute '\(key)' itself; sort by its fields (e.g. '\(a.fields[0].name)')",
                              entity: e.name, attribute: a.name, path: (p / "key").description)
        }
        if a.externalStorage {
            throw StrataError(.invalid, "cannot sort by '\(key)': it uses external storage, whose values cannot be compared or sorted",
                              entity: e.name, attribute: a.name, path: (p / "key").description)
        }
        return SortKey(ref: ref, reverse: reverse, comparator: comparator)
    }

    /// `{"key": "$relevance"}`: the relevance of the predicate's one `matches` (of the object's own
    /// attribute, not inside a closure over related objects), most relevant first (`"reverse"`:
    /// least relevant first); the comparator plays no part.
    private static func relevanceKey(at p: JSONPath, reverse: Bool, comparator: SortKey.Comparator, predicate: TypedPredicate?) throws -> SortKey {
        let searches = predicate?.searches ?? []
        guard searches.count == 1, let search = searches.first, !search.nested else {
            throw StrataError(.invalid, "sort key '$relevance' needs a predicate with exactly one 'matches' of the fetched object's attribute "
                              + "(it has \(searches.count)\(searches.contains { $0.nested } ? ", inside a closure over related objects" : ""))",
                              path: (p / "key").description)
        }
        return SortKey(ref: search.ref, reverse: reverse, comparator: comparator, relevanceOf: search.query)
    }

    /// `propertiesToFetch`: names of properties of one of `candidates` (the entities read), or
    /// nil when absent.
    private static func decodePropertiesToFetch(_ o: inout ObjectReader, of e: Entity, candidates: [Entity]) throws -> [String]? {
        guard let props = try o.array("propertiesToFetch") else { return nil }
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
        return names
    }

    /// The most relationships one fetch prefetches, at every depth (each is a query of its own,
    /// run per owner), and the longest key path.
    static let maxPrefetched = 32, maxPrefetchDepth = 8

    /// `relationshipKeyPathsForPrefetching`: key paths of relationships, from one of `candidates`
    /// (the entities read), each next one a relationship of the objects the one before reaches
    /// (or of one of their subentities); paths that share a beginning share its nodes, in the
    /// order first named.
    private static func decodePrefetch(_ o: inout ObjectReader, of e: Entity, candidates: [Entity]) throws -> [PrefetchNode] {
        var tree: [PrefetchNode] = []
        var count = 0
        for (i, item) in (try o.array("relationshipKeyPathsForPrefetching") ?? []).enumerated() {
            let p = "/relationshipKeyPathsForPrefetching/\(i)"
            guard case .string(let path) = item else { throw StrataError(.invalid, "expected a relationship key path", path: p) }
            let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard names.count <= maxPrefetchDepth else {
                throw StrataError(.invalid, "prefetching key path '\(path)' has \(names.count) relationships, at most \(maxPrefetchDepth)", entity: e.name, path: p)
            }
            var from = candidates, owner = e.name
            var relationships: [Relationship] = []
            for n in names {
                guard let r = from.lazy.compactMap({ $0.relationshipByName[n] }).first else {
                    let what = names.count == 1 ? "'\(n)'" : "'\(n)' in '\(path)'"
                    throw StrataError(.invalid, "\(what) is not a relationship of '\(owner)'", entity: e.name, attribute: n, path: p)
                }
                relationships.append(r)
                from = r.destination.descendants
                owner = r.destination.name
            }
            count += PrefetchNode.insert(relationships[...], into: &tree)
            guard count <= maxPrefetched else {
                throw StrataError(.invalid, "prefetching more than \(maxPrefetched) relationships (counting each key path's every step once)", entity: e.name, path: p)
            }
        }
        return tree
    }

    /// A predicate in JSON or `#Predicate` text, checked against `entity`.
    static func check(_ p: JSONValue, checker: inout PredicateChecker, path: JSONPath, entity: Entity) throws -> TypedPredicate {
        do {
            let tree = try PredicateJSON.predicate(p, path)
            try checker.checkKeyPaths(tree)
            let typed = try checker.check(tree)
            // SQLite binds at most 250,000 parameters (Debian's build; 32,766 by default elsewhere).
            let parameters = PredicateCompiler.parameterCount(typed.lowered)
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

/// A prefetched relationship and the relationships prefetched for its objects.
public struct PrefetchNode {
    public let relationship: Relationship
    public internal(set) var children: [PrefetchNode] = []

    /// Adds the key path `path` to `tree`, sharing the nodes of its beginning.
    /// - Returns: the number of nodes added.
    static func insert(_ path: ArraySlice<Relationship>, into tree: inout [PrefetchNode]) -> Int {
        guard let r = path.first else { return 0 }
        if let i = tree.firstIndex(where: { $0.relationship === r }) {
            return insert(path.dropFirst(), into: &tree[i].children)
        }
        var node = PrefetchNode(relationship: r)
        let added = 1 + insert(path.dropFirst(), into: &node.children)
        tree.append(node)
        return added
    }
}

extension FetchDescriptor {
    /// Up to `limit` objects of `root`'s hierarchy whose keys are above `key`, in key order,
    /// each with only `properties` (plus `_id` and `_entity`), without pending changes: the
    /// pages a whole-store export reads one hierarchy in, every page found through the key
    /// index, so that reading a table costs one pass whatever its size.
    static func keyPage(_ root: Entity, after key: Int64, limit: Int, properties: [String]) -> FetchDescriptor {
        let object = KeyPathRef(scope: 0, hops: [], end: .object, text: PredicateChecker.identity)
        let after: TypedPredicate = .compare(.greater, .keyPath(object, .object(root)), .constant(.int(key), .object(root)),
                                             domain: .object(root), options: [])
        var d = FetchDescriptor(entity: root, predicate: after)
        d.fetchLimit = limit
        d.propertiesToFetch = properties
        d.includePendingChanges = false
        return d
    }
}
