import Foundation
import XCTest
@testable import Strata

/// The store seam: outer transactions with savepoint saves, save participants
/// and observers, contexts on a bare session, and reads with pending changes
/// that never take the write lock.
final class StoreSeamTests: StoreTestCase {
    private func trip(_ name: String) -> String {
        #"{"name": "\#(name)", "startDate": "2026-05-01T00:00:00Z", "endDate": "2026-05-02T00:00:00Z"}"#
    }

    // MARK: Outer transactions

    func testSavesInsideARolledBackTransactionPersistNothing() throws {
        forEachSetup { h in
            let session = try h.container.store.makeSession()
            let context = ModelContext(session: session, schema: h.container.schema)
            struct Abort: Error {}
            XCTAssertThrowsError(try session.transaction {
                _ = try context.insert(entity: "Trip", json: trip("Lisbon"))
                try context.save()
                _ = try context.insert(entity: "Trip", json: trip("Porto"))
                try context.save()
                // Inside the transaction the saves are visible to the context that made them.
                XCTAssertEqual(try count(context, "Trip"), 2)
                throw Abort()
            }) { XCTAssertTrue($0 is Abort) }
            XCTAssertFalse(session.isInTransaction)
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 0, "\(h.setup): a rolled-back outer transaction keeps nothing")
            XCTAssertEqual(try count(context, "Trip"), 0)
        }
    }

    func testSavesInsideACommittedTransactionPersistTogether() throws {
        forEachSetup { h in
            let session = try h.container.store.makeSession()
            let context = ModelContext(session: session, schema: h.container.schema)
            var seen: [ChangeSet] = []
            let token = h.container.store.saveHooks.addObserver { seen.append($0) }
            defer { h.container.store.saveHooks.remove(token) }
            try session.transaction {
                _ = try context.insert(entity: "Trip", json: trip("Lisbon"))
                try context.save()
                _ = try context.insert(entity: "Trip", json: trip("Porto"))
                try context.save()
                XCTAssertEqual(seen.count, 0, "observers hear of saves only once the outer transaction commits")
            }
            XCTAssertEqual(seen.count, 1)
            XCTAssertEqual(seen.first?.inserted.map(\.description), ["Trip/1", "Trip/2"])
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 2)
        }
    }

    func testAFailingSaveInsideATransactionUndoesOnlyItself() throws {
        forEachSetup { h in
            let session = try h.container.store.makeSession()
            let context = ModelContext(session: session, schema: h.container.schema)
            try session.transaction {
                _ = try context.insert(entity: "Trip", json: trip("Lisbon"))
                try context.save()
                // Two contexts insert the same unique key; the second save collides at save time
                // (with "_onConflict": "error": an upsert would update the first one's trip).
                let other = ModelContext(session: session, schema: h.container.schema)
                _ = try other.insert(entity: "Trip", json: trip("Porto").dropLast() + #", "_onConflict": "error"}"#)
                _ = try context.insert(entity: "Trip", json: trip("Porto"))
                try context.save()
                self.assertError(.constraint) { try other.save() }
                XCTAssertTrue(other.hasChanges)
                XCTAssertTrue(session.isInTransaction, "a failed save leaves the outer transaction open")
            }
            try h.reopen()
            XCTAssertEqual(try fetch(h.context, "Trip").compactMap { $0.member("name")?.stringValue }.sorted(), ["Lisbon", "Porto"])
        }
    }

    func testKeysReservedInARolledBackTransactionAreNeverHandedOutAgain() throws {
        let path = storePath()
        let container = try openFile(path: path)
        let session = try container.store.makeSession()
        let context = ModelContext(session: session, schema: container.schema)
        struct Abort: Error {}
        var kept: ObjectID?
        XCTAssertThrowsError(try session.transaction {
            kept = try context.insert(entity: "Trip", json: trip("Inside"))
            throw Abort()
        })
        // The insert stays pending; another connection now inserts and saves.
        let other = try openFile(path: path).makeContext()
        let theirs = try other.insert(entity: "Trip", json: trip("Other"))
        try other.save()
        XCTAssertNotEqual(theirs, kept)
        try context.save()
        XCTAssertEqual(try count(try container.makeContext(), "Trip"), 2)
    }

    func testExternalFilesOfARolledBackTransactionAreRemoved() throws {
        let path = storePath()
        let container = try openFile(path: path) { $0.externalStorageThreshold = 4 }
        let session = try container.store.makeSession()
        let context = ModelContext(session: session, schema: container.schema)
        struct Abort: Error {}
        XCTAssertThrowsError(try session.transaction {
            _ = try context.insert(entity: "Trip", json: #"{"name": "A", "startDate": 0, "endDate": 1, "photo": "AAECAwQFBgc="}"#)
            try context.save()
            XCTAssertEqual(filesIn(path + ".strata").count, 1)
            throw Abort()
        })
        XCTAssertEqual(filesIn(path + ".strata"), [])
    }

    // MARK: Participants and observers

    func testParticipantsRunInsideTheSaveAndCanFailIt() throws {
        forEachSetup { h in
            let store = h.container.store
            var calls: [(ChangeSet, Bool)] = []
            let token = store.saveHooks.addParticipant { changes, session in calls.append((changes, session.isInTransaction)) }
            _ = try h.context.insert(entity: "Trip", json: trip("Lisbon"))
            try h.context.save()
            XCTAssertEqual(calls.count, 1)
            XCTAssertEqual(calls.first?.0.inserted.map(\.description), ["Trip/1"])
            XCTAssertEqual(calls.first?.1, true, "participants run inside the save's transaction")
            store.saveHooks.remove(token)

            struct Refused: Error {}
            let failing = store.saveHooks.addParticipant { _, _ in throw Refused() }
            _ = try h.context.insert(entity: "Trip", json: trip("Porto"))
            XCTAssertThrowsError(try h.context.save()) { XCTAssertTrue($0 is Refused) }
            XCTAssertTrue(h.context.hasChanges, "a refused save keeps the pending changes")
            store.saveHooks.remove(failing)
            let other = try h.container.makeContext()
            XCTAssertEqual(try count(other, "Trip", pending: false), 1, "nothing of the refused save was committed")
        }
    }

    func testObserversHearOfEachCommittedSave() throws {
        let container = try openFile()
        var heard: [String] = []
        let token = container.store.saveHooks.addObserver { heard.append($0.json) }
        let context = try container.makeContext()
        _ = try context.insert(entity: "Trip", json: trip("Lisbon"))
        try context.save()
        try context.delete(id: "Trip/1")
        try context.save()
        container.store.saveHooks.remove(token)
        _ = try context.insert(entity: "Trip", json: trip("Porto"))
        try context.save()
        XCTAssertEqual(heard.count, 2)
        XCTAssertEqual(JSONValue.of(heard[0]).member("inserted"), JSONValue.of(#"{"Trip": ["Trip/1"]}"#))
        XCTAssertEqual(JSONValue.of(heard[1]).member("deleted"), JSONValue.of(#"{"Trip": [{"id": "Trip/1"}]}"#))
    }

    // MARK: Reads with pending changes

    func testAReadWithPendingChangesDoesNotWaitForAnotherWriter() throws {
        let path = storePath()
        let container = try openFile(path: path)
        let reader = try container.makeContext()
        _ = try reader.insert(entity: "Trip", json: #"{"name": "Saved", "startDate": 0, "endDate": 1, "bucketList": [{"title": "a"}]}"#)
        try reader.save()
        // Pending: an insert, an update, a cascading delete.
        _ = try reader.insert(entity: "Trip", json: #"{"name": "Pending", "startDate": 0, "endDate": 2}"#)
        try reader.update(id: "Trip/1", patch: #"{"destination": "Rome"}"#)

        // Another container (another connection) holds the write lock for the whole read.
        let writerContainer = try openFile(path: path)
        let writer = try writerContainer.store.makeSession()
        try writer.transaction {
            let c = ModelContext(session: writer, schema: writerContainer.schema)
            _ = try c.insert(entity: "Trip", json: #"{"name": "Uncommitted", "startDate": 0, "endDate": 3}"#)
            try c.save()
            let started = Date()
            let names = try fetch(reader, "Trip").compactMap { $0.member("name")?.stringValue }.sorted()
            XCTAssertEqual(names, ["Pending", "Saved"])
            XCTAssertEqual(try get(reader, "Trip/1").member("destination")?.stringValue, "Rome")
            XCTAssertEqual(try count(reader, "BucketListItem"), 1)
            try reader.delete(id: "Trip/1")
            XCTAssertEqual(try count(reader, "BucketListItem"), 0, "the pending cascade shows")
            XCTAssertEqual(try identifiers(reader, "Trip"), ["Trip/2"])
            // The busy timeout is 10 s: a read that waited for the lock would take that long and fail.
            XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        }
        // The overlay left nothing behind: the reader saves its changes as usual.
        try reader.save()
        let fresh = try container.makeContext()
        XCTAssertEqual(try fetch(fresh, "Trip").compactMap { $0.member("name")?.stringValue }.sorted(), ["Pending", "Uncommitted"])
        XCTAssertEqual(try count(fresh, "BucketListItem"), 0)
    }

    func testPendingChangesInsideAnOuterTransactionStayPending() throws {
        forEachSetup { h in
            let session = try h.container.store.makeSession()
            let context = ModelContext(session: session, schema: h.container.schema)
            try session.transaction {
                _ = try context.insert(entity: "Trip", json: trip("Saved"))
                try context.save()
                _ = try context.insert(entity: "Trip", json: trip("Pending"))
                XCTAssertEqual(try count(context, "Trip"), 2)
                XCTAssertEqual(try count(context, "Trip", pending: false), 1, "the read's overlay was undone")
                context.rollback()
            }
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Trip"), ["Trip/1"])
        }
    }
}

extension JSONValue {
    /// The value of `key` in an object.
    func member(_ key: String) -> JSONValue? {
        if case .object(let m) = self { return m.first { $0.0 == key }?.1 }
        return nil
    }
}
