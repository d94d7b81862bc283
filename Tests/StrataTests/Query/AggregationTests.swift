import XCTest
@testable import Strata

/// Aggregates, groups, `having`, `distinct`: Core Data's dictionary results on every store
/// setup, pending changes included, checked against values computed here by hand.
final class AggregationTests: StoreTestCase {
    static let schema = """
    {"version": "1", "entities": [
      {"name": "Trip", "attributes": [
         {"name": "name", "type": "string"},
         {"name": "destination", "type": "string", "optional": true},
         {"name": "days", "type": "int", "optional": true},
         {"name": "rating", "type": "double", "optional": true},
         {"name": "budget", "type": "decimal", "optional": true},
         {"name": "startDate", "type": "date", "optional": true},
         {"name": "home", "type": "composite", "optional": true, "fields": [{"name": "city", "type": "string", "optional": true}]}],
       "relationships": [
         {"name": "bucketList", "destination": "Item", "toMany": true, "deleteRule": "cascade", "inverse": "trip"},
         {"name": "guide", "destination": "Guide", "optional": true, "inverse": "trips"}]},
      {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "optional": true}]},
      {"name": "Item", "attributes": [
         {"name": "title", "type": "string"},
         {"name": "cost", "type": "decimal", "optional": true},
         {"name": "priority", "type": "int", "optional": true}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
      {"name": "Guide", "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "guide"}]}
    ]}
    """

    private func fetch(_ c: ModelContext, _ json: String) throws -> JSONValue {
        try parse(c.fetch(FetchDescriptor.decode(try JSONValue.parse(json), schema: c.schema)))
    }

    private func fails(_ c: ModelContext, _ json: String, _ code: StrataError.Code = .invalid, path: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try fetch(c, json)
            XCTFail("expected an error for \(json)", file: file, line: line)
        } catch let e as StrataError {
            XCTAssertEqual(e.code, code, e.message, file: file, line: line)
            if let path { XCTAssertEqual(e.path, path, e.message, file: file, line: line) }
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    /// Paris (2 trips, one business), Rome (1), no destination (1).
    private func insertTrips(_ c: ModelContext) throws {
        _ = try c.insert(entity: "Trip", json: #"""
            {"name": "A", "destination": "Paris", "days": 3, "rating": 4.5, "budget": "100.10", "startDate": "2026-01-01T00:00:00Z",
             "home": {"city": "Lyon"}, "guide": {"name": "Ann"},
             "bucketList": [{"title": "Louvre", "cost": "0.1", "priority": 1}, {"title": "Seine", "cost": "0.2", "priority": 5}]}
            """#)
        _ = try c.insert(entity: "BusinessTrip", json: #"""
            {"name": "B", "destination": "Paris", "days": 5, "rating": 3.0, "budget": "0.20", "startDate": "2026-03-01T00:00:00Z", "perdiem": 100,
             "bucketList": [{"title": "Expo", "cost": "1e-3"}]}
            """#)
        _ = try c.insert(entity: "Trip", json: #"""
            {"name": "C", "destination": "Rome", "days": 7, "startDate": "2025-06-01T00:00:00Z", "home": {"city": "Nice"}}
            """#)
        _ = try c.insert(entity: "Trip", json: #"{"name": "D", "days": 1, "budget": "-5"}"#)
    }

    func testGroupsWithEveryFunction() {
        forEachSetup(Self.schema) { h in
            try insertTrips(h.context)
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                let r = try fetch(h.context, #"""
                    {"entity": "Trip", "groupBy": ["destination"],
                     "aggregates": [{"name": "trips", "function": "count"},
                                    {"name": "rated", "function": "count", "keyPath": "rating"},
                                    {"name": "days", "function": "sum", "keyPath": "days"},
                                    {"name": "meanDays", "function": "avg", "keyPath": "days"},
                                    {"name": "budget", "function": "sum", "keyPath": "budget"},
                                    {"name": "meanBudget", "function": "avg", "keyPath": "budget"},
                                    {"name": "first", "function": "min", "keyPath": "startDate"},
                                    {"name": "top", "function": "max", "keyPath": "rating"},
                                    {"name": "items", "function": "count", "keyPath": "bucketList"},
                                    {"name": "costed", "function": "count", "keyPath": "bucketList.cost"},
                                    {"name": "cost", "function": "sum", "keyPath": "bucketList.cost"},
                                    {"name": "cheapest", "function": "min", "keyPath": "bucketList.cost"},
                                    {"name": "priority", "function": "avg", "keyPath": "bucketList.priority"}]}
                    """#)
                let expected = try JSONValue.parse(#"""
                    [{"destination": null, "trips": 1, "rated": 0, "days": 1, "meanDays": 1.0, "budget": "-5", "meanBudget": "-5",
                      "first": null, "top": null, "items": 0, "costed": 0, "cost": "0", "cheapest": null, "priority": null},
                     {"destination": "Paris", "trips": 2, "rated": 2, "days": 8, "meanDays": 4.0, "budget": "100.3", "meanBudget": "50.15",
                      "first": "2026-01-01T00:00:00Z", "top": 4.5, "items": 3, "costed": 3, "cost": "0.301", "cheapest": "0.001", "priority": 3.0},
                     {"destination": "Rome", "trips": 1, "rated": 0, "days": 7, "meanDays": 7.0, "budget": "0", "meanBudget": null,
                      "first": "2025-06-01T00:00:00Z", "top": null, "items": 0, "costed": 0, "cost": "0", "cheapest": null, "priority": null}]
                    """#)
                XCTAssertEqual(r, expected, "[\(h.setup)] saved: \(saved)")
            }
        }
    }
}

extension AggregationTests {
    func testHavingSortingPagingAndHops() {
        forEachSetup(Self.schema) { h in
            try insertTrips(h.context)
            try h.context.save()
            _ = try h.context.insert(entity: "Trip", json: #"{"name": "E", "destination": "Rome", "days": 2, "guide": {"name": "Bob"}}"#)
            let c = h.context
            // having over an aggregate and a group key, JSON and text; sorted by an aggregate.
            let json = try fetch(c, #"""
                {"entity": "Trip", "groupBy": ["destination"], "aggregates": [{"name": "days", "function": "sum", "keyPath": "days"}],
                 "having": {"and": [{">": [{"key": "days"}, 2]}, {"!=": [{"key": "destination"}, null]}]},
                 "sortBy": [{"key": "days", "order": "reverse"}]}
                """#)
            XCTAssertEqual(json, try JSONValue.parse(#"[{"destination": "Rome", "days": 9}, {"destination": "Paris", "days": 8}]"#), "\(h.setup)")
            let text = try fetch(c, #"""
                {"entity": "Trip", "groupBy": ["destination"], "aggregates": [{"name": "days", "function": "sum", "keyPath": "days"}],
                 "having": "$0.days > min && $0.destination != nil", "bindings": {"min": 2}, "sortBy": [{"key": "days"}], "fetchLimit": 1, "fetchOffset": 1}
                """#)
            XCTAssertEqual(text, try JSONValue.parse(#"[{"destination": "Rome", "days": 9}]"#), "\(h.setup)")
            // Through a to-one hop (named), a composite's field, a predicate, subentities left out.
            let guides = try fetch(c, #"""
                {"entity": "Trip", "groupBy": [{"name": "guide", "keyPath": "guide.name"}, "home.city"],
                 "aggregates": [{"name": "n", "function": "count"}], "predicate": "$0.days < 6", "includeSubentities": false}
                """#)
            XCTAssertEqual(guides, try JSONValue.parse(#"""
                [{"guide": null, "home.city": null, "n": 1}, {"guide": "Ann", "home.city": "Lyon", "n": 1}, {"guide": "Bob", "home.city": null, "n": 1}]
                """#), "\(h.setup)")
            // No groupBy: one dictionary, also over no objects.
            XCTAssertEqual(try fetch(c, #"{"entity": "BusinessTrip", "aggregates": [{"name": "n", "function": "count"}, {"name": "p", "function": "max", "keyPath": "perdiem"}]}"#),
                           try JSONValue.parse(#"[{"n": 1, "p": 100.0}]"#))
            XCTAssertEqual(try fetch(c, #"{"entity": "Trip", "predicate": "$0.days > 100", "aggregates": [{"name": "n", "function": "count"}, {"name": "s", "function": "sum", "keyPath": "days"}, {"name": "a", "function": "avg", "keyPath": "rating"}]}"#),
                           try JSONValue.parse(#"[{"n": 0, "s": 0, "a": null}]"#))
            // distinct: the combinations of propertiesToFetch, in order.
            XCTAssertEqual(try fetch(c, #"{"entity": "Trip", "propertiesToFetch": ["destination"], "distinct": true, "sortBy": [{"key": "destination", "order": "reverse"}]}"#),
                           try JSONValue.parse(#"[{"destination": "Rome"}, {"destination": "Paris"}, {"destination": null}]"#))
            // strata_fetch_count counts results; explain shows the aggregation's query.
            let d = try FetchDescriptor.decode(try JSONValue.parse(#"{"entity": "Trip", "groupBy": ["destination"], "having": "$0.destination != nil"}"#), schema: c.schema)
            XCTAssertEqual(try c.fetchCount(d), 2)
            let explained = try parse(c.explain(d))
            XCTAssertTrue(explained["sql"]?.stringValue?.contains("GROUP BY") == true, "\(explained)")
            XCTAssertThrowsError(try c.fetchIdentifiers(d)) { XCTAssertEqual(($0 as? StrataError)?.code, .invalid) }
            XCTAssertThrowsError(try c.cursor(d)) { XCTAssertEqual(($0 as? StrataError)?.code, .invalid) }
        }
    }

    func testPendingChangesCount() {
        forEachSetup(Self.schema) { h in
            try insertTrips(h.context)
            try h.context.save()
            let c = h.context
            let ids = try parse(c.fetchIdentifiers(FetchDescriptor.decode(try JSONValue.parse(#"{"entity": "Trip", "predicate": "$0.name == \"C\""}"#), schema: c.schema)))
            try c.update(id: XCTUnwrap(ids.array?.first?.stringValue), patch: #"{"destination": "Paris"}"#)
            let q = #"{"entity": "Trip", "groupBy": ["destination"], "aggregates": [{"name": "n", "function": "count"}], "having": "$0.destination != nil"}"#
            XCTAssertEqual(try fetch(c, q), try JSONValue.parse(#"[{"destination": "Paris", "n": 3}]"#))
            let unpending = q.replacingOccurrences(of: #""entity": "Trip""#, with: #""entity": "Trip", "includePendingChanges": false"#)
            XCTAssertEqual(try fetch(c, unpending), try JSONValue.parse(#"[{"destination": "Paris", "n": 2}, {"destination": "Rome", "n": 1}]"#))
            c.rollback()
            XCTAssertEqual(try fetch(c, q), try JSONValue.parse(#"[{"destination": "Paris", "n": 2}, {"destination": "Rome", "n": 1}]"#))
        }
    }

    func testRefusals() throws {
        let h = try harness(.inMemory, Self.schema)
        let c = h.context
        fails(c, #"{"entity": "Trip", "groupBy": ["bucketList"]}"#, path: "/groupBy/0")
        fails(c, #"{"entity": "Trip", "groupBy": ["guide"]}"#, path: "/groupBy/0")
        fails(c, #"{"entity": "Trip", "groupBy": ["home"]}"#, path: "/groupBy/0")
        fails(c, #"{"entity": "Trip", "groupBy": ["nope"]}"#, path: "/groupBy/0")
        fails(c, #"{"entity": "Trip", "groupBy": [{"name": "_x", "keyPath": "name"}]}"#, path: "/groupBy/0/name")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "median", "keyPath": "days"}]}"#, path: "/aggregates/0/function")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "sum"}]}"#, path: "/aggregates/0/keyPath")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "sum", "keyPath": "name"}]}"#, path: "/aggregates/0/keyPath")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "avg", "keyPath": "startDate"}]}"#, path: "/aggregates/0/keyPath")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "sum", "keyPath": "bucketList"}]}"#, path: "/aggregates/0/keyPath")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "sum", "keyPath": "bucketList.nope"}]}"#, path: "/aggregates/0/keyPath")
        fails(c, #"{"entity": "Trip", "aggregates": [{"name": "x", "function": "count"}, {"name": "x", "function": "count"}]}"#, path: "/aggregates/1/name")
        fails(c, #"{"entity": "Trip", "groupBy": ["days"], "aggregates": [{"name": "days", "function": "count"}]}"#, path: "/aggregates/0/name")
        fails(c, #"{"entity": "Trip", "groupBy": ["days"], "sortBy": [{"key": "name"}]}"#, path: "/sortBy/0/key")
        fails(c, #"{"entity": "Trip", "groupBy": ["days"], "having": "$0.name == \"x\""}"#)
        fails(c, #"{"entity": "Trip", "groupBy": ["days"], "propertiesToFetch": ["days"]}"#, path: "/propertiesToFetch")
        fails(c, #"{"entity": "Trip", "distinct": true}"#, path: "/distinct")
        fails(c, #"{"entity": "Trip", "distinct": true, "propertiesToFetch": ["bucketList"]}"#, path: "/propertiesToFetch/0")
        fails(c, #"{"entity": "Trip", "groupBy": ["days"], "relationshipKeyPathsForPrefetching": ["bucketList"]}"#, path: "/relationshipKeyPathsForPrefetching")
        fails(c, #"{"entity": "Trip", "groupBy": "days"}"#, path: "/groupBy")
        var prepared = #"{"entity": "Trip", "groupBy": ["days"], "predicate": "$0.days > n"}"#
        XCTAssertThrowsError(try prepared.withUTF8 { try c.prepare($0) }) { XCTAssertEqual(($0 as? StrataError)?.code, .invalid) }
    }

    func testDecimalSumsAreExactAndMeansRoundHalfToEven() {
        var s = DecimalSum()
        for t in ["0.1", "0.2", "-0.3", "1e-30", "123456789012345678901234567890", "-123456789012345678901234567890"] { s.add(t) }
        XCTAssertEqual(s.total, "1e-30")
        var m = DecimalSum()
        for t in ["1", "2"] { m.add(t) }
        XCTAssertEqual(m.mean, "1.5")
        var third = DecimalSum()
        third.add("1"); third.add("0"); third.add("0")
        XCTAssertEqual(third.mean, "0.33333333333333333333")
        var twoThirds = DecimalSum()
        twoThirds.add("-2"); twoThirds.add("0"); twoThirds.add("0")
        XCTAssertEqual(twoThirds.mean, "-0.66666666666666666667")
        // A tie at the 20th place rounds to even: 5e-21 / 1 is 0.000…005 → 0, 1.5e-20 → 2e-20.
        var tie = DecimalSum(); tie.add("5e-21")
        XCTAssertEqual(tie.mean, "0")
        var tie2 = DecimalSum(); tie2.add("1.5e-20")
        XCTAssertEqual(tie2.mean, "2e-20")
        var bad = DecimalSum(); bad.add("1"); bad.add("NaN")
        XCTAssertNil(bad.total)
        var huge = DecimalSum(); huge.add("1e200000")
        XCTAssertNil(huge.total)
        XCTAssertNil(DecimalSum().mean)
        XCTAssertEqual(DecimalSum().total, "0")
    }
}
