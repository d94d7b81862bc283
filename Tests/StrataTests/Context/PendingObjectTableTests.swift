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
}
