import XCTest
@testable import Strata

/// The table of a context's pending inserts: one value per object of a hierarchy, found by
/// any entity of that hierarchy, whatever order keys are added and removed in.
final class PendingObjectTableTests: XCTestCase {
    func testValuesByHierarchyAndKeyInAnyOrder() throws {
        let schema = try SchemaDecoder.decode(Fixtures.sampleTrips)
        let trip = try XCTUnwrap(schema.entity(named: "Trip"))
        let business = try XCTUnwrap(schema.entity(named: "BusinessTrip"))
        let item = try XCTUnwrap(schema.entity(named: "BucketListItem"))
        var table = PendingObjectTable<Int>()
        // Ascending (appends), then below and between (insertions), in two hierarchies.
        for pk: Int64 in [5, 9, 12, 1, 7] { table[ObjectID(entity: pk == 9 ? business : trip, pk: pk)] = Int(pk) * 10 }
        table[ObjectID(entity: item, pk: 5)] = -5
        for pk: Int64 in [1, 5, 7, 9, 12] {
            XCTAssertEqual(table[ObjectID(entity: trip, pk: pk)], Int(pk) * 10, "Trip/\(pk)")
            XCTAssertEqual(table[ObjectID(entity: business, pk: pk)], Int(pk) * 10, "found through a subentity: \(pk)")
        }
        for pk: Int64 in [0, 2, 6, 8, 10, 13] { XCTAssertNil(table[ObjectID(entity: trip, pk: pk)], "no Trip/\(pk)") }
        XCTAssertEqual(table[ObjectID(entity: item, pk: 5)], -5)
        XCTAssertNil(table[ObjectID(entity: item, pk: 1)])
        // Replacing, then removing from the middle, the end and the start; removing a missing key is nothing.
        table[ObjectID(entity: trip, pk: 7)] = 77
        XCTAssertEqual(table[ObjectID(entity: trip, pk: 7)], 77)
        for pk: Int64 in [7, 12, 1, 3] { table[ObjectID(entity: trip, pk: pk)] = nil }
        XCTAssertEqual([1, 5, 7, 9, 12].map { table[ObjectID(entity: trip, pk: $0)] }, [nil, 50, nil, 90, nil])
        XCTAssertEqual(table[ObjectID(entity: item, pk: 5)], -5, "another hierarchy is untouched")
        table.removeAll()
        XCTAssertNil(table[ObjectID(entity: trip, pk: 5)])
        XCTAssertNil(table[ObjectID(entity: item, pk: 5)])
    }

    /// Keys in descending order, holes left in the middle and at the end, and keys added again
    /// after them: every answer that of a dictionary given the same changes.
    func testAnyOrderOfAddsAndRemovesAnswersAsADictionary() throws {
        let schema = try SchemaDecoder.decode(Fixtures.sampleTrips)
        let trip = try XCTUnwrap(schema.entity(named: "Trip"))
        var table = PendingObjectTable<Int>()
        var expected: [Int64: Int] = [:]
        func set(_ pk: Int64, _ v: Int?) {
            table[ObjectID(entity: trip, pk: pk)] = v
            expected[pk] = v
        }
        for pk in stride(from: Int64(2_000), through: 1_000, by: -1) { set(pk, Int(pk)) }      // descending
        for pk in Int64(3_000)...3_500 { set(pk, Int(pk)) }                                     // ascending
        for pk in stride(from: Int64(3_100), through: 3_500, by: 7) { set(pk, nil) }            // holes, the end among them
        for pk in Int64(3_400)...3_500 { set(pk, nil) }                                          // the end gone
        for pk in [Int64(3_450), 1_500, 3_105, 2_500, 3_600, 3_200] { set(pk, -Int(pk)) }       // back, and new
        for pk in stride(from: Int64(1_000), through: 1_500, by: 3) { set(pk, nil) }
        set(3_450, 1)
        var state: UInt64 = 42
        for _ in 0..<5_000 {                                                                     // and at random
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let pk = Int64((state >> 33) % 4_000)
            set(pk, (state >> 20) % 3 == 0 ? nil : Int(pk) + 7)
        }
        for pk in Int64(0)...4_000 {
            XCTAssertEqual(table[ObjectID(entity: trip, pk: pk)], expected[pk], "Trip/\(pk)")
        }
    }
}
