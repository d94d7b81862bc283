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
