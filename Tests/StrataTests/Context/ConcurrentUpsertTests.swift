import Foundation
import XCTest
@testable import Strata

/// Two contexts (or two containers on one file) inserting the same new unique
/// values: the second save upserts into the object the first one saved, as the
/// insert would have had it seen it ("inserting the same unique values again updates").
final class ConcurrentUpsertTests: StoreTestCase {
    private let paris = #"{"name": "Paris", "startDate": "2026-06-01", "endDate": "2026-06-08""#

    private func pairs(_ sameContainer: Bool) throws -> (ModelContainer, ModelContext, ModelContext) {
        let first = try openFile()
        let second = sameContainer ? first : try openFile()
        return (first, try first.makeContext(), try second.makeContext())
    }

    func testTheSecondSaveUpserts() throws {
        for same in [true, false] {
            try FileManager.default.removeItem(atPath: tempDirectory)
            try FileManager.default.createDirectory(atPath: tempDirectory, withIntermediateDirectories: true)
            let (c, a, b) = try pairs(same)
            let idA = try a.insert(entity: "Trip", json: paris + #", "destination": "A", "bucketList": [{"title": "Louvre"}]}"#)
            let idB = try b.insert(entity: "Trip", json: paris + #", "destination": "B", "bucketList": [{"title": "Orsay"}]}"#)
            XCTAssertNotEqual(idA, idB)
            try a.save()
            let changes = try b.save()
            let all = try fetch(try c.makeContext(), "Trip")
            XCTAssertEqual(all.count, 1, "same container: \(same)")
            XCTAssertEqual(all.first?["_id"]?.stringValue, idA.description)
            XCTAssertEqual(all.first?["destination"], .string("B"), "the second insert's values win")
            XCTAssertEqual(changes.updated.map(\.description), [idA.description], "recorded as an update of the saved object")
            // The second context's nested object links to the object it upserted into.
            let items = try fetch(try c.makeContext(), "BucketListItem")
            XCTAssertEqual(Set(items.compactMap { $0["trip"]?.stringValue }), [idA.description])
            XCTAssertEqual(items.count, 2)
        }
    }

    func testLaterChangesOfTheSameSaveFollowTheUpsert() throws {
        let (c, a, b) = try pairs(true)
        _ = try a.insert(entity: "Trip", json: paris + #", "destination": "A"}"#)
        let idB = try b.insert(entity: "Trip", json: paris + #", "destination": "B"}"#)
        try b.update(id: idB.description, patch: #"{"destination": "B2"}"#)
        let item = try b.insert(entity: "BucketListItem", json: #"{"title": "Seine", "trip": "\#(idB)"}"#)
        try a.save()
        try b.save()
        let trips = try fetch(try c.makeContext(), "Trip")
        XCTAssertEqual(trips.count, 1)
        XCTAssertEqual(trips.first?["destination"], .string("B2"))
        XCTAssertEqual(try get(try c.makeContext(), item)["trip"], trips.first?["_id"])
    }

    func testIgnoreAndErrorAtSave() throws {
        let (c, a, b) = try pairs(true)
        _ = try a.insert(entity: "Trip", json: paris + #", "destination": "A"}"#)
        _ = try b.insert(entity: "Trip", json: paris + #", "destination": "B", "_onConflict": "ignore"}"#)
        try a.save()
        try b.save()
        XCTAssertEqual(try fetch(try c.makeContext(), "Trip").map { $0["destination"] }, [.string("A")])

        let d = try c.makeContext()
        let e = try c.makeContext()
        _ = try d.insert(entity: "Trip", json: #"{"name": "Rome", "startDate": 0, "endDate": 1}"#)
        _ = try e.insert(entity: "Trip", json: #"{"name": "Rome", "startDate": 0, "endDate": 1, "_onConflict": "error"}"#)
        try d.save()
        let err = assertError(.constraint) { try e.save() }
        XCTAssertTrue(err?.message.contains("saved meanwhile") == true, err?.message ?? "")
        XCTAssertTrue(e.hasChanges)
    }

    func testAnUpsertOntoAnotherEntityIsAConstraintError() throws {
        let (_, a, b) = try pairs(true)
        _ = try a.insert(entity: "Trip", json: paris + #", "_entity": "BusinessTrip"}"#)
        _ = try b.insert(entity: "Trip", json: paris + #", "_entity": "PersonalTrip"}"#)
        try a.save()
        assertError(.constraint) { try b.save() }
    }
}
