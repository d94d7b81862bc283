import XCTest
@testable import Strata

/// A save of many rows on SQLite holds a larger page cache while it runs
/// (``SQLiteSession/enlargeCacheForSave()``) and gives the connection its own limit back
/// when it ends, committed or not.
final class LargeSaveCacheTests: StoreTestCase {
    private func trips(_ count: Int, from first: Int = 0) -> String {
        "[" + (first..<first + count).map {
            #"{"name": "Trip \#($0)", "startDate": "2026-05-01T00:00:00Z", "endDate": "2026-05-02T00:00:00Z"}"#
        }.joined(separator: ", ") + "]"
    }

    /// The connection's `PRAGMA cache_size`.
    private func cacheSize(_ session: StoreSession) throws -> Int64 {
        let limit = try Statement(connection: try XCTUnwrap(session as? SQLiteSession).connection, sql: SQLiteDialect.cacheSize)
        XCTAssertTrue(try limit.step())
        return limit.int64(0)
    }

    func testALargeSaveHoldsALargerCacheUntilItCommits() throws {
        let container = try openFile()
        let store = container.store
        var during: [Int64] = []
        var saving: StoreSession?
        let token = store.saveHooks.addParticipant { [self] _, session in
            saving = session
            during.append(try cacheSize(session))
        }
        defer { store.saveHooks.remove(token) }
        let context = try container.makeContext()

        _ = try context.insertMany(entity: "Trip", json: trips(10))
        try context.save()
        let session = try XCTUnwrap(saving)
        let own = try cacheSize(session)
        XCTAssertEqual(during, [own], "a save of ten rows keeps the connection's cache")

        _ = try context.insertMany(entity: "Trip", json: trips(SQLiteWriter.largeSave + 10, from: 10))
        try context.save()
        XCTAssertEqual(during.last, -SQLiteSession.largeSaveCacheKiB, "a save of many rows runs with the larger cache")
        XCTAssertEqual(try cacheSize(session), own, "the save's end gives the connection its own limit back")
        XCTAssertEqual(try count(context, "Trip", pending: false), Int64(SQLiteWriter.largeSave + 20))
    }

    func testAFailedLargeSaveGivesTheCacheBackToo() throws {
        let container = try openFile()
        let store = container.store
        struct Refused: Error {}
        var saving: StoreSession?
        var during: Int64?
        var refusing = false
        let token = store.saveHooks.addParticipant { [self] _, session in
            saving = session
            during = try cacheSize(session)
            if refusing { throw Refused() }
        }
        defer { store.saveHooks.remove(token) }
        let context = try container.makeContext()
        // A small save first: the connection's own limit.
        _ = try context.insertMany(entity: "Trip", json: trips(1, from: SQLiteWriter.largeSave))
        try context.save()
        let session = try XCTUnwrap(saving)
        let own = try cacheSize(session)

        refusing = true
        _ = try context.insertMany(entity: "Trip", json: trips(SQLiteWriter.largeSave))
        XCTAssertThrowsError(try context.save()) { XCTAssertTrue($0 is Refused) }
        XCTAssertEqual(during, -SQLiteSession.largeSaveCacheKiB)
        XCTAssertEqual(try cacheSize(session), own, "a rolled-back save gives the connection its own limit back")
        XCTAssertEqual(try count(try container.makeContext(), "Trip", pending: false), 1)
    }
}
