import XCTest
@testable import Strata

/// The insert path (JSON array in, rows out) keeps its rules while it does less
/// work: one-to-one links of new objects, unique keys (upsert, error, ignore)
/// within one array and against saved rows, identifiers returned, history.
final class InsertPathTests: StoreTestCase {
    /// A trip with a nested accommodation and two bucket-list items.
    func trip(_ name: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": 86400\#(extra.isEmpty ? "" : ", " + extra),"#
            + #" "livingAccommodation": {"address": "\#(name) street", "placeName": "\#(name) inn"},"#
            + #" "bucketList": [{"title": "\#(name) 1"}, {"title": "\#(name) 2"}]}"#
    }

    /// The `trip` link of an accommodation (null: none).
    func tripOf(_ context: ModelContext, _ id: String) throws -> JSONValue? { try get(context, id)["trip"] }

    func testSavingNewObjectsRunsNoStatementToTakeTheirOneToOneLinks() throws {
        let context = try openFile().makeContext()
        _ = try context.insertMany(entity: "Trip", json: "[" + (0..<20).map { trip("t\($0)") }.joined(separator: ",") + "]")
        let sql = try captureSQL(context) { try context.save() }
        // A new trip cannot already be some accommodation's trip: nothing to clear.
        XCTAssertFalse(sql.contains { $0.contains("= NULL") }, sql.joined(separator: "\n"))
        let rows = sql.filter { !$0.contains("strata_history") }
        XCTAssertLessThan(rows.count, 10, "no statement per row: \(rows)")
        XCTAssertEqual(try count(context, "LivingAccommodation"), 20)
        for t in try fetch(context, "Trip") {
            guard let la = t["livingAccommodation"]?.stringValue, let id = t["_id"]?.stringValue else { return XCTFail("\(t)") }
            XCTAssertEqual(try tripOf(context, la)?.stringValue, id)
        }
    }

    func testALaterLinkToANewObjectStillTakesItFromTheFirst() {
        forEachSetup { h in
            // Two new accommodations name the same new trip: one-to-one, the second one keeps it.
            let t = try h.context.insert(entity: "Trip", json: #"{"name": "T", "startDate": 0, "endDate": 1}"#)
            let a = try h.context.insert(entity: "LivingAccommodation", json: #"{"address": "a", "placeName": "A", "trip": "\#(t)"}"#)
            let b = try h.context.insert(entity: "LivingAccommodation", json: #"{"address": "b", "placeName": "B", "trip": "\#(t)"}"#)
            XCTAssertEqual(try tripOf(h.context, a.description), .null, "pending")
            XCTAssertEqual(try get(h.context, t)["livingAccommodation"]?.stringValue, b.description)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try tripOf(h.context, a.description), .null)
            XCTAssertEqual(try tripOf(h.context, b.description)?.stringValue, t.description)
            XCTAssertEqual(try get(h.context, t)["livingAccommodation"]?.stringValue, b.description)
        }
    }

    func testALinkSetFromTheOtherSideCountsForANewObject() {
        forEachSetup { h in
            // The new trip takes a new accommodation through its own relationship (the link is
            // written in the accommodation's row); a third object linking the trip later takes it.
            let x = try h.context.insert(entity: "LivingAccommodation", json: #"{"address": "x", "placeName": "X"}"#)
            let t = try h.context.insert(entity: "Trip", json: #"{"name": "T", "startDate": 0, "endDate": 1, "livingAccommodation": "\#(x)"}"#)
            let y = try h.context.insert(entity: "LivingAccommodation", json: #"{"address": "y", "placeName": "Y", "trip": "\#(t)"}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try tripOf(h.context, x.description), .null)
            XCTAssertEqual(try tripOf(h.context, y.description)?.stringValue, t.description)
        }
    }

    func testANewTripTakesANewAccommodationFromAnotherNewTrip() {
        forEachSetup { h in
            let ids = try h.context.insertMany(entity: "Trip", json: "[" + trip("A") + "]")
            guard let la = try get(h.context, ids[0])["livingAccommodation"]?.stringValue else { return XCTFail("no accommodation") }
            let b = try h.context.insert(entity: "Trip", json: #"{"name": "B", "startDate": 0, "endDate": 1, "livingAccommodation": "\#(la)"}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, ids[0])["livingAccommodation"], .null)
            XCTAssertEqual(try get(h.context, b)["livingAccommodation"]?.stringValue, la)
            XCTAssertEqual(try tripOf(h.context, la)?.stringValue, b.description)
        }
    }

    func testDuplicateKeysInOneArrayUpsertAndReturnOneIdentifier() {
        forEachSetup { h in
            let ids = try h.context.insertMany(entity: "Trip", json: "[" + [
                trip("A", #""destination": "first""#), trip("B"), trip("A", #""destination": "second""#),
                #"{"_entity": "PersonalTrip", "name": "C", "startDate": 0, "endDate": 86400, "reason": "family"}"#,
                #"{"name": "C", "startDate": 0, "endDate": 86400, "destination": "again", "_onConflict": "ignore"}"#,
            ].joined(separator: ",") + "]")
            XCTAssertEqual(ids.count, 5)
            XCTAssertEqual(ids[0], ids[2], "the second A updates the first")
            XCTAssertNotEqual(ids[0], ids[1])
            XCTAssertEqual(ids[3], ids[4], "ignore returns the pending object")
            XCTAssertEqual(ids[3].description.hasPrefix("PersonalTrip/"), true)
            XCTAssertEqual(try count(h.context, "Trip"), 3)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 3)
            let a = try get(h.context, ids[0])
            XCTAssertEqual(a["destination"], .string("second"))
            XCTAssertEqual(a["bucketList"]?.array?.count, 2, "the upsert's list replaces the first one")
            XCTAssertEqual(try count(h.context, "BucketListItem"), 6)
            XCTAssertEqual(try get(h.context, ids[3])["destination"], .null, "ignored")
        }
    }

    func testAnArrayUpsertsSavedTripsAndReturnsTheirIdentifiers() {
        forEachSetup { h in
            let saved = try h.context.insertMany(entity: "Trip", json: "[" + trip("A") + "," + trip("B") + "]")
            try h.context.save()
            try h.reopen()
            let ids = try h.context.insertMany(entity: "Trip", json: "[" + [
                trip("B", #""destination": "b2""#), trip("N"), #"{"name": "A", "startDate": 0, "endDate": 86400, "destination": "a2"}"#,
            ].joined(separator: ",") + "]")
            XCTAssertEqual(ids[0], saved[1])
            XCTAssertEqual(ids[2], saved[0])
            XCTAssertFalse(saved.contains(ids[1]))
            let changes = try h.context.save()
            XCTAssertEqual(Set(changes.inserted.filter { $0.entity.name == "Trip" }), [ids[1]])
            XCTAssertEqual(Set(changes.updated.filter { $0.entity.name == "Trip" }), Set(saved), "an upsert is an update")
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 3)
            XCTAssertEqual(try get(h.context, saved[0])["destination"], .string("a2"))
            XCTAssertEqual(try get(h.context, saved[1])["bucketList"]?.array?.count, 2)
            XCTAssertEqual(try count(h.context, "BucketListItem"), 8)
        }
    }

    func testOnConflictErrorInAnArrayLeavesNothingPending() {
        forEachSetup { h in
            _ = try h.context.insertMany(entity: "Trip", json: "[" + trip("A") + "]")
            try h.context.save()
            try h.reopen()
            assertError(.constraint) {
                _ = try h.context.insertMany(entity: "Trip", json: "[" + trip("N") + ","
                    + #"{"name": "A", "startDate": 0, "endDate": 86400, "_onConflict": "error"}"# + "]")
            }
            XCTAssertFalse(h.context.hasChanges, "all or nothing")
            assertError(.constraint) {
                _ = try h.context.insertMany(entity: "Trip", json: "[" + trip("M") + ","
                    + #"{"name": "M", "startDate": 0, "endDate": 86400, "_onConflict": "error"}"# + "]")
            }
            XCTAssertFalse(h.context.hasChanges)
            // The keys of the failed arrays are forgotten: they insert now.
            let ids = try h.context.insertMany(entity: "Trip", json: "[" + trip("N") + "," + trip("M") + "]")
            XCTAssertEqual(Set(ids).count, 2)
            try h.context.save()
            XCTAssertEqual(try count(h.context, "Trip"), 3)
        }
    }

    func testHistoryRecordsAnUpsertAsAnUpdate() throws {
        let container = try openFile()
        let context = try container.makeContext()
        let first = try context.insertMany(entity: "Trip", json: "[" + trip("A") + "]")
        try context.save()
        let again = try context.insertMany(entity: "Trip", json: "[" + trip("A", #""destination": "x""#) + "," + trip("Z") + "]")
        XCTAssertEqual(again[0], first[0])
        try context.save()
        let history = try XCTUnwrap(JSONValue.parse(context.fetchHistory("{}")).array)
        guard let changes = history.last?["changes"]?.array else { return XCTFail("\(history)") }
        var kinds: [String: String] = [:]
        for c in changes {
            guard let id = c["id"]?.stringValue, id.hasPrefix("Trip/"), let k = c["kind"]?.stringValue else { continue }
            kinds[id] = k
        }
        XCTAssertEqual(kinds.count, 2, "\(changes)")
        XCTAssertEqual(kinds[first[0].description], "update", "\(kinds)")
        XCTAssertEqual(kinds[again[1].description], "insert", "\(kinds)")
    }

    // Relationship values are skipped once (without making strings) before they are read:
    // the skip checks what reading checks.

    func testMalformedTextInsideANestedObjectIsReported() throws {
        let context = try openFile().makeContext()
        let bad: [[UInt8]] = [
            Array(#"[{"name": "A", "startDate": 0, "endDate": 1, "bucketList": [{"title": "x\u00"}]}]"#.utf8),
            Array(#"[{"name": "A", "startDate": 0, "endDate": 1, "bucketList": [{"title": "x"#.utf8) + [0xFF] + Array(#""}]}]"#.utf8),
            Array(#"[{"name": "A", "startDate": 0, "endDate": 1, "livingAccommodation": {"address": "a"#.utf8) + [0x01] + Array(#"", "placeName": "p"}}]"#.utf8),
            Array(#"[{"name": "A", "startDate": 0, "endDate": 1, "livingAccommodation": {"address": "unterminated}}]"#.utf8),
            Array(#"[{"_entity": "PersonalTrip", "name": "A", "startDate": 0, "endDate": 1, "bucketList": [{"title": "x", }]}]"#.utf8),
        ]
        for input in bad {
            let e = assertError(.invalid) { _ = try input.withUnsafeBufferPointer { try context.insertMany(entity: "Trip", json: $0) } }
            XCTAssertTrue(e?.message.contains("malformed JSON") == true, "\(String(decoding: input, as: UTF8.self)): \(String(describing: e))")
            XCTAssertFalse(context.hasChanges)
        }
    }

    func testEscapedTextInsideANestedObjectIsRead() throws {
        let context = try openFile().makeContext()
        let ids = try context.insertMany(entity: "Trip", json: #"""
            [{"livingAccommodation": {"address": "a \"b\" \u00e9\n", "placeName": "\ud83d\ude00"}, "_entity": "PersonalTrip",
              "name": "A", "startDate": 0, "endDate": 1, "bucketList": [{"title": "t\\u", "details": "caf\u00e9"}]}]
            """#)
        try context.save()
        let trip = try get(context, ids[0])
        guard let la = trip["livingAccommodation"]?.stringValue, let item = trip["bucketList"]?.array?.first?.stringValue else { return XCTFail("\(trip)") }
        XCTAssertEqual(try get(context, la)["address"], .string("a \"b\" é\n"))
        XCTAssertEqual(try get(context, la)["placeName"], .string("😀"))
        XCTAssertEqual(try get(context, item)["title"], .string("t\\u"))
        XCTAssertEqual(try get(context, item)["details"], .string("café"))
        XCTAssertTrue(ids[0].description.hasPrefix("PersonalTrip/"))
    }
}
