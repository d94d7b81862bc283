import XCTest
@testable import Strata

/// The layout value: tables, columns, types and indexes computed from a
/// schema, and the DDL generated from it.
final class StoreLayoutTests: StoreTestCase {
    func testSampleTripsLayout() throws {
        let layout = StoreLayout(try makeSchema())
        XCTAssertEqual(layout.tables.map(\.name), ["Trip", "BucketListItem", "LivingAccommodation"])
        let trip = try XCTUnwrap(layout.table(named: "Trip"))
        XCTAssertEqual(trip.columns.map(\.name),
                       ["_pk", "_entity", "name", "destination", "startDate", "endDate", "photo", "perdiem", "reason"])
        XCTAssertEqual(trip.columns.first { $0.name == "startDate" }?.content, .value(.date))
        XCTAssertEqual(trip.columns.first { $0.name == "photo" }?.content, .value(.data))
        // SQLite's types of what the columns hold.
        XCTAssertEqual(trip.columns.map(SQLiteDialect.columnType),
                       ["INTEGER", "TEXT NOT NULL", "TEXT", "TEXT", "REAL", "REAL", "BLOB", "REAL", "TEXT"])
        XCTAssertEqual(trip.externalColumns, ["photo"])
        XCTAssertEqual(trip.primaryKey, ["_pk"])
        XCTAssertTrue(trip.indexes.contains(StoreLayout.Index(name: "Trip.unique(name,startDate,endDate)",
                                                               columns: ["name", "startDate", "endDate"], isUnique: true)))
        // The plain index on the unique constraint's columns would only cost writes.
        XCTAssertFalse(trip.indexes.contains { $0.name == "Trip.index(name,startDate,endDate)" })
        XCTAssertEqual(layout.table(named: "BucketListItem")?.columns.last, StoreLayout.Column(name: "trip", content: .link))
    }

    func testTheDDLCreatesExactlyTheLayout() throws {
        let schema = try makeSchema(ChangeSetTests.library)
        let layout = StoreLayout(schema)
        let path = storePath()
        _ = try openFile(ChangeSetTests.library, path: path)
        for table in layout.tables {
            let info = try rows(path, "SELECT name, type, pk FROM pragma_table_info(?)", [.text(table.name)])
            XCTAssertEqual(info.compactMap { $0[0].text }, table.columns.map(\.name), table.name)
            let keys = info.filter { $0[2] != .int(0) }.compactMap { $0[0].text }
            XCTAssertEqual(keys, table.primaryKey, table.name)
            let indexes = try rows(path, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [.text(table.name)])
            XCTAssertEqual(Set(indexes.compactMap { $0[0].text }), Set(table.indexes.map(\.name)), table.name)
        }
        XCTAssertTrue(layout.tables.contains { $0.withoutRowID && $0.primaryKey == ["_source", "_target"] }, "the shelf/book join table")
    }

    func testDeclarationsThatDoNotChangeStorageKeepTheLayout() throws {
        let a = StoreLayout(try makeSchema(Fixtures.schema(attributes: #"{"name": "n", "type": "string", "default": "x"}"#)))
        let b = StoreLayout(try makeSchema(Fixtures.schema(attributes: #"{"name": "n", "type": "string", "default": "y"}"#)))
        let c = StoreLayout(try makeSchema(Fixtures.schema(attributes: #"{"name": "n", "type": "int"}"#)))
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, c)
    }
}
