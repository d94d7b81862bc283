import Foundation
import XCTest
@testable import Strata

/// Prepared fetches (compiled once, run with new values) and cursors (batches on one snapshot).
final class PreparedFetchTests: StoreTestCase {
    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    private func prepare(_ c: ModelContext, _ json: String) throws -> PreparedFetch {
        try bytes(json).withUnsafeBufferPointer { try c.prepare($0) }
    }

    private func run(_ p: PreparedFetch, _ bindings: String?) throws -> [UInt8] {
        guard let bindings else { return try p.fetch(bindings: nil) }
        return try bytes(bindings).withUnsafeBufferPointer { try p.fetch(bindings: $0) }
    }

    private func count(_ p: PreparedFetch, _ bindings: String) throws -> Int64 {
        try bytes(bindings).withUnsafeBufferPointer { try p.fetchCount(bindings: $0) }
    }

    private func ids(_ p: PreparedFetch, _ bindings: String) throws -> String {
        String(decoding: try bytes(bindings).withUnsafeBufferPointer { try p.fetchIdentifiers(bindings: $0) }, as: UTF8.self)
    }

    private func fetch(_ c: ModelContext, _ json: String) throws -> [UInt8] {
        try c.fetch(try Query.descriptor(json, c.schema))
    }

    private func trip(_ name: String, day: Int, rating: Int? = nil, _ extra: String = "") -> String {
        let start = Pools.iso(Pools.epoch + Int64(day) * 86_400)
        let end = Pools.iso(Pools.epoch + Int64(day + 3) * 86_400)
        return #"{"name": \#(JSONValue.string(name).text), "destination": "", "startDate": "\#(start)", "endDate": "\#(end)", "rating": \#(rating.map(String.init) ?? "null")\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    private func store(_ count: Int = 30, file: Bool = false) throws -> (ModelContainer, ModelContext) {
        let container = file ? try openFile(QuerySchemas.trips) : try openInMemory(QuerySchemas.trips)
        let c = try container.makeContext()
        for i in 0..<count {
            _ = try c.insert(entity: i % 3 == 0 ? "PersonalTrip" : "Trip",
                             json: trip(["Paris", "Zürich", "zurich", "Rome", "Straße"][i % 5] + " \(i)", day: i, rating: i % 4 == 0 ? nil : i % 7,
                                        #""bucketList": [{"title": "t\#(i)"}], "livingAccommodation": {"placeName": "p\#(i)", "address": ""}"#))
        }
        try c.save()
        return (container, c)
    }

    // MARK: Prepared fetches

    func testTheWidgetQueryRunsCompiledAndAnswersAsAFetchWithBindings() throws {
        let (_, c) = try store()
        let descriptor = #"{"entity": "Trip", "predicate": "$0.startDate >= now", "sortBy": [{"key": "startDate"}], "fetchLimit": 1}"#
        let p = try prepare(c, descriptor)
        XCTAssertTrue(p.isCompiled, "a variable compared with a key path is a parameter")
        for day in [0, 5, 17, 29, 30, 400] {
            let now = Pools.iso(Pools.epoch + Int64(day) * 86_400 - 3_600)
            let expected = try fetch(c, #"{"entity": "Trip", "predicate": "$0.startDate >= now", "bindings": {"now": "\#(now)"}, "sortBy": [{"key": "startDate"}], "fetchLimit": 1}"#)
            XCTAssertEqual(String(decoding: try run(p, #"{"now": "\#(now)"}"#), as: UTF8.self), String(decoding: expected, as: UTF8.self), "day \(day)")
            // Seconds since 1970 are a date too.
            XCTAssertEqual(try run(p, #"{"now": \#(Pools.epoch + Int64(day) * 86_400 - 3_600)}"#), expected)
        }
        XCTAssertEqual(String(decoding: try run(p, #"{"now": "\#(Pools.iso(Pools.epoch + 400 * 86_400))"}"#), as: UTF8.self), "[]")
    }

    func testTheNewFormsRunPreparedWithVariablesAsPlainFetches() throws {
        let (_, c) = try store()
        // Arithmetic, force unwraps, casts, filter and if let take variables compiled; a predicate
        // bound to a variable (evaluate) is checked at each run with its value.
        let cases: [(String, [String])] = [
            ("($0.rating ?? 0) * k > lo && $0.endDate > $0.startDate + secs", [#"{"k": 2, "lo": 5, "secs": 3600}"#, #"{"k": 9223372036854775807, "lo": 0, "secs": 0}"#]),
            ("$0.livingAccommodation!.placeName != p", [#"{"p": "p3"}"#, #"{"p": ""}"#]),
            ("($0 as? PersonalTrip)?.reason == r || $0.bucketList.filter { $0.title == t }.count > 0", [#"{"r": "family", "t": "t4"}"#]),
            ("if let a = $0.livingAccommodation { a.placeName == p } else { false }", [#"{"p": "p7"}"#]),
            ("f.evaluate($0) && !$0.name.isEmpty", [#"{"f": {"predicate": "$0.rating == 3"}}"#, #"{"f": {"predicate": {"<": [{"key": "rating"}, 2]}}}"#]),
        ]
        for (text, runs) in cases {
            let descriptor = #"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text), "sortBy": [{"key": "name"}]}"#
            let p = try prepare(c, descriptor)
            for bindings in runs {
                let plain = #"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text), "bindings": \#(bindings), "sortBy": [{"key": "name"}]}"#
                XCTAssertEqual(String(decoding: try run(p, bindings), as: UTF8.self), String(decoding: try fetch(c, plain), as: UTF8.self), "\(text) with \(bindings)")
            }
        }
    }

    /// A variable compared with a sum or an average is a parameter: the runs agree with fetches
    /// binding the same values, and a sum that leaves Int64 selects nothing, under `!` too.
    func testAVariableComparedWithASumRunsCompiled() throws {
        let container = try openInMemory(QuerySchemas.trips)
        let c = try container.makeContext()
        let lists: [[Int64?]] = [[], [1, 2], [3, nil], [4611686018427387904, 4611686018427387904], [-1, 1], [Int64.max], [nil]]
        for (i, priorities) in lists.enumerated() {
            let items = priorities.map { p in #"{"title": "t", "priority": \#(p.map(String.init) ?? "null")}"# }.joined(separator: ", ")
            _ = try c.insert(entity: "Trip", json: trip("T\(i)", day: i, #""bucketList": [\#(items)]"#))
        }
        try c.save()
        let cases: [(String, [(String, [String])])] = [
            ("$0.bucketList.map { $0.priority }.reduce(0, +) >= lo",
             [(#"{"lo": 0}"#, ["T0", "T1", "T2", "T4", "T5", "T6"]), (#"{"lo": 3}"#, ["T1", "T2", "T5"]),
              (#"{"lo": 9223372036854775807}"#, ["T5"]), (#"{"lo": -9223372036854775808}"#, ["T0", "T1", "T2", "T4", "T5", "T6"])]),
            ("!($0.bucketList.map { $0.priority }.reduce(0, +) < lo)", [(#"{"lo": 1}"#, ["T1", "T2", "T5"])]),
            ("($0.bucketList.map { $0.priority }.average() ?? -1) > avg",
             [(#"{"avg": 1.4}"#, ["T1", "T2", "T3", "T5"]), (#"{"avg": -1}"#, ["T1", "T2", "T3", "T4", "T5"]), (#"{"avg": 2}"#, ["T2", "T3", "T5"])]),
        ]
        for (text, runs) in cases {
            let p = try prepare(c, #"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text), "sortBy": [{"key": "name"}]}"#)
            XCTAssertTrue(p.isCompiled, text)
            for (bindings, names) in runs {
                let plain = #"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text), "bindings": \#(bindings), "sortBy": [{"key": "name"}]}"#
                let prepared = String(decoding: try run(p, bindings), as: UTF8.self)
                XCTAssertEqual(prepared, String(decoding: try fetch(c, plain), as: UTF8.self), "\(text) with \(bindings)")
                let fetched = try JSONValue.parse(prepared)
                guard case .array(let objects) = fetched else { XCTFail("not an array"); continue }
                XCTAssertEqual(objects.compactMap { $0["name"]?.stringValue }, names, "\(text) with \(bindings)")
            }
        }
    }

    func testCountIdentifiersStringOptionsEnumsAndDefaults() throws {
        let (_, c) = try store()
        let p = try prepare(c, #"{"entity": "Trip", "predicate": "$0.name.contains(q, options: [.caseInsensitive, .diacriticInsensitive]) && $0.rating >= min", "bindings": {"min": 0}}"#)
        XCTAssertTrue(p.isCompiled)
        for (q, min) in [("ZURICH", 0), ("zür", 3), ("STRASSE", 1), ("nothing", 0), ("", 0)] {
            let plain = #"{"entity": "Trip", "predicate": "$0.name.contains(q, options: [.caseInsensitive, .diacriticInsensitive]) && $0.rating >= min", "bindings": {"q": \#(JSONValue.string(q).text), "min": \#(min)}}"#
            let d = try Query.descriptor(plain, c.schema)
            XCTAssertEqual(try count(p, #"{"q": \#(JSONValue.string(q).text), "min": \#(min)}"#), try c.fetchCount(d), q)
            XCTAssertEqual(try ids(p, #"{"q": \#(JSONValue.string(q).text), "min": \#(min)}"#), String(decoding: try c.fetchIdentifiers(d), as: UTF8.self), q)
        }
        XCTAssertGreaterThan(try count(p, #"{"q": "zurich"}"#), 0, "the descriptor's own binding for min")
        // An enum member is checked at each run.
        let e = try prepare(c, #"{"entity": "PersonalTrip", "predicate": "$0.reason == r"}"#)
        XCTAssertEqual(try count(e, #"{"r": "unknown"}"#), 10)
        XCTAssertThrowsError(try count(e, #"{"r": "holiday"}"#)) { error in
            let s = error as? StrataError
            XCTAssertEqual(s?.code, .invalid)
            XCTAssertEqual(s?.path, "/r")
            XCTAssertTrue(s?.message.contains("enum") ?? false, s?.message ?? "")
        }
    }

    func testRunErrorsNameTheVariableAndLeaveThePreparedFetchUsable() throws {
        let (_, c) = try store(5)
        let p = try prepare(c, #"{"entity": "Trip", "predicate": "$0.startDate >= now && $0.rating == r"}"#)
        func code(_ bindings: String?) -> (StrataError.Code?, String?) {
            do { _ = try run(p, bindings); return (nil, nil) } catch let e as StrataError { return (e.code, e.path) } catch { return (.internal, nil) }
        }
        XCTAssertEqual(code(nil).0, .invalid, "no values at all")
        XCTAssertEqual(code(#"{"now": "2020-01-01T00:00:00Z"}"#).1, "/r", "a missing variable")
        XCTAssertEqual(code(#"{"now": true, "r": 1}"#).1, "/now", "a value of the wrong type")
        XCTAssertEqual(code(#"{"now": "yesterday", "r": 1}"#).1, "/now")
        XCTAssertEqual(code(#"[1]"#).0, .invalid, "bindings must be an object")
        XCTAssertEqual(code(#"{"now": "2020-01-01T00:00:00Z""#).0, .invalid, "malformed JSON")
        XCTAssertEqual(String(decoding: try run(p, #"{"now": "2020-01-01T00:00:00Z", "r": 99}"#), as: UTF8.self), "[]")
        XCTAssertEqual(try count(p, #"{"now": "2020-01-01T00:00:00Z", "r": 1}"#), 1)
    }

    func testValuesThatChangeTheCheckRunCheckedAndAgree() throws {
        let (_, c) = try store()
        // nil: `rating == nil` is IS NULL, not `= ?`.
        let p = try prepare(c, #"{"entity": "Trip", "predicate": "$0.rating == r"}"#)
        XCTAssertTrue(p.isCompiled)
        let nils = try c.fetchCount(try Query.descriptor(#"{"entity": "Trip", "predicate": "$0.rating == nil"}"#, c.schema))
        XCTAssertGreaterThan(nils, 0)
        XCTAssertEqual(try count(p, #"{"r": null}"#), nils)
        XCTAssertEqual(try count(p, #"{"r": 2}"#), try c.fetchCount(try Query.descriptor(#"{"entity": "Trip", "predicate": "$0.rating == 2"}"#, c.schema)))
        // A variable that is an array or a string decides between `in` and contains: each run is checked.
        let m = try prepare(c, #"{"entity": "Trip", "predicate": "names.contains($0.name)"}"#)
        XCTAssertFalse(m.isCompiled)
        XCTAssertEqual(try count(m, #"{"names": ["Paris 0", "Rome 3", "none"]}"#), 2)
        XCTAssertEqual(try count(m, #"{"names": []}"#), 0)
        // Two variables compared: the values give the types.
        let two = try prepare(c, #"{"entity": "Trip", "predicate": "a == b && $0.rating == 1"}"#)
        XCTAssertEqual(try count(two, #"{"a": 1, "b": 1}"#), try c.fetchCount(try Query.descriptor(#"{"entity": "Trip", "predicate": "$0.rating == 1"}"#, c.schema)))
        XCTAssertEqual(try count(two, #"{"a": 1, "b": 2}"#), 0)
        // A malformed descriptor is refused at once, whichever way it would run.
        XCTAssertThrowsError(try prepare(c, #"{"entity": "Trip", "predicate": "names.contains($0.name)", "sortBy": [{"key": "nope"}]}"#))
        XCTAssertThrowsError(try prepare(c, #"{"entity": "Trip", "predicate": "$0.nope == x"}"#))
        XCTAssertThrowsError(try prepare(c, #"{"entity": "Nope"}"#))
    }

    /// Every generated predicate with variables, prepared and run with the values, answers as a
    /// fetch with those bindings; most run compiled.
    func testPreparedRunsAgreeWithFetchesOnRandomPredicates() throws {
        var rng = SeededRNG(seed: 0x9E9A_2026)
        let container = try openInMemory(QuerySchemas.trips)
        let writer = try container.makeContext()
        try TripData.populate(writer, trips: 60, rng: &rng)
        let context = try container.makeContext()
        let graph = try ObjectGraph(context: context)
        var gen = PredicateGenerator(rng: SeededRNG(seed: 0x9E9A_2027), identifiers: graph.identifiersByRoot)
        var compiled = 0, withVariables = 0, checked = 0
        for n in 0..<600 {
            let predicate = gen.predicate(for: .trip("Trip"))
            let bindings = JSONValue.object(gen.bindings)
            let plain = JSONValue.object([("entity", .string("Trip")), ("predicate", predicate), ("bindings", bindings)])
            let prepared = JSONValue.object([("entity", .string("Trip")), ("predicate", predicate)])
            let expected: [UInt8]
            do { expected = try context.fetchIdentifiers(try FetchDescriptor.decode(plain, schema: context.schema)) } catch { continue }
            let p = try prepare(context, prepared.text)
            if !gen.bindings.isEmpty { withVariables += 1; if p.isCompiled { compiled += 1 } }
            let got = try bytes(bindings.text).withUnsafeBufferPointer { try p.fetchIdentifiers(bindings: $0) }
            XCTAssertEqual(String(decoding: got, as: UTF8.self), String(decoding: expected, as: UTF8.self), "#\(n) \(plain.text)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 500)
        XCTAssertGreaterThan(withVariables, 100, "the generator binds variables")
        XCTAssertGreaterThan(compiled, withVariables / 2, "most predicates with variables run compiled")
    }

    func testPendingChangesAreSeenAsTheyAreAtEachRun() throws {
        let (_, c) = try store(3)
        let p = try prepare(c, #"{"entity": "Trip", "predicate": "$0.name == n"}"#)
        XCTAssertEqual(try count(p, #"{"n": "Lisbon"}"#), 0)
        _ = try c.insert(entity: "Trip", json: trip("Lisbon", day: 1))
        XCTAssertEqual(try count(p, #"{"n": "Lisbon"}"#), 1, "a pending insert")
        c.rollback()
        XCTAssertEqual(try count(p, #"{"n": "Lisbon"}"#), 0)
        let q = try prepare(c, #"{"entity": "Trip", "predicate": "$0.name == n", "includePendingChanges": false}"#)
        _ = try c.insert(entity: "Trip", json: trip("Lisbon", day: 1))
        XCTAssertEqual(try count(q, #"{"n": "Lisbon"}"#), 0)
        try c.save()
        XCTAssertEqual(try count(q, #"{"n": "Lisbon"}"#), 1)
    }

    // MARK: Cursors

    private func drain(_ cursor: ObjectCursor, _ batch: Int) throws -> (objects: [JSONValue], batches: Int) {
        var all: [JSONValue] = []
        var batches = 0
        while true {
            guard case .array(let items) = try Query.json(cursor.next(batch).bytes) else { XCTFail("not an array"); break }
            if items.isEmpty { break }
            XCTAssertLessThanOrEqual(items.count, batch)
            all += items
            batches += 1
        }
        XCTAssertEqual(String(decoding: try cursor.next(batch).bytes, as: UTF8.self), "[]", "stays done")
        return (all, batches)
    }

    func testCursorBatchesAreTheFetchInOrderOnFileAndInMemoryStores() throws {
        for file in [true, false] {
            let (_, c) = try store(23, file: file)
            for descriptor in [#"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#,
                               #"{"entity": "Trip", "predicate": "$0.rating != nil", "relationshipKeyPathsForPrefetching": ["bucketList", "livingAccommodation"]}"#,
                               #"{"entity": "Trip", "propertiesToFetch": ["name"], "fetchLimit": 7, "fetchOffset": 2}"#,
                               #"{"entity": "Trip", "predicate": "$0.name == \"none\""}"#] {
                let d = try Query.descriptor(descriptor, c.schema)
                guard case .array(let expected) = try Query.json(c.fetch(d)) else { return XCTFail() }
                for batch in [1, 5, 23, 1000] {
                    let (got, batches) = try drain(try c.cursor(d), batch)
                    XCTAssertEqual(got, expected, "\(file ? "file" : "memory") \(descriptor) batch \(batch)")
                    XCTAssertEqual(batches, (expected.count + batch - 1) / batch)
                }
            }
        }
    }

    func testACursorReadsOneSnapshotWhileItsContextSaves() throws {
        let (container, c) = try store(10, file: true)
        _ = try c.insert(entity: "Trip", json: trip("Pending", day: 50))
        let cursor = try c.cursor(try Query.descriptor(#"{"entity": "Trip"}"#, c.schema))
        guard case .array(let first) = try Query.json(cursor.next(4).bytes) else { return XCTFail() }
        XCTAssertEqual(first.count, 4)
        // The context saves (its pending insert and a delete); another context saves too.
        try c.delete(id: try XCTUnwrap(first[0]["_id"]?.stringValue))
        try c.save()
        let other = try container.makeContext()
        _ = try other.insert(entity: "Trip", json: trip("Later", day: 60))
        try other.save()
        let (rest, _) = try drain(cursor, 4)
        let names = (first + rest).compactMap { $0["name"]?.stringValue }
        XCTAssertEqual(names.count, 11, "the ten saved trips and the pending one, as when the cursor opened")
        XCTAssertTrue(names.contains("Pending"))
        XCTAssertFalse(names.contains("Later"))
        XCTAssertEqual(try c.fetchCount(try Query.descriptor(#"{"entity": "Trip"}"#, c.schema)), 11, "10 + Pending + Later - deleted")
    }

    func testAClosedCursorEndsItsReadAndAnswersEmpty() throws {
        let (_, c) = try store(10, file: true)
        let cursor = try c.cursor(try Query.descriptor(#"{"entity": "Trip"}"#, c.schema))
        _ = try cursor.next(3).bytes
        cursor.close()
        XCTAssertEqual(String(decoding: try cursor.next(3).bytes, as: UTF8.self), "[]")
    }
}
