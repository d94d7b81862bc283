import XCTest
@testable import Strata

/// Schema JSON is strict: every problem is a `.schema` error naming its JSON path (DESIGN §4).
final class SchemaValidationTests: StoreTestCase {

    /// Decodes `json` expecting a `.schema` error at `path`; returns it for further checks.
    @discardableResult
    func assertSchemaError(_ json: String, path: String, mentions: [String] = [],
                           file: StaticString = #filePath, line: UInt = #line) -> StrataError? {
        let e = assertError(.schema, file: file, line: line) { try SchemaDecoder.decode(json) }
        XCTAssertEqual(e?.path, path, "path of: \(e?.message ?? "")", file: file, line: line)
        for word in mentions {
            XCTAssertTrue(e?.message.contains(word) == true, "message '\(e?.message ?? "")' should mention '\(word)'", file: file, line: line)
        }
        return e
    }

    func testSampleTripsDecodes() throws {
        let s = try makeSchema()
        XCTAssertEqual(s.version, "1.0.0")
        XCTAssertEqual(s.entities.map(\.name), ["Trip", "BusinessTrip", "PersonalTrip", "BucketListItem", "LivingAccommodation"])
        XCTAssertEqual(s.rootEntities.map(\.name), ["Trip", "BucketListItem", "LivingAccommodation"])
        XCTAssertEqual(s.versionHash.count, 64)
    }

    // MARK: Unknown keys

    func testUnknownAttributeKeyIsNamedWithItsPath() {
        let e = assertSchemaError(Fixtures.schema(attributes: #"{"name": "title", "type": "string", "optinal": true}"#),
                                  path: "/entities/0/attributes/0/optinal", mentions: ["optinal"])
        XCTAssertEqual(e?.entity, "Thing")
        XCTAssertEqual(e?.attribute, "title")
    }

    func testUnknownKeysAtEveryLevel() {
        assertSchemaError(#"{"version": "1", "entities": [], "entites": []}"#, path: "/entites", mentions: ["entites"])
        assertSchemaError(#"{"version": "1", "entities": [{"name": "A", "atributes": []}]}"#,
                          path: "/entities/0/atributes", mentions: ["atributes"])
        assertSchemaError(Fixtures.schema(attributes: "",
                                          relationships: #"{"name": "other", "destination": "Thing", "delete": "cascade"}"#),
                          path: "/entities/0/relationships/0/delete", mentions: ["delete"])
    }

    func testIllTypedKeyIsAnError() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "title", "type": "string", "optional": "yes"}"#),
                          path: "/entities/0/attributes/0/optional", mentions: ["optional"])
        assertSchemaError(#"{"version": 1, "entities": []}"#, path: "/version")
    }

    func testNotJSONIsASchemaError() {
        assertError(.schema) { try SchemaDecoder.decode("{\"version\": ") }
    }

    // MARK: Names

    func testDuplicateEntityName() {
        assertSchemaError(#"{"version": "1", "entities": [{"name": "A"}, {"name": "B"}, {"name": "A"}]}"#,
                          path: "/entities/2/name", mentions: ["duplicate", "'A'"])
    }

    func testDuplicatePropertyName() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "x", "type": "string"}, {"name": "x", "type": "int"}"#),
                          path: "/entities/0/attributes/1/name", mentions: ["duplicate", "'x'"])
        // An attribute and a relationship share the namespace.
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "x", "type": "string"}"#,
                                          relationships: #"{"name": "x", "destination": "Thing"}"#),
                          path: "/entities/0/relationships/0/name", mentions: ["duplicate", "'x'"])
    }

    func testDuplicatePropertyNameAcrossAHierarchy() {
        // A subentity shares its root's table: it cannot redeclare an inherited name.
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "attributes": [{"name": "x", "type": "string"}]},
              {"name": "B", "superentity": "A", "attributes": [{"name": "x", "type": "int"}]}]}
            """#, path: "/entities/1/attributes/0/name", mentions: ["duplicate", "'x'"])
        // Nor can two siblings declare the same column.
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A"},
              {"name": "B", "superentity": "A", "attributes": [{"name": "x", "type": "string"}]},
              {"name": "C", "superentity": "A", "attributes": [{"name": "x", "type": "string"}]}]}
            """#, path: "/entities/2/attributes/0/name", mentions: ["'x'"])
    }

    func testNamesThatDifferOnlyInCaseCollideInSQLite() {
        // SQLite table and column names ignore case: these would fail only when the store is created.
        assertSchemaError(#"{"version": "1", "entities": [{"name": "Trip"}, {"name": "trip"}]}"#,
                          path: "/entities/1/name", mentions: ["'trip'", "'Trip'"])
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "name", "type": "string"}, {"name": "Name", "type": "string"}"#),
                          path: "/entities/0/attributes/1/name", mentions: ["'Name'"])
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "owner", "type": "string"}"#,
                                          relationships: #"{"name": "OWNER", "destination": "Thing"}"#),
                          path: "/entities/0/relationships/0/name", mentions: ["'OWNER'"])
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "attributes": [{"name": "x", "type": "string"}]},
              {"name": "B", "superentity": "A", "attributes": [{"name": "X", "type": "int"}]}]}
            """#, path: "/entities/1/attributes/0/name", mentions: ["'X'"])
        // A join table named like an entity, up to case.
        assertError(.schema) {
            try SchemaDecoder.decode(#"""
                {"version": "1", "entities": [
                  {"name": "Trip", "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]},
                  {"name": "Tag"}, {"name": "trip_Tags"}]}
                """#)
        }
    }

    func testKeywordNamesAreQuoted() throws {
        // SQL keywords are fine names: every statement quotes identifiers.
        let json = #"""
            {"version": "1", "entities": [
              {"name": "Order", "attributes": [{"name": "select", "type": "string", "unique": true}, {"name": "group", "type": "int", "index": true}],
               "relationships": [{"name": "where", "destination": "Table", "optional": true},
                                 {"name": "from", "destination": "Table", "toMany": true}]},
              {"name": "Table", "attributes": [{"name": "order", "type": "string"}]}]}
            """#
        let context = try openFile(json).makeContext()
        let id = try context.insert(entity: "Order", json: #"{"select": "s", "group": 1, "where": {"order": "o"}, "from": [{"order": "p"}]}"#)
        XCTAssertEqual(try context.insert(entity: "Order", json: #"{"select": "s", "group": 2}"#), id)
        try context.save()
        let v = try get(context, id)
        XCTAssertEqual(v["group"]?.numberText, "2")
        XCTAssertEqual(v["from"]?.array?.count, 1)
        try context.delete(id: try XCTUnwrap(v["where"]?.stringValue))
        try context.save()
        XCTAssertEqual(try get(context, id)["where"], .null)
    }

    func testBadIdentifiers() {
        for bad in ["1abc", "has space", "_x", "", "naïve", "a-b", "strata_meta", "sqlite_x"] {
            assertSchemaError(#"{"version": "1", "entities": [{"name": "\#(bad)"}]}"#, path: "/entities/0/name")
            assertSchemaError(Fixtures.schema(attributes: #"{"name": "\#(bad)", "type": "string"}"#),
                              path: "/entities/0/attributes/0/name")
            assertSchemaError(Fixtures.schema(attributes: "", relationships: #"{"name": "\#(bad)", "destination": "Thing"}"#),
                              path: "/entities/0/relationships/0/name")
        }
        let e = assertSchemaError(#"{"version": "1", "entities": [{"name": "1abc"}]}"#, path: "/entities/0/name", mentions: ["1abc"])
        XCTAssertNotNil(e)
        XCTAssertNoThrow(try SchemaDecoder.decode(#"{"version": "1", "entities": [{"name": "a1_B"}]}"#))
    }

    // MARK: Types and references

    func testUnknownType() {
        let e = assertSchemaError(Fixtures.schema(attributes: #"{"name": "title", "type": "text"}"#),
                                  path: "/entities/0/attributes/0/type", mentions: ["'text'"])
        XCTAssertEqual(e?.attribute, "title")
    }

    func testMissingType() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "title"}"#), path: "/entities/0/attributes/0/type")
    }

    func testUnknownDestination() {
        let e = assertSchemaError(Fixtures.schema(attributes: "", relationships: #"{"name": "owner", "destination": "Person"}"#),
                                  path: "/entities/0/relationships/0/destination", mentions: ["Person"])
        XCTAssertEqual(e?.attribute, "owner")
    }

    func testUnknownSuperentity() {
        assertSchemaError(#"{"version": "1", "entities": [{"name": "A", "superentity": "Base"}]}"#,
                          path: "/entities/0/superentity", mentions: ["Base"])
    }

    func testInverseThatIsNotARelationshipOfTheDestination() {
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "relationships": [{"name": "bs", "destination": "B", "toMany": true, "inverse": "owner"}]},
              {"name": "B", "attributes": [{"name": "owner", "type": "string"}]}]}
            """#, path: "/entities/0/relationships/0/inverse", mentions: ["owner"])
    }

    func testInverseMismatchPointsElsewhere() {
        // A.bs names B.c as inverse, but B.c points to C, not back to A.
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "relationships": [{"name": "bs", "destination": "B", "toMany": true, "inverse": "c"}]},
              {"name": "B", "relationships": [{"name": "c", "destination": "C"}]},
              {"name": "C"}]}
            """#, path: "/entities/0/relationships/0/inverse", mentions: ["inverse mismatch"])
    }

    func testInverseMismatchBothSidesDisagree() {
        // A.b names B.a1 as inverse, but B.a1 names A.other.
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "relationships": [{"name": "b", "destination": "B", "inverse": "a1"},
                                              {"name": "other", "destination": "B"}]},
              {"name": "B", "relationships": [{"name": "a1", "destination": "A", "inverse": "other"}]}]}
            """#, path: "/entities/0/relationships/0/inverse", mentions: ["inverse mismatch"])
    }

    func testInheritanceCycle() {
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "superentity": "B"},
              {"name": "B", "superentity": "A"}]}
            """#, path: "/entities/0/superentity", mentions: ["cycle"])
        assertSchemaError(#"{"version": "1", "entities": [{"name": "A", "superentity": "A"}]}"#,
                          path: "/entities/0/superentity", mentions: ["cycle"])
    }

    // MARK: Attribute options

    func testTransientWithoutDefault() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "views", "type": "int", "transient": true}"#),
                          path: "/entities/0/attributes/0/transient", mentions: ["views", "default"])
        // An optional transient needs no default.
        XCTAssertNoThrow(try SchemaDecoder.decode(Fixtures.schema(
            attributes: #"{"name": "views", "type": "int", "transient": true, "optional": true}"#)))
    }

    func testDefaultOutsideEnum() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "reason", "type": "string", "enum": ["family", "work"], "default": "fun"}"#),
                          path: "/entities/0/attributes/0/default", mentions: ["enum"])
    }

    func testDefaultOfTheWrongType() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "n", "type": "int", "default": "three"}"#),
                          path: "/entities/0/attributes/0/default")
    }

    func testEnumOnAnUnsupportedTypeAndDuplicates() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "d", "type": "date", "enum": [1]}"#),
                          path: "/entities/0/attributes/0/enum")
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "s", "type": "string", "enum": ["a", "a"]}"#),
                          path: "/entities/0/attributes/0/enum/1")
    }

    func testExternalStorageOnNonData() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "title", "type": "string", "externalStorage": true}"#),
                          path: "/entities/0/attributes/0/externalStorage", mentions: ["data"])
    }

    func testUniqueOnAToManyRelationship() {
        assertSchemaError(#"""
            {"version": "1", "entities": [
              {"name": "A", "attributes": [{"name": "name", "type": "string"}],
               "relationships": [{"name": "bs", "destination": "B", "toMany": true}],
               "uniqueConstraints": [["name", "bs"]]},
              {"name": "B"}]}
            """#, path: "/entities/0/uniqueConstraints/0/1", mentions: ["to-many", "bs"])
    }

    func testUniqueConstraintNamingAnUnknownProperty() {
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "a", "type": "string"}"#, extra: #""uniqueConstraints": [["a", "b"]]"#),
                          path: "/entities/0/uniqueConstraints/0/1", mentions: ["'b'"])
        assertSchemaError(Fixtures.schema(attributes: #"{"name": "a", "type": "string"}"#, extra: #""indexes": [["zzz"]]"#),
                          path: "/entities/0/indexes/0/0", mentions: ["zzz"])
    }

    func testMinMaxOnAToOne() {
        assertSchemaError(Fixtures.schema(attributes: "", relationships: #"{"name": "parent", "destination": "Thing", "minimumModelCount": 1}"#),
                          path: "/entities/0/relationships/0", mentions: ["to-many"])
        assertSchemaError(Fixtures.schema(attributes: "", relationships: #"{"name": "parent", "destination": "Thing", "maximumModelCount": 2}"#),
                          path: "/entities/0/relationships/0", mentions: ["to-many"])
    }

    func testMinimumAboveMaximum() {
        assertSchemaError(Fixtures.schema(attributes: "", relationships:
            #"{"name": "kids", "destination": "Thing", "toMany": true, "minimumModelCount": 3, "maximumModelCount": 2}"#),
                          path: "/entities/0/relationships/0")
    }

    func testUnknownDeleteRule() {
        let e = assertSchemaError(Fixtures.schema(attributes: "", relationships: #"{"name": "p", "destination": "Thing", "deleteRule": "restrict"}"#),
                                  path: "/entities/0/relationships/0/deleteRule", mentions: ["restrict"])
        XCTAssertEqual(e?.attribute, "p")
    }

    func testMissingVersion() {
        assertSchemaError(#"{"entities": []}"#, path: "/version", mentions: ["version"])
        assertSchemaError(#"{"version": "", "entities": []}"#, path: "/version")
    }

    func testMissingEntitiesAndNames() {
        assertSchemaError(#"{"version": "1"}"#, path: "/entities")
        assertSchemaError(#"{"version": "1", "entities": [{"attributes": []}]}"#, path: "/entities/0/name")
    }

    func testPathOfAConfigurationSchemaIsRootedAtSchema() {
        let e = assertError(.schema) {
            try StoreConfiguration.decode(#"{"schema": {"version": "1", "entities": [{"name": "A", "attributes": [{"name": "x", "type": "strin"}]}]}}"#)
        }
        XCTAssertEqual(e?.path, "/schema/entities/0/attributes/0/type")
    }

    // MARK: Inverses

    func testImplicitInverseWhenExactlyOneRelationshipPointsBack() throws {
        let s = try makeSchema(#"""
            {"version": "1", "entities": [
              {"name": "Trip", "relationships": [{"name": "items", "destination": "Item", "toMany": true}]},
              {"name": "Item", "relationships": [{"name": "trip", "destination": "Trip"}]}]}
            """#)
        let items = try XCTUnwrap(s.entity(named: "Trip")?.relationshipByName["items"])
        let trip = try XCTUnwrap(s.entity(named: "Item")?.relationshipByName["trip"])
        XCTAssertTrue(items.inverse === trip)
        XCTAssertTrue(trip.inverse === items)
        // One-to-many with an inverse: a foreign key in Item, no join table.
        XCTAssertEqual(trip.placement, .inRow)
        XCTAssertTrue(s.pairSets.isEmpty)
    }

    func testSampleTripsInversesAreFound() throws {
        let s = try makeSchema()
        let trip = try XCTUnwrap(s.entity(named: "Trip"))
        XCTAssertEqual(trip.relationshipByName["bucketList"]?.inverse?.name, "trip")
        XCTAssertTrue(trip.relationshipByName["bucketList"]?.inverse?.entity === s.entity(named: "BucketListItem"))
        // LivingAccommodation.trip is found as the inverse of Trip.livingAccommodation (the only one pointing back).
        XCTAssertTrue(trip.relationshipByName["livingAccommodation"]?.inverse === s.entity(named: "LivingAccommodation")?.relationshipByName["trip"])
    }

    func testNoImplicitInverseWhenTwoRelationshipsPointBack() throws {
        let s = try makeSchema(#"""
            {"version": "1", "entities": [
              {"name": "Person", "relationships": [{"name": "trips", "destination": "Trip", "toMany": true}]},
              {"name": "Trip", "relationships": [{"name": "owner", "destination": "Person"},
                                                 {"name": "driver", "destination": "Person"}]}]}
            """#)
        let person = try XCTUnwrap(s.entity(named: "Person"))
        let trip = try XCTUnwrap(s.entity(named: "Trip"))
        XCTAssertNil(person.relationshipByName["trips"]?.inverse)
        XCTAssertNil(trip.relationshipByName["owner"]?.inverse)
        XCTAssertNil(trip.relationshipByName["driver"]?.inverse)
        // Without an inverse the to-many needs its own join table.
        XCTAssertEqual(s.pairSets.map(\.name), ["Person_trips"])
    }

    func testNoImplicitInverseSeenFromEitherSide() throws {
        // Same graph, entities declared the other way round: the result must not depend on order.
        let s = try makeSchema(#"""
            {"version": "1", "entities": [
              {"name": "Trip", "relationships": [{"name": "owner", "destination": "Person"},
                                                 {"name": "driver", "destination": "Person"}]},
              {"name": "Person", "relationships": [{"name": "trips", "destination": "Trip", "toMany": true}]}]}
            """#)
        XCTAssertNil(s.entity(named: "Person")?.relationshipByName["trips"]?.inverse)
        XCTAssertNil(s.entity(named: "Trip")?.relationshipByName["owner"]?.inverse)
        XCTAssertNil(s.entity(named: "Trip")?.relationshipByName["driver"]?.inverse)
    }

    func testImplicitInverseOfASelfReference() throws {
        let s = try makeSchema(#"""
            {"version": "1", "entities": [
              {"name": "Node", "relationships": [{"name": "parent", "destination": "Node"},
                                                 {"name": "children", "destination": "Node", "toMany": true}]}]}
            """#)
        let node = try XCTUnwrap(s.entity(named: "Node"))
        XCTAssertTrue(node.relationshipByName["parent"]?.inverse === node.relationshipByName["children"])
        XCTAssertEqual(node.relationshipByName["parent"]?.placement, .inRow)
    }

    func testExplicitManyToManyUsesOneJoinTable() throws {
        let s = try makeSchema(#"""
            {"version": "1", "entities": [
              {"name": "Tag", "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "tags"}]},
              {"name": "Trip", "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]}]}
            """#)
        XCTAssertEqual(s.pairSets.map(\.name), ["Tag_trips"])
    }

    // MARK: Inheritance

    func testInheritedAttributesComeFirst() throws {
        let s = try makeSchema()
        let personal = try XCTUnwrap(s.entity(named: "PersonalTrip"))
        let trip = try XCTUnwrap(s.entity(named: "Trip"))
        XCTAssertTrue(personal.superentity === trip)
        XCTAssertEqual(personal.attributes.map(\.name), ["name", "destination", "startDate", "endDate", "photo", "tripViews", "reason"])
        XCTAssertEqual(personal.ownAttributes.map(\.name), ["reason"])
        XCTAssertEqual(personal.relationships.map(\.name), ["bucketList", "livingAccommodation"])
        XCTAssertTrue(personal.attributeByName["name"] === trip.attributeByName["name"])
        XCTAssertEqual(StoreLayout.tableName(personal), "Trip")
        XCTAssertEqual(Set(trip.descendants.map(\.name)), ["Trip", "BusinessTrip", "PersonalTrip"])
        XCTAssertTrue(personal.isKind(of: trip))
        XCTAssertFalse(trip.isKind(of: personal))
        // A subentity's unique constraints include the inherited compound one.
        XCTAssertEqual(personal.uniqueSlotSets.count, 1)
        XCTAssertEqual(personal.uniqueSlotSets[0].map { personal.storedColumns[$0].name }, ["name", "startDate", "endDate"])
    }

    func testDeepInheritance() throws {
        let s = try makeSchema(#"""
            {"version": "1", "entities": [
              {"name": "C", "superentity": "B", "attributes": [{"name": "c", "type": "int"}]},
              {"name": "B", "superentity": "A", "attributes": [{"name": "b", "type": "int"}]},
              {"name": "A", "attributes": [{"name": "a", "type": "int"}]}]}
            """#)
        let c = try XCTUnwrap(s.entity(named: "C"))
        XCTAssertEqual(c.attributes.map(\.name), ["a", "b", "c"])
        XCTAssertEqual(c.root.name, "A")
        XCTAssertEqual(s.rootEntities.map(\.name), ["A"])
    }

    // MARK: Version hashes

    func testVersionHashIgnoresKeyOrderAndWhitespace() throws {
        let a = try makeSchema(#"{"version":"1","entities":[{"name":"T","attributes":[{"name":"x","type":"int","optional":true},{"name":"y","type":"string"}]}]}"#)
        let b = try makeSchema(#"""
            {
              "entities" : [ { "attributes" : [ { "type" : "int" , "optional" : true , "name" : "x" } ,
                                                 { "type" : "string", "name" : "y" } ] ,
                               "name" : "T" } ],
              "version" : "1"
            }
            """#)
        XCTAssertEqual(a.versionHash, b.versionHash)
        XCTAssertEqual(a.entity(named: "T")?.versionHash, b.entity(named: "T")?.versionHash)
    }

    func testVersionHashOfSampleTripsIsStable() throws {
        XCTAssertEqual(try makeSchema().versionHash, try makeSchema().versionHash)
    }

    func testVersionHashUnchangedByOriginalNameAndDefaults() throws {
        let base = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "int"}"#))
        let renamed = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "int", "originalName": "old_x"}"#))
        let defaulted = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "int", "default": 7}"#))
        XCTAssertEqual(base.versionHash, renamed.versionHash)
        XCTAssertEqual(base.versionHash, defaulted.versionHash)
    }

    func testVersionHashChangedByTypeOrHashModifier() throws {
        let base = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "int"}"#))
        let retyped = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "string"}"#))
        let modified = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "int", "hashModifier": "v2"}"#))
        let optional = try makeSchema(Fixtures.schema(attributes: #"{"name": "x", "type": "int", "optional": true}"#))
        XCTAssertNotEqual(base.versionHash, retyped.versionHash)
        XCTAssertNotEqual(base.versionHash, modified.versionHash)
        XCTAssertNotEqual(base.versionHash, optional.versionHash)
        XCTAssertEqual(Set([base.versionHash, retyped.versionHash, modified.versionHash, optional.versionHash]).count, 4)
    }

    func testRelationshipHashModifierChangesTheHash() throws {
        let base = try makeSchema(Fixtures.schema(attributes: "", relationships: #"{"name": "p", "destination": "Thing"}"#))
        let modified = try makeSchema(Fixtures.schema(attributes: "", relationships: #"{"name": "p", "destination": "Thing", "hashModifier": "2"}"#))
        XCTAssertNotEqual(base.versionHash, modified.versionHash)
    }

    func testVersionHashIgnoresTheVersionString() throws {
        // The version string labels a schema; storage compatibility is the hash.
        let a = try makeSchema(Fixtures.schema(version: "1.0.0", attributes: #"{"name": "x", "type": "int"}"#))
        let b = try makeSchema(Fixtures.schema(version: "1.0.1", attributes: #"{"name": "x", "type": "int"}"#))
        XCTAssertEqual(a.versionHash, b.versionHash)
    }
}
