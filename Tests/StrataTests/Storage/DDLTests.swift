import Foundation
import XCTest
@testable import Strata

/// The SQLite layout a schema creates (DESIGN §5), and how opening treats
/// existing files: the same schema, another schema, files that are not Strata stores.
final class DDLTests: StoreTestCase {

    /// Index name -> (unique, columns) for a table.
    func indexes(_ path: String, table: String) throws -> [String: (unique: Bool, columns: [String])] {
        var out: [String: (Bool, [String])] = [:]
        for row in try rows(path, "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin = 'c'", [.text(table)]) {
            guard let name = row[0].text else { continue }
            let cols = try rows(path, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(name)]).compactMap(\.first?.text)
            out[name] = (row[1].int == 1, cols)
        }
        return out
    }

    func testSampleTripsCreatesOneTablePerRootEntity() throws {
        let path = storePath()
        _ = try openFile(path: path)
        XCTAssertEqual(try tableNames(path), ["Trip", "BucketListItem", "LivingAccommodation", "strata_metadata", "strata_sequence"])
    }

    func testColumns() throws {
        let path = storePath()
        _ = try openFile(path: path)
        // Subentity attributes live in the root's table; the transient tripViews has no column;
        // Trip.livingAccommodation is held by its one-to-one inverse LivingAccommodation.trip.
        XCTAssertEqual(try columnNames(path, table: "Trip"),
                       ["_pk", "_entity", "name", "destination", "startDate", "endDate", "photo", "perdiem", "reason"])
        XCTAssertEqual(try columnNames(path, table: "BucketListItem"),
                       ["_pk", "_entity", "title", "details", "hasReservation", "isInPlan", "trip"])
        XCTAssertEqual(try columnNames(path, table: "LivingAccommodation"), ["_pk", "_entity", "address", "placeName", "trip"])
        let types = try rows(path, "SELECT name, type, pk, \"notnull\" FROM pragma_table_info('Trip')")
        let byName = Dictionary(uniqueKeysWithValues: types.map { ($0[0].text ?? "", $0) })
        XCTAssertEqual(byName["_pk"]?[1], .text("INTEGER"))
        XCTAssertEqual(byName["_pk"]?[2], .int(1))
        XCTAssertEqual(byName["_entity"]?[3], .int(1))
        XCTAssertEqual(byName["name"]?[1], .text("TEXT"))
        XCTAssertEqual(byName["startDate"]?[1], .text("REAL"))
        XCTAssertEqual(byName["photo"]?[1], .text("BLOB"))
        XCTAssertEqual(byName["perdiem"]?[1], .text("REAL"))
        let bucket = try rows(path, "SELECT name, type FROM pragma_table_info('BucketListItem')")
        XCTAssertTrue(bucket.contains([.text("hasReservation"), .text("INTEGER")]))
        XCTAssertTrue(bucket.contains([.text("trip"), .text("INTEGER")]))
    }

    func testIndexes() throws {
        let path = storePath()
        _ = try openFile(path: path)
        let trip = try indexes(path, table: "Trip")
        let uniques = trip.values.filter(\.unique).map(\.columns)
        XCTAssertEqual(uniques, [["name", "startDate", "endDate"]])
        let plain = Set(trip.values.filter { !$0.unique }.map { $0.columns.joined(separator: ",") })
        // The hierarchy's discriminator and each declared index; [name, startDate, endDate] is already the unique index.
        XCTAssertEqual(plain, ["_entity", "name", "startDate", "endDate"])
        XCTAssertEqual(trip.count, 5, "no redundant index: \(trip.keys.sorted())")
        // Foreign-key columns are indexed (cascade and nullify look rows up by them).
        XCTAssertEqual(try indexes(path, table: "BucketListItem").values.map(\.columns), [["trip"]])
        XCTAssertEqual(try indexes(path, table: "LivingAccommodation").values.map(\.columns), [["trip"]])
    }

    func testUniqueAttributeAndJoinTable() throws {
        let path = storePath()
        _ = try openFile(#"""
            {"version": "1", "entities": [
              {"name": "Tag", "attributes": [{"name": "label", "type": "string", "unique": true, "index": true}],
               "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "tags"}]},
              {"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}],
               "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]}]}
            """#, path: path)
        XCTAssertEqual(try tableNames(path), ["Tag", "Trip", "Tag_trips", "strata_metadata", "strata_sequence"])
        XCTAssertEqual(try columnNames(path, table: "Tag_trips"), ["_source", "_target"])
        XCTAssertEqual(try indexes(path, table: "Tag").values.map { [$0.unique ? "unique" : "index"] + $0.columns }, [["unique", "label"]])
        XCTAssertEqual(try indexes(path, table: "Trip").values.map { [$0.unique ? "unique" : "index"] + $0.columns }, [["index", "name"]])
        // Both directions of the join table are indexed: the primary key and the reverse index.
        XCTAssertEqual(try indexes(path, table: "Tag_trips").values.map(\.columns), [["_target", "_source"]])
    }

    func testWALModeAndMetadata() throws {
        let path = storePath()
        let container = try openFile(path: path)
        XCTAssertEqual(try scalar(path, "PRAGMA journal_mode"), .text("wal"))
        let schema = container.schema
        XCTAssertEqual(try scalar(path, "SELECT value FROM strata_metadata WHERE key = 'version'"), .text("1.0.0"))
        XCTAssertEqual(try scalar(path, "SELECT value FROM strata_metadata WHERE key = 'versionHash'"), .text(schema.versionHash))
        let stored = try XCTUnwrap(scalar(path, "SELECT value FROM strata_metadata WHERE key = 'schema'")?.text)
        XCTAssertEqual(try SchemaDecoder.decode(stored).versionHash, schema.versionHash)
        let uuid = try XCTUnwrap(scalar(path, "SELECT value FROM strata_metadata WHERE key = 'storeUUID'")?.text)
        XCTAssertEqual(uuid, (container.store as! SQLiteStore).storeUUID)
        XCTAssertEqual(uuid.count, 36)
        XCTAssertEqual(try rows(path, "SELECT entity FROM strata_sequence ORDER BY entity").compactMap(\.first?.text),
                       ["BucketListItem", "LivingAccommodation", "Trip"])
    }

    func testReopeningWithTheSameSchemaKeepsTheData() throws {
        let path = storePath()
        var uuid = ""
        do {
            let container = try openFile(path: path)
            uuid = (container.store as! SQLiteStore).storeUUID
            let context = try container.makeContext()
            _ = try context.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": 0, "endDate": 86400}"#)
            try context.save()
        }
        // The same schema written differently (key order, whitespace) is the same storage.
        let reordered = Fixtures.sampleTrips.replacingOccurrences(of: "\n", with: " ")
        let container = try openFile(reordered, path: path)
        XCTAssertEqual((container.store as! SQLiteStore).storeUUID, uuid)
        let context = try container.makeContext()
        XCTAssertEqual(try count(context, "Trip"), 1)
        XCTAssertEqual(try fetch(context, "Trip").first?["name"], .string("Paris"))
    }

    func testReopeningWithADifferentSchemaFailsNamingTheChange() throws {
        let path = storePath()
        do {
            let context = try openFile(path: path).makeContext()
            _ = try context.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": 0, "endDate": 86400}"#)
            try context.save()
        }
        let before = try XCTUnwrap(fileBytes(path))
        let changed = Fixtures.sampleTrips
            .replacingOccurrences(of: #""version": "1.0.0""#, with: #""version": "2.0.0""#)
            .replacingOccurrences(of: #"{"name": "destination", "type": "string", "optional": true}"#,
                                  with: #"{"name": "destination", "type": "int", "optional": true}"#)
        // A type change cannot be inferred: the migration is refused, naming the entity, the attribute and the change.
        let e = assertError(.migration) { try openFile(changed, path: path) }
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "destination")
        XCTAssertTrue(e?.message.contains("changes type from string to int") == true, e?.message ?? "")
        XCTAssertTrue(e?.message.contains("1.0.0") == true && e?.message.contains("2.0.0") == true, e?.message ?? "")
        XCTAssertTrue(fileBytes(path) == before, "the file changed")
        // The store still opens with its own schema.
        XCTAssertEqual(try count(openFile(path: path).makeContext(), "Trip"), 1)
    }

    func testAddedEntityIsNamedWhenAutomaticMigrationIsOff() throws {
        let path = storePath()
        _ = try openFile(Fixtures.schema(attributes: #"{"name": "x", "type": "int"}"#), path: path)
        let added = #"{"version": "1.0.0", "entities": [{"name": "Thing", "attributes": [{"name": "x", "type": "int"}]}, {"name": "Other"}]}"#
        let e = assertError(.incompatibleStore) { try openFile(added, path: path) { $0.automaticMigration = false } }
        XCTAssertTrue(e?.message.contains("entity 'Other' added") == true, e?.message ?? "")
        // With automatic migration (the default), the entity is added.
        XCTAssertEqual(try count(openFile(added, path: path).makeContext(), "Other"), 0)
        XCTAssertTrue(try tableNames(path).contains("Other"))
    }

    func testANonSQLiteFileFailsAndIsLeftUntouched() throws {
        let path = storePath()
        let bytes = Array("This is a text file a user cares about, not a database.\n".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let e = assertError(.incompatibleStore) { try openFile(path: path) }
        XCTAssertTrue(e?.message.contains("not a SQLite database") == true, e?.message ?? "")
        XCTAssertTrue(fileBytes(path) == bytes, "the file changed")
        XCTAssertEqual(filesIn(tempDirectory), ["store.sqlite"], "no side files")
        // A file shorter than a SQLite header too.
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        assertError(.incompatibleStore) { try openFile(path: path) }
        XCTAssertEqual(fileBytes(path), [1, 2, 3])
    }

    func testASQLiteFileWithoutStrataMetadataFailsAndIsLeftUntouched() throws {
        let path = storePath()
        do {
            let c = try Connection(path: path, readOnly: false, create: true)
            try c.execute(script: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')")
        }
        let before = try XCTUnwrap(fileBytes(path))
        let e = assertError(.incompatibleStore) { try openFile(path: path) }
        XCTAssertTrue(e?.message.contains("strata_metadata") == true, e?.message ?? "")
        XCTAssertTrue(fileBytes(path) == before, "the file changed")
        XCTAssertEqual(try tableNames(path), ["notes"])
        // Read-only too.
        assertError(.incompatibleStore) { try openFile(path: path) { $0.readOnly = true } }
        XCTAssertTrue(fileBytes(path) == before, "the file changed")
    }

    func testASQLiteFileWithOnlyAViewOrAUserVersionIsLeftUntouched() throws {
        for (name, sql) in [("view", "CREATE VIEW answer AS SELECT 42 AS value"), ("version", "PRAGMA user_version = 7"),
                            ("app", "PRAGMA application_id = 1234")] {
            let path = storePath(name)
            do {
                let c = try Connection(path: path, readOnly: false, create: true)
                try c.execute(script: sql)
            }
            let before = try XCTUnwrap(fileBytes(path))
            XCTAssertGreaterThan(before.count, 0)
            let e = assertError(.incompatibleStore) { try openFile(path: path) }
            XCTAssertTrue(e?.message.contains("not a Strata store") == true, e?.message ?? "")
            XCTAssertTrue(fileBytes(path) == before, "\(name): the file changed")
            XCTAssertEqual(try tableNames(path), [], name)
        }
    }

    func testAnEmptyFileBecomesAStore() throws {
        let path = storePath()
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        _ = try openFile(path: path)
        XCTAssertTrue(try tableNames(path).contains("strata_metadata"))
    }

    func testInMemoryStoreWritesNoFile() throws {
        let container = try openInMemory()
        let a = try container.makeContext()
        let b = try container.makeContext()
        let id = try a.insert(entity: "Trip", json: #"{"name": "Rome", "startDate": 0, "endDate": 1}"#)
        XCTAssertEqual(try count(b, "Trip"), 0, "another context sees only saved objects")
        try a.save()
        XCTAssertEqual(try get(b, id)["name"], .string("Rome"))
        XCTAssertEqual((container.store as! SQLiteStore).path, ":memory:")
        XCTAssertEqual(filesIn(tempDirectory), [])
        // Two in-memory containers are two stores.
        XCTAssertEqual(try count(openInMemory().makeContext(), "Trip"), 0)
    }

    func testInMemoryAndReadOnlyTogetherIsInvalid() {
        assertError(.invalid) {
            try StoreConfiguration.decode(#"{"schema": \#(Fixtures.sampleTrips), "inMemory": true, "readOnly": true}"#)
        }
    }

    func testReadOnlyStore() throws {
        let path = storePath()
        var tripID = ""
        do {
            let context = try openFile(path: path).makeContext()
            tripID = try context.insert(entity: "Trip", json: #"{"name": "Oslo", "startDate": 0, "endDate": 1}"#).description
            try context.save()
        }
        let before = try XCTUnwrap(fileBytes(path))
        let container = try openFile(path: path) { $0.readOnly = true }
        XCTAssertTrue(container.store.isReadOnly)
        let context = try container.makeContext()
        XCTAssertEqual(try get(context, tripID)["name"], .string("Oslo"))
        assertError(.readOnly) { try context.insert(entity: "Trip", json: #"{"name": "Bergen", "startDate": 0, "endDate": 1}"#) }
        assertError(.readOnly) { try context.insertMany(entity: "Trip", json: #"[]"#) }
        assertError(.readOnly) { try context.update(id: tripID, patch: #"{"name": "Bergen"}"#) }
        assertError(.readOnly) { try context.delete(id: tripID) }
        XCTAssertFalse(context.hasChanges)
        XCTAssertNoThrow(try context.save(), "saving nothing is fine")
        XCTAssertEqual(try count(context, "Trip"), 1)
        XCTAssertTrue(fileBytes(path) == before, "the file changed")
    }

    func testReadOnlyOpenOfAMissingFileFails() {
        assertError(.io) { try openFile(path: storePath("missing")) { $0.readOnly = true } }
        XCTAssertEqual(filesIn(tempDirectory), [])
    }

    func testReadOnlyOpenWithAnotherSchemaFails() throws {
        let path = storePath()
        _ = try openFile(path: path)
        assertError(.incompatibleStore) {
            try openFile(Fixtures.schema(attributes: #"{"name": "x", "type": "int"}"#), path: path) { $0.readOnly = true }
        }
    }

    func testMissingPathWithoutInMemoryIsInvalid() throws {
        let config = try configuration()
        assertError(.invalid) { try ModelContainer(path: nil, configuration: config) }
        assertError(.invalid) { try ModelContainer(path: "", configuration: config) }
    }
}
