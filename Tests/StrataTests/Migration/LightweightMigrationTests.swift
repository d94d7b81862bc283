import XCTest
@testable import Strata

/// One test per inference rule: a store at version A with data, opened at version B,
/// every value where it belongs and every identifier unchanged.
final class LightweightMigrationTests: MigrationTestCase {
    static let tripV1 = #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}, {"name": "end_date", "type": "date", "optional": true}]}"#

    func testRenameAttributesThroughOriginalNameInPlace() throws {
        let ids = try makeStore(schema("1.0.0", Self.tripV1), [("Trip", #"{"name": "Paris", "start_date": "2026-01-01T00:00:00Z", "end_date": 100}"#),
                                                               ("Trip", #"{"name": "Rome"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "startDate", "type": "date", "optional": true, "originalName": "start_date"}, {"name": "endDate", "type": "date", "optional": true, "originalName": "end_date"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), Set(ids))
        XCTAssertEqual(value(all, ids[0], "startDate"), .string("2026-01-01T00:00:00Z"))
        XCTAssertEqual(value(all, ids[0], "endDate"), .string("1970-01-01T00:01:40Z"))
        XCTAssertEqual(value(all, ids[1], "name"), .string("Rome"))
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "endDate", "name", "startDate"])
    }
}
