import XCTest
@testable import Strata

/// `ModelContainer.storedState(at:)`: what a store holds about itself, read without a
/// configuration (the `strata` command opens any store with the schema it carries).
final class StoredStateTests: StoreTestCase {
    func testStoredStateIsTheSchemaTheStoreWasMadeWith() {
        forEachSetup(Fixtures.sampleTrips, [.file, .postgres].filter(StoreSetup.allCases.contains)) { h in
            let stored = try XCTUnwrap(ModelContainer.storedState(at: XCTUnwrap(h.path)))
            let schema = h.container.schema
            XCTAssertEqual(stored.version, "1.0.0")
            XCTAssertEqual(stored.versionHash, schema.versionHash)
            XCTAssertEqual(stored.entityHashes?["BusinessTrip"], schema.entity(named: "BusinessTrip")?.versionHash)
            // The stored JSON is a schema of the same storage: a container opens the store with it, read-only.
            let config = try StoreConfiguration.decode("{\"schema\": \(XCTUnwrap(stored.schemaJSON)), \"readOnly\": true}")
            XCTAssertEqual(config.schema.versionHash, schema.versionHash)
            let reader = try ModelContainer(path: h.path, configuration: config)
            XCTAssertEqual(reader.schema.entities.map(\.name), schema.entities.map(\.name))
        }
    }

    func testNoStoreThere() throws {
        // A missing file fails; an empty file, or a PostgreSQL schema that does not exist, holds nothing.
        assertError(.io) { try ModelContainer.storedState(at: storePath("missing")) }
        let empty = storePath("empty")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        XCTAssertNil(try ModelContainer.storedState(at: empty))
        let text = storePath("notes")
        XCTAssertTrue(FileManager.default.createFile(atPath: text, contents: Data("not a store at all, just text\n".utf8)))
        // A file that is not a database is refused as opening refuses it, untouched.
        assertError(.incompatibleStore) { try ModelContainer.storedState(at: text) }
        if let uri = PostgresTestServer.freshStore("no_store_here") {
            XCTAssertNil(try ModelContainer.storedState(at: uri))
        }
    }

    /// The entity hashes stay the store's text until asked for: a damaged text reads as nil then,
    /// as before; set ones read back; states compare by what they say, not how the text is spaced.
    func testEntityHashesReadFromTheirText() {
        var state = StoredState()
        state.entityHashesText = #"{"Trip": "ab", "Item": "cd"}"#
        XCTAssertEqual(state.entityHashes, ["Trip": "ab", "Item": "cd"])
        for damaged in ["[]", #"{"Trip": 1}"#, "{not json", #"{"Trip": "ab", "Trip": "cd"}"#] {
            state.entityHashesText = damaged
            XCTAssertNil(state.entityHashes, damaged)
        }
        state.entityHashes = ["B": "2", "A": "1"]
        XCTAssertEqual(state.entityHashesText, #"{"A":"1","B":"2"}"#)
        XCTAssertEqual(state.entityHashes, ["A": "1", "B": "2"])
        var spaced = StoredState()
        spaced.entityHashesText = #"{ "B": "2", "A": "1" }"#
        XCTAssertEqual(spaced, state)
        spaced.entityHashesText = #"{"A": "1"}"#
        XCTAssertNotEqual(spaced, state)
        state.entityHashes = nil
        XCTAssertNil(state.entityHashesText)
        XCTAssertEqual(StoredState(entityHashes: ["A": "1"]).entityHashes, ["A": "1"])
    }
}
