import XCTest
@testable import Strata

/// Transient attributes: part of the model, never stored. Input is validated
/// and dropped; output shows the declared default.
final class TransientTests: StoreTestCase {
    static let schema = #"""
        {"version": "1", "entities": [{"name": "Page", "attributes": [
          {"name": "title", "type": "string"},
          {"name": "views", "type": "int", "transient": true, "default": 0},
          {"name": "scratch", "type": "string", "transient": true, "optional": true},
          {"name": "state", "type": "json", "transient": true, "default": {"open": false}}]}]}
        """#

    func testTransientAttributesHaveNoColumn() throws {
        let path = storePath()
        _ = try openFile(Self.schema, path: path)
        XCTAssertEqual(try columnNames(path, table: "Page"), ["_pk", "_entity", "title"])
        let page = try XCTUnwrap(makeSchema(Self.schema).entity(named: "Page"))
        XCTAssertEqual(page.storedColumns.map(\.name), ["title"])
    }

    func testReadsShowTheDefault() {
        forEachSetup(Self.schema) { h in
            let id = try h.context.insert(entity: "Page", json: #"{"title": "Home"}"#)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, id)
            XCTAssertEqual(v["views"]?.numberText, "0")
            XCTAssertEqual(v["scratch"], .null)
            XCTAssertEqual(v["state"], JSONValue.of(#"{"open": false}"#))
            XCTAssertEqual(try fetch(h.context, "Page").map { $0["views"]?.numberText }, ["0"])
        }
    }

    func testGivenValuesAreValidatedButNotStored() {
        forEachSetup(Self.schema) { h in
            let id = try h.context.insert(entity: "Page", json: #"{"title": "Home", "views": 42, "scratch": "tmp", "state": {"open": true}}"#)
            XCTAssertEqual(try get(h.context, id)["views"]?.numberText, "0", "never stored, even pending")
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, id)
            XCTAssertEqual(v["views"]?.numberText, "0")
            XCTAssertEqual(v["scratch"], .null)
            XCTAssertEqual(v["state"], JSONValue.of(#"{"open": false}"#))
            let e = assertError(.validation) { try h.context.insert(entity: "Page", json: #"{"title": "x", "views": "many"}"#) }
            XCTAssertEqual(e?.attribute, "views")
            XCTAssertEqual(e?.path, "/views")
            XCTAssertFalse(h.context.hasChanges)
        }
    }

    func testAnUpdateOfOnlyTransientsChangesNothing() throws {
        let context = try openInMemory(Self.schema).makeContext()
        let id = try context.insert(entity: "Page", json: #"{"title": "Home"}"#)
        try context.save()
        try context.update(id: id.description, patch: #"{"views": 7, "scratch": null}"#)
        XCTAssertFalse(context.hasChanges)
        assertError(.validation) { try context.update(id: id.description, patch: #"{"views": true}"#) }
        XCTAssertEqual(try get(context, id)["views"]?.numberText, "0")
    }

    func testTransientsCannotBeUniqueIndexedOrConstrained() {
        let e1 = assertError(.schema) {
            try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "v", "type": "int", "transient": true, "default": 0, "unique": true}"#))
        }
        XCTAssertEqual(e1?.path, "/entities/0/attributes/0/unique")
        let e2 = assertError(.schema) {
            try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "v", "type": "int", "transient": true, "default": 0, "index": true}"#))
        }
        XCTAssertEqual(e2?.path, "/entities/0/attributes/0/index")
        let e3 = assertError(.schema) {
            try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "a", "type": "int"}, {"name": "v", "type": "int", "transient": true, "default": 0}"#,
                                                     extra: #""uniqueConstraints": [["a", "v"]]"#))
        }
        XCTAssertEqual(e3?.path, "/entities/0/uniqueConstraints/0/1")
        let e4 = assertError(.schema) {
            try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "v", "type": "data", "transient": true, "optional": true, "externalStorage": true}"#))
        }
        XCTAssertEqual(e4?.path, "/entities/0/attributes/0/externalStorage")
    }

    func testSampleTripsTripViews() {
        forEachSetup { h in
            let id = try h.context.insert(entity: "PersonalTrip", json: #"{"name": "T", "startDate": 0, "endDate": 1, "tripViews": 12}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, id)["tripViews"]?.numberText, "0")
        }
    }
}
