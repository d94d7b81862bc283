import XCTest
@testable import Strata

/// How a session reserves primary keys (``KeyBlocks``): in blocks that double from 64 to
/// 65,536 keys, each block one reservation (a write transaction of its own).
final class KeyBlocksTests: XCTestCase {
    /// A store's sequences as `reserve` sees them: the next key of each root.
    private struct Sequences {
        var next: [String: Int64] = [:]
        var reservations: [(root: String, want: Int64)] = []

        mutating func reserve(_ root: String, _ want: Int64) -> Int64 {
            let start = next[root, default: 1]
            next[root] = start + want
            reservations.append((root, want))
            return start
        }
    }

    func testBlocksDoubleFrom64ToTheLargestAndStayThere() {
        var blocks = KeyBlocks()
        var store = Sequences()
        for _ in 0..<300_000 {
            _ = blocks.take("Trip", count: 1) { store.reserve("Trip", $0) }
        }
        XCTAssertEqual(store.reservations.map(\.want),
                       [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 65536, 65536, 65536])
        XCTAssertEqual(KeyBlocks.largestBlock, 65_536)
    }

    /// The bench's bulk insert: each trip, its accommodation and its three bucket-list items,
    /// three hierarchies. Blocks of at most 4,096 keys took 128 reservations.
    func testABulkInsertOfThreeHierarchiesReservesEighteenTimesAndNeverRepeatsAKey() {
        var blocks = KeyBlocks()
        var store = Sequences()
        var last: [String: Int64] = [:]
        for _ in 0..<100_000 {
            for root in ["Trip", "LivingAccommodation", "BucketListItem", "BucketListItem", "BucketListItem"] {
                let key = blocks.take(root, count: 1) { store.reserve(root, $0) }
                XCTAssertGreaterThan(key, last[root, default: 0], "\(root): a key handed out twice or out of order")
                last[root] = key
            }
        }
        XCTAssertEqual(store.reservations.count, 18)
        XCTAssertEqual(last, ["Trip": 100_000, "LivingAccommodation": 100_000, "BucketListItem": 300_000],
                       "the keys of each hierarchy are consecutive: one session inserting alone leaves no gap")
        XCTAssertTrue(store.reservations.allSatisfy { $0.want <= KeyBlocks.largestBlock })
    }

    func testATakeLargerThanTheBlockReservesExactlyWhatItTakes() {
        var blocks = KeyBlocks()
        var store = Sequences()
        XCTAssertEqual(blocks.take("Trip", count: 100_000) { store.reserve("Trip", $0) }, 1)
        XCTAssertEqual(store.reservations.map(\.want), [100_000])
        // The block is used up: the next key comes from a new block, after it.
        XCTAssertEqual(blocks.take("Trip", count: 1) { store.reserve("Trip", $0) }, 100_001)
        XCTAssertEqual(store.reservations.map(\.want), [100_000, 128])
    }

    func testADroppedBlockHandsOutNoMoreKeys() {
        var blocks = KeyBlocks()
        var store = Sequences()
        XCTAssertEqual(blocks.take("Trip", count: 1) { store.reserve("Trip", $0) }, 1)
        blocks.drop("Trip")
        // Keys 2...64 were reserved but are skipped: the next comes from a new reservation.
        XCTAssertEqual(blocks.take("Trip", count: 1) { store.reserve("Trip", $0) }, 65)
        XCTAssertEqual(store.reservations.count, 2)
    }

    /// A failed reservation hands out nothing and keeps no block.
    func testAFailedReservationHandsOutNothing() {
        struct Refused: Error {}
        var blocks = KeyBlocks()
        XCTAssertThrowsError(try blocks.take("Trip", count: 1) { _ in throw Refused() })
        XCTAssertTrue(blocks.blocks.isEmpty)
    }
}

/// A reservation commits at `synchronous=NORMAL` (a later synced commit covers it, and every
/// save that uses its keys is one): the connection is back at FULL for everything after it,
/// whether the reservation committed or failed.
final class KeyReservationSyncTests: StoreTestCase {
    private var path: String { storePath() }

    /// The connection's `PRAGMA synchronous` (2: FULL, 1: NORMAL).
    private func synchronous(_ context: ModelContext) throws -> Int64 {
        let s = try Statement(connection: try XCTUnwrap(context.session as? SQLiteSession).connection, sql: "PRAGMA synchronous")
        XCTAssertTrue(try s.step())
        return s.int64(0)
    }

    func testAReservationLeavesTheConnectionSyncingSaves() throws {
        let context = try openFile().makeContext()
        XCTAssertEqual(try synchronous(context), 2)
        let id = try context.insert(entity: "Trip", json: #"{"name": "Lima", "startDate": 6, "endDate": 7}"#)
        XCTAssertEqual(id.pk, 1, "the first key of the store's first block")
        XCTAssertEqual(try synchronous(context), 2, "after a reservation, saves are synced again")
        try context.save()
        XCTAssertEqual(try rows(path, "SELECT next FROM strata_sequence WHERE entity = 'Trip'"), [[.int(65)]],
                       "the block of 64 keys is reserved in the store")
    }

    /// Only a write-ahead log lets a reservation go unsynced: a store file is in WAL mode, a
    /// store in memory is not (and has nothing to sync).
    func testOnlyAWriteAheadLogLetsAReservationGoUnsynced() throws {
        let file = try openFile().makeContext()
        XCTAssertTrue(try XCTUnwrap(file.session as? SQLiteSession).isInWALMode())
        let memory = try openInMemory().makeContext()
        XCTAssertFalse(try XCTUnwrap(memory.session as? SQLiteSession).isInWALMode())
        let id = try memory.insert(entity: "Trip", json: #"{"name": "Lima", "startDate": 6, "endDate": 7}"#)
        try memory.save()
        XCTAssertEqual(id.pk, 1)
        XCTAssertEqual(try synchronous(memory), 2, "a connection not in WAL mode never leaves FULL")
    }

    func testAFailedReservationLeavesTheConnectionSyncingSavesToo() throws {
        let container = try openFile()
        let c = try Connection(path: path, readOnly: false, create: false)
        try c.execute(script: "UPDATE strata_sequence SET next = 'used up' WHERE entity = 'Trip'")
        let context = try container.makeContext()
        assertError(.corrupt) { _ = try context.insert(entity: "Trip", json: #"{"name": "Lima", "startDate": 6, "endDate": 7}"#) }
        XCTAssertEqual(try synchronous(context), 2)
    }
}
