import XCTest
@testable import Strata

/// What a save records: transactions, their changes, tombstones, old and new
/// values, author and context name; failed saves record nothing.
final class HistoryRecordingTests: HistoryTestCase {
    func testInsertUpdateDeleteCascadeAndNullify() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "start": "2025-06-01T10:00:00Z", "items": [{"title": "Louvre"}, {"title": "Orsay"}], "lodging": {"place": "Hotel"}}"#)
            try ctx.save()
            try ctx.update(id: trip.description, patch: #"{"notes": "rainy"}"#)
            try ctx.save()
            try ctx.delete(id: trip.description)
            try ctx.save()

            let all = try history(ctx)
            XCTAssertEqual(all.count, 3)
            XCTAssertEqual(all.map { sequence($0["token"]?.stringValue ?? "") }, [1, 2, 3])
            XCTAssertEqual(Set(lines(all[0])), ["insert Trip/1", "insert Item/1", "insert Item/2", "insert Lodging/1"])
            XCTAssertEqual(lines(all[0]).count, 4)
            XCTAssertEqual(lines(all[1]), ["update Trip/1 [notes]"])
            // The delete: the trip's tombstone (date as ISO text), the cascaded items, the nullified lodging.
            XCTAssertEqual(Set(lines(all[2])), [
                #"delete Trip/1 tombstone={"name":"Paris","start":"2025-06-01T10:00:00Z"}"#,
                "delete Item/1", "delete Item/2", "update Lodging/1 [trip]",
            ])
            XCTAssertEqual(lines(all[2]).count, 4)
            for t in all {
                XCTAssertNotNil(t["timestamp"]?.stringValue)
                XCTAssertNil(t["author"], "no author configured")
                XCTAssertNil(t["contextName"])
            }
        }
    }

    func testLinkChangesNameBothEnds() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris"}"#)
            let lodging = try ctx.insert(entity: "Lodging", json: #"{"place": "Hotel"}"#)
            let item = try ctx.insert(entity: "Item", json: #"{"title": "Louvre"}"#)
            try ctx.save()
            try ctx.update(id: lodging.description, patch: #"{"trip": "\#(trip)"}"#)
            try ctx.save()
            try ctx.update(id: item.description, patch: #"{"trip": "\#(trip)"}"#)
            try ctx.save()
            let all = try history(ctx)
            XCTAssertEqual(all.count, 3)
            XCTAssertEqual(Set(lines(all[1])), ["update Trip/1 [lodging]", "update Lodging/1 [trip]"])
            XCTAssertEqual(Set(lines(all[2])), ["update Trip/1 [items]", "update Item/1 [trip]"])
        }
    }

    func testTombstoneOfASubentityAndNullValues() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let b = try ctx.insert(entity: "BusinessTrip", json: #"{"name": "Expo", "perdiem": 50}"#)
            try ctx.save()
            try ctx.delete(id: b.description)
            try ctx.save()
            let last = try XCTUnwrap(history(ctx).last)
            XCTAssertEqual(lines(last), [#"delete BusinessTrip/1 tombstone={"name":"Expo","start":null}"#])
            XCTAssertEqual(last["changes"]?.array?.first?["entity"], .string("BusinessTrip"))
        }
    }

    func testHistoryValuesOldAndNew() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris"}"#)
            try ctx.save()
            // Two updates in one save: the first old value, the last new one.
            try ctx.update(id: trip.description, patch: #"{"name": "Lyon"}"#)
            try ctx.update(id: trip.description, patch: #"{"name": "Nice", "notes": "x"}"#)
            try ctx.save()
            // Insert then update in one save: an insert, no values.
            let other = try ctx.insert(entity: "Trip", json: #"{"name": "Rome"}"#)
            try ctx.update(id: other.description, patch: #"{"name": "Milan"}"#)
            try ctx.save()
            // Update then delete in one save: a delete with the tombstone of the saved values.
            try ctx.update(id: trip.description, patch: #"{"name": "Cannes"}"#)
            try ctx.delete(id: trip.description)
            try ctx.save()
            // A change to a non-historyValues attribute only: no old/new.
            try ctx.update(id: other.description, patch: #"{"notes": "y"}"#)
            try ctx.save()
            let all = try history(ctx)
            XCTAssertEqual(all.count, 5)
            XCTAssertEqual(lines(all[1]), [#"update Trip/1 [name,notes] old={"name":"Paris"} new={"name":"Nice"}"#])
            XCTAssertEqual(lines(all[2]), ["insert Trip/2"])
            // The tombstone holds the values the object had when deleted.
            XCTAssertEqual(lines(all[3]), [#"delete Trip/1 tombstone={"name":"Cannes","start":null}"#])
            XCTAssertEqual(lines(all[4]), ["update Trip/2 [notes]"])
        }
    }

    func testAuthorFromConfigurationAndContextAndContextName() throws {
        forEachHistorySetup {
            let c = try openHistory { $0.author = "app" }
            let a = try c.makeContext()
            let b = try c.makeContext()
            b.author = "widget"
            b.name = "background"
            _ = try a.insert(entity: "Trip", json: #"{"name": "A"}"#)
            try a.save()
            _ = try b.insert(entity: "Trip", json: #"{"name": "B"}"#)
            try b.save()
            // nil: no author at all (not the configuration's).
            b.author = nil
            b.name = nil
            _ = try b.insert(entity: "Trip", json: #"{"name": "C"}"#)
            try b.save()
            let fresh = try c.makeContext()
            XCTAssertEqual(fresh.author, "app")
            _ = try fresh.insert(entity: "Trip", json: #"{"name": "D"}"#)
            try fresh.save()
            let all = try history(a)
            XCTAssertEqual(all.map { $0["author"]?.stringValue }, ["app", "widget", nil, "app"])
            XCTAssertEqual(all.map { $0["contextName"]?.stringValue }, [nil, "background", nil, nil])
            XCTAssertEqual(all[2].keys.sorted(), ["changes", "timestamp", "token"])
            XCTAssertEqual(all[0].keys.sorted(), ["author", "changes", "timestamp", "token"])
        }
    }

    func testFailedSavesRecordNothing() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let other = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris"}"#)
            let guide = try ctx.insert(entity: "Guide", json: #"{"name": "G", "trips": ["\#(trip)"]}"#)
            try ctx.save()
            // A unique collision with "_onConflict": "error", found at save (another context saves the name first).
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "Lyon", "_onConflict": "error"}"#)
            _ = try other.insert(entity: "Trip", json: #"{"name": "Lyon"}"#)
            try other.save()
            XCTAssertEqual(try history(ctx).count, 2)
            let path = storePath()
            let changeRows = try rowCount(path, "strata_history_change")

            assertError(.constraint) { try ctx.save() }
            ctx.rollback()
            // A deny rule (the guide still has a trip).
            try ctx.delete(id: guide.description)
            _ = try ctx.insert(entity: "Item", json: #"{"title": "pending"}"#)
            assertError(.constraint) { try ctx.save() }
            ctx.rollback()
            // A required relationship left empty.
            _ = try ctx.insert(entity: "Tag", json: #"{"label": "orphan"}"#)
            assertError(.validation) { try ctx.save() }
            ctx.rollback()

            XCTAssertEqual(try history(ctx).count, 2)
            XCTAssertEqual(try rowCount(path, "strata_history_transaction"), 2)
            XCTAssertEqual(try rowCount(path, "strata_history_change"), changeRows)
            // The next save takes the next token.
            _ = try ctx.insert(entity: "Item", json: #"{"title": "next"}"#)
            try ctx.save()
            XCTAssertEqual(try tokens(ctx).map(sequence), [1, 2, 3])
            XCTAssertEqual(try history(ctx).last.map(lines), ["insert Item/2"], "(the failed save's pending item took Item/1)")
        }
    }

    func testSavesInARolledBackTransactionRecordNothing() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let session = try c.store.makeSession()
            let ctx = ModelContext(session: session, schema: c.schema)
            XCTAssertThrowsError(try session.transaction {
                _ = try ctx.insert(entity: "Trip", json: #"{"name": "A"}"#)
                try ctx.save()
                _ = try ctx.insert(entity: "Trip", json: #"{"name": "B"}"#)
                try ctx.save()
                throw StrataError(.invalid, "give up")
            })
            let fresh = try c.makeContext()
            XCTAssertEqual(try history(fresh).count, 0)
            XCTAssertEqual(try count(fresh, "Trip"), 0)
            // A committed outer transaction records each inner save.
            try session.transaction {
                _ = try ctx.insert(entity: "Trip", json: #"{"name": "C"}"#)
                try ctx.save()
                _ = try ctx.insert(entity: "Trip", json: #"{"name": "D"}"#)
                try ctx.save()
            }
            let all = try history(fresh)
            // (Object keys the rolled-back saves handed out are not reused; tokens are.)
            XCTAssertEqual(all.map(lines), [["insert Trip/3"], ["insert Trip/4"]])
            XCTAssertEqual(all.compactMap { $0["token"]?.stringValue }.map(sequence), [1, 2])
        }
    }

    func testConsecutiveInsertsShareOneRow() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let items = (1...50).map { #"{"title": "i\#($0)"}"# }.joined(separator: ",")
            _ = try ctx.insertMany(entity: "Item", json: "[\(items)]")
            try ctx.save()
            XCTAssertEqual(try rowCount(storePath(), "strata_history_change"), 1)
            let all = try history(ctx)
            XCTAssertEqual(all.count, 1)
            XCTAssertEqual(lines(all[0]), (1...50).map { "insert Item/\($0)" })
            // Deletes without tombstones share a row too; trips with tombstones do not.
            for i in 1...3 { _ = try ctx.insert(entity: "Trip", json: #"{"name": "t\#(i)"}"#) }
            try ctx.save()
            XCTAssertEqual(try rowCount(storePath(), "strata_history_change"), 2)
            for i in 1...3 { try ctx.delete(id: "Trip/\(i)") }
            try ctx.save()
            XCTAssertEqual(try rowCount(storePath(), "strata_history_change"), 5)
            XCTAssertEqual(try history(ctx).last.map(lines), (1...3).map { #"delete Trip/\#($0) tombstone={"name":"t\#($0)","start":null}"# })
        }
    }

    func testHistoryOffRecordsNothing() throws {
        forEachHistorySetup {
            let c = try openHistory { $0.history = false }
            let ctx = try c.makeContext()
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "A"}"#)
            try ctx.save()
            XCTAssertEqual(try history(ctx).count, 0)
        }
    }
    func testInsertThenDeleteInOneSaveAndEmptySavesRecordNothing() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            let t = try ctx.insert(entity: "Trip", json: #"{"name": "gone"}"#)
            try ctx.delete(id: t.description)
            try ctx.save()
            try ctx.save()
            XCTAssertEqual(try history(ctx).count, 0)
            if try tableNames(storePath()).contains("strata_history_transaction") {
                XCTAssertEqual(try rowCount(storePath(), "strata_history_transaction"), 0)
            }
            // A save's change set carries its token.
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "kept"}"#)
            let changes = try ctx.save()
            XCTAssertEqual(changes.token, try tokens(ctx).first)
        }
    }

    func testInMemoryStoreKeepsHistory() throws {
        let c = try openInMemory(HistoryTestCase.schemaJSON) { $0.author = "mem" }
        let ctx = try c.makeContext()
        let t = try ctx.insert(entity: "Trip", json: #"{"name": "A"}"#)
        try ctx.save()
        try ctx.update(id: t.description, patch: #"{"name": "B"}"#)
        try ctx.save()
        let all = try history(ctx)
        XCTAssertEqual(all.map(lines), [["insert Trip/1"], [#"update Trip/1 [name] old={"name":"A"} new={"name":"B"}"#]])
        XCTAssertEqual(all.map { $0["author"]?.stringValue }, ["mem", "mem"])
    }
    func testUpsertAndDeleteMatching() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "items": [{"title": "a"}]}"#)
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "Rome"}"#)
            try ctx.save()
            // An upsert onto the saved Paris is an update of it.
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "notes": "again"}"#)
            try ctx.save()
            // (The attributes an upsert writes count as changed, its unique key included.)
            let upsert = try XCTUnwrap(history(ctx).last?["changes"]?.array)
            XCTAssertEqual(upsert.count, 1)
            XCTAssertEqual(upsert.first?["kind"], .string("update"))
            XCTAssertEqual(upsert.first?["id"], .string("Trip/1"))
            XCTAssertEqual(upsert.first?["attributes"]?.array?.contains(.string("notes")), true)
            // A delete by predicate: tombstones and cascades as one by one.
            var d = FetchDescriptor(entity: try XCTUnwrap(ctx.schema.entity(named: "Trip")))
            d.includePendingChanges = true
            XCTAssertEqual(try ctx.delete(matching: d), 2)
            try ctx.save()
            XCTAssertEqual(Set(try history(ctx).last.map(lines) ?? []), [
                #"delete Trip/1 tombstone={"name":"Paris","start":null}"#,
                #"delete Trip/2 tombstone={"name":"Rome","start":null}"#,
                "delete Item/1",
            ])
        }
    }
}
