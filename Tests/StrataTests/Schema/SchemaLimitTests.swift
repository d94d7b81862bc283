import XCTest
@testable import Strata

/// Every schema that validates can be created and read: generated names never
/// collide, and SQLite's limits are schema errors with a path at decode time,
/// not failures when the store is opened.
final class SchemaLimitTests: StoreTestCase {
    func attributes(_ n: Int, type: String = "int") -> String {
        (0..<n).map { #"{"name": "a\#($0)", "type": "\#(type)", "optional": true}"# }.joined(separator: ", ")
    }

    /// Opens a file store with `json`, inserts, saves and reads back one object.
    func roundTrip(_ json: String, entity: String = "E", object: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let path = storePath(UUIDText.random())
        let context = try openFile(json, path: path).makeContext()
        let id = try context.insert(entity: entity, json: object)
        try context.save()
        XCTAssertEqual(try fetch(context, entity).count, 1, file: file, line: line)
        XCTAssertNotNil(try get(context, id)["_id"], file: file, line: line)
        let names = try rows(path, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").compactMap(\.first?.text)
        XCTAssertEqual(names.count, Set(names.map { $0.lowercased() }).count, file: file, line: line)
    }

    func testGeneratedIndexNamesNeverCollide() throws {
        // An index over first + name against an attribute first_name.
        try roundTrip(#"""
            {"version": "1", "entities": [{"name": "E", "attributes": [
              {"name": "first", "type": "string", "optional": true}, {"name": "name", "type": "string", "optional": true},
              {"name": "first_name", "type": "string", "optional": true, "index": true}],
             "indexes": [["first", "name"]]}]}
            """#, object: #"{"first": "a", "name": "b", "first_name": "c"}"#)
        // An entity named like another entity's generated index.
        try roundTrip(#"""
            {"version": "1", "entities": [
              {"name": "E", "attributes": [{"name": "x", "type": "int", "optional": true, "index": true}]},
              {"name": "E_index_x", "attributes": [{"name": "y", "type": "int", "optional": true}]}]}
            """#, object: #"{"x": 1}"#)
        // a_b unique plus a compound unique constraint over a and b.
        try roundTrip(#"""
            {"version": "1", "entities": [{"name": "E", "attributes": [
              {"name": "a", "type": "int", "optional": true}, {"name": "b", "type": "int", "optional": true},
              {"name": "a_b", "type": "int", "optional": true, "unique": true}],
             "uniqueConstraints": [["a", "b"]]}]}
            """#, object: #"{"a": 1, "b": 2, "a_b": 3}"#)
        // An entity named like a join table's generated index.
        try roundTrip(#"""
            {"version": "1", "entities": [
              {"name": "E", "attributes": [{"name": "x", "type": "int", "optional": true}],
               "relationships": [{"name": "tags", "destination": "T", "toMany": true}]},
              {"name": "T", "attributes": []},
              {"name": "E_tags_target", "attributes": []}]}
            """#, object: #"{"x": 1, "tags": [{}]}"#)
    }

    func testJoinTablesWithTheSameNameAreASchemaError() {
        let e = assertError(.schema) {
            try SchemaDecoder.decode(#"""
                {"version": "1", "entities": [
                  {"name": "A", "attributes": [], "relationships": [{"name": "b_c", "destination": "T", "toMany": true}]},
                  {"name": "A_b", "attributes": [], "relationships": [{"name": "c", "destination": "T", "toMany": true}]},
                  {"name": "T", "attributes": []}]}
                """#)
        }
        XCTAssertTrue(e?.message.contains("A_b_c") == true, e?.message ?? "")
    }

    func testTheColumnLimitIsASchemaErrorWithItsPath() throws {
        let e = assertError(.schema) { try SchemaDecoder.decode(Fixtures.schema(entity: "E", attributes: attributes(1_999))) }
        XCTAssertEqual(e?.path, "/entities/0")
        XCTAssertEqual(e?.entity, "E")
        XCTAssertTrue(e?.message.contains("1997") == true, e?.message ?? "")
        // A hierarchy shares one table: its subentities' attributes count too.
        let sub = #"""
            {"version": "1", "entities": [
              {"name": "A", "attributes": [\#(attributes(1_000))]},
              {"name": "B", "superentity": "A", "attributes": [\#((1_000..<1_998).map { #"{"name": "a\#($0)", "type": "int", "optional": true}"# }.joined(separator: ", "))]}]}
            """#
        XCTAssertEqual(assertError(.schema) { try SchemaDecoder.decode(sub) }?.entity, "A")
        // The largest table that fits is created, written and read.
        let columns = (0..<1_997).map { #""a\#($0)": \#($0)"# }.joined(separator: ", ")
        try roundTrip(Fixtures.schema(entity: "E", attributes: attributes(1_997)), object: "{\(columns)}")
    }

    func testExternalStorageCannotBeUniqueOrIndexed() {
        let ext = #"{"name": "blob", "type": "data", "optional": true, "externalStorage": true"#
        XCTAssertEqual(assertError(.schema) { try SchemaDecoder.decode(Fixtures.schema(attributes: ext + #", "unique": true}"#)) }?.path,
                       "/entities/0/attributes/0/unique")
        XCTAssertEqual(assertError(.schema) { try SchemaDecoder.decode(Fixtures.schema(attributes: ext + #", "index": true}"#)) }?.path,
                       "/entities/0/attributes/0/index")
        XCTAssertEqual(assertError(.schema) {
            try SchemaDecoder.decode(Fixtures.schema(attributes: ext + #"}, {"name": "n", "type": "int"}"#, extra: #""uniqueConstraints": [["n", "blob"]]"#))
        }?.path, "/entities/0/uniqueConstraints/0/1")
        XCTAssertEqual(assertError(.schema) {
            try SchemaDecoder.decode(Fixtures.schema(attributes: ext + "}", extra: #""indexes": [["blob"]]"#))
        }?.path, "/entities/0/indexes/0/0")
    }
}
