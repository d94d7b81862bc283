import XCTest
@testable import Strata

/// A process decodes each schema text once (``DecodedSchemas``): the same text, however it is
/// spaced, gives the schema decoded before; another text is decoded; a schema with an error is
/// never kept (each decode reports it); the cache stays bounded.
final class SchemaCacheTests: StoreTestCase {
    func testTheSameTextGivesTheSchemaDecodedBefore() throws {
        let a = try SchemaDecoder.decode(Fixtures.sampleTrips)
        let b = try SchemaDecoder.decode(Fixtures.sampleTrips)
        XCTAssertTrue(a === b)
        // The key is the minified text Strata writes: spacing does not matter.
        let respaced = try SchemaDecoder.decode(try JSONValue.parse(Fixtures.sampleTrips).text)
        XCTAssertTrue(a === respaced)
        XCTAssertEqual(a.jsonText, try JSONValue.parse(Fixtures.sampleTrips).text)
        // Through a configuration too.
        let config = try StoreConfiguration.decode(#"{"schema": \#(Fixtures.sampleTrips)}"#)
        XCTAssertTrue(config.schema === a)
    }

    func testAnotherTextIsDecoded() throws {
        let one = try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "title", "type": "string"}"#))
        let two = try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "title", "type": "string", "optional": true}"#))
        XCTAssertFalse(one === two)
        XCTAssertNotEqual(one.versionHash, two.versionHash)
        XCTAssertEqual(try XCTUnwrap(two.entity(named: "Thing")?.attributeByName["title"]).isOptional, true)
        // A number's text is part of the key: 1 and 1.5 are different defaults.
        let d1 = try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "n", "type": "double", "default": 1}"#))
        let d2 = try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "n", "type": "double", "default": 1.5}"#))
        XCTAssertFalse(d1 === d2)
    }

    func testASchemaWithAnErrorIsReportedEveryTime() {
        let bad = Fixtures.schema(attributes: #"{"name": "title", "type": "strng"}"#)
        for _ in 0..<2 {
            let e = assertError(.schema) { try SchemaDecoder.decode(bad) }
            XCTAssertEqual(e?.path, "/entities/0/attributes/0/type")
        }
    }

    func testTheCacheIsBounded() throws {
        for i in 0..<(DecodedSchemas.capacity * 3) {
            _ = try SchemaDecoder.decode(Fixtures.schema(version: "cache-\(i)", attributes: #"{"name": "title", "type": "string"}"#))
        }
        XCTAssertLessThanOrEqual(DecodedSchemas.shared.count, DecodedSchemas.capacity)
        // The newest is still there.
        let last = Fixtures.schema(version: "cache-\(DecodedSchemas.capacity * 3 - 1)", attributes: #"{"name": "title", "type": "string"}"#)
        XCTAssertNotNil(DecodedSchemas.shared.schema(try JSONValue.parse(last).text))
    }
}
