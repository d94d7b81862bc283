import XCTest
@testable import Strata

/// A process decodes a schema text in use once (``DecodedSchemas``): the same text, however it
/// is spaced, gives the schema decoded before while it is in use; another text is decoded; a
/// schema with an error is never kept (each decode reports it); a schema no longer in use is
/// freed; the cache stays bounded.
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
        func text(_ i: Int) -> String { Fixtures.schema(version: "cache-\(i)", attributes: #"{"name": "title", "type": "string"}"#) }
        // All of them in use: the oldest are forgotten past the capacity.
        let inUse = try (0..<(DecodedSchemas.capacity * 3)).map { try SchemaDecoder.decode(text($0)) }
        XCTAssertLessThanOrEqual(DecodedSchemas.shared.count, DecodedSchemas.capacity)
        XCTAssertTrue(DecodedSchemas.shared.schema(try JSONValue.parse(text(inUse.count - 1)).text) === inUse.last)
        XCTAssertNil(DecodedSchemas.shared.schema(try JSONValue.parse(text(0)).text))
    }

    /// The cache never keeps a schema alive: once nothing uses it, it is freed and decoded again.
    func testASchemaNoLongerInUseIsNotKept() throws {
        let json = Fixtures.schema(version: "released", attributes: #"{"name": "title", "type": "string"}"#)
        weak var released: Schema?
        do {
            let s = try SchemaDecoder.decode(json)
            released = s
            XCTAssertTrue(DecodedSchemas.shared.schema(s.jsonText) === s)
        }
        XCTAssertNil(released)
        XCTAssertNil(DecodedSchemas.shared.schema(try JSONValue.parse(json).text))
        XCTAssertEqual(try SchemaDecoder.decode(json).version, "released")
    }
}
