import XCTest
@testable import Strata

/// Limits (docs/predicates.md §6): every predicate that passes the checker
/// runs — as a fetch, a count past a limit and a prefetching fetch of a
/// subentity, the statements that wrap it deepest — and returns the objects
/// the in-memory evaluator selects; one that SQLite could not parse is
/// `.invalid` with the JSON path or text position of the part that is too
/// deep, never `.internal`. Each construct is nested at every depth from 1 to
/// the JSON nesting limit of 128 levels (or the text parser's limit).
final class PredicateLimitTests: StoreTestCase {
    /// A comparison that some trips match.
    static func leaf(_ i: Int) -> String {
        let names = ["Paris", "Zürich", "Trip 2", "zurich", "straße", "Trip 10"]
        return #"{"==": [{"key": "name"}, \#(JSONValue.string(names[i % names.count]).text)]}"#
    }

    static func itemLeaf(_ i: Int) -> String {
        #"{"==": [{"key": "title"}, \#(JSONValue.string(["museum", "Zürich", "hike", "swim"][i % 4]).text)]}"#
    }

    /// Constructs nested `depth` times, as JSON predicates.
    static let jsonConstructs: [(name: String, build: (Int) -> String)] = [
        ("not", { d in String(repeating: #"{"not": "#, count: d) + leaf(0) + String(repeating: "}", count: d) }),
        ("not-and-or", { d in
            var s = leaf(d)
            for i in 0..<d { s = #"{"not": {"\#(i % 2 == 0 ? "and" : "or")": [\#(leaf(i)), \#(s)]}}"# }
            return s
        }),
        ("and-or", { d in
            var s = leaf(d)
            for i in 0..<d { s = #"{"\#(i % 2 == 0 ? "and" : "or")": [\#(s), {"not": \#(leaf(i))}]}"# }
            return s
        }),
        ("or-or", { d in
            var s = leaf(d)
            for i in 0..<d { s = #"{"or": [\#(leaf(i)), \#(s)]}"# }
            return s
        }),
        ("any", { d in
            var s = itemLeaf(d)
            for i in 0..<d {
                let path = i == d - 1 ? "bucketList" : "trip.bucketList"
                s = #"{"any": [{"key": "\#(path)"}, {"or": [\#(itemLeaf(i)), \#(s)]}]}"#
            }
            return s
        }),
        ("all", { d in
            var s = itemLeaf(d)
            for i in 0..<d {
                let path = i == d - 1 ? "bucketList" : "trip.bucketList"
                s = #"{"all": [{"key": "\#(path)"}, {"or": [\#(itemLeaf(i)), \#(s)]}]}"#
            }
            return s
        }),
        ("cond-then", { d in
            var s = leaf(d)
            for i in 0..<d { s = #"{"cond": [{"key": "flag"}, \#(s), \#(leaf(i))]}"# }
            return s
        }),
        ("cond-else", { d in
            var s = leaf(d)
            for i in 0..<d { s = #"{"cond": [{"key": "flag"}, \#(leaf(i)), \#(s)]}"# }
            return s
        }),
        ("cond-test", { d in
            var s = leaf(d)
            for i in 0..<d { s = #"{"cond": [\#(s), {"key": "flag"}, \#(leaf(i))]}"# }
            return s
        }),
        ("cond-value", { d in
            var e = #"{"key": "name"}"#
            for _ in 0..<d { e = #"{"cond": [{"key": "flag"}, \#(e), {"key": "destination"}]}"# }
            return #"{"==": [\#(e), "Paris"]}"#
        }),
        ("coalesce", { d in
            var e = #"{"key": "website"}"#
            for _ in 0..<d { e = #"{"??": [{"key": "website"}, \#(e)]}"# }
            return #"{"==": [\#(e), "https://example.com/"]}"#
        }),
        ("count-in-cond", { d in
            var e = #"{"count": {"key": "bucketList"}}"#
            for _ in 0..<d { e = #"{"cond": [{"key": "flag"}, \#(e), {"count": {"key": "name"}}]}"# }
            return #"{">": [\#(e), 1]}"#
        }),
        ("hasPrefix-in-not-and", { d in
            var s = #"{"hasPrefix": [{"key": "name"}, "Tr"], "options": "c"}"#
            for i in 0..<d { s = #"{"not": {"and": [\#(leaf(i)), \#(s)]}}"# }
            return s
        }),
    ]

    /// Constructs nested `depth` times, as `#Predicate` text.
    static let textConstructs: [(name: String, build: (Int) -> String)] = [
        ("!", { d in String(repeating: "!(", count: d) + #"$0.name == "Paris""# + String(repeating: ")", count: d) }),
        ("||-groups", { d in
            (0..<d).map { #"$0.name == "\#(["Paris", "Trip 2", "x"][$0 % 3])" || ("# }.joined() + #"$0.name == "zurich""# + String(repeating: ")", count: d)
        }),
        ("!-&&-||", { d in
            (0..<d).map { #"!($0.name == "Paris" \#($0 % 2 == 0 ? "&&" : "||") "#  }.joined() + #"$0.rating == 1"# + String(repeating: ")", count: d)
        }),
        ("contains", { d in
            (0..<d).map { $0 == 0 ? #"$0.bucketList.contains { $0.title == "hike" || "# : #"$0.trip?.bucketList.contains { $0.title == "museum" || "# }.joined()
                + #"$0.isInPlan"# + String(repeating: " }", count: d)
        }),
        ("?:", { d in
            (0..<d).map { #"$0.flag == \#($0 % 2 == 0) ? $0.name == "Paris" : ("# }.joined() + #"$0.rating == 1"# + String(repeating: ")", count: d)
        }),
        ("??", { d in
            "(" + String(repeating: "$0.website ?? (", count: d) + "$0.website" + String(repeating: ")", count: d) + #") == "https://example.com/""#
        }),
    ]

    /// A random mix of every nesting construct, `levels` deep, in the scope of
    /// a trip (`item` false) or of a bucket list item (`item` true).
    static func mixed(_ levels: Int, item: Bool = false, _ rng: inout SeededRNG) -> String {
        let p = item ? "trip." : ""
        let leafHere = #"{"==": [{"key": "\#(p)name"}, \#(JSONValue.string(rng.pick(["Paris", "Trip 2", "zurich"])).text)]}"#
        if levels == 0 { return rng.chance(0.5) ? leafHere : #"{"hasPrefix": [{"key": "\#(p)name"}, "Tr"], "options": "c"}"# }
        let kind = rng.int(0...10)
        let toItem = kind == 3 || kind == 4
        let child = mixed(levels - 1, item: item || toItem, &rng)
        switch kind {
        case 0: return #"{"not": {"and": [\#(leafHere), \#(child)]}}"#
        case 1: return #"{"or": [\#(child), \#(leafHere)]}"#
        case 2: return #"{"and": [\#(leafHere), {"not": \#(child)}]}"#
        case 3: return #"{"any": [{"key": "\#(p)bucketList"}, \#(child)]}"#
        case 4: return #"{"all": [{"key": "\#(p)bucketList"}, \#(child)]}"#
        case 5: return #"{"cond": [{"key": "\#(p)flag"}, \#(child), \#(leafHere)]}"#
        case 6: return #"{"cond": [{"key": "\#(p)flag"}, \#(leafHere), \#(child)]}"#
        case 7: return #"{"cond": [\#(child), {"key": "\#(p)flag"}, \#(leafHere)]}"#
        case 8: return #"{"==": [{"cond": [\#(child), {"key": "\#(p)name"}, {"key": "\#(p)destination"}]}, "Paris"]}"#
        case 9: return #"{">": [{"cond": [\#(child), {"count": {"key": "\#(p)bucketList"}}, {"count": {"key": "\#(p)name"}}]}, 1]}"#
        default: return #"{"==": [{"??": [{"key": "\#(p)website"}, {"cond": [\#(child), {"key": "\#(p)website"}, null]}]}, "http://a.b/c"]}"#
        }
    }

    struct Outcome { var accepted = 0; var firstRejected: Int?; var rejectedMessage = "" }

    /// Runs a predicate through every statement shape and against the evaluator;
    /// nil when it is rejected (then the error must name where).
    func runOrReject(_ predicate: String, _ c: ModelContext, _ graph: ObjectGraph?, what: String,
                     expecting: String = "nested too deeply") throws -> StrataError? {
        let plain: FetchDescriptor
        do {
            plain = try Query.descriptor(#"{"entity": "Trip", "predicate": \#(predicate)}"#, c.schema)
        } catch let e as StrataError {
            XCTAssertEqual(e.code, .invalid, "\(what): \(e.message)")
            XCTAssertNotNil(e.path, "\(what): \(e.message)")
            XCTAssertTrue(e.message.contains(expecting), "\(what): \(e.message)")
            return e
        }
        let ids = try Query.identifiers(c, plain)
        if let graph { XCTAssertEqual(Set(ids), graph.evaluate(plain), what) }
        let wrapped = try Query.descriptor(#"""
            {"entity": "PersonalTrip", "predicate": \#(predicate), "fetchLimit": 1000, "fetchOffset": 0,
             "sortBy": [{"key": "livingAccommodation.placeName"}],
             "relationshipKeyPathsForPrefetching": ["bucketList", "livingAccommodation"]}
            """#, c.schema)
        let objects = try Query.objects(c, wrapped)
        XCTAssertEqual(try c.fetchCount(wrapped), Int64(objects.count), what)
        if let graph { XCTAssertEqual(Set(objects.compactMap { $0["_id"]?.stringValue }), graph.evaluate(wrapped), what) }
        return nil
    }

    func outcomes(_ constructs: [(name: String, build: (Int) -> String)], text: Bool, upTo maxDepth: Int) throws -> [String: Outcome] {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        var rng = SeededRNG(seed: 6)
        try TripData.populate(c, trips: 40, rng: &rng)
        let graph = try ObjectGraph(context: c)
        var results: [String: Outcome] = [:]
        for (name, build) in constructs {
            var o = Outcome()
            for depth in 1...maxDepth {
                let p = text ? JSONValue.string(build(depth)).text : build(depth)
                // Stop where the descriptor itself would pass JSON's nesting limit.
                if !text, (try? JSONValue.parse(#"{"predicate": \#(p)}"#)) == nil { break }
                if let e = try runOrReject(p, c, graph, what: "\(name) at depth \(depth)") {
                    if o.firstRejected == nil { o.firstRejected = depth; o.rejectedMessage = e.message }
                    if text {
                        XCTAssertTrue(e.message.contains("position"), "\(name) at depth \(depth): \(e.message)")
                        XCTAssertEqual(e.path, "/predicate")
                    } else {
                        XCTAssertTrue(e.path?.hasPrefix("/predicate") == true, "\(name) at depth \(depth): \(e.path ?? "")")
                    }
                    XCTAssertTrue(e.message.contains("nested too deeply"), "\(name) at depth \(depth): \(e.message)")
                } else {
                    XCTAssertNil(o.firstRejected, "\(name): depth \(depth) runs, but depth \(o.firstRejected ?? 0) was rejected")
                    o.accepted = depth
                }
            }
            results[name] = o
        }
        return results
    }

    func testEveryJSONNestingDepthRunsOrIsRejectedWithItsPath() throws {
        let r = try outcomes(Self.jsonConstructs, text: false, upTo: 128)
        for (name, o) in r.sorted(by: { $0.key < $1.key }) {
            print("limit: \(name) runs to depth \(o.accepted)\(o.firstRejected.map { ", rejected from \($0)" } ?? "")")
        }
        // What the documentation promises (docs/predicates.md §6).
        XCTAssertGreaterThanOrEqual(r["not"]?.accepted ?? 0, 120, "double negation folds away")
        XCTAssertNil(r["not"]?.firstRejected)
        XCTAssertNil(r["or-or"]?.firstRejected, "nested disjunctions are one")
        XCTAssertGreaterThanOrEqual(r["and-or"]?.accepted ?? 0, 61, "to the JSON nesting limit")
        XCTAssertGreaterThanOrEqual(r["not-and-or"]?.accepted ?? 0, 30)
        XCTAssertGreaterThanOrEqual(r["any"]?.accepted ?? 0, 6)
        XCTAssertGreaterThanOrEqual(r["all"]?.accepted ?? 0, 5)
        XCTAssertGreaterThanOrEqual(r["cond-then"]?.accepted ?? 0, 10)
        XCTAssertGreaterThanOrEqual(r["cond-test"]?.accepted ?? 0, 20)
        XCTAssertNil(r["coalesce"]?.firstRejected, "nested ?? is one coalesce call")
    }

    func testEveryTextNestingDepthRunsOrIsRejectedWithItsPosition() throws {
        let r = try outcomes(Self.textConstructs, text: true, upTo: 110)
        for (name, o) in r.sorted(by: { $0.key < $1.key }) {
            print("limit: text \(name) runs to depth \(o.accepted)\(o.firstRejected.map { ", rejected from \($0): \(o.rejectedMessage)" } ?? "")")
        }
        // `!(` is two levels of the text parser's 100.
        XCTAssertGreaterThanOrEqual(r["!"]?.accepted ?? 0, 50)
        XCTAssertGreaterThanOrEqual(r["||-groups"]?.accepted ?? 0, 100)
        XCTAssertGreaterThanOrEqual(r["contains"]?.accepted ?? 0, 6)
    }

    /// Random mixes of every construct: whatever the checker accepts runs.
    func testRandomMixedNestingRunsOrIsRejectedWithItsPath() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        var rng = SeededRNG(seed: 61)
        try TripData.populate(c, trips: 12, rng: &rng)
        let graph = try ObjectGraph(context: c)
        var accepted = 0, rejected = 0
        for n in 0..<600 {
            let p = Self.mixed(rng.int(1...40), &rng)
            if (try? JSONValue.parse(#"{"predicate": \#(p)}"#)) == nil { continue }
            // (The evaluator walks nested quantifiers exhaustively: compare rows only for shallow ones.)
            let quantifiers = p.components(separatedBy: #""any""#).count + p.components(separatedBy: #""all""#).count - 2
            if try runOrReject(p, c, quantifiers <= 4 ? graph : nil, what: "mix \(n): \(p)") == nil { accepted += 1 } else { rejected += 1 }
        }
        XCTAssertGreaterThan(accepted, 100)
        XCTAssertGreaterThan(rejected, 100)
    }

    /// Long flat disjunctions and conjunctions: equalities of one key path
    /// become one IN list; other terms nest as a balanced tree.
    func testLongFlatJunctionsRun() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        var rng = SeededRNG(seed: 7)
        try TripData.populate(c, trips: 40, rng: &rng)
        let graph = try ObjectGraph(context: c)
        for n in [999, 1000, 5000, 20_000] {
            let equalities = (0..<n).map { #"{"==": [{"key": "rating"}, \#($0 - 5)]}"# }.joined(separator: ", ")
            let eq = try Query.descriptor(#"{"entity": "Trip", "predicate": {"or": [\#(equalities)]}}"#, c.schema)
            XCTAssertEqual(Set(try Query.identifiers(c, eq)), graph.evaluate(eq), "or of \(n) equalities")
            XCTAssertTrue(try Query.explain(c, eq).sql.contains("json_each"), "one IN list")
            // Alternating key paths, comparisons that do not merge.
            let mixed = (0..<n).map { $0 % 2 == 0 ? #"{">": [{"key": "rating"}, \#($0)]}"# : #"{"<": [{"key": "score"}, \#(-$0)]}"# }
            for op in ["or", "and"] {
                let d = try Query.descriptor(#"{"entity": "Trip", "predicate": {"\#(op)": [\#(mixed.joined(separator: ", ")), {"key": "flag"}]}}"#, c.schema)
                XCTAssertEqual(Set(try Query.identifiers(c, d)), graph.evaluate(d), "\(op) of \(n) comparisons")
            }
            // As text.
            let text = (0..<n).map { #"$0.name == "\#(["Paris", "Trip 2", "x\($0)"][$0 % 3])""# }.joined(separator: " || ")
            let t = try Query.descriptor(#"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text)}"#, c.schema)
            XCTAssertEqual(Set(try Query.identifiers(c, t)), graph.evaluate(t), "text || of \(n)")
        }
        // Past 30,000 bound values (SQLite binds at most 32,766 by default): invalid, not internal.
        let tooMany = (0..<30_001).map { #"{">": [{"key": "rating"}, \#($0)]}"# }.joined(separator: ", ")
        let e = assertError(.invalid) { try Query.descriptor(#"{"entity": "Trip", "predicate": {"or": [\#(tooMany)]}}"#, c.schema) }
        XCTAssertEqual(e?.path, "/predicate")
        XCTAssertTrue(e?.message.contains("predicate too large: it compares with 30001 values, at most 30000") == true, e?.message ?? "")
        // One key path's equalities bind one JSON array, however many.
        let ids = (0..<100_000).map { #"{"==": [{"key": "rating"}, \#($0)]}"# }.joined(separator: ", ")
        let big = try Query.descriptor(#"{"entity": "Trip", "predicate": {"or": [\#(ids)]}}"#, c.schema)
        XCTAssertEqual(Set(try Query.identifiers(c, big)), graph.evaluate(big))
        // Decimals compare with a collation, so they stay comparisons: balanced, not flat.
        let budgets = (0..<2000).map { #"{"==": [{"key": "budget"}, {"decimal": "\#($0).50"}]}"# }.joined(separator: ", ")
        let d = try Query.descriptor(#"{"entity": "Trip", "predicate": {"or": [\#(budgets)]}}"#, c.schema)
        XCTAssertEqual(Set(try Query.identifiers(c, d)), graph.evaluate(d))
    }

    /// Double negation and nested junctions fold away; equalities merge.
    func testFlatterSQL() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        func sql(_ p: String) throws -> String {
            try Query.explain(c, Query.descriptor(#"{"entity": "Trip", "predicate": \#(p)}"#, c.schema)).sql
        }
        let notNot = try sql(#"{"not": {"not": {"not": {"not": {"==": [{"key": "name"}, "x"]}}}}}"#)
        XCTAssertFalse(notNot.contains("NOT"), notNot)
        let nested = try sql(JSONValue.string(#"$0.name == "a" || ($0.name == "b" || ($0.rating == 1 || $0.name == nil))"#).text)
        XCTAssertTrue(nested.contains(#" AND ((t."name" IN (?1, ?2) OR t."name" IS NULL) OR (t."rating" IS ?3)) ORDER BY"#), nested)
        // No parentheses after NOT; the deeper part of a conjunction first.
        let not = try sql(#"{"not": {"and": [{"key": "flag"}, {"<": [{"key": "rating"}, 3]}]}}"#)
        XCTAssertTrue(not.contains(#" AND NOT (coalesce(t."rating" < ?1, 0) AND coalesce(t."flag", 0)) ORDER BY"#), not)
    }
}

extension PredicateLimitTests {
    /// Key paths through to-one relationships join a table per hop; SQLite
    /// joins at most 64 tables in one SELECT.
    func testLongKeyPathsRunOrAreRejected() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        var rng = SeededRNG(seed: 8)
        try TripData.populate(c, trips: 10, rng: &rng)
        let graph = try ObjectGraph(context: c)
        var accepted = 0
        for hops in 1...90 {
            // livingAccommodation.trip.livingAccommodation.trip….name
            let path = (0..<hops).map { $0 % 2 == 0 ? "livingAccommodation" : "trip" }.joined(separator: ".") + (hops % 2 == 0 ? ".name" : ".placeName")
            let p = #"{"==": [{"key": "\#(path)"}, "Paris"]}"#
            if try runOrReject(p, c, graph, what: "\(hops) hops", expecting: "joins") == nil { accepted = hops }
        }
        XCTAssertGreaterThanOrEqual(accepted, 30)
        // Many different key paths in one predicate join a table each.
        let many = (0..<40).map { i in
            #"{"==": [{"key": "\#((0...i).map { $0 % 2 == 0 ? "livingAccommodation" : "trip" }.joined(separator: "."))\#(i % 2 == 0 ? ".placeName" : ".name")"}, "x"]}"#
        }.joined(separator: ", ")
        let e = try runOrReject(#"{"or": [\#(many)]}"#, c, graph, what: "40 key paths", expecting: "joins")
        XCTAssertTrue(e?.message.contains("too many relationships followed") == true, e?.message ?? "40 key paths ran")
        XCTAssertEqual(e?.path, "/predicate/or/32/==/0/key")
        // Sort keys join in the same query.
        let sorted = assertError(.invalid) {
            try Query.descriptor(#"{"entity": "Trip", "predicate": {"or": [\#((0..<20).map { i in #"{"==": [{"key": "\#((0...i).map { $0 % 2 == 0 ? "livingAccommodation" : "trip" }.joined(separator: "."))\#(i % 2 == 0 ? ".placeName" : ".name")"}, "x"]}"# }.joined(separator: ", "))]},"# +
                                 #""sortBy": [{"key": "\#((0..<40).map { $0 % 2 == 0 ? "livingAccommodation" : "trip" }.joined(separator: ".")).name"}]}"#, c.schema)
        }
        XCTAssertEqual(sorted?.path, "/sortBy/0/key")
        // Inside a closure the count starts again.
        let inner = (0..<14).map { _ in "livingAccommodation.trip" }.joined(separator: ".")
        XCTAssertNil(try runOrReject(#"{"and": [{"==": [{"key": "\#(inner).name"}, "x"]}, {"any": [{"key": "bucketList"}, {"==": [{"key": "trip.\#(inner).name"}, "x"]}]}]}"#,
                                     c, graph, what: "28 hops in and out of a closure", expecting: "joins"))
    }
}
