import Foundation
import XCTest
@testable import Strata

/// The SQL compiler and the in-memory evaluator are two interpreters of the
/// same typed predicates (docs/predicates.md §2). Thousands of random
/// predicates, in JSON and as `#Predicate` text, must select exactly the same
/// objects both ways on a seeded random store.
final class DifferentialTests: StoreTestCase {
    /// `STRATA_DIFF_SEED=<n>` replays one run; `STRATA_DIFF_COUNT=<n>` changes how many predicates run.
    static var seed: UInt64 {
        if let s = ProcessInfo.processInfo.environment["STRATA_DIFF_SEED"], let n = UInt64(s) { return n }
        return 0x5EED_2026
    }
    static var predicateCount: Int {
        if let s = ProcessInfo.processInfo.environment["STRATA_DIFF_COUNT"], let n = Int(s) { return n }
        return 3000
    }

    struct Mismatch: CustomStringConvertible {
        let form: String
        let descriptor: String
        let text: String?
        let sql: String
        let onlySQL: [String]
        let onlyEvaluator: [String]
        var description: String {
            """
            [\(form)] SQL and evaluator disagree
              descriptor: \(descriptor)
              text: \(text ?? "-")
              sql: \(sql)
              only SQL: \(onlySQL.sorted())
              only evaluator: \(onlyEvaluator.sorted())
            """
        }
    }

    struct Stats {
        var checked = 0, textChecked = 0, none = 0, all = 0, some = 0, textDiffers = 0
        var mismatches: [Mismatch] = []
        var errors: [String] = []
        /// Every descriptor run, with the identifiers it returned in their order: the same on every store.
        var answers: [String] = []
    }

    /// The stores the differential runs on: SQLite in memory, and a PostgreSQL store when the
    /// tests have a server (`STRATA_TEST_POSTGRES`); each must answer every descriptor with the
    /// identifiers of the other, in the same order.
    private func differentialStores() throws -> [(String, ModelContainer)] {
        var stores = [("sqlite", try openInMemory(QuerySchemas.trips))]
        if let uri = PostgresTestServer.freshStore("differential") {
            stores.append(("postgres", try ModelContainer(path: uri, configuration: configuration(QuerySchemas.trips))))
        }
        return stores
    }

    func testSQLAndEvaluatorAgreeOnRandomPredicates() throws {
        var answers: [(String, [String])] = []
        for (label, container) in try differentialStores() {
            answers.append((label, try differential(container, label)))
        }
        for (label, list) in answers.dropFirst() {
            XCTAssertEqual(list.count, answers[0].1.count, "\(label) ran another number of descriptors")
            var shown = 0
            for (a, b) in zip(answers[0].1, list) where a != b && shown < 10 {
                shown += 1
                XCTFail("\(answers[0].0) and \(label) answer differently:\n  \(answers[0].0): \(a)\n  \(label): \(b)")
            }
        }
    }

    private func differential(_ container: ModelContainer, _ label: String) throws -> [String] {
        let seed = Self.seed
        print("DifferentialTests [\(label)] seed: \(seed) (set STRATA_DIFF_SEED to replay)")
        var rng = SeededRNG(seed: seed)
        let writer = try container.makeContext()
        let tripIDs = try TripData.populate(writer, trips: 80, rng: &rng)
        let started = Date()
        var stats = Stats()

        // Saved objects.
        let context = try container.makeContext()
        let graph = try ObjectGraph(context: context)
        XCTAssertGreaterThanOrEqual(graph.objects(of: context.schema.entity(named: "Trip")!.descendants).count, 80)
        var gen = PredicateGenerator(rng: SeededRNG(seed: seed &+ 1), identifiers: graph.identifiersByRoot)
        run(Self.predicateCount, &gen, context, graph, &stats)

        // The same with unsaved inserts, updates and deletes in the context (SQL reads them applied).
        let pending = try container.makeContext()
        try TripData.populate(pending, trips: 10, rng: &rng, save: false)
        for id in tripIDs.prefix(20) {
            var patch: [(String, JSONValue)] = [("name", .string(rng.pick(Pools.names)))]
            if rng.chance(0.5) { patch.append(("rating", rng.chance(0.3) ? .null : .number(rng.pick(Pools.ratings)))) }
            if rng.chance(0.5) { patch.append(("bucketList", .array([.object([("title", .string(rng.pick(Pools.titles)))])]))) }
            if rng.chance(0.3) { patch.append(("livingAccommodation", .null)) }
            try pending.update(id: id.description, patch: JSONValue.object(patch).text)
        }
        for id in tripIDs.suffix(8) { try pending.delete(id: id.description) }
        XCTAssertTrue(pending.hasChanges)
        let pendingGraph = try ObjectGraph(context: pending)
        var pendingGen = PredicateGenerator(rng: SeededRNG(seed: seed &+ 2), identifiers: pendingGraph.identifiersByRoot)
        run(max(Self.predicateCount / 6, 1), &pendingGen, pending, pendingGraph, &stats)

        let elapsed = Date().timeIntervalSince(started)
        print("DifferentialTests [\(label)]: \(stats.checked) JSON predicates + \(stats.textChecked) text predicates checked in \(String(format: "%.1f", elapsed)) s; matched none: \(stats.none), all: \(stats.all), some: \(stats.some); \(stats.mismatches.count) mismatches, \(stats.errors.count) errors")
        for m in stats.mismatches.prefix(10) { XCTFail("[\(label)] " + m.description) }
        for e in stats.errors.prefix(10) { XCTFail("[\(label)] " + e) }
        XCTAssertEqual(stats.mismatches.count, 0, "[\(label)] SQL/evaluator mismatches (seed \(seed))")
        XCTAssertEqual(stats.errors.count, 0, "[\(label)] generated predicates rejected or failing (seed \(seed))")
        XCTAssertEqual(stats.textDiffers, 0, "[\(label)] JSON and text forms disagree (seed \(seed))")
        XCTAssertGreaterThanOrEqual(stats.checked, min(2500, Self.predicateCount))
        XCTAssertGreaterThanOrEqual(Double(stats.some), 0.3 * Double(stats.checked), "too few predicates select some but not all trips: the test would be vacuous")
        XCTAssertGreaterThan(stats.none, 0)
        XCTAssertGreaterThan(stats.all, 0)
        return stats.answers
    }

    private func run(_ count: Int, _ gen: inout PredicateGenerator, _ context: ModelContext, _ graph: ObjectGraph, _ stats: inout Stats) {
        let schema = context.schema
        for n in 0..<count {
            let entity = gen.rng.pick(["Trip", "Trip", "Trip", "Trip", "PersonalTrip", "BusinessTrip"])
            let predicate = gen.predicate(for: .trip(entity))
            var members: [(String, JSONValue)] = [("entity", .string(entity)), ("predicate", predicate),
                                                  ("bindings", .object(gen.bindings))]
            if gen.rng.chance(0.15) { members.append(("includeSubentities", .bool(false))) }
            let json = JSONValue.object(members)

            let d: FetchDescriptor
            do { d = try FetchDescriptor.decode(json, schema: schema) } catch {
                stats.errors.append("#\(n) rejected: \(error)\n  \(json.text)")
                continue
            }
            let candidates = graph.objects(of: d.entities).count
            guard let sqlIDs = check(d, form: "json", descriptor: json.text, text: nil, context: context, graph: graph,
                                     objects: n % 10 == 0, stats: &stats) else { continue }
            stats.checked += 1
            if sqlIDs.isEmpty { stats.none += 1 } else if sqlIDs.count == candidates { stats.all += 1 } else { stats.some += 1 }

            // Some also run sorted, paged and prefetching: the objects are the
            // identifiers' (same order), the count honours the page, the page is of the matches.
            if n % 7 == 0 { pagedCheck(members, n: n, sqlIDs: sqlIDs, &gen, context, graph, &stats) }

            // A share also runs as #Predicate text (rendered from the tree, parsed back).
            guard n % 3 == 0 else { continue }
            let text: String
            do { text = try PredicateJSON.predicate(predicate, JSONPath() / "predicate").text } catch {
                stats.errors.append("#\(n) tree: \(error)")
                continue
            }
            var textMembers = members
            textMembers[1] = ("predicate", .string(text))
            let textJSON = JSONValue.object(textMembers)
            let td: FetchDescriptor
            do { td = try FetchDescriptor.decode(textJSON, schema: schema) } catch {
                stats.errors.append("#\(n) text rejected: \(error)\n  text: \(text)\n  json: \(json.text)")
                continue
            }
            guard let textIDs = check(td, form: "text", descriptor: textJSON.text, text: text, context: context, graph: graph,
                                      objects: false, stats: &stats) else { continue }
            stats.textChecked += 1
            // Typed literals read back untyped from text (documented); otherwise both forms mean the same.
            if !predicate.containsTypedLiteral && textIDs != sqlIDs {
                stats.textDiffers += 1
                if stats.textDiffers <= 5 {
                    XCTFail("#\(n) the JSON and text forms select different objects\n  json: \(json.text)\n  text: \(text)\n  json only: \(sqlIDs.subtracting(textIDs).sorted())\n  text only: \(textIDs.subtracting(sqlIDs).sorted())")
                }
            }
        }
    }

    /// `#Predicate` text the JSON generator cannot write: objects compared by
    /// identity (`$0`, closure parameters), `is` on an outer closure's object,
    /// half-open ranges, Foundation spellings of options, enum members.
    static let handWritten: [(entity: String, text: String, bindings: String)] = [
        ("Trip", "{ trip in trip.bucketList.contains { $0.trip == trip } }", "{}"),
        ("Trip", "{ trip in trip.bucketList.allSatisfy { item in item.trip == trip } }", "{}"),
        ("Trip", "{ trip in trip.tags.contains { tag in tag.trips.contains { $0 != trip && $0.name == trip.name } } }", "{}"),
        ("Trip", "{ trip in trip.tags.contains { tag in tag.trips.contains { other in other != trip && other.name.compare(trip.name, options: .caseInsensitive) == .orderedSame } } }", "{}"),
        ("Trip", "$0.livingAccommodation?.trip == $0", "{}"),
        ("Trip", "$0.livingAccommodation?.trip != $0", "{}"),
        ("Trip", "{ t in t.bucketList.contains { item in t is PersonalTrip && item.isInPlan } }", "{}"),
        ("Trip", "{ t in t.tags.contains { tag in tag.trips.contains { $0 is BusinessTrip && !(t is BusinessTrip) } } }", "{}"),
        ("Trip", "(1...3).contains($0.rating ?? 0)", "{}"),
        ("Trip", "(1..<3).contains($0.rating ?? 0)", "{}"),
        ("Trip", "(lo...hi).contains($0.startDate)", #"{"lo": "2024-03-01T00:00:00Z", "hi": {"date": "2024-09-01T00:00:00Z"}}"#),
        ("Trip", "(lo...).contains($0.startDate)", #"{"lo": "2024-03-01T00:00:00Z"}"#),
        ("Trip", "(..<hi).contains($0.startDate) || (...2).contains($0.rating ?? 9)", #"{"hi": {"date": "2024-09-01T00:00:00Z"}}"#),
        ("Trip", #"$0.name.localizedCaseInsensitiveCompare("TRIP 2") == .orderedAscending && $0.name.localizedCompare("T") != .orderedAscending"#, "{}"),
        ("Trip", "($0.budget ?? 0) > 1.5 && $0.budget != nil", "{}"),
        ("Trip", #"$0.name.localizedCaseInsensitiveContains("zür")"#, "{}"),
        ("Trip", #"$0.name.caseInsensitiveCompare("ZURICH") == .orderedSame"#, "{}"),
        ("Trip", #"$0.name.compare("zurich", options: [.caseInsensitive, .diacriticInsensitive]) != .orderedDescending"#, "{}"),
        ("Trip", #"$0.name.starts(with: "Trip")"#, "{}"),
        ("Trip", #"$0.name.hasSuffix("ich", options: "cd")"#, "{}"),
        ("Trip", "$0.bucketList.count > 1 && $0.name.count == 6", "{}"),
        ("Trip", #"$0.name.count == "Zu\u{308}rich".count"#, "{}"),
        ("PersonalTrip", "$0.reason == .family || $0.reason == .wellness.rawValue", "{}"),
        ("PersonalTrip", "[.family, .reunion].contains($0.reason)", "{}"),
        ("Trip", "names.contains($0.name)", #"{"names": ["Zürich", "zurich", null, "Trip 2"]}"#),
        ("Trip", "$0.tags.contains(where: { $0.name.isEmpty })", "{}"),
        ("Trip", #"!$0.tags.isEmpty && $0.tags.allSatisfy { $0.name.localizedStandardContains("zu") }"#, "{}"),
        ("Trip", "$0.bucketList.contains { $0.trip?.livingAccommodation?.placeName == $0.title }", "{}"),
        ("Trip", "$0.flag ? $0.rating ?? -1 > 2 : ($0.score ?? 0) < 1", "{}"),
        ("Trip", "searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText) || $0.destination.localizedStandardContains(searchText)", #"{"searchText": "zur"}"#),
        ("Trip", "searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText)", #"{"searchText": ""}"#),
        ("Trip", "#Predicate<Trip> { trip in trip.endDate >= now && trip.code == code }", #"{"now": "2024-06-01T00:00:00Z", "code": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"}"#),
        ("Trip", #"$0.photo == "AAEC" || $0.website!.contains("zürich")"#, "{}"),
        // A ?? or ?: of an int and a double keeps each value's type (an int past 2^53 stays exact).
        ("Trip", "($0.rating ?? 2.5) != $0.rating && $0.rating != nil || ($0.flag ? $0.rating ?? 0 : $0.score ?? 0.5) == 9007199254740993", "{}"),
        // Aggregates over a to-many relationship's values (nil when there are none).
        ("Trip", "($0.bucketList.map { $0.priority }.max() ?? -1) >= 2", "{}"),
        ("Trip", "$0.bucketList.filter { $0.isInPlan }.map { $0.title }.min() == \"Hike\" || $0.bucketList.map { $0.title }.max() == nil", "{}"),
        ("BucketListItem", "$0.trip?.bucketList.map { $0.priority }.max() == $0.priority", "{}"),
        ("Trip", "{ trip in trip.tags.contains { $0.trips.map { $0.startDate }.min() == trip.startDate } }", "{}"),
        // Exact sums and averages (Core Data's @sum, @avg): order-independent, failing outside Int64 or the finite doubles.
        ("Trip", "$0.bucketList.map { $0.priority }.reduce(0, +) > 3", "{}"),
        ("Trip", "$0.bucketList.map { $0.priority }.reduce(0, +) == 0 && !$0.bucketList.isEmpty", "{}"),
        ("Trip", "!($0.bucketList.map { ($0.priority ?? 0) * 2305843009213693952 }.reduce(0, +) > 0)", "{}"),
        ("Trip", "$0.bucketList.map { $0.priority! }.reduce(0, +) >= 0 || $0.flag", "{}"),
        ("Trip", "($0.bucketList.filter { $0.isInPlan }.map { $0.priority }.average() ?? -1) >= 1.5", "{}"),
        ("Trip", "$0.bucketList.map { $0.priority }.average() == nil", "{}"),
        ("Trip", "$0.tags.contains { $0.trips.map { $0.score }.reduce(0, +) >= 9007199254740994 }", "{}"),
        ("Trip", "$0.tags.contains { $0.trips.map { $0.score ?? 0.1 }.reduce(0.0, +) * 10 == $0.trips.count }", "{}"),
        ("Trip", "$0.tags.contains { tag in tag.trips.map { $0.rating }.reduce(0, +) > 9007199254740993 }", "{}"),
        ("Trip", "$0.tags.allSatisfy { $0.trips.map { ($0.score ?? 0) * 1e308 }.reduce(0, +) < 1e308 }", "{}"),
        ("Trip", "{ trip in trip.tags.contains { ($0.trips.map { $0.score }.average() ?? 0) > trip.score ?? 0 } }", "{}"),
        ("Trip", "$0.bucketList.map { $0.priority }.reduce(0, +) * 2 > $0.bucketList.count + ($0.rating ?? 0)", "{}"),
        ("BucketListItem", "$0.trip?.bucketList.map { $0.priority }.reduce(0, +) == 0", "{}"),
        // Composition, as Apple's trips list composes its search and its filter.
        ("Trip", "searchPredicate.evaluate($0) && tripFilter.evaluate($0)",
         #"{"searchPredicate": {"predicate": "$0.name.localizedStandardContains(q)"}, "q": "zur", "tripFilter": {"predicate": {"!=": [{"key": "rating"}, null]}}}"#),
        ("Trip", "{ trip in trip.bucketList.contains { planned.evaluate($0) && owner.evaluate(trip) } }",
         #"{"planned": {"predicate": "$0.isInPlan"}, "owner": {"predicate": "$0.flag || inner.evaluate($0)"}, "inner": {"predicate": "$0.bucketList.count > 1"}}"#),
        // Arithmetic: a failure (an overflow, a division by zero, no finite result) leaves the object out, under ! too.
        ("Trip", "$0.endDate > $0.startDate + 86400", "{}"),
        ("Trip", "$0.endDate - $0.startDate >= 3 * 86400.0", "{}"),
        ("Trip", "($0.rating ?? 0) * 1000000000000000000 > 0", "{}"),
        ("Trip", "!(($0.rating ?? 0) * 1000000000000000000 > 0)", "{}"),
        ("Trip", "($0.rating ?? 0) / ($0.rating ?? 0) == 1", "{}"),
        ("Trip", "!(($0.rating ?? 0) / ($0.rating ?? 0) == 1) || $0.flag", "{}"),
        ("Trip", "$0.flag || ($0.score ?? 1) / 0.0 > 0", "{}"),
        ("Trip", "abs(($0.score ?? 0) - 2.5) < 1", "{}"),
        ("Trip", "-($0.rating ?? 0) % 3 == -1", "{}"),
        ("Trip", "$0.bucketList.count * 2 > $0.tags.count + 1", "{}"),
        ("Trip", "$0.score! * 1e308 * 10 > 0 || $0.rating == 2", "{}"),
        ("Trip", "($0.score ?? 1e-200) * 1e-200 == 0", "{}"),
        ("Trip", "$0.startDate + offset < now", #"{"offset": 3600, "now": "2024-06-01T00:00:00Z"}"#),
        ("Trip", "($0.rating ?? 0) - 9223372036854775807 - 2 < 0", "{}"),
        // Inheritance: casts, and a subentity's attribute on a Trip.
        ("Trip", "($0 as? BusinessTrip)?.perdiem ?? 0 > 50", "{}"),
        ("Trip", "$0.perdiem > 50 || $0.reason == .family", "{}"),
        ("Trip", "($0 as? BusinessTrip) != nil && !($0 is BusinessTrip) == false", "{}"),
        ("Trip", "($0 as? BusinessTrip)!.perdiem < 100", "{}"),
        ("BucketListItem", "($0.trip as? PersonalTrip)?.reason == .wellness || $0.trip?.perdiem == nil", "{}"),
        ("Trip", "if let b = $0 as? BusinessTrip { b.perdiem > 50 } else { false }", "{}"),
        ("Trip", "if let a = $0.livingAccommodation { a.placeName.contains(\"e\") } else if let p = $0 as? PersonalTrip { p.reason == .family } else { $0.flag }", "{}"),
        ("Trip", "if let a = $0.livingAccommodation { $0.bucketList.contains { $0.title.count > a.placeName.count } } else { false }", "{}"),
        // Optional chains as Swift forces them.
        ("Trip", #"$0.livingAccommodation?.address.localizedStandardContains("a") ?? false"#, "{}"),
        ("Trip", #"$0.livingAccommodation?.placeName.isEmpty ?? true"#, "{}"),
        ("Trip", #"$0.livingAccommodation?.placeName.isEmpty == false"#, "{}"),
        ("Trip", #"$0.livingAccommodation?.address.hasPrefix("1") != true"#, "{}"),
        ("BucketListItem", #"$0.trip?.bucketList.isEmpty ?? true"#, "{}"),
        ("BucketListItem", #"$0.trip?.tags.contains { $0.name.isEmpty } == false"#, "{}"),
        // filter { } as SwiftData writes it.
        ("Trip", "$0.bucketList.filter { !$0.isInPlan }.count > 0", "{}"),
        ("Trip", "$0.bucketList.filter({ $0.isInPlan }).isEmpty && !$0.bucketList.isEmpty", "{}"),
        ("Trip", "$0.bucketList.filter { $0.isInPlan }.count == $0.bucketList.count", "{}"),
        ("Trip", "$0.bucketList.filter { $0.isInPlan }.contains { $0.title.localizedStandardContains(\"a\") }", "{}"),
        ("Trip", "$0.bucketList.filter { $0.trip!.livingAccommodation!.placeName != \"x\" }.allSatisfy { $0.isInPlan }", "{}"),
        // Identity: SwiftData's persistentModelID.
        ("Trip", "$0.persistentModelID == id || $0.persistentModelID != other", #"{"id": "Trip/3", "other": "Trip/4"}"#),
        ("Trip", "ids.contains($0.persistentModelID)", #"{"ids": ["Trip/1", "Trip/5", "Trip/999", null]}"#),
        ("Trip", "$0.livingAccommodation?.trip?.persistentModelID == $0.persistentModelID", "{}"),
        ("BucketListItem", "$0.trip?.persistentModelID == tripID", #"{"tripID": "Trip/2"}"#),
        ("BucketListItem", "$0.trip!.persistentModelID != tripID", #"{"tripID": "Trip/2"}"#),
        // Force unwraps: a nil fails the evaluation, and the object is left out, under ! too.
        ("Trip", #"$0.livingAccommodation!.placeName != "Second""#, "{}"),
        ("Trip", #"!($0.livingAccommodation!.placeName == "Second")"#, "{}"),
        ("Trip", #"$0.livingAccommodation == nil || $0.livingAccommodation!.placeName != "Second""#, "{}"),
        ("Trip", #"$0.livingAccommodation!.placeName != "Second" || $0.livingAccommodation == nil"#, "{}"),
        ("Trip", #"!($0.rating! > 2 && false)"#, "{}"),
        ("Trip", "($0.flag ? $0.rating! : 0) < 3", "{}"),
        ("Trip", "($0.rating ?? $0.livingAccommodation!.trip!.rating!) >= 0", "{}"),
        ("Trip", "!$0.bucketList.contains { $0.trip!.livingAccommodation!.placeName == $0.title }", "{}"),
        ("Trip", "$0.bucketList.allSatisfy { $0.trip?.livingAccommodation!.placeName != nil }", "{}"),
    ]

    func testHandWrittenTextPredicatesAgree() throws {
        var answers: [(String, [String])] = []
        for (label, container) in try differentialStores() {
            answers.append((label, try handWritten(container, label)))
        }
        for (label, list) in answers.dropFirst() { XCTAssertEqual(list, answers[0].1, "\(label) answers differently from \(answers[0].0)") }
    }

    private func handWritten(_ container: ModelContainer, _ label: String) throws -> [String] {
        var rng = SeededRNG(seed: Self.seed)
        try TripData.populate(container.makeContext(), trips: 80, rng: &rng)
        let context = try container.makeContext()
        let graph = try ObjectGraph(context: context)
        var stats = Stats()
        var selective = 0
        for (entity, text, bindings) in Self.handWritten {
            let json = #"{"entity": "\#(entity)", "predicate": \#(JSONValue.string(text).text), "bindings": \#(bindings)}"#
            let d: FetchDescriptor
            do { d = try Query.descriptor(json, context.schema) } catch {
                XCTFail("rejected: \(error)\n  \(text)")
                continue
            }
            guard let ids = check(d, form: "text", descriptor: json, text: text, context: context, graph: graph, objects: true, stats: &stats) else { continue }
            if !ids.isEmpty && ids.count < graph.objects(of: d.entities).count { selective += 1 }
        }
        for m in stats.mismatches { XCTFail("[\(label)] " + m.description) }
        for e in stats.errors { XCTFail("[\(label)] " + e) }
        XCTAssertGreaterThanOrEqual(selective, Self.handWritten.count / 2, "[\(label)] most of these select some but not all trips")
        return stats.answers
    }

    /// The order docs/predicates.md §4 gives: each key forward (nil first) or reverse (nil last), strings in
    /// localized standard order unless binary, decimals by value; ties by insertion order (primary key).
    static func sorted(_ ids: [String], by sort: [JSONValue], graph: ObjectGraph) -> [String] {
        func value(_ o: GraphObject, _ path: String) -> (SQLValue, AttributeType?) {
            var x: GraphObject? = o
            let parts = path.split(separator: ".").map(String.init)
            for i in parts.indices {
                guard let y = x else { break }
                // The rest of the path names an attribute (a composite's field: `home.city`), or a hop.
                if let a = y.entity.attributeByName[parts[i...].joined(separator: ".")] { return (y.value(of: a), a.type) }
                x = y.relatedObjects[parts[i]]?.first
            }
            return (.null, nil)
        }
        func compare(_ a: GraphObject, _ b: GraphObject) -> Bool {
            for key in sort {
                let path = key["key"]?.stringValue ?? ""
                let reverse = key["order"]?.stringValue == "reverse"
                let binary = key["comparator"]?.stringValue == "binary"
                let (x, type) = value(a, path)
                let (y, _) = value(b, path)
                var c: Int
                switch (x, y) {
                case (.null, .null): c = 0
                case (.null, _): c = -1
                case (_, .null): c = 1
                case let (.text(s), .text(t)):
                    if type == .decimal { c = DecimalText.compare(s, t) }
                    else if (type == .string || type == .url) && !binary { c = TextFolding.standardCompare(s, t) }
                    else { c = Evaluation.bytes(s, t) }
                default: c = Evaluation.order(x, y, domain: .null, options: []) ?? 0
                }
                if reverse { c = -c }
                if c != 0 { return c < 0 }
            }
            return a.pk < b.pk
        }
        return ids.compactMap { graph.object($0) }.sorted(by: compare).map(\.id)
    }

    private func pagedCheck(_ members: [(String, JSONValue)], n: Int, sqlIDs: Set<String>, _ gen: inout PredicateGenerator,
                            _ context: ModelContext, _ graph: ObjectGraph, _ stats: inout Stats) {
        var m = members
        var sort: [JSONValue] = []
        var keys = ["name", "rating", "score", "budget", "startDate", "flag", "code", "livingAccommodation.placeName",
                    "livingAccommodation.trip.name", "website", "photo", "home.city", "home.zip"]
        // A subentity's attribute sorts a Trip fetch too (nil for the other trips).
        if members.contains(where: { $0.0 == "entity" && $0.1 == .string("Trip") }) { keys += ["perdiem", "reason"] }
        for _ in 0..<gen.rng.int(1...3) {
            let key = gen.rng.pick(keys)
            var s: [(String, JSONValue)] = [("key", .string(key))]
            if gen.rng.chance(0.5) { s.append(("order", .string("reverse"))) }
            if gen.rng.chance(0.3) { s.append(("comparator", .string("binary"))) }
            sort.append(.object(s))
        }
        m.append(("sortBy", .array(sort)))
        let paged = gen.rng.chance(0.6)
        if paged {
            m.append(("fetchLimit", .number(String(gen.rng.int(0...20)))))
            if gen.rng.chance(0.5) { m.append(("fetchOffset", .number(String(gen.rng.int(0...30))))) }
        }
        let prefetch = ["bucketList", "livingAccommodation", "tags"].filter { _ in gen.rng.chance(0.4) }
        m.append(("relationshipKeyPathsForPrefetching", .array(prefetch.map { .string($0) })))
        if gen.rng.chance(0.3) { m.append(("propertiesToFetch", .array([.string("name"), .string("livingAccommodation")]))) }
        let json = JSONValue.object(m)
        do {
            let d = try FetchDescriptor.decode(json, schema: context.schema)
            let ids = try Query.identifiers(context, d)
            stats.answers.append("paged \(json.text) -> \(ids.joined(separator: ","))")
            let objects = try Query.objects(context, d)
            if objects.compactMap({ $0["_id"]?.stringValue }) != ids { stats.errors.append("#\(n) paged: objects \(objects.count) differ from identifiers \(ids)\n  \(json.text)") }
            if try context.fetchCount(d) != Int64(ids.count) { stats.errors.append("#\(n) paged: count differs\n  \(json.text)") }
            if !Set(ids).isSubset(of: sqlIDs) || (!paged && Set(ids) != sqlIDs) || ids.count != Set(ids).count {
                stats.errors.append("#\(n) paged: identifiers \(ids) are not the matches \(sqlIDs.sorted())\n  \(json.text)")
            }
            if !paged {
                let expected = Self.sorted(ids, by: sort, graph: graph)
                if expected != ids { stats.errors.append("#\(n) sort order \(ids) but expected \(expected)\n  \(json.text)") }
            }
            for (o, rel) in objects.flatMap({ o in prefetch.map { (o, $0) } }) {
                switch o[rel] {
                case .array(let items)?: if items.contains(where: { $0["_id"] == nil }) { stats.errors.append("#\(n) \(rel) not prefetched") }
                case .object?, .null?: break
                default: stats.errors.append("#\(n) \(rel) not prefetched: \(o.text)")
                }
            }
        } catch {
            stats.errors.append("#\(n) paged failed: \(error)\n  \(json.text)")
        }
    }

    /// Runs a descriptor through SQL (identifiers, count, and for some the objects) and the evaluator.
    private func check(_ d: FetchDescriptor, form: String, descriptor: String, text: String?, context: ModelContext, graph: ObjectGraph,
                       objects: Bool, stats: inout Stats) -> Set<String>? {
        let sqlIDs: Set<String>
        do {
            let list = try Query.identifiers(context, d)
            stats.answers.append("\(form) \(descriptor) -> \(list.joined(separator: ","))")
            sqlIDs = Set(list)
            if list.count != sqlIDs.count { stats.errors.append("[\(form)] duplicate identifiers \(list.sorted())\n  \(descriptor)") }
            let n = try context.fetchCount(d)
            if n != Int64(list.count) { stats.errors.append("[\(form)] fetchCount \(n) but \(list.count) identifiers\n  \(descriptor)") }
            if objects {
                let fetched = try Query.objects(context, d).compactMap { $0["_id"]?.stringValue }
                if fetched != list { stats.errors.append("[\(form)] fetch returned \(fetched) but identifiers \(list)\n  \(descriptor)") }
            }
        } catch {
            stats.errors.append("[\(form)] SQL failed: \(error)\n  \(descriptor)")
            return nil
        }
        let evaluated = graph.evaluate(d)
        if evaluated != sqlIDs {
            let sql = (try? Query.explain(context, d).sql) ?? "?"
            stats.mismatches.append(Mismatch(form: form, descriptor: descriptor, text: text, sql: sql,
                                       onlySQL: Array(sqlIDs.subtracting(evaluated)), onlyEvaluator: Array(evaluated.subtracting(sqlIDs))))
        }
        return sqlIDs
    }
}
