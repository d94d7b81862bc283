import Foundation
import XCTest
@testable import Strata

/// The read path (rows -> JSON): relationship identifiers read by the objects
/// query, `includeRelationshipIdentifiers`, prefetched objects written per
/// owner row, and the resumable object writer.
final class ReadPathTests: StoreTestCase {
    private func trip(_ name: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "destination": "", "startDate": "2024-01-01T00:00:00Z", "endDate": "2024-01-02T00:00:00Z"\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    private func d(_ c: ModelContext, _ json: String) throws -> FetchDescriptor { try Query.descriptor(json, c.schema) }

    /// Trips of every kind with to-many items, an inverse-held to-one, and many-to-many tags.
    private func store() throws -> (ModelContainer, ModelContext) {
        let container = try openInMemory(QuerySchemas.trips)
        let c = try container.makeContext()
        let a = try c.insert(entity: "PersonalTrip", json: trip("A", #""reason": "family", "bucketList": [{"title": "a1"}, {"title": "a2"}], "livingAccommodation": {"placeName": "H", "address": "x"}"#))
        let b = try c.insert(entity: "BusinessTrip", json: trip("B", #""bucketList": [{"title": "b1"}]"#))
        _ = try c.insert(entity: "Trip", json: trip("C"))
        _ = try c.insert(entity: "Tag", json: #"{"name": "t1", "trips": ["\#(b)", "\#(a)"]}"#)
        _ = try c.insert(entity: "Tag", json: #"{"name": "t2", "trips": ["\#(a)"]}"#)
        try c.save()
        return (container, c)
    }

    func testIdentifiersOfEveryPlacementAreReadByTheObjectsQueryInKeyOrder() throws {
        let (_, c) = try store()
        var trips: [JSONValue] = []
        let sql = try captureSQL(c) { trips = try Query.objects(c, d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#)) }
        XCTAssertEqual(sql.count, 1, sql.joined(separator: "\n"))
        let items = try Query.objects(c, d(c, #"{"entity": "BucketListItem", "sortBy": [{"key": "title"}]}"#)).compactMap { $0["_id"]?.stringValue }
        let tags = try Query.objects(c, d(c, #"{"entity": "Tag", "sortBy": [{"key": "name"}]}"#))
        let tagIDs = tags.compactMap { $0["_id"]?.stringValue }
        XCTAssertEqual(trips[0]["bucketList"]?.array?.compactMap(\.stringValue), [items[0], items[1]])
        XCTAssertEqual(trips[0]["livingAccommodation"]?.stringValue?.hasPrefix("LivingAccommodation/"), true)
        XCTAssertEqual(trips[0]["tags"]?.array?.compactMap(\.stringValue), tagIDs, "pairs, ordered by key")
        XCTAssertEqual(trips[1]["tags"]?.array?.compactMap(\.stringValue), [tagIDs[0]])
        XCTAssertEqual(trips[2]["bucketList"], .array([]))
        XCTAssertEqual(trips[2]["livingAccommodation"], .null)
        XCTAssertEqual(trips[2]["tags"], .array([]))
        // A destination with subentities: each identifier names its concrete entity, ordered by key.
        let ids = trips.compactMap { $0["_id"]?.stringValue }
        XCTAssertEqual(tags[0]["trips"]?.array?.compactMap(\.stringValue), [ids[0], ids[1]])
        XCTAssertTrue(ids[0].hasPrefix("PersonalTrip/") && ids[1].hasPrefix("BusinessTrip/"), "\(ids)")
    }

    func testIdentifiersSeePendingChangesInKeyOrder() throws {
        let (_, c) = try store()
        let trips = try Query.objects(c, d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#))
        let a = try XCTUnwrap(trips[0]["_id"]?.stringValue)
        let b1 = try XCTUnwrap(trips[1]["bucketList"]?.array?.first?.stringValue)
        let a2 = try XCTUnwrap(trips[0]["bucketList"]?.array?.last?.stringValue)
        // Pending: b1 (a lower key than a new item) moves to A, a2 is deleted, a new item joins A.
        try c.update(id: b1, patch: #"{"trip": "\#(a)"}"#)
        try c.delete(id: a2)
        let new = try c.insert(entity: "BucketListItem", json: #"{"title": "new", "trip": "\#(a)"}"#)
        let now = try Query.objects(c, d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#))
        let a1 = try XCTUnwrap(trips[0]["bucketList"]?.array?.first?.stringValue)
        let expected = [a1, b1, new.description].sorted { Int($0.split(separator: "/")[1])! < Int($1.split(separator: "/")[1])! }
        XCTAssertEqual(now[0]["bucketList"]?.array?.compactMap(\.stringValue), expected)
        XCTAssertEqual(now[1]["bucketList"], .array([]))
        let saved = try Query.objects(c, d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "includePendingChanges": false}"#))
        XCTAssertEqual(saved[0]["bucketList"], trips[0]["bucketList"])
    }

    func testIncludeRelationshipIdentifiersFalseLeavesOutRelationshipsNotPrefetched() throws {
        let (_, c) = try store()
        let off = try d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "includeRelationshipIdentifiers": false}"#)
        let trips = try Query.objects(c, off)
        XCTAssertEqual(trips.count, 3)
        XCTAssertEqual(trips[0].keys, ["_id", "_entity", "name", "destination", "startDate", "endDate", "rating", "score", "budget",
                                       "code", "website", "photo", "flag", "notes", "home", "reason", "tripViews"])
        let sql = try Query.explain(c, off).sql
        for table in ["BucketListItem", "LivingAccommodation", "Tag"] {
            XCTAssertFalse(sql.contains(table), "\(table) is not read: \(sql)")
        }
        // An in-row to-one is left out too; true is the default.
        let items = try Query.objects(c, d(c, #"{"entity": "BucketListItem", "includeRelationshipIdentifiers": false}"#))
        XCTAssertEqual(items[0].keys, ["_id", "_entity", "title", "isInPlan", "priority"])
        let on = try Query.objects(c, d(c, #"{"entity": "BucketListItem", "includeRelationshipIdentifiers": true}"#))
        XCTAssertEqual(on[0].keys, ["_id", "_entity", "title", "isInPlan", "priority", "trip"])

        // Prefetched relationships still appear; their objects carry no relationships either.
        let some = try Query.objects(c, d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "includeRelationshipIdentifiers": false, "relationshipKeyPathsForPrefetching": ["bucketList"]}"#))
        XCTAssertEqual(Set(some[0].keys).intersection(["bucketList", "livingAccommodation", "tags"]), ["bucketList"])
        XCTAssertEqual(some[0]["bucketList"]?.array?.map(\.keys), [["_id", "_entity", "title", "isInPlan", "priority"],
                                                                   ["_id", "_entity", "title", "isInPlan", "priority"]])
        // With propertiesToFetch naming a relationship, false still wins.
        let named = try Query.objects(c, d(c, #"{"entity": "Trip", "propertiesToFetch": ["name", "tags"], "includeRelationshipIdentifiers": false}"#))
        XCTAssertEqual(named[0].keys, ["_id", "_entity", "name"])
    }

    func testIncludeRelationshipIdentifiersMustBeABool() throws {
        let (_, c) = try store()
        for bad in [#""no""#, "0", "null", "[]"] {
            XCTAssertThrowsError(try d(c, #"{"entity": "Trip", "includeRelationshipIdentifiers": \#(bad)}"#)) { error in
                let e = error as? StrataError
                XCTAssertEqual(e?.code, .invalid, "\(bad)")
                XCTAssertEqual(e?.path, "/includeRelationshipIdentifiers", "\(bad)")
            }
        }
    }

    func testTheWriterResumesWhereItStopped() throws {
        let (_, c) = try store()
        let s = try XCTUnwrap(c.session as? SQLiteSession)
        for json in [#"{"entity": "Trip", "sortBy": [{"key": "name", "order": "reverse"}], "relationshipKeyPathsForPrefetching": ["bucketList", "tags"]}"#,
                     #"{"entity": "BucketListItem"}"#] {
            let desc = try d(c, json)
            let whole = try Query.json(try c.fetch(desc)).array ?? []
            for limit in [1, 2, 5] {
                var batches: [[JSONValue]] = []
                var calls = 0
                let q = s.compile(desc)
                try s.read(nil) {
                    var (writer, rows, prefetched) = try s.objectCursors(q.objectQueries, args: q.args)
                    defer { s.finishObjects(rows, prefetched) }
                    var more = true
                    while more {
                        more = try writer.write(&rows, prefetched: &prefetched, limit: limit)
                        calls += 1
                        batches.append(try Query.json(writer.takeBatch().bytes).array ?? [])
                    }
                }
                XCTAssertTrue(batches.allSatisfy { $0.count <= limit }, "\(json) limit \(limit)")
                XCTAssertEqual(batches.flatMap { $0 }, whole, "\(json) limit \(limit)")
                XCTAssertEqual(calls, whole.count / limit + 1, "\(json) limit \(limit)")
            }
        }
    }

    func testTheFetchBufferIsNULTerminatedAndTakenOnce() throws {
        let (_, c) = try store()
        let desc = try d(c, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["livingAccommodation"]}"#)
        let buffer = try c.fetchBuffer(desc)
        XCTAssertEqual(buffer.bytes, try c.fetch(desc))
        let p = try XCTUnwrap(buffer.take())
        XCTAssertEqual(strlen(p), buffer.count)
        XCTAssertNil(buffer.take())
        free(p)
    }
}
