import XCTest
@testable import Strata

/// Composite attributes migrate lightweight like the attributes that store their fields:
/// fields added, renamed (`originalName` on the field or on the composite), an optional
/// composite made required, a composite added; a nil composite keeps nil fields.
final class CompositeMigrationTests: MigrationTestCase {
    static let v1 = #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "address", "type": "composite", "optional": true, "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "string", "optional": true}]}]}"#

    private func seed() throws -> [String] {
        try makeStore(schema("1", Self.v1), [("Trip", #"{"name": "Paris", "address": {"city": "Paris", "zip": "75001"}}"#),
                                            ("Trip", #"{"name": "Nowhere", "address": null}"#),
                                            ("Trip", #"{"name": "Lyon", "address": {"city": "Lyon"}}"#)])
    }

    func testFieldsAddedAndRenamedAndACompositeRenamedAndAdded() throws {
        let ids = try seed()
        let v2 = schema("2", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "place", "type": "composite", "optional": true, "originalName": "address", "fields": [{"name": "city", "type": "string"}, {"name": "postcode", "type": "string", "optional": true, "originalName": "zip"}, {"name": "note", "type": "string", "optional": true}, {"name": "country", "type": "string", "default": "FR"}]}, {"name": "budget", "type": "composite", "fields": [{"name": "amount", "type": "double", "default": 0}]}], "indexes": [["place.postcode"]]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), Set(ids))
        XCTAssertEqual(value(all, ids[0], "place"), try JSONValue.parse(#"{"city": "Paris", "postcode": "75001", "note": null, "country": "FR"}"#))
        XCTAssertEqual(value(all, ids[1], "place"), .null)
        XCTAssertEqual(value(all, ids[2], "place"), try JSONValue.parse(#"{"city": "Lyon", "postcode": null, "note": null, "country": "FR"}"#))
        for id in ids { XCTAssertEqual(value(all, id, "budget"), try JSONValue.parse(#"{"amount": 0.0}"#)) }
        // A nil composite's new field stays nil (not its default), so its fields test as nil.
        let ctx = try c.makeContext()
        let d = try FetchDescriptor.decode(try JSONValue.parse(#"{"entity": "Trip", "predicate": "$0.place?.country == nil"}"#), schema: ctx.schema)
        XCTAssertEqual(try parse(ctx.fetch(d)).array?.compactMap { $0["name"]?.stringValue }, ["Nowhere"])
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(),
                       ["_entity", "_pk", "budget", "budget.amount", "name", "place", "place.city", "place.country", "place.note", "place.postcode"])
    }

    func testAnOptionalCompositeMadeRequiredTakesItsFieldsDefaults() throws {
        let ids = try seed()
        let v2 = schema("2", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "address", "type": "composite", "fields": [{"name": "city", "type": "string", "default": "?"}, {"name": "zip", "type": "string", "optional": true}]}]}"#)
        let all = try objects(try open(config: #"{"schema": \#(v2)}"#), "Trip")
        XCTAssertEqual(value(all, ids[0], "address"), try JSONValue.parse(#"{"city": "Paris", "zip": "75001"}"#))
        XCTAssertEqual(value(all, ids[1], "address"), try JSONValue.parse(#"{"city": "?", "zip": null}"#))
    }

    func testARequiredFieldWithoutADefaultIsRefusedWhereACompositeHasAValue() throws {
        try seed()
        let v2 = schema("2", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "address", "type": "composite", "optional": true, "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "string", "optional": true}, {"name": "country", "type": "string"}]}]}"#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.attribute, "address.country")
        XCTAssertTrue(e?.message.contains("Trip/1") == true, e?.message ?? "")
        // The store is left at version 1.
        let all = try objects(try open(config: #"{"schema": \#(schema("1", Self.v1))}"#), "Trip")
        XCTAssertEqual(all.count, 3)
    }
}
