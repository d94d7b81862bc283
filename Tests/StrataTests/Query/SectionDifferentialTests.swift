import XCTest
@testable import Strata

/// Sections against the plain fetch, over the differential test's random store and
/// predicates: for a random section key, sort and page, the sectioned result is the plain
/// fetch's objects (the same descriptor sorted by the section key, then its stored value, then
/// the sort keys) grouped in Swift by consecutive equal keys; a cursor's batches, consecutive
/// equal keys merged, are the same sections. Saved and with pending changes, on SQLite and on
/// PostgreSQL when the tests have a server.
final class SectionDifferentialTests: StoreTestCase {
    /// Section keys of the random trips, with the relationships to prefetch so that the plain
    /// fetch's objects show the key's value (nil for objects that do not have it).
    private static let keys: [(path: String, prefetch: [String])] = [
        ("destination", []), ("name", []), ("rating", []), ("startDate", []), ("code", []), ("website", []),
        ("home.city", []), ("home.zip", []), ("reason", []), ("livingAccommodation.placeName", ["livingAccommodation"]),
    ]

    /// The value of key path `path` in a written object, as JSON text (`""` when nil); nil hops are nil.
    private static func keyText(_ object: JSONValue, _ path: String) -> [UInt8] {
        var v: JSONValue? = object
        for part in path.split(separator: ".") { v = v?[String(part)] }
        guard let v, v != .null else { return Array(#""""#.utf8) }
        return Array(v.text.utf8)
    }

    func testSectionsAreThePlainFetchGroupedByConsecutiveKeys() throws {
        var stores = [("sqlite", try openInMemory(QuerySchemas.trips))]
        if let uri = PostgresTestServer.freshStore("sections") {
            stores.append(("postgres", try ModelContainer(path: uri, configuration: configuration(QuerySchemas.trips))))
        }
        for (label, container) in stores {
            var rng = SeededRNG(seed: 0x5EC7_2026)
            let ids = try TripData.populate(try container.makeContext(), trips: 60, rng: &rng)
            let saved = try container.makeContext()
            try check(saved, label: "\(label) saved", seed: 0x5EC7_2027)
            let pending = try container.makeContext()
            try TripData.populate(pending, trips: 8, rng: &rng, save: false)
            for id in ids.prefix(12) {
                try pending.update(id: id.description, patch: JSONValue.object([("destination", .string(rng.pick(Pools.destinations))),
                                                                                 ("home", .null)]).text)
            }
            for id in ids.suffix(6) { try pending.delete(id: id.description) }
            try check(pending, label: "\(label) pending", seed: 0x5EC7_2028)
        }
    }

    private func check(_ context: ModelContext, label: String, seed: UInt64) throws {
        let graph = try ObjectGraph(context: context)
        var gen = PredicateGenerator(rng: SeededRNG(seed: seed), identifiers: graph.identifiersByRoot)
        var sectionsSeen = 0, split = 0
        for n in 0..<150 {
            let entity = gen.rng.pick(["Trip", "Trip", "Trip", "PersonalTrip", "BusinessTrip"])
            var key = gen.rng.pick(Self.keys)
            if entity == "BusinessTrip" && key.path == "reason" { key = Self.keys[0] }  // not a key path of BusinessTrip
            var members: [(String, JSONValue)] = [("entity", .string(entity)), ("predicate", gen.predicate(for: .trip(entity))),
                                                  ("bindings", .object(gen.bindings))]
            if gen.rng.chance(0.2) { members.append(("includeSubentities", .bool(false))) }
            if gen.rng.chance(0.3) { members.append(("fetchOffset", .number(String(gen.rng.int(0...10))))) }
            if gen.rng.chance(0.3) { members.append(("fetchLimit", .number(String(gen.rng.int(0...25))))) }
            if !key.prefetch.isEmpty { members.append(("relationshipKeyPathsForPrefetching", .array(key.prefetch.map { .string($0) }))) }
            // The section key's order: from sortBy's first key when it names the same key path.
            var sortBy: [JSONValue] = []
            let reverse = gen.rng.chance(0.5), binary = gen.rng.chance(0.3)
            let sameFirst = gen.rng.chance(0.4)
            if sameFirst {
                sortBy.append(.object([("key", .string(key.path)), ("order", .string(reverse ? "reverse" : "forward")),
                                       ("comparator", .string(binary ? "binary" : "localizedStandard"))]))
            }
            for _ in 0..<gen.rng.int(0...2) {
                sortBy.append(.object([("key", .string(gen.rng.pick(["name", "startDate", "rating", "destination"]))),
                                       ("order", .string(gen.rng.pick(["forward", "reverse"])))]))
            }
            // The plain fetch: the section key collated, then as stored, then the sort keys.
            // (sortBy's first key names the key path: asked for, or drawn.)
            let first = sortBy.first.flatMap { $0["key"] == .string(key.path) ? $0 : nil }
            let order = first?["order"]?.stringValue ?? "forward"
            let comparator = first?["comparator"]?.stringValue ?? "localizedStandard"
            let plainSort: [JSONValue] = [.object([("key", .string(key.path)), ("order", .string(order)), ("comparator", .string(comparator))]),
                                          .object([("key", .string(key.path)), ("order", .string(order)), ("comparator", .string("binary"))])] + sortBy
            let sectioned = JSONValue.object(members + [("sortBy", .array(sortBy)), ("sectionBy", .string(key.path))])
            let plain = JSONValue.object(members + [("sortBy", .array(plainSort))])

            let objects = try XCTUnwrap(parse(context.fetch(FetchDescriptor.decode(plain, schema: context.schema))).array)
            var expected: [([UInt8], [JSONValue])] = []
            for o in objects {
                let k = Self.keyText(o, key.path)
                if expected.last?.0 == k { expected[expected.count - 1].1.append(o) } else { expected.append((k, [o])) }
            }
            let d = try FetchDescriptor.decode(sectioned, schema: context.schema)
            let actual = try sections(parse(context.fetch(d)))
            let what = "[\(label)] #\(n) \(sectioned.text)"
            XCTAssertEqual(actual.map(\.0), expected.map(\.0), "keys: \(what)")
            XCTAssertEqual(actual.map(\.1), expected.map(\.1), "objects: \(what)")
            sectionsSeen += actual.count

            // A cursor's batches, consecutive equal keys merged, are the same sections.
            if n % 3 == 0 {
                let cursor = try context.cursor(d)
                let size = gen.rng.int(1...7)
                var merged: [([UInt8], [JSONValue])] = []
                while true {
                    let batch = try sections(parse(cursor.next(size).bytes))
                    if batch.isEmpty { break }
                    XCTAssertLessThanOrEqual(batch.reduce(0) { $0 + $1.1.count }, size, what)
                    for (i, s) in batch.enumerated() {
                        if i == 0, merged.last?.0 == s.0 { merged[merged.count - 1].1 += s.1; split += 1 } else { merged.append(s) }
                    }
                }
                XCTAssertEqual(merged.map(\.0), expected.map(\.0), "cursor keys: \(what)")
                XCTAssertEqual(merged.map(\.1), expected.map(\.1), "cursor objects: \(what)")
            }
        }
        // Not vacuous: many sections, and sections split by batches.
        XCTAssertGreaterThan(sectionsSeen, 300, label)
        XCTAssertGreaterThan(split, 10, label)
    }

    /// A sectioned result as keys (their JSON text's bytes: String's == would join canonically equal keys) and objects.
    private func sections(_ value: JSONValue) throws -> [([UInt8], [JSONValue])] {
        try XCTUnwrap(value.array).map { s in
            guard case .object(let members) = s, members.map(\.0) == ["section", "objects"], let key = s["section"], let objects = s["objects"]?.array else {
                throw StrataError(.internal, "not a section: \(s.text)")
            }
            return (Array(key.text.utf8), objects)
        }
    }
}
