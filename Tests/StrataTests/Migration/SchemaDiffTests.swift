import XCTest
@testable import Strata

/// The words an incompatible-store error uses for what changed between two schemas.
final class SchemaDiffTests: StoreTestCase {
    static let base = #"""
        {"version": "1", "entities": [
          {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "notes", "type": "string", "optional": true}],
           "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}],
           "indexes": [["name"]]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]}]}
        """#

    func diff(_ replace: String, with replacement: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        XCTAssertTrue(Self.base.contains(replace), "test edit not found: \(replace)", file: file, line: line)
        let changed = Self.base.replacingOccurrences(of: replace, with: replacement)
        return SchemaDiff.describe(from: try makeSchema(Self.base), to: try makeSchema(changed))
    }

    func testEachKindOfChangeIsNamed() throws {
        XCTAssertEqual(try diff(#"{"name": "title", "type": "string"}"#, with: #"{"name": "title", "type": "string"}, {"name": "done", "type": "bool", "default": false}"#),
                       ["entity 'Item': attribute 'done' added"])
        XCTAssertEqual(try diff(#", {"name": "notes", "type": "string", "optional": true}"#, with: ""),
                       ["entity 'Trip': attribute 'notes' removed"])
        XCTAssertEqual(try diff(#"{"name": "notes", "type": "string", "optional": true}"#, with: #"{"name": "notes", "type": "string"}"#),
                       ["entity 'Trip': attribute 'notes' became required"])
        XCTAssertEqual(try diff(#"{"name": "title", "type": "string"}"#, with: #"{"name": "title", "type": "string", "unique": true}"#),
                       ["entity 'Item': attribute 'title' became unique"])
        XCTAssertEqual(try diff(#"{"name": "title", "type": "string"}"#, with: #"{"name": "title", "type": "data"}"#),
                       ["entity 'Item': attribute 'title' type changed from string to data"])
        XCTAssertEqual(try diff(#""indexes": [["name"]]"#, with: #""indexes": [["name"], ["notes"]]"#),
                       ["entity 'Trip': indexes changed"])
        XCTAssertEqual(try diff(#"{"name": "trip", "destination": "Trip", "optional": true}"#, with: #"{"name": "trip", "destination": "Trip", "optional": true}, {"name": "next", "destination": "Item", "optional": true}"#),
                       ["entity 'Item': relationship 'next' added"])
        let added = try diff(#"{"name": "Item", "attributes""#, with: #"{"name": "Tag"}, {"name": "Item", "attributes""#)
        XCTAssertEqual(added, ["entity 'Tag' added"])
    }

    func testChangesThatKeepTheStorageAreNotDifferences() throws {
        // Delete rules, defaults and originalName do not change the version hash: the store opens as it is.
        let path = storePath()
        _ = try openFile(Self.base, path: path)
        let same = Self.base
            .replacingOccurrences(of: #""inverse": "trip"}"#, with: #""inverse": "trip", "deleteRule": "cascade"}"#)
            .replacingOccurrences(of: #"{"name": "title", "type": "string"}"#, with: #"{"name": "title", "type": "string", "default": "untitled", "originalName": "label"}"#)
        XCTAssertNoThrow(try openFile(same, path: path))
        // The stored declaration follows, so the new default applies.
        let context = try openFile(same, path: path).makeContext()
        let id = try context.insert(entity: "Item", json: "{}")
        XCTAssertEqual(try get(context, id)["title"], .string("untitled"))
    }
}
