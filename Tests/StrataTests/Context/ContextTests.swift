import XCTest
@testable import Strata

/// ModelContext: pending inserts, updates and deletes; nested objects; links
/// by identifier; save, rollback, hasChanges; reads with and without pending changes.
final class ContextTests: StoreTestCase {
    static let nestedTrip = #"""
        {"name": "Paris", "destination": "France", "startDate": "2026-05-01T00:00:00Z", "endDate": "2026-05-08T00:00:00Z",
         "bucketList": [{"title": "Louvre"}, {"title": "Eiffel Tower", "hasReservation": true}],
         "livingAccommodation": {"address": "1 Rue de Rivoli", "placeName": "Hotel"}}
        """#

    func trip(_ name: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": 86400\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    func testInsertNestedObjectsThenSaveShowsIdentifiers() {
        forEachSetup { h in
            let id = try h.context.insert(entity: "Trip", json: Self.nestedTrip)
            XCTAssertEqual(id.entity.name, "Trip")
            try h.context.save()
            try h.reopen()
            let t = try get(h.context, id)
            XCTAssertEqual(t["_id"], .string(id.description))
            XCTAssertEqual(t["_entity"], .string("Trip"))
            XCTAssertEqual(t["name"], .string("Paris"))
            XCTAssertEqual(t["startDate"], .string("2026-05-01T00:00:00Z"))
            XCTAssertEqual(t["tripViews"]?.numberText, "0", "a transient reads as its default")
            let items = try XCTUnwrap(t["bucketList"]?.array?.compactMap(\.stringValue))
            XCTAssertEqual(items.count, 2)
            let la = try XCTUnwrap(t["livingAccommodation"]?.stringValue)
            XCTAssertTrue(la.hasPrefix("LivingAccommodation/"), la)
            XCTAssertEqual(try get(h.context, la)["trip"], .string(id.description))
            XCTAssertEqual(try get(h.context, la)["placeName"], .string("Hotel"))
            let titles = try items.map { try get(h.context, $0) }.map { ($0["title"]?.stringValue ?? "", $0["trip"], $0["hasReservation"], $0["details"]) }
            XCTAssertEqual(titles.map(\.0).sorted(), ["Eiffel Tower", "Louvre"])
            for t in titles { XCTAssertEqual(t.1, .string(id.description)) }
            XCTAssertEqual(titles.first { $0.0 == "Eiffel Tower" }?.2, .bool(true))
            XCTAssertEqual(titles.first { $0.0 == "Louvre" }?.2, .bool(false), "default")
            XCTAssertEqual(titles.first { $0.0 == "Louvre" }?.3, .string(""), "default")
            XCTAssertEqual(try count(h.context, "BucketListItem"), 2)
            XCTAssertEqual(try count(h.context, "LivingAccommodation"), 1)
        }
    }

    func testPendingReadsShowNestedLinks() throws {
        let context = try openInMemory().makeContext()
        let id = try context.insert(entity: "Trip", json: Self.nestedTrip)
        let t = try get(context, id)
        XCTAssertEqual(t["bucketList"]?.array?.count, 2)
        XCTAssertNotEqual(t["livingAccommodation"], .null)
    }

    func testLinkByIdentifier() {
        forEachSetup { h in
            let la = try h.context.insert(entity: "LivingAccommodation", json: #"{"address": "a", "placeName": "p"}"#)
            let item = try h.context.insert(entity: "BucketListItem", json: #"{"title": "Swim"}"#)
            try h.context.save()
            let t = try h.context.insert(entity: "Trip", json: trip("Nice", #""livingAccommodation": "\#(la)", "bucketList": ["\#(item)"]"#))
            // To-one held in this row, linking a pending object in the same context.
            let other = try h.context.insert(entity: "BucketListItem", json: #"{"title": "Dive", "trip": "\#(t)"}"#)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, t)
            XCTAssertEqual(v["livingAccommodation"], .string(la.description))
            XCTAssertEqual(Set(v["bucketList"]?.array?.compactMap(\.stringValue) ?? []), [item.description, other.description])
            XCTAssertEqual(try get(h.context, item)["trip"], .string(t.description))
            XCTAssertEqual(try get(h.context, la)["trip"], .string(t.description))
        }
    }

    func testLinkToAMissingOrWrongObjectFails() throws {
        let context = try openInMemory().makeContext()
        assertError(.notFound) { try context.insert(entity: "BucketListItem", json: #"{"title": "x", "trip": "Trip/999"}"#) }
        assertError(.validation) { try context.insert(entity: "BucketListItem", json: #"{"title": "x", "trip": "LivingAccommodation/1"}"#) }
        assertError(.invalid) { try context.insert(entity: "BucketListItem", json: #"{"title": "x", "trip": "Nope/1"}"#) }
        assertError(.invalid) { try context.insert(entity: "BucketListItem", json: #"{"title": "x", "trip": "Trip"}"#) }
        assertError(.validation) { try context.insert(entity: "Trip", json: trip("T", #""bucketList": "BucketListItem/1""#)) }
        XCTAssertFalse(context.hasChanges)
    }

    func testMovingAOneToOneReleasesThePreviousOwner() {
        forEachSetup { h in
            let a = try h.context.insert(entity: "Trip", json: trip("A", #""livingAccommodation": {"address": "x", "placeName": "y"}"#))
            try h.context.save()
            let la = try XCTUnwrap(get(h.context, a)["livingAccommodation"]?.stringValue)
            let b = try h.context.insert(entity: "Trip", json: trip("B", #""livingAccommodation": "\#(la)""#))
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, b)["livingAccommodation"], .string(la))
            XCTAssertEqual(try get(h.context, a)["livingAccommodation"], .null)
            XCTAssertEqual(try get(h.context, la)["trip"], .string(b.description))
        }
    }

    func testUpdatePatch() {
        forEachSetup { h in
            let id = try h.context.insert(entity: "Trip", json: Self.nestedTrip)
            try h.context.save()
            let before = try get(h.context, id)
            let items = before["bucketList"]?.array?.compactMap(\.stringValue) ?? []
            XCTAssertEqual(items.count, 2)
            try h.context.update(id: id.description, patch: #"""
                {"destination": null, "endDate": "2026-05-09T00:00:00Z", "bucketList": ["\#(items[1])", {"title": "Versailles"}],
                 "livingAccommodation": null}
                """#)
            XCTAssertTrue(h.context.hasChanges)
            let pending = try get(h.context, id)
            XCTAssertEqual(pending["destination"], .null)
            XCTAssertEqual(pending["bucketList"]?.array?.count, 2)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, id)
            XCTAssertEqual(v["name"], .string("Paris"), "keys left out keep their values")
            XCTAssertEqual(v["destination"], .null)
            XCTAssertEqual(v["endDate"], .string("2026-05-09T00:00:00Z"))
            XCTAssertEqual(v["livingAccommodation"], .null)
            let now = v["bucketList"]?.array?.compactMap(\.stringValue) ?? []
            XCTAssertEqual(now.count, 2)
            XCTAssertTrue(now.contains(items[1]))
            XCTAssertFalse(now.contains(items[0]))
            // The item let go is nullified, not deleted.
            XCTAssertEqual(try get(h.context, items[0])["trip"], .null)
            XCTAssertEqual(try count(h.context, "BucketListItem"), 3)
            XCTAssertEqual(try count(h.context, "LivingAccommodation"), 1)
        }
    }

    func testUpdateOfUnknownObjectOrKey() throws {
        let context = try openInMemory().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A"))
        try context.save()
        assertError(.notFound) { try context.update(id: "Trip/999", patch: #"{"name": "x"}"#) }
        assertError(.invalid) { try context.update(id: "Ghost/1", patch: #"{"name": "x"}"#) }
        let e = assertError(.invalid) { try context.update(id: id.description, patch: #"{"nmae": "x"}"#) }
        XCTAssertEqual(e?.path, "/nmae")
        assertError(.invalid) { try context.update(id: id.description, patch: #"{"_entity": "PersonalTrip"}"#) }
        XCTAssertFalse(context.hasChanges)
    }

    func testRollbackDiscardsEverything() {
        forEachSetup { h in
            let kept = try h.context.insert(entity: "Trip", json: trip("Kept"))
            try h.context.save()
            _ = try h.context.insert(entity: "Trip", json: Self.nestedTrip)
            try h.context.update(id: kept.description, patch: #"{"name": "Changed"}"#)
            XCTAssertTrue(h.context.hasChanges)
            h.context.rollback()
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try count(h.context, "Trip"), 1)
            XCTAssertEqual(try count(h.context, "BucketListItem"), 0)
            XCTAssertEqual(try get(h.context, kept)["name"], .string("Kept"))
            try h.context.delete(id: kept.description)
            h.context.rollback()
            XCTAssertEqual(try get(h.context, kept)["name"], .string("Kept"))
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Trip"), [kept.description])
            XCTAssertEqual(try get(h.context, kept)["name"], .string("Kept"))
        }
    }

    func testRolledBackUniqueKeysAreForgotten() throws {
        let context = try openInMemory().makeContext()
        let first = try context.insert(entity: "Trip", json: trip("A"))
        context.rollback()
        // The same unique key again is a new object, not an upsert onto the discarded one.
        let second = try context.insert(entity: "Trip", json: trip("A"))
        XCTAssertNotEqual(first, second)
        try context.save()
        XCTAssertEqual(try get(context, second)["name"], .string("A"))
        assertError(.notFound) { try context.get(id: first.description) }
    }

    func testHasChanges() throws {
        let context = try openInMemory().makeContext()
        XCTAssertFalse(context.hasChanges)
        let id = try context.insert(entity: "Trip", json: trip("A"))
        XCTAssertTrue(context.hasChanges)
        try context.save()
        XCTAssertFalse(context.hasChanges)
        try context.update(id: id.description, patch: #"{"name": "B"}"#)
        XCTAssertTrue(context.hasChanges)
        try context.save()
        try context.delete(id: id.description)
        XCTAssertTrue(context.hasChanges)
        try context.save()
        XCTAssertFalse(context.hasChanges)
        _ = try fetch(context, "Trip")
        XCTAssertFalse(context.hasChanges, "reading changes nothing")
    }

    func testIncludePendingChanges() {
        forEachSetup { h in
            let saved = try h.context.insert(entity: "Trip", json: trip("Saved"))
            try h.context.save()
            let pendingID = try h.context.insert(entity: "Trip", json: trip("Pending"))
            try h.context.update(id: saved.description, patch: #"{"destination": "Mars"}"#)
            XCTAssertEqual(try count(h.context, "Trip", pending: true), 2)
            XCTAssertEqual(try count(h.context, "Trip", pending: false), 1)
            XCTAssertEqual(try identifiers(h.context, "Trip", pending: true), [saved.description, pendingID.description])
            XCTAssertEqual(try identifiers(h.context, "Trip", pending: false), [saved.description])
            XCTAssertEqual(try fetch(h.context, "Trip", pending: false).map { $0["destination"] }, [.null])
            XCTAssertEqual(try fetch(h.context, "Trip", pending: true).map { $0["destination"] }, [.string("Mars"), .null])
            try h.context.delete(id: saved.description)
            XCTAssertEqual(try identifiers(h.context, "Trip", pending: true), [pendingID.description])
            XCTAssertEqual(try count(h.context, "Trip", pending: false), 1)
            // Reads roll their preview back: the store still holds only what was saved.
            XCTAssertTrue(h.context.hasChanges)
            h.context.rollback()
            XCTAssertEqual(try identifiers(h.context, "Trip"), [saved.description])
        }
    }

    func testContextsDoNotSeeEachOthersPendingChanges() throws {
        let container = try openFile()
        let a = try container.makeContext()
        let b = try container.makeContext()
        let id = try a.insert(entity: "Trip", json: trip("A"))
        XCTAssertEqual(try count(b, "Trip"), 0)
        assertError(.notFound) { try b.get(id: id.description) }
        try a.save()
        XCTAssertEqual(try count(b, "Trip"), 1)
        XCTAssertEqual(try get(b, id)["name"], .string("A"))
    }

    func testFetchIncludeSubentities() {
        forEachSetup { h in
            let t = try h.context.insert(entity: "Trip", json: trip("Plain"))
            let p = try h.context.insert(entity: "PersonalTrip", json: trip("Family", #""reason": "family""#))
            let b = try h.context.insert(entity: "BusinessTrip", json: trip("Work", #""perdiem": 120.5"#))
            for pending in [true, false] {
                if !pending { try h.context.save(); try h.reopen() }
                XCTAssertEqual(try identifiers(h.context, "Trip"), [t.description, p.description, b.description])
                XCTAssertEqual(try identifiers(h.context, "Trip", subentities: false), [t.description])
                XCTAssertEqual(try identifiers(h.context, "PersonalTrip"), [p.description])
                XCTAssertEqual(try identifiers(h.context, "BusinessTrip", subentities: false), [b.description])
                XCTAssertEqual(try count(h.context, "Trip"), 3)
                XCTAssertEqual(try count(h.context, "Trip", subentities: false), 1)
                XCTAssertEqual(try fetch(h.context, "Trip").map { $0["_entity"] },
                               [.string("Trip"), .string("PersonalTrip"), .string("BusinessTrip")])
                XCTAssertEqual(try fetch(h.context, "Trip", subentities: false).map { $0["_entity"] }, [.string("Trip")])
            }
        }
    }

    func testInsertManyIsAllOrNothing() {
        forEachSetup { h in
            let existing = try h.context.insert(entity: "Trip", json: trip("Existing"))
            try h.context.save()
            let bad = #"""
                [{"name": "One", "startDate": 0, "endDate": 1, "bucketList": [{"title": "a"}]},
                 {"name": "Existing", "startDate": 0, "endDate": 86400, "destination": "upserted?"},
                 {"name": "Three", "startDate": 0, "endDate": "not a date"}]
                """#
            let e = assertError(.validation) { try h.context.insertMany(entity: "Trip", json: bad) }
            XCTAssertEqual(e?.path, "/2/endDate")
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try count(h.context, "Trip"), 1)
            XCTAssertEqual(try count(h.context, "BucketListItem"), 0)
            XCTAssertEqual(try get(h.context, existing)["destination"], .null)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Trip"), [existing.description])
            XCTAssertEqual(try count(h.context, "BucketListItem"), 0)
            // The same batch without the bad element goes through, in order.
            let ids = try h.context.insertMany(entity: "Trip", json: #"""
                [{"name": "One", "startDate": 0, "endDate": 1, "bucketList": [{"title": "a"}]},
                 {"name": "Existing", "startDate": 0, "endDate": 86400, "destination": "upserted"},
                 {"_entity": "PersonalTrip", "name": "Three", "startDate": 0, "endDate": 1, "reason": "wellness"}]
                """#)
            XCTAssertEqual(ids.count, 3)
            XCTAssertEqual(ids[1], existing)
            XCTAssertEqual(ids[2].entity.name, "PersonalTrip")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 3)
            XCTAssertEqual(try get(h.context, existing)["destination"], .string("upserted"))
            XCTAssertEqual(try get(h.context, ids[2])["reason"], .string("wellness"))
        }
    }

    /// A failed insert forgets the pending inserts it made (objects nested in them included):
    /// their identifiers name nothing afterwards; those made before it stay found.
    func testAFailedInsertManyForgetsItsPendingInserts() {
        forEachSetup { h in
            let first = try h.context.insert(entity: "Trip", json: trip("First"))
            let bad = #"""
                [{"name": "Two", "startDate": 0, "endDate": 1, "bucketList": [{"title": "a"}, {"title": "b"}]},
                 {"name": "Three", "startDate": 0, "endDate": 1},
                 {"name": "Four", "startDate": 0, "endDate": "not a date"}]
                """#
            assertError(.validation) { try h.context.insertMany(entity: "Trip", json: bad) }
            // A context's keys of one hierarchy ascend: the failed insert had those between these two.
            let next = try h.context.insert(entity: "Trip", json: trip("Next"))
            XCTAssertGreaterThan(next.pk, first.pk + 2)
            XCTAssertEqual(try h.context.resolve(first.description), first)
            XCTAssertEqual(try h.context.resolve(next.description), next)
            for pk in (first.pk + 1)..<next.pk {
                let e = assertError(.notFound) { try h.context.resolve("Trip/\(pk)") }
                XCTAssertEqual(e?.message, "no object Trip/\(pk)")
            }
            XCTAssertEqual(try count(h.context, "BucketListItem"), 0)
            try h.context.save()
            XCTAssertEqual(try identifiers(h.context, "Trip"), [first.description, next.description])
        }
    }

    func testInsertManyNeedsAnArrayOfObjects() throws {
        let context = try openInMemory().makeContext()
        assertError(.invalid) { try context.insertMany(entity: "Trip", json: trip("A")) }
        let e = assertError(.invalid) { try context.insertMany(entity: "Trip", json: "[\(trip("A")), 5]") }
        XCTAssertEqual(e?.path, "/1")
        XCTAssertFalse(context.hasChanges)
        XCTAssertEqual(try context.insertMany(entity: "Trip", json: "[]"), [])
        XCTAssertFalse(context.hasChanges)
    }

    func testAFailedInsertLeavesNoPendingChange() {
        forEachSetup { h in
            let e = assertError(.validation) {
                try h.context.insert(entity: "Trip", json: trip("A", #""bucketList": [{"title": "ok"}, {"title": 5}], "livingAccommodation": {"address": "x", "placeName": "y"}"#))
            }
            XCTAssertEqual(e?.path, "/bucketList/1/title")
            XCTAssertEqual(e?.entity, "BucketListItem")
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try count(h.context, "Trip"), 0)
            XCTAssertEqual(try count(h.context, "BucketListItem"), 0)
            XCTAssertEqual(try count(h.context, "LivingAccommodation"), 0)
            // Its unique key is not remembered either.
            let id = try h.context.insert(entity: "Trip", json: trip("A"))
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Trip"), [id.description])
        }
    }

    func testAFailedUpdateOfRelationshipsLeavesNoPendingChange() throws {
        let context = try openInMemory().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", #""bucketList": [{"title": "one"}]"#))
        try context.save()
        assertError(.notFound) { try context.update(id: id.description, patch: #"{"name": "B", "bucketList": [{"title": "two"}, "BucketListItem/999"]}"#) }
        XCTAssertFalse(context.hasChanges)
        XCTAssertEqual(try count(context, "BucketListItem"), 1)
        XCTAssertEqual(try get(context, id)["name"], .string("A"))
    }

    func testGetAndDeleteOfMissingObjects() throws {
        let context = try openInMemory().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A"))
        try context.save()
        assertError(.notFound) { try context.get(id: "Trip/999") }
        assertError(.notFound) { try context.get(id: "BucketListItem/\(id.pk)") }
        assertError(.notFound) { try context.get(id: "PersonalTrip/\(id.pk)") }
        assertError(.invalid) { try context.get(id: "Trip/0") }
        assertError(.invalid) { try context.get(id: "Trip/-1") }
        assertError(.notFound) { try context.delete(id: "Trip/999") }
        try context.delete(id: id.description)
        assertError(.notFound) { try context.get(id: id.description) }
        assertError(.notFound) { try context.delete(id: id.description) }
    }

    func testUnknownEntity() throws {
        let context = try openInMemory().makeContext()
        let e = assertError(.invalid) { try context.insert(entity: "Tripp", json: "{}") }
        XCTAssertTrue(e?.message.contains("Tripp") == true)
    }

    func testReadsDoNotRunOneQueryPerObject() throws {
        let context = try openFile().makeContext()
        _ = try context.insertMany(entity: "Trip", json: "[" + (0..<50).map { i in
            #"{"name": "t\#(i)", "startDate": 0, "endDate": 1, "bucketList": [{"title": "a"}, {"title": "b"}], "livingAccommodation": {"address": "x", "placeName": "y"}}"#
        }.joined(separator: ",") + "]")
        try context.save()
        var trips: [JSONValue] = []
        let fetchSQL = try captureSQL(context) { trips = try fetch(context, "Trip") }
        XCTAssertEqual(trips.count, 50)
        XCTAssertTrue(trips.allSatisfy { $0["bucketList"]?.array?.count == 2 && $0["livingAccommodation"]?.stringValue != nil })
        // One query: the rows with the identifiers of the relationships not held in the row (bucketList, livingAccommodation).
        XCTAssertEqual(fetchSQL.count, 1, fetchSQL.joined(separator: "\n"))
        let countSQL = try captureSQL(context) { XCTAssertEqual(try count(context, "Trip"), 50) }
        XCTAssertEqual(countSQL.count, 1, countSQL.joined(separator: "\n"))
        // Saving a batch reuses one prepared insert per entity.
        let insertSQL = try captureSQL(context) {
            _ = try context.insertMany(entity: "Trip", json: "[" + (50..<80).map { #"{"name": "t\#($0)", "startDate": 0, "endDate": 1}"# }.joined(separator: ",") + "]")
        }
        // Inserting looks each unique key up once (upsert against saved rows), nothing more
        // (reserving a block of keys also reads the stored version, once per block; the probes
        // ask once per snapshot whether the table holds any row, and a block ends a snapshot).
        let selects = insertSQL.filter { $0.hasPrefix("SELECT") && !$0.contains("strata_metadata") }
        let asks = selects.filter { $0 == #"SELECT 1 FROM "Trip" LIMIT 1"# }.count
        XCTAssertEqual(selects.count - asks, 30, "\(insertSQL)")
        XCTAssertTrue((1...2).contains(asks), "\(insertSQL)")
        let saveSQL = try captureSQL(context) { try context.save() }
        XCTAssertLessThan(saveSQL.count, 10, "no statement per row: \(saveSQL)")
    }

    func testPrimaryKeysAreNotReusedAcrossContexts() throws {
        let container = try openFile()
        let a = try container.makeContext()
        let b = try container.makeContext()
        let x = try a.insert(entity: "Trip", json: trip("X"))
        let y = try b.insert(entity: "Trip", json: trip("Y"))
        let p = try b.insert(entity: "PersonalTrip", json: trip("P"))
        XCTAssertNotEqual(x.pk, y.pk)
        XCTAssertNotEqual(y.pk, p.pk, "keys are unique across a hierarchy")
        try a.save()
        try b.save()
        XCTAssertEqual(Set(try identifiers(a, "Trip")), [x.description, y.description, p.description])
    }
}
