import XCTest
@testable import Strata

// Shared by the query tests: a SampleTrips schema extended to every attribute
// type, a seeded random generator, seeded trip data, and an in-memory object
// graph (read back through `context.fetch`) that the predicate evaluator runs on.

enum QuerySchemas {
    /// SampleTrips plus one attribute of every type on Trip, a many-to-many
    /// Tag <-> Trip.tags, a json and a transient attribute (for checking errors).
    static let trips = """
    {"version": "1.0.0",
     "entities": [
      {"name": "Trip",
       "attributes": [
         {"name": "name", "type": "string"},
         {"name": "destination", "type": "string"},
         {"name": "startDate", "type": "date"},
         {"name": "endDate", "type": "date"},
         {"name": "rating", "type": "int", "optional": true},
         {"name": "score", "type": "double", "optional": true},
         {"name": "budget", "type": "decimal", "optional": true},
         {"name": "code", "type": "uuid", "optional": true},
         {"name": "website", "type": "url", "optional": true},
         {"name": "photo", "type": "data", "optional": true},
         {"name": "flag", "type": "bool", "default": false},
         {"name": "notes", "type": "json", "optional": true},
         {"name": "tripViews", "type": "int", "transient": true, "default": 0},
         {"name": "home", "type": "composite", "optional": true, "fields": [
            {"name": "city", "type": "string"}, {"name": "zip", "type": "int", "optional": true}]}],
       "relationships": [
         {"name": "bucketList", "destination": "BucketListItem", "toMany": true, "deleteRule": "cascade", "inverse": "trip"},
         {"name": "livingAccommodation", "destination": "LivingAccommodation", "optional": true, "deleteRule": "cascade", "inverse": "trip"},
         {"name": "tags", "destination": "Tag", "toMany": true, "inverse": "trips"}],
       "indexes": [["name"], ["startDate"], ["endDate"]]},
      {"name": "BusinessTrip", "superentity": "Trip",
       "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
      {"name": "PersonalTrip", "superentity": "Trip",
       "attributes": [{"name": "reason", "type": "string", "enum": ["family", "reunion", "wellness", "unknown"], "default": "unknown"}]},
      {"name": "BucketListItem",
       "attributes": [
         {"name": "title", "type": "string"},
         {"name": "isInPlan", "type": "bool", "default": false},
         {"name": "priority", "type": "int", "optional": true}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true, "inverse": "bucketList"}]},
      {"name": "LivingAccommodation",
       "attributes": [
         {"name": "placeName", "type": "string"},
         {"name": "address", "type": "string"}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true, "inverse": "livingAccommodation"}]},
      {"name": "Tag",
       "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "tags"}]}
     ]}
    """
}

/// SplitMix64: deterministic, seedable, good enough for test data.
struct SeededRNG: RandomNumberGenerator {
    private(set) var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}

/// Value pools shared by the data and the predicates, so that comparisons hit.
enum Pools {
    /// PostgreSQL's text holds no U+0000: when the tests have a server, the pools leave it
    /// out, so that every store is given the same data (the plain run keeps it).
    static func storable(_ texts: [String]) -> [String] {
        PostgresTestServer.uri == nil ? texts : texts.filter { !$0.unicodeScalars.contains("\u{0}") }
    }
    static let names = storable(["Zürich", "zurich", "ZÜRICH", "Zu\u{308}rich", "Trip 2", "Trip 10", "Trip 1", "", "straße", "STRASSE",
                        "Paris", "paris", "Ærøskøbing", "Łódź", "naïve café", "NAIVE CAFE", "ß", "Σίσυφος", "ΣΊΣΥΦΟΣ", "ｚｕｒｉｃｈ", "İstanbul", "a\u{0}b", "Trip 02"])
    static let needles = storable(["zu", "Zü", "ZU", "u\u{308}r", "rich", "Trip", "trip 1", "STRA", "ss", "SS", "ß", "", "a", "é", "E", "café", "ΣΥ", "σ", "ｚ", "i̇", "İ", "10", "2", "a\u{0}", "\u{0}b"])
    static let destinations = ["Switzerland", "schweiz", "France", "Zürich", "", "ÉCOSSE", "ecosse", "Trip 2", "straße"]
    static let titles = ["Zürich", "museum", "Museum", "Trip 2", "", "straße", "ZURICH", "swim", "hike", "Hike"]
    static let places = ["Hotel Zürich", "zurich inn", "Trip 2", "", "Straße 1", "Ritz", "ritz"]
    static let tags = ["zurich", "Zürich", "beach", "city", "Trip 10", "", "STRASSE"]
    static let uuids = ["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "00000000-0000-0000-0000-000000000000",
                        "6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"]
    static let urls = ["https://example.com/zürich", "https://example.com/", "http://a.b/c", "https://EXAMPLE.com/Trip%202", "file:///tmp/x"]
    static let photos = ["AAEC", "AQID", "", "/w==", "AAECAw=="]
    static let budgets = ["0", "1.5", "1.50", "10", "-3.25", "100.001", "2", "0.1", "99999999999999999999.5"]
    static let scores = ["0", "0.5", "2.5", "3", "-1.25", "0.001", "7", "1e2", "9007199254740992"]
    static let ratings = ["-2", "0", "1", "2", "3", "5", "10", "9007199254740993"]
    /// 2024-01-01T00:00:00Z
    static let epoch: Int64 = 1_704_067_200
    static func iso(_ seconds: Int64) -> String {
        var w = JSONWriter()
        ValueCodec.writeDate(Double(seconds), to: &w)
        return String(decoding: w.bytes.dropFirst().dropLast(), as: UTF8.self)
    }
}

/// Seeds a context with random trips (saved).
enum TripData {
    @discardableResult
    static func populate(_ context: ModelContext, trips: Int, rng: inout SeededRNG, save: Bool = true) throws -> [ObjectID] {
        var tagIDs: [ObjectID] = []
        for t in Pools.tags { tagIDs.append(try context.insert(entity: "Tag", json: #"{"name": \#(JSONValue.string(t).text)}"#)) }
        var ids: [ObjectID] = []
        for i in 0..<trips {
            var m: [(String, JSONValue)] = []
            let kind = rng.int(0...2)
            if kind == 1 {
                m.append(("_entity", .string("PersonalTrip")))
                if rng.chance(0.8) { m.append(("reason", .string(rng.pick(["family", "reunion", "wellness", "unknown"])))) }
            } else if kind == 2 {
                m.append(("_entity", .string("BusinessTrip")))
                if rng.chance(0.8) { m.append(("perdiem", .number(rng.pick(Pools.scores)))) }
            }
            m.append(("name", .string(rng.pick(Pools.names))))
            m.append(("destination", .string(rng.pick(Pools.destinations))))
            let start = Pools.epoch + Int64(rng.int(0...400)) * 86_400 + Int64(rng.pick([0, 3600, 43_200, 86_399]))
            m.append(("startDate", .string(Pools.iso(start))))
            m.append(("endDate", .string(Pools.iso(start + Int64(rng.int(0...20)) * 86_400))))
            func maybe(_ key: String, _ v: @autoclosure () -> JSONValue) {
                if rng.chance(0.7) { m.append((key, v())) } else if rng.chance(0.5) { m.append((key, .null)) }
            }
            maybe("rating", .number(rng.pick(Pools.ratings)))
            maybe("score", .number(rng.pick(Pools.scores)))
            maybe("budget", rng.chance(0.5) ? .string(rng.pick(Pools.budgets)) : .number(rng.pick(Pools.budgets)))
            maybe("code", .string(rng.chance(0.5) ? rng.pick(Pools.uuids) : rng.pick(Pools.uuids).lowercased()))
            maybe("website", .string(rng.pick(Pools.urls)))
            maybe("photo", .string(rng.pick(Pools.photos)))
            if rng.chance(0.6) { m.append(("flag", .bool(rng.chance(0.5)))) }
            if rng.chance(0.3) { m.append(("notes", .object([("n", .number(String(i)))]))) }
            var items: [JSONValue] = []
            for _ in 0..<rng.int(0...4) {
                var item: [(String, JSONValue)] = [("title", .string(rng.pick(Pools.titles)))]
                if rng.chance(0.6) { item.append(("isInPlan", .bool(rng.chance(0.5)))) }
                if rng.chance(0.7) { item.append(("priority", .number(String(rng.int(-1...4))))) }
                items.append(.object(item))
            }
            m.append(("bucketList", .array(items)))
            if rng.chance(0.5) {
                m.append(("livingAccommodation", .object([("placeName", .string(rng.pick(Pools.places))),
                                                          ("address", .string(rng.pick(Pools.names)))])))
            }
            var tags: [JSONValue] = []
            for tag in tagIDs where rng.chance(0.25) { tags.append(.string(tag.description)) }
            m.append(("tags", .array(tags)))
            maybe("home", .object([("city", .string(rng.pick(Pools.names)))] + (rng.chance(0.7) ? [("zip", .number(rng.pick(Pools.ratings)))] : [])))
            ids.append(try context.insert(entity: "Trip", json: JSONValue.object(m).text))
        }
        // Some orphans: items and accommodations without a trip.
        for _ in 0..<4 { _ = try context.insert(entity: "BucketListItem", json: #"{"title": \#(JSONValue.string(rng.pick(Pools.titles)).text)}"#) }
        _ = try context.insert(entity: "LivingAccommodation", json: #"{"placeName": "Nowhere", "address": ""}"#)
        if save { try context.save() }
        return ids
    }
}

/// One object of the in-memory graph.
final class GraphObject: EvaluatedObject {
    let entity: Entity
    let pk: Int64
    let id: String
    var values: [String: SQLValue] = [:]
    var links: [String: [String]] = [:]
    var relatedObjects: [String: [GraphObject]] = [:]

    init(entity: Entity, pk: Int64, id: String) {
        self.entity = entity
        self.pk = pk
        self.id = id
    }

    func value(of attribute: Attribute) -> SQLValue { values[attribute.name] ?? .null }
    func related(_ relationship: Relationship) -> [EvaluatedObject] { relatedObjects[relationship.name] ?? [] }
}

/// Every object of a store, read once through `context.fetch`, with links resolved.
final class ObjectGraph {
    let schema: Schema
    private(set) var objects: [GraphObject] = []
    private var byKey: [String: GraphObject] = [:]

    private static func key(_ root: Entity, _ pk: Int64) -> String { "\(root.name)/\(pk)" }

    init(context: ModelContext) throws {
        schema = context.schema
        for root in schema.rootEntities {
            let json = try JSONValue.parse(String(decoding: try context.fetch(FetchDescriptor(entity: root)), as: UTF8.self))
            guard case .array(let items) = json else { throw StrataError(.invalid, "fetch did not return an array") }
            for item in items {
                guard case .string(let id)? = item["_id"], case .string(let en)? = item["_entity"],
                      let e = schema.entity(named: en), let parsed = ObjectID.parse(id) else {
                    throw StrataError(.invalid, "object without _id/_entity: \(item.text)")
                }
                let o = GraphObject(entity: e, pk: parsed.pk, id: id)
                for a in e.attributes where !a.isTransient {
                    if a.isComposite {
                        o.values[a.name] = (item[a.name] ?? .null) == .null ? .null : .int(1)
                        continue
                    }
                    // A composite's field is a member of its object.
                    let v = a.composite.map { item[$0.name]?[a.fieldName] ?? .null } ?? item[a.name] ?? .null
                    o.values[a.name] = v == .null ? .null : try ValueCodec.convert(v, type: a.type)
                }
                for r in e.relationships {
                    switch item[r.name] ?? .null {
                    case .string(let s): o.links[r.name] = [s]
                    case .array(let xs): o.links[r.name] = xs.compactMap(\.stringValue)
                    default: o.links[r.name] = []
                    }
                }
                objects.append(o)
                byKey[Self.key(e.root, parsed.pk)] = o
            }
        }
        for o in objects {
            for r in o.entity.relationships {
                o.relatedObjects[r.name] = try (o.links[r.name] ?? []).map { id in
                    guard let p = ObjectID.parse(id), let e = schema.entity(named: p.entity), let target = byKey[Self.key(e.root, p.pk)] else {
                        throw StrataError(.invalid, "dangling link \(id) from \(o.id).\(r.name)")
                    }
                    return target
                }
            }
        }
    }

    /// Identifiers by root entity name ("Trip": ["PersonalTrip/3", …]).
    var identifiersByRoot: [String: [String]] {
        var ids: [String: [String]] = [:]
        for o in objects { ids[o.entity.root.name, default: []].append(o.id) }
        return ids
    }

    func objects(of entities: [Entity]) -> [GraphObject] {
        objects.filter { o in entities.contains { $0 === o.entity } }
    }

    func object(_ id: String) -> GraphObject? {
        guard let p = ObjectID.parse(id), let e = schema.entity(named: p.entity) else { return nil }
        return byKey[Self.key(e.root, p.pk)]
    }

    /// Identifiers of the objects a descriptor's predicate holds for, per the evaluator.
    func evaluate(_ d: FetchDescriptor) -> Set<String> {
        let evaluator = PredicateEvaluator()
        return Set(objects(of: d.entities).filter { o in d.predicate.map { evaluator.evaluate($0, on: o) } ?? true }.map(\.id))
    }
}

/// Helpers over the descriptor API shared by the query tests.
enum Query {
    static func descriptor(_ json: String, _ schema: Schema) throws -> FetchDescriptor {
        try FetchDescriptor.decode(try JSONValue.parse(json), schema: schema)
    }

    static func json(_ bytes: [UInt8]) throws -> JSONValue { try JSONValue.parse(String(decoding: bytes, as: UTF8.self)) }

    static func identifiers(_ context: ModelContext, _ d: FetchDescriptor) throws -> [String] {
        guard case .array(let items) = try json(context.fetchIdentifiers(d)) else { return [] }
        return items.compactMap(\.stringValue)
    }

    static func objects(_ context: ModelContext, _ d: FetchDescriptor) throws -> [JSONValue] {
        guard case .array(let items) = try json(context.fetch(d)) else { return [] }
        return items
    }

    static func explain(_ context: ModelContext, _ d: FetchDescriptor) throws -> (sql: String, plan: [String]) {
        let e = try json(context.explain(d))
        let sql = e["sql"]?.stringValue ?? ""
        let plan = (e["queryPlan"]?.array ?? []).compactMap { $0["detail"]?.stringValue }
        return (sql, plan)
    }
}
