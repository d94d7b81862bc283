import XCTest
@testable import Strata

/// `SchemaDiff.changes`: one structured case per kind of storage change, with its
/// names and old/new values, and the words errors render from it.
final class SchemaChangeTests: XCTestCase {
    func schema(_ entities: String) throws -> Schema {
        try SchemaDecoder.decode(#"{"version": "1", "entities": [\#(entities)]}"#)
    }

    func changes(_ old: String, _ new: String) throws -> [SchemaChange] {
        SchemaDiff.changes(from: try schema(old), to: try schema(new))
    }

    func assertChange(_ old: String, _ new: String, _ expected: SchemaChange, _ words: String,
                      file: StaticString = #filePath, line: UInt = #line) throws {
        let list = try changes(old, new)
        XCTAssertEqual(list, [expected], file: file, line: line)
        XCTAssertEqual(list.map(\.description), [words], file: file, line: line)
        XCTAssertEqual(list.first?.entity, expected.entity, file: file, line: line)
    }

    static let thing = #"{"name": "Thing", "attributes": [{"name": "a", "type": "string"}]}"#

    func testEntities() throws {
        try assertChange(Self.thing, Self.thing + #", {"name": "Tag"}"#, .entityAdded(entity: "Tag"), "entity 'Tag' added")
        try assertChange(Self.thing + #", {"name": "Tag"}"#, Self.thing, .entityRemoved(entity: "Tag"), "entity 'Tag' removed")
        let list = try changes(#"{"name": "A"}, {"name": "B"}"#, #"{"name": "A"}, {"name": "B", "superentity": "A"}"#)
        XCTAssertTrue(list.contains(.superentityChanged(entity: "B", old: nil, new: "A")), "\(list)")
        XCTAssertTrue(list.map(\.description).contains("entity 'B': superentity changed from 'none' to 'A'"), "\(list)")
    }

    func attr(_ declaration: String) -> String {
        #"{"name": "Thing", "attributes": [\#(declaration)]}"#
    }

    func testAttributes() throws {
        let a = #"{"name": "a", "type": "string"}"#
        try assertChange(attr(a), attr(a + #", {"name": "b", "type": "int"}"#),
                         .attributeAdded(entity: "Thing", attribute: "b"), "entity 'Thing': attribute 'b' added")
        try assertChange(attr(a + #", {"name": "b", "type": "int"}"#), attr(a),
                         .attributeRemoved(entity: "Thing", attribute: "b"), "entity 'Thing': attribute 'b' removed")
        try assertChange(attr(a), attr(#"{"name": "a", "type": "int"}"#),
                         .attributeTypeChanged(entity: "Thing", attribute: "a", old: .string, new: .int),
                         "entity 'Thing': attribute 'a' type changed from string to int")
        try assertChange(attr(a), attr(#"{"name": "a", "type": "string", "optional": true}"#),
                         .attributeOptionalityChanged(entity: "Thing", attribute: "a", old: false, new: true),
                         "entity 'Thing': attribute 'a' became optional")
        try assertChange(attr(#"{"name": "a", "type": "string", "optional": true}"#), attr(a),
                         .attributeOptionalityChanged(entity: "Thing", attribute: "a", old: true, new: false),
                         "entity 'Thing': attribute 'a' became required")
        try assertChange(attr(a), attr(#"{"name": "a", "type": "string", "unique": true}"#),
                         .attributeUniquenessChanged(entity: "Thing", attribute: "a", old: false, new: true),
                         "entity 'Thing': attribute 'a' became unique")
        try assertChange(attr(#"{"name": "a", "type": "string", "unique": true}"#), attr(a),
                         .attributeUniquenessChanged(entity: "Thing", attribute: "a", old: true, new: false),
                         "entity 'Thing': attribute 'a' is no longer unique")
        let transient = #"{"name": "a", "type": "string", "transient": true, "default": ""}"#
        try assertChange(attr(a), attr(transient),
                         .attributeTransienceChanged(entity: "Thing", attribute: "a", old: false, new: true),
                         "entity 'Thing': attribute 'a' became transient")
        try assertChange(attr(transient), attr(a),
                         .attributeTransienceChanged(entity: "Thing", attribute: "a", old: true, new: false),
                         "entity 'Thing': attribute 'a' is no longer transient")
        try assertChange(attr(#"{"name": "p", "type": "data", "optional": true}"#),
                         attr(#"{"name": "p", "type": "data", "optional": true, "externalStorage": true}"#),
                         .attributeExternalStorageChanged(entity: "Thing", attribute: "p", old: false, new: true),
                         "entity 'Thing': attribute 'p' external storage changed")
        try assertChange(attr(a), attr(#"{"name": "a", "type": "string", "index": true}"#),
                         .attributeIndexChanged(entity: "Thing", attribute: "a", old: false, new: true),
                         "entity 'Thing': attribute 'a' index changed")
        try assertChange(attr(a), attr(#"{"name": "a", "type": "string", "hashModifier": "v2"}"#),
                         .attributeHashModifierChanged(entity: "Thing", attribute: "a", old: nil, new: "v2"),
                         "entity 'Thing': attribute 'a' hashModifier changed")
    }

    /// X links to Y (no inverse); Y and Z exist.
    func link(_ declaration: String, y: String = #"{"name": "Y"}"#) -> String {
        #"{"name": "X", "relationships": [\#(declaration)]}, \#(y), {"name": "Z"}"#
    }

    func testRelationships() throws {
        let l = #"{"name": "link", "destination": "Y", "optional": true}"#
        try assertChange(link(""), link(l), .relationshipAdded(entity: "X", relationship: "link"),
                         "entity 'X': relationship 'link' added")
        try assertChange(link(l), link(""), .relationshipRemoved(entity: "X", relationship: "link"),
                         "entity 'X': relationship 'link' removed")
        try assertChange(link(l), link(#"{"name": "link", "destination": "Z", "optional": true}"#),
                         .relationshipDestinationChanged(entity: "X", relationship: "link", old: "Y", new: "Z"),
                         "entity 'X': relationship 'link' destination changed")
        try assertChange(link(l), link(#"{"name": "link", "destination": "Y", "toMany": true}"#),
                         .relationshipCardinalityChanged(entity: "X", relationship: "link", old: false, new: true),
                         "entity 'X': relationship 'link' became to-many")
        try assertChange(link(#"{"name": "link", "destination": "Y", "toMany": true}"#), link(l),
                         .relationshipCardinalityChanged(entity: "X", relationship: "link", old: true, new: false),
                         "entity 'X': relationship 'link' became to-one")
        try assertChange(link(l), link(#"{"name": "link", "destination": "Y", "optional": false}"#),
                         .relationshipOptionalityChanged(entity: "X", relationship: "link", old: true, new: false),
                         "entity 'X': relationship 'link' optionality changed")
        try assertChange(link(l), link(#"{"name": "link", "destination": "Y", "optional": true, "hashModifier": "v2"}"#),
                         .relationshipHashModifierChanged(entity: "X", relationship: "link", old: nil, new: "v2"),
                         "entity 'X': relationship 'link' hashModifier changed")
        // Y gains a relationship back: X's link now has an inverse.
        let back = #"{"name": "Y", "relationships": [{"name": "back", "destination": "X", "toMany": true, "inverse": "link"}]}"#
        let list = try changes(link(l), link(l, y: back))
        XCTAssertTrue(list.contains(.relationshipInverseChanged(entity: "X", relationship: "link", old: nil, new: "back")), "\(list)")
        XCTAssertTrue(list.contains(.relationshipAdded(entity: "Y", relationship: "back")), "\(list)")
        XCTAssertTrue(list.map(\.description).contains("entity 'X': relationship 'link' inverse changed"), "\(list)")
    }

    func testConstraintsAndIndexes() throws {
        let ab = #"{"name": "a", "type": "string"}, {"name": "b", "type": "int"}"#
        try assertChange(#"{"name": "T", "attributes": [\#(ab)]}"#,
                         #"{"name": "T", "attributes": [\#(ab)], "uniqueConstraints": [["a", "b"]]}"#,
                         .uniqueConstraintsChanged(entity: "T", old: [], new: [["a", "b"]]),
                         "entity 'T': unique constraints changed")
        try assertChange(#"{"name": "T", "attributes": [\#(ab)], "indexes": [["a"]]}"#,
                         #"{"name": "T", "attributes": [\#(ab)], "indexes": [["a"], ["b", "a"]]}"#,
                         .indexesChanged(entity: "T", old: [["a"]], new: [["a"], ["b", "a"]]),
                         "entity 'T': indexes changed")
    }

    func testChangesThatKeepTheStorageAreNotListed() throws {
        let old = #"{"name": "X", "attributes": [{"name": "a", "type": "string"}], "relationships": [{"name": "link", "destination": "Y", "optional": true}]}, {"name": "Y"}"#
        let new = #"{"name": "X", "attributes": [{"name": "a", "type": "string", "default": "n", "originalName": "b"}], "relationships": [{"name": "link", "destination": "Y", "optional": true, "deleteRule": "cascade"}]}, {"name": "Y"}"#
        XCTAssertEqual(try changes(old, new), [])
        XCTAssertEqual(try changes(old, old), [])
    }
}
