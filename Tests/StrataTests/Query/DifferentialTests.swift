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
    }

    func testSQLAndEvaluatorAgreeOnRandomPredicates() throws {
        let seed = Self.seed
        print("DifferentialTests seed: \(seed) (set STRATA_DIFF_SEED to replay)")
        var rng = SeededRNG(seed: seed)
        let container = try openInMemory(QuerySchemas.trips)
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
        print("DifferentialTests: \(stats.checked) JSON predicates + \(stats.textChecked) text predicates checked in \(String(format: "%.1f", elapsed)) s; matched none: \(stats.none), all: \(stats.all), some: \(stats.some); \(stats.mismatches.count) mismatches, \(stats.errors.count) errors")
        for m in stats.mismatches.prefix(10) { XCTFail(m.description) }
        for e in stats.errors.prefix(10) { XCTFail(e) }
        XCTAssertEqual(stats.mismatches.count, 0, "SQL/evaluator mismatches (seed \(seed))")
        XCTAssertEqual(stats.errors.count, 0, "generated predicates rejected or failing (seed \(seed))")
        XCTAssertEqual(stats.textDiffers, 0, "JSON and text forms disagree (seed \(seed))")
        XCTAssertGreaterThanOrEqual(stats.checked, min(2500, Self.predicateCount))
        XCTAssertGreaterThanOrEqual(Double(stats.some), 0.3 * Double(stats.checked), "too few predicates select some but not all trips: the test would be vacuous")
        XCTAssertGreaterThan(stats.none, 0)
        XCTAssertGreaterThan(stats.all, 0)
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

    /// Runs a descriptor through SQL (identifiers, count, and for some the objects) and the evaluator.
    private func check(_ d: FetchDescriptor, form: String, descriptor: String, text: String?, context: ModelContext, graph: ObjectGraph,
                       objects: Bool, stats: inout Stats) -> Set<String>? {
        let sqlIDs: Set<String>
        do {
            let list = try Query.identifiers(context, d)
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
