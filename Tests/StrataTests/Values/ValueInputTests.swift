import XCTest
@testable import Strata

/// Input rules that keep every stored value writable again: big JSON objects
/// are read in linear time, dates stay within years 0000-9999, decimals are
/// stored canonically, `json` values nest within a limit that leaves room for
/// the objects and arrays reads wrap them in, and errors inside a `json` value
/// name the path inside it.
final class ValueInputTests: StoreTestCase {
    static let schema = """
    {"version": "1", "entities": [{"name": "Value", "attributes": [
      {"name": "code", "type": "string", "optional": true, "unique": true},
      {"name": "t", "type": "date", "optional": true},
      {"name": "money", "type": "decimal", "optional": true, "unique": true},
      {"name": "doc", "type": "json", "optional": true}]}]}
    """

    /// `{"k0": 0, "k1": 1, …}` with `count` distinct keys, and optionally `"k0"` once more at the end.
    static func bigObject(_ count: Int, duplicateAtEnd: Bool = false) -> String {
        var s = "{"
        s.reserveCapacity(count * 12)
        for i in 0..<count { s += i == 0 ? "\"k\(i)\":\(i)" : ",\"k\(i)\":\(i)" }
        if duplicateAtEnd { s += ",\"k0\":-1" }
        return s + "}"
    }

    // MARK: Many keys (linear duplicate checks)

    // 200,000 keys: about a second here; with a linear scan per key (quadratic in all)
    // each of these reads took minutes.
    static let manyKeys = 200_000

    func testAJSONValueWithManyKeysIsReadInLinearTime() throws {
        let context = try openInMemory(Self.schema).makeContext()
        let big = Self.bigObject(Self.manyKeys)
        let id = try context.insert(entity: "Value", json: #"{"doc": \#(big)}"#)
        try context.save()
        guard case .object(let members)? = try get(context, id)["doc"] else { return XCTFail("doc is not an object") }
        XCTAssertEqual(members.count, Self.manyKeys)
        XCTAssertEqual(members.last?.0, "k\(Self.manyKeys - 1)")

        // A duplicate among them is still found, naming its path and not its value.
        let e = assertError(.validation) {
            try context.insert(entity: "Value", json: #"{"doc": \#(Self.bigObject(Self.manyKeys, duplicateAtEnd: true))}"#)
        }
        XCTAssertEqual(e?.path, "/doc/k0")
        XCTAssertEqual(e?.attribute, "doc")
        XCTAssertFalse(e?.message.contains("-1") ?? true, e?.message ?? "")
        XCTAssertFalse(context.hasChanges)
    }

    func testAConfigurationWithManyKeysIsReadInLinearTime() throws {
        let big = Self.bigObject(Self.manyKeys)
        let config = #"""
            {"schema": {"version": "1", "entities": [{"name": "A", "attributes": [
              {"name": "doc", "type": "json", "default": \#(big)}]}]}}
            """#
        let c = try StoreConfiguration.decode(config)
        XCTAssertEqual(c.schema.entity(named: "A")?.attributes.first?.name, "doc")
        XCTAssertEqual(try JSONValue.parse(big), try JSONValue.parse(big), "equality of big objects")

        let e = assertError(.invalid) { try StoreConfiguration.decode(config.replacingOccurrences(of: big, with: Self.bigObject(Self.manyKeys, duplicateAtEnd: true))) }
        XCTAssertEqual(e?.path, "/schema/entities/0/attributes/0/default/k0")
    }

    func testKeySetFindsDuplicatesOnBothSidesOfItsThreshold() {
        for n in [1, 5, 12, 13, 14, 40] {
            var set = KeySet()
            for i in 0..<n { XCTAssertTrue(set.insert("k\(i)"), "\(n) \(i)") }
            for i in 0..<n { XCTAssertFalse(set.insert("k\(i)"), "\(n) \(i)") }
            XCTAssertTrue(set.insert("new"))
        }
    }

    // MARK: Duplicate keys inside a json value

    func testADuplicateKeyInsideAJSONValueNamesItsPath() {
        forEachSetup(Self.schema, [.inMemory]) { h in
            for (json, path) in [(#"{"doc": {"a": "secret-1", "a": "secret-2"}}"#, "/doc/a"),
                                 (#"{"doc": {"meta": {"x": 1, "a": "secret-1", "a": "secret-2"}}}"#, "/doc/meta/a"),
                                 (#"{"doc": [0, {"b": [{"a": "secret-1", "a": "secret-2"}]}]}"#, "/doc/1/b/0/a")] {
                let e = assertError(.validation) { try h.context.insert(entity: "Value", json: json) }
                XCTAssertEqual(e?.path, path, json)
                XCTAssertEqual(e?.entity, "Value")
                XCTAssertEqual(e?.attribute, "doc")
                XCTAssertFalse(e?.message.contains("secret") ?? true, e?.message ?? "")
                // Through update, and nested in insert_many.
                let u = assertError(.validation) { try h.context.insertMany(entity: "Value", json: "[\(json)]") }
                XCTAssertEqual(u?.path, "/0" + path, json)
            }
            XCTAssertFalse(h.context.hasChanges)
        }
    }

    // MARK: Dates

    func testDatesOutsideYears0000To9999AreRejected() {
        let outside = [
            "253402300800", "253402300800.5", "-62167219200.001", "-62167219201", "1e300", "-1e300", "253402300799.9999999",
            #""9999-12-31T23:59:60Z""#, #""9999-12-31T23:59:59-00:01""#, #""0000-01-01T00:00:00+00:01""#,
            #""0000-01-01T00:30:00+01:00""#,
        ]
        forEachSetup(Self.schema, [.inMemory]) { h in
            let id = try h.context.insert(entity: "Value", json: #"{"code": "a"}"#)
            for value in outside {
                let e = assertError(.validation) { try h.context.insert(entity: "Value", json: #"{"t": \#(value)}"#) }
                XCTAssertEqual(e?.entity, "Value", value)
                XCTAssertEqual(e?.attribute, "t", value)
                XCTAssertEqual(e?.path, "/t", value)
                XCTAssertTrue(e?.message.contains("date out of range") == true, e?.message ?? "")
                let u = assertError(.validation) { try h.context.update(id: id.description, patch: #"{"t": \#(value)}"#) }
                XCTAssertEqual(u?.path, "/t", value)
            }
            XCTAssertEqual(try get(h.context, id)["t"], .null)
        }
    }

    func testDatesAtTheBoundsRoundTrip() {
        let inside: [(String, String)] = [
            (#""0000-01-01T00:00:00Z""#, "0000-01-01T00:00:00Z"),
            ("-62167219200", "0000-01-01T00:00:00Z"),
            (#""0000-01-01T01:00:00+01:00""#, "0000-01-01T00:00:00Z"),
            (#""9999-12-31T23:59:59.999Z""#, "9999-12-31T23:59:59.999Z"),
            (#""9999-12-31T23:59:59Z""#, "9999-12-31T23:59:59Z"),
            ("253402300799", "9999-12-31T23:59:59Z"),
            (#""9999-12-31T22:59:59+00:00""#, "9999-12-31T22:59:59Z"),
        ]
        forEachSetup(Self.schema) { h in
            for (input, output) in inside {
                let id = try h.context.insert(entity: "Value", json: #"{"t": \#(input)}"#)
                try h.context.save()
                try h.reopen()
                let first = try get(h.context, id)
                XCTAssertEqual(first["t"], .string(output), input)
                // What came out goes back in and comes out the same.
                var again = first
                if case .object(let members) = first { again = .object(members.filter { $0.0 != "_id" }) }
                let copy = try h.context.insert(entity: "Value", json: again.text)
                try h.context.update(id: id.description, patch: first.text)
                try h.context.save()
                XCTAssertEqual(try get(h.context, copy)["t"], .string(output), input)
                XCTAssertEqual(try get(h.context, id)["t"], .string(output), input)
            }
        }
    }

    func testDateDefaultsOutsideTheRangeAreSchemaErrors() {
        for value in ["253402300800", #""9999-12-31T23:59:59-01:00""#, "-62167219201"] {
            let schema = Fixtures.schema(attributes: #"{"name": "t", "type": "date", "default": \#(value)}"#)
            let e = assertError(.schema) { try SchemaDecoder.decode(schema) }
            XCTAssertEqual(e?.path, "/entities/0/attributes/0/default", value)
            XCTAssertTrue(e?.message.contains("date out of range") == true, e?.message ?? "")
        }
        XCTAssertNoThrow(try SchemaDecoder.decode(Fixtures.schema(attributes: #"{"name": "t", "type": "date", "default": "9999-12-31T23:59:59Z"}"#)))
    }

    func testDateLiteralsOutsideTheRangeAreInvalidPredicates() throws {
        let schema = try makeSchema(Self.schema)
        for literal in [#"{"date": "9999-12-31T23:59:60Z"}"#, #"{"date": 253402300800}"#, #"{"date": -62167219201}"#] {
            let d = #"{"entity": "Value", "predicate": {">": [{"key": "t"}, \#(literal)]}}"#
            let e = assertError(.invalid) { try FetchDescriptor.decode(JSONValue.parse(d), schema: schema) }
            XCTAssertEqual(e?.path, "/predicate/>/1", literal)
            XCTAssertTrue(e?.message.contains("date out of range") == true, e?.message ?? "")
        }
        let ok = #"{"entity": "Value", "predicate": {">": [{"key": "t"}, {"date": "9999-12-31T23:59:59Z"}]}}"#
        XCTAssertNoThrow(try FetchDescriptor.decode(JSONValue.parse(ok), schema: schema))
    }

    // MARK: Decimals

    func testEqualDecimalsCollideOnAUniqueConstraint() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Value", json: #"{"money": "1.5", "code": "a"}"#)
            try h.context.save()
            try h.reopen()
            for same in [#""1.50""#, "1.5", "1.500", #""15e-1""#, #""+01.5""#, "0.15e1"] {
                let e = assertError(.constraint) {
                    try h.context.insert(entity: "Value", json: #"{"money": \#(same), "_onConflict": "error"}"#)
                }
                XCTAssertEqual(e?.attribute, "money", same)
                // Upsert finds the same object.
                XCTAssertEqual(try h.context.insert(entity: "Value", json: #"{"money": \#(same)}"#), a, same)
            }
            // Against a pending insert too.
            let b = try h.context.insert(entity: "Value", json: #"{"money": "2.50"}"#)
            XCTAssertEqual(try h.context.insert(entity: "Value", json: #"{"money": 2.5, "code": "b"}"#), b)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, a)["money"], .string("1.5"))
            XCTAssertEqual(try get(h.context, b)["money"], .string("2.5"))
            XCTAssertEqual(try get(h.context, b)["code"], .string("b"))
            XCTAssertEqual(try count(h.context, "Value"), 2)
        }
    }

    // MARK: Nesting of json values

    /// `levels` nested arrays around a 0.
    static func nested(_ levels: Int) -> String { String(repeating: "[", count: levels) + "0" + String(repeating: "]", count: levels) }

    func testEveryStoredJSONValueCanBeWrittenBack() {
        let limit = ValueCodec.maxJSONValueLevels
        forEachSetup(Self.schema) { h in
            let id = try h.context.insert(entity: "Value", json: #"{"code": "deep", "doc": \#(Self.nested(limit))}"#)
            try h.context.save()
            try h.reopen()
            // What get and fetch return is accepted by insert, insert_many and update.
            let object = try h.context.get(id: id.description)
            try h.context.update(id: id.description, patch: String(decoding: object, as: UTF8.self))
            let fetched = try h.context.fetch(FetchDescriptor(entity: try XCTUnwrap(h.context.schema.entity(named: "Value"))))
            XCTAssertEqual(try h.context.insertMany(entity: "Value", json: String(decoding: fetched, as: UTF8.self)), [id],
                           "upserts on the unique code: '_id' names that object")
            try h.context.save()
            XCTAssertEqual(try get(h.context, id)["doc"], try JSONValue.parse(Self.nested(limit)))
        }
    }

    func testJSONValuesNestedDeeperThanTheLimitAreRejected() {
        let limit = ValueCodec.maxJSONValueLevels
        forEachSetup(Self.schema, [.inMemory]) { h in
            // 127 levels went in before and could not be written back.
            for levels in [limit + 1, 127] {
                let e = assertError(.validation) { try h.context.insert(entity: "Value", json: #"{"doc": \#(Self.nested(levels))}"#) }
                XCTAssertEqual(e?.attribute, "doc")
                XCTAssertEqual(e?.path, "/doc" + String(repeating: "/0", count: limit), "the path of the value one level too deep")
                XCTAssertTrue(e?.message.contains("\(limit) levels") == true, e?.message ?? "")
            }
            let objects = #"{"doc": \#(String(repeating: #"{"a":"#, count: limit + 1))0\#(String(repeating: "}", count: limit + 1))}"#
            assertError(.validation) { try h.context.insert(entity: "Value", json: objects) }
            XCTAssertFalse(h.context.hasChanges)
        }
    }
}
