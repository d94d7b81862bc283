import Foundation
import XCTest
@testable import Strata

/// Aggregations on the differential test's random store: for random predicates (the
/// generator's), group keys and aggregates, the SQL results must equal what Swift computes
/// from the objects the evaluator selects (``ExactSum``, ``DecimalSum``), saved and with
/// pending changes, on SQLite and PostgreSQL; and both stores must give the same results
/// in the same order.
final class AggregationDifferentialTests: StoreTestCase {
    static var caseCount: Int {
        if let s = ProcessInfo.processInfo.environment["STRATA_DIFF_COUNT"], let n = Int(s) { return max(n / 10, 1) }
        return 300
    }

    /// Group keys: attributes of every type that groups, through a to-one hop and a composite's field.
    static let groupKeys = ["destination", "rating", "flag", "home.city", "livingAccommodation.placeName", "budget", "score"]
    /// (function, key path) pairs: the object's values and a to-many relationship's.
    static let aggregates: [(String, String?)] = [
        ("count", nil), ("count", "rating"), ("count", "bucketList"), ("count", "bucketList.priority"),
        ("sum", "rating"), ("sum", "score"), ("sum", "budget"), ("sum", "bucketList.priority"),
        ("avg", "rating"), ("avg", "score"), ("avg", "budget"), ("avg", "bucketList.priority"),
        ("min", "startDate"), ("max", "endDate"), ("min", "budget"), ("max", "score"), ("max", "bucketList.priority"), ("min", "rating"),
    ]

    func testAggregationsAgreeWithSwift() throws {
        var stores = [("sqlite", try openInMemory(QuerySchemas.trips))]
        if let uri = PostgresTestServer.freshStore("aggregation") {
            stores.append(("postgres", try ModelContainer(path: uri, configuration: configuration(QuerySchemas.trips))))
        }
        var answers: [(String, [String])] = []
        for (label, container) in stores { answers.append((label, try run(container, label))) }
        for (label, list) in answers.dropFirst() {
            XCTAssertEqual(list.count, answers[0].1.count)
            var shown = 0
            for (a, b) in zip(answers[0].1, list) where a != b && shown < 5 {
                shown += 1
                XCTFail("\(answers[0].0) and \(label) answer differently:\n  \(answers[0].0): \(a)\n  \(label): \(b)")
            }
        }
    }

    private func run(_ container: ModelContainer, _ label: String) throws -> [String] {
        var rng = SeededRNG(seed: DifferentialTests.seed &+ 7)
        let writer = try container.makeContext()
        let tripIDs = try TripData.populate(writer, trips: 80, rng: &rng)
        var answers: [String] = []
        var failures = 0, nonEmpty = 0
        let saved = try container.makeContext()
        try check(saved, rng: &rng, count: Self.caseCount, label: "\(label) saved", answers: &answers, failures: &failures, nonEmpty: &nonEmpty)

        let pending = try container.makeContext()
        try TripData.populate(pending, trips: 10, rng: &rng, save: false)
        for id in tripIDs.prefix(15) {
            try pending.update(id: id.description, patch: #"{"destination": "Zürich", "rating": \#(rng.int(0...5)), "bucketList": [{"title": "x", "priority": 3}]}"#)
        }
        for id in tripIDs.suffix(8) { try pending.delete(id: id.description) }
        try check(pending, rng: &rng, count: Self.caseCount / 3, label: "\(label) pending", answers: &answers, failures: &failures, nonEmpty: &nonEmpty)
        XCTAssertGreaterThan(nonEmpty, Self.caseCount / 2, "too few aggregations selected any object: the test would be vacuous")
        return answers
    }

    private func check(_ context: ModelContext, rng: inout SeededRNG, count: Int, label: String,
                       answers: inout [String], failures: inout Int, nonEmpty: inout Int) throws {
        let graph = try ObjectGraph(context: context)
        var gen = PredicateGenerator(rng: SeededRNG(seed: rng.next()), identifiers: graph.identifiersByRoot)
        for n in 0..<count {
            let entity = gen.rng.pick(["Trip", "Trip", "PersonalTrip", "BusinessTrip"])
            var members: [(String, JSONValue)] = [("entity", .string(entity))]
            if gen.rng.chance(0.7) {
                members.append(("predicate", gen.predicate(for: .trip(entity))))
                members.append(("bindings", .object(gen.bindings)))
            }
            if gen.rng.chance(0.15) { members.append(("includeSubentities", .bool(false))) }
            var keys: [String] = []
            for _ in 0..<gen.rng.int(0...2) {
                let k = gen.rng.pick(Self.groupKeys)
                if !keys.contains(k) { keys.append(k) }
            }
            var aggregates: [(name: String, function: String, keyPath: String?)] = []
            for i in 0..<gen.rng.int(keys.isEmpty ? 1...4 : 0...4) {
                let (f, k) = gen.rng.pick(Self.aggregates)
                aggregates.append(("a\(i)", f, k))
            }
            // Some keep only groups with more than `minimum` objects (an aggregate `having` reads).
            var minimum: Int?
            if gen.rng.chance(0.3) {
                minimum = gen.rng.int(0...2)
                aggregates.append(("n", "count", nil))
                members.append(("having", .string("$0.n > \(minimum!)")))
            }
            // Group keys alone are distinct values: as often written with "distinct".
            if aggregates.isEmpty && !keys.isEmpty && gen.rng.chance(0.5) {
                members.append(("propertiesToFetch", .array(keys.map { .string($0) })))
                members.append(("distinct", .bool(true)))
            } else {
                members.append(("groupBy", .array(keys.map { .string($0) })))
                members.append(("aggregates", .array(aggregates.map { a in
                    .object([("name", .string(a.name)), ("function", .string(a.function))] + (a.keyPath.map { [("keyPath", .string($0))] } ?? []))
                })))
            }
            let json = JSONValue.object(members)
            let d: FetchDescriptor
            do { d = try FetchDescriptor.decode(json, schema: context.schema) } catch {
                failures += 1
                if failures <= 5 { XCTFail("[\(label)] #\(n) rejected: \(error)\n  \(json.text)") }
                continue
            }
            let got: JSONValue
            do { got = try parse(context.fetch(d)) } catch {
                failures += 1
                if failures <= 5 { XCTFail("[\(label)] #\(n) failed: \(error)\n  \(json.text)") }
                continue
            }
            answers.append("\(json.text) -> \(got.text)")
            let selected = graph.evaluate(d)
            if !selected.isEmpty { nonEmpty += 1 }
            let objects = graph.objects(of: d.entities).filter { selected.contains($0.id) }
            let expected = Self.reference(objects, keys: keys, aggregates: aggregates, minimum: minimum, schema: context.schema)
            let gotRows = (got.array ?? []).map(Self.normalized).map(\.text).sorted()
            if gotRows != expected.map(Self.normalized).map(\.text).sorted() {
                failures += 1
                if failures <= 5 {
                    XCTFail("[\(label)] #\(n) SQL and Swift disagree\n  \(json.text)\n  SQL:   \(gotRows)\n  Swift: \(expected.map(Self.normalized).map(\.text).sorted())")
                }
            }
        }
        XCTAssertEqual(failures, 0, "[\(label)] aggregation mismatches")
    }

    /// Numbers compared by value ("4" and "4.0" alike).
    static func normalized(_ v: JSONValue) -> JSONValue {
        switch v {
        case .number(let s): return .number(Double(s).map { "\($0)" } ?? s)
        case .object(let m): return .object(m.map { ($0.0, normalized($0.1)) })
        case .array(let a): return .array(a.map(normalized))
        default: return v
        }
    }

    /// The value of a key path (attributes and to-one hops) of an object.
    static func value(_ o: GraphObject, _ keyPath: String) -> SQLValue {
        let parts = keyPath.split(separator: ".").map(String.init)
        if parts.count == 2, let r = o.entity.relationshipByName[parts[0]] {
            return o.relatedObjects[r.name]?.first?.values[parts[1]] ?? .null
        }
        return o.values[keyPath] ?? .null
    }

    static func attribute(_ schema: Schema, _ keyPath: String) -> Attribute {
        let trip = schema.entity(named: "BusinessTrip")!
        let parts = keyPath.split(separator: ".").map(String.init)
        if parts.count == 2, let r = trip.relationshipByName[parts[0]] { return r.destination.attributeByName[parts[1]]! }
        return trip.attributeByName[keyPath]!
    }

    static func json(_ v: SQLValue, _ type: AttributeType) -> JSONValue {
        if v.isNull { return .null }
        var w = JSONWriter()
        ValueCodec.write(v, type: type, to: &w)
        if type == .decimal, case .string(let s)? = try? JSONValue.parse(w.string) { return .string(DecimalText.canonical(Array(s.utf8)) ?? s) }
        return (try? JSONValue.parse(w.string)) ?? .null
    }

    /// What the aggregation gives, computed from the selected objects.
    static func reference(_ objects: [GraphObject], keys: [String], aggregates: [(name: String, function: String, keyPath: String?)],
                          minimum: Int?, schema: Schema) -> [JSONValue] {
        // Group keys are equal when their stored values are: text byte for byte (Swift's String ==
        // would take "Zürich" in NFC and NFD for one).
        func identity(_ v: SQLValue) -> String {
            if case .text(let t) = v { return "t" + t.utf8.map { String($0) }.joined(separator: ",") }
            return "\(v)"
        }
        var groups: [[String]: [GraphObject]] = [:]
        var order: [([String], [SQLValue])] = []
        for o in objects {
            let values = keys.map { value(o, $0) }
            let k = values.map(identity)
            if groups[k] == nil { order.append((k, values)) }
            groups[k, default: []].append(o)
        }
        if keys.isEmpty && groups.isEmpty { groups[[]] = []; order = [([], [])] }
        var rows: [JSONValue] = []
        for (id, k) in order {
            let members = groups[id]!
            if let minimum, members.count <= minimum { continue }
            var row: [(String, JSONValue)] = zip(keys, k).map { ($0, json($1, attribute(schema, $0).type)) }
            for a in aggregates {
                row.append((a.name, aggregate(a.function, a.keyPath, members, schema: schema)))
            }
            rows.append(.object(row))
        }
        return rows
    }

    static func number(_ v: SQLValue) -> Double {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return 0
        }
    }

    static func aggregate(_ f: String, _ keyPath: String?, _ members: [GraphObject], schema: Schema) -> JSONValue {
        guard let keyPath else { return .number(String(members.count)) }
        let parts = keyPath.split(separator: ".").map(String.init)
        // A to-many key path: every related object's value, kept per object for sums.
        if parts[0] == "bucketList" {
            let related = members.map { $0.relatedObjects["bucketList"] ?? [] }
            if parts.count == 1 { return .number(String(related.map(\.count).reduce(0, +))) }
            let perObject = related.map { $0.map { $0.values[parts[1]] ?? .null }.filter { !$0.isNull } }
            switch f {
            case "count": return .number(String(perObject.map(\.count).reduce(0, +)))
            case "sum", "avg":
                var total = ExactSum()
                for values in perObject {
                    var s = ExactSum()
                    for v in values { s.add(v, integer: true) }
                    total.add(s.intSum.map { SQLValue.int($0) } ?? .null, integer: true)
                }
                guard f == "avg" else { return total.intSum.map { .number(String($0)) } ?? .null }
                let n = perObject.map(\.count).reduce(0, +)
                guard n > 0, let t = total.intSum else { return .null }
                return .number("\(Double(t) / Double(n))")
            default:
                let all = perObject.flatMap { $0 }.compactMap { v -> Int64? in if case .int(let i) = v { return i }; return nil }
                guard let m = f == "min" ? all.min() : all.max() else { return .null }
                return .number(String(m))
            }
        }
        let a = attribute(schema, keyPath)
        let values = members.map { $0.values[keyPath] ?? .null }.filter { !$0.isNull }
        switch (f, a.type) {
        case ("count", _): return .number(String(values.count))
        case ("sum", .decimal), ("avg", .decimal):
            var s = DecimalSum()
            for v in values { if case .text(let t) = v { s.add(t) } }
            return (f == "sum" ? s.total : s.mean).map { .string($0) } ?? .null
        case ("sum", _), ("avg", _):
            var s = ExactSum()
            for v in values { s.add(v, integer: a.type == .int) }
            let r = (f == "sum" ? AggregateFunction.sum : .avg).result(of: s, integer: a.type == .int)
            return json(r, f == "avg" ? .double : a.type)
        default:
            let sorted = values.sorted { x, y in
                switch (x, y) {
                case (.text(let p), .text(let q)): return DecimalText.compare(p, q) < 0
                case (.int(let p), .int(let q)): return p < q
                default: return number(x) < number(y)
                }
            }
            guard let m = f == "min" ? sorted.first : sorted.last else { return .null }
            return json(m, a.type)
        }
    }
}
