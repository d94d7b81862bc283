import XCTest
@testable import Strata

/// Relationship storage beyond one-to-many: many-to-many join tables,
/// relationships without an inverse, self references; both sides stay consistent.
final class RelationshipTests: StoreTestCase {
    static let schema = #"""
        {"version": "1", "entities": [
          {"name": "Tag", "attributes": [{"name": "label", "type": "string", "unique": true}],
           "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "tags"}]},
          {"name": "Trip", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "tags", "destination": "Tag", "toMany": true},
                             {"name": "favorites", "destination": "Place", "toMany": true},
                             {"name": "home", "destination": "Place", "optional": true}]},
          {"name": "Place", "attributes": [{"name": "city", "type": "string"}]},
          {"name": "Person", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "manager", "destination": "Person", "optional": true, "inverse": "reports"},
                             {"name": "reports", "destination": "Person", "toMany": true}]}]}
        """#

    func ids(_ v: JSONValue?, file: StaticString = #filePath, line: UInt = #line) -> Set<String> {
        Set(v?.array?.compactMap(\.stringValue) ?? [])
    }

    func testManyToManyBothSides() {
        forEachSetup(Self.schema) { h in
            let trip = try h.context.insert(entity: "Trip", json: #"{"name": "Rome", "tags": [{"label": "food"}, {"label": "art"}]}"#)
            let other = try h.context.insert(entity: "Trip", json: #"{"name": "Paris", "tags": [{"label": "art"}]}"#)
            try h.context.save()
            try h.reopen()
            let tags = try fetch(h.context, "Tag")
            XCTAssertEqual(tags.count, 2, "the 'art' tag is upserted, not duplicated")
            let art = try XCTUnwrap(tags.first { $0["label"] == .string("art") })
            XCTAssertEqual(ids(art["trips"]), [trip.description, other.description])
            XCTAssertEqual(ids(try get(h.context, trip)["tags"]).count, 2)
            // Changing one side changes what the other side reads.
            let artID = try XCTUnwrap(art["_id"]?.stringValue)
            try h.context.update(id: artID, patch: #"{"trips": ["\#(other)"]}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(ids(try get(h.context, trip)["tags"]).count, 1)
            XCTAssertEqual(ids(try get(h.context, other)["tags"]), [artID])
            // Deleting a trip removes it from its tags (nullify), the tags stay.
            try h.context.delete(id: other.description)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, artID)["trips"], .array([]))
            XCTAssertEqual(try count(h.context, "Tag"), 2)
        }
    }

    func testManyToManyStoresOneRowPerLink() throws {
        let container = try openFile(Self.schema)
        let context = try container.makeContext()
        let t = try context.insert(entity: "Trip", json: #"{"name": "Rome", "tags": [{"label": "a"}, {"label": "b"}]}"#)
        // Listing the same tag twice links it once.
        let a = try XCTUnwrap(fetch(context, "Tag").first?["_id"]?.stringValue)
        try context.update(id: t.description, patch: #"{"tags": ["\#(a)", "\#(a)"]}"#)
        try context.save()
        XCTAssertEqual(try rows(storePath(), "SELECT _source, _target FROM Tag_trips"), [[.int(Int64(a.split(separator: "/")[1]) ?? 0), .int(t.pk)]])
    }

    func testRelationshipsWithoutAnInverse() {
        forEachSetup(Self.schema) { h in
            let t = try h.context.insert(entity: "Trip", json: #"{"name": "Rome", "home": {"city": "Oslo"}, "favorites": [{"city": "Rome"}, {"city": "Naples"}]}"#)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, t)
            let home = try XCTUnwrap(v["home"]?.stringValue)
            let favorites = ids(v["favorites"])
            XCTAssertEqual(favorites.count, 2)
            // Deleting a place clears the links that point at it.
            try h.context.delete(id: home)
            try h.context.delete(id: try XCTUnwrap(favorites.sorted().first))
            try h.context.save()
            try h.reopen()
            let after = try get(h.context, t)
            XCTAssertEqual(after["home"], .null)
            XCTAssertEqual(ids(after["favorites"]), [favorites.sorted()[1]])
            // The same place may be a favorite of two trips.
            let second = try h.context.insert(entity: "Trip", json: #"{"name": "Milan", "favorites": ["\#(favorites.sorted()[1])"]}"#)
            try h.context.save()
            XCTAssertEqual(ids(try get(h.context, second)["favorites"]), [favorites.sorted()[1]])
            XCTAssertEqual(ids(try get(h.context, t)["favorites"]), [favorites.sorted()[1]])
        }
    }

    func testSelfReference() {
        forEachSetup(Self.schema) { h in
            let boss = try h.context.insert(entity: "Person", json: #"{"name": "Boss", "reports": [{"name": "A"}, {"name": "B"}]}"#)
            try h.context.save()
            try h.reopen()
            let reports = ids(try get(h.context, boss)["reports"])
            XCTAssertEqual(reports.count, 2)
            for r in reports { XCTAssertEqual(try get(h.context, r)["manager"], .string(boss.description)) }
            // Moving a report to a new manager, from the report's side.
            let other = try h.context.insert(entity: "Person", json: #"{"name": "Other"}"#)
            let moved = try XCTUnwrap(reports.sorted().first)
            try h.context.update(id: moved, patch: #"{"manager": "\#(other)"}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(ids(try get(h.context, boss)["reports"]), [reports.sorted()[1]])
            XCTAssertEqual(ids(try get(h.context, other)["reports"]), [moved])
            assertError(.validation) { try h.context.update(id: moved, patch: #"{"manager": "\#(moved)"}"#) }
        }
    }

    func testClearingToManyWithAnEmptyArrayOrNull() {
        forEachSetup(Self.schema) { h in
            let t = try h.context.insert(entity: "Trip", json: #"{"name": "Rome", "tags": [{"label": "a"}], "favorites": [{"city": "x"}]}"#)
            try h.context.save()
            try h.context.update(id: t.description, patch: #"{"tags": [], "favorites": null}"#)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, t)
            XCTAssertEqual(v["tags"], .array([]))
            XCTAssertEqual(v["favorites"], .array([]))
            XCTAssertEqual(try count(h.context, "Tag"), 1)
            XCTAssertEqual(try count(h.context, "Place"), 1)
        }
    }

    func testMovingItemsBetweenTrips() {
        forEachSetup { h in
            let a = try h.context.insert(entity: "Trip", json: #"{"name": "A", "startDate": 0, "endDate": 1, "bucketList": [{"title": "x"}, {"title": "y"}]}"#)
            let b = try h.context.insert(entity: "Trip", json: #"{"name": "B", "startDate": 0, "endDate": 1}"#)
            try h.context.save()
            let items = try XCTUnwrap(get(h.context, a)["bucketList"]?.array?.compactMap(\.stringValue))
            // From the to-many side: B takes x; A keeps y.
            try h.context.update(id: b.description, patch: #"{"bucketList": ["\#(items[0])"]}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(ids(try get(h.context, a)["bucketList"]), [items[1]])
            XCTAssertEqual(ids(try get(h.context, b)["bucketList"]), [items[0]])
            // From the to-one side: y goes to B.
            try h.context.update(id: items[1], patch: #"{"trip": "\#(b)"}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, a)["bucketList"], .array([]))
            XCTAssertEqual(ids(try get(h.context, b)["bucketList"]), Set(items))
        }
    }
}
