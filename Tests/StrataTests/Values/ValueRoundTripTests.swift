import XCTest
@testable import Strata

/// Every attribute type goes in as JSON, is saved, read back after a reopen,
/// and comes out equal (DESIGN §4 "Objects in/out"); ill-typed input is a
/// `.validation` error naming the entity, attribute and JSON path.
final class ValueRoundTripTests: StoreTestCase {
    static let schema = """
    {"version": "1", "entities": [{"name": "Value", "attributes": [
      {"name": "s", "type": "string", "optional": true},
      {"name": "i", "type": "int", "optional": true},
      {"name": "d", "type": "double", "optional": true},
      {"name": "b", "type": "bool", "optional": true},
      {"name": "t", "type": "date", "optional": true},
      {"name": "bytes", "type": "data", "optional": true},
      {"name": "u", "type": "uuid", "optional": true},
      {"name": "link", "type": "url", "optional": true},
      {"name": "money", "type": "decimal", "optional": true},
      {"name": "doc", "type": "json", "optional": true},
      {"name": "mood", "type": "string", "optional": true, "enum": ["happy", "sad"]},
      {"name": "level", "type": "int", "optional": true, "enum": [1, 2, 3]},
      {"name": "label", "type": "string", "default": "none"}]}]}
    """

    /// Inserts `json`, saves, reopens and returns the object read back, once per store setup.
    func roundTrip(_ json: String, file: StaticString = #filePath, line: UInt = #line,
                   _ check: (JSONValue, StoreSetup) throws -> Void) {
        forEachSetup(Self.schema, file: file, line: line) { h in
            let id = try h.context.insert(entity: "Value", json: json)
            // Pending (unsaved) reads already show the stored form.
            try check(try get(h.context, id), h.setup)
            try h.context.save()
            try h.reopen()
            try check(try get(h.context, id), h.setup)
        }
    }

    func testString() {
        let text = "Zoë 😀 \"quoted\" back\\slash /slash\nnew\ttab\rret \u{1}soh \u{1F}unit \u{2028}sep ü"
        var w = JSONWriter()
        w.beginObject(); w.key("s"); w.string(text); w.endObject()
        roundTrip(w.string) { v, setup in
            XCTAssertEqual(v["s"], .string(text), "\(setup)")
            XCTAssertEqual(v["s"]?.stringValue?.unicodeScalars.count, text.unicodeScalars.count)
        }
        roundTrip(#"{"s": "\u00e9\ud83d\ude00"}"#) { v, _ in XCTAssertEqual(v["s"], .string("é😀")) }
        // U+0000: SQLite keeps it; PostgreSQL's text type cannot hold it, and the save says so.
        forEachSetup(Self.schema) { h in
            let id = try h.context.insert(entity: "Value", json: #"{"s": "a\u0000nul"}"#)
            if h.setup == .postgres {
                XCTAssertThrowsError(try h.context.save()) { e in
                    XCTAssertEqual((e as? StrataError)?.code, .invalid)
                    XCTAssertTrue("\(e)".contains("NUL"), "\(e)")
                }
            } else {
                try h.context.save()
                try h.reopen()
                XCTAssertEqual(try get(h.context, id)["s"], .string("a\u{0}nul"))
            }
        }
        roundTrip(#"{"s": ""}"#) { v, _ in XCTAssertEqual(v["s"], .string("")) }
    }

    func testIntExtremes() {
        roundTrip(#"{"i": 9223372036854775807}"#) { v, _ in XCTAssertEqual(v["i"]?.numberText, "9223372036854775807") }
        roundTrip(#"{"i": -9223372036854775808}"#) { v, _ in XCTAssertEqual(v["i"]?.numberText, "-9223372036854775808") }
        roundTrip(#"{"i": 0}"#) { v, _ in XCTAssertEqual(v["i"]?.numberText, "0") }
        roundTrip(#"{"i": -1}"#) { v, _ in XCTAssertEqual(v["i"]?.numberText, "-1") }
        roundTrip(#"{"i": 4.0}"#) { v, _ in XCTAssertEqual(v["i"]?.numberText, "4") }
    }

    func testDouble() {
        for (input, expected) in [("3.141592653589793", 3.141592653589793), ("-0.5", -0.5), ("1e-300", 1e-300),
                                  ("1.7976931348623157e308", 1.7976931348623157e308), ("2", 2.0), ("0.1", 0.1)] {
            roundTrip(#"{"d": \#(input)}"#) { v, _ in
                XCTAssertEqual(v["d"]?.numberText.flatMap(Double.init), expected, input)
            }
        }
    }

    func testBool() {
        roundTrip(#"{"b": true}"#) { v, _ in XCTAssertEqual(v["b"], .bool(true)) }
        roundTrip(#"{"b": false}"#) { v, _ in XCTAssertEqual(v["b"], .bool(false)) }
    }

    func testDates() {
        let cases: [(String, String)] = [
            (#""2026-11-22T09:30:00Z""#, "2026-11-22T09:30:00Z"),
            (#""2026-11-22T10:30:00+01:00""#, "2026-11-22T09:30:00Z"),
            (#""2026-11-22T09:30:00.123Z""#, "2026-11-22T09:30:00.123Z"),
            ("0", "1970-01-01T00:00:00Z"),
            ("1700000000", "2023-11-14T22:13:20Z"),
            ("1700000000.5", "2023-11-14T22:13:20.500Z"),
            ("-86400", "1969-12-31T00:00:00Z"),
        ]
        for (input, expected) in cases {
            roundTrip(#"{"t": \#(input)}"#) { v, _ in XCTAssertEqual(v["t"], .string(expected), input) }
        }
    }

    func testData() {
        let bytes = (0...255).map { UInt8($0) }
        let b64 = Base64.encode(bytes)
        roundTrip(#"{"bytes": "\#(b64)"}"#) { v, _ in
            XCTAssertEqual(v["bytes"], .string(b64))
            XCTAssertEqual(v["bytes"]?.stringValue.flatMap { Base64.decode($0.utf8) }, bytes)
        }
        roundTrip(#"{"bytes": ""}"#) { v, _ in XCTAssertEqual(v["bytes"], .string(""), "empty data is not null") }
    }

    func testUUIDIsCanonicalOnOutput() {
        roundTrip(#"{"u": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"}"#) { v, _ in
            XCTAssertEqual(v["u"], .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        }
    }

    func testURL() {
        roundTrip(#"{"link": "https://example.com/a/b?c=d&e=%20#frag"}"#) { v, _ in
            XCTAssertEqual(v["link"], .string("https://example.com/a/b?c=d&e=%20#frag"))
        }
    }

    func testDecimalIsExact() {
        roundTrip(#"{"money": "12345678901234567890.123456789"}"#) { v, _ in
            XCTAssertEqual(v["money"], .string("12345678901234567890.123456789"))
        }
        // A JSON number keeps its exact text too (no trip through Double).
        roundTrip(#"{"money": 12345678901234567890.123456789}"#) { v, _ in
            XCTAssertEqual(v["money"], .string("12345678901234567890.123456789"))
        }
        // Kept exactly, in canonical form: trailing fraction zeros carry no value.
        roundTrip(#"{"money": "-0.10"}"#) { v, _ in XCTAssertEqual(v["money"], .string("-0.1")) }
    }

    func testJSONObjectAndArray() {
        let object = #"{"a": [1, 2.5, {"b": null}], "c": "x\"y", "d": {"e": true}}"#
        roundTrip(#"{"doc": \#(object)}"#) { v, _ in XCTAssertEqual(v["doc"], JSONValue.of(object)) }
        let array = #"[1, "two", false, null, [], {}]"#
        roundTrip(#"{"doc": \#(array)}"#) { v, _ in XCTAssertEqual(v["doc"], JSONValue.of(array)) }
        roundTrip(#"{"doc": "just text"}"#) { v, _ in XCTAssertEqual(v["doc"], .string("just text")) }
    }

    func testNullsAndDefaults() {
        roundTrip(#"{"s": null, "i": null, "doc": null}"#) { v, _ in
            XCTAssertEqual(v["s"], .null)
            XCTAssertEqual(v["i"], .null)
            XCTAssertEqual(v["doc"], .null)
            XCTAssertEqual(v["bytes"], .null)
            XCTAssertEqual(v["label"], .string("none"))
            XCTAssertEqual(v["_entity"], .string("Value"))
            XCTAssertEqual(v.keys.sorted(), ["_entity", "_id", "b", "bytes", "d", "doc", "i", "label", "level", "link", "money", "mood", "s", "t", "u"])
        }
    }

    func testEnumValues() {
        roundTrip(#"{"mood": "sad", "level": 3}"#) { v, _ in
            XCTAssertEqual(v["mood"], .string("sad"))
            XCTAssertEqual(v["level"]?.numberText, "3")
        }
    }

    func testAllTypesInOneObjectThroughUpdate() {
        forEachSetup(Self.schema) { h in
            let id = try h.context.insert(entity: "Value", json: #"{"s": "a"}"#)
            try h.context.save()
            try h.context.update(id: id.description, patch: #"""
                {"s": "b", "i": 7, "d": 0.25, "b": true, "t": "2000-01-01T00:00:00Z", "bytes": "AAEC",
                 "u": "00000000-0000-0000-0000-00000000000a", "link": "file:///tmp/x", "money": "1.10",
                 "doc": {"k": [1]}, "mood": "happy", "level": 1, "label": "set"}
                """#)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, id)
            XCTAssertEqual(v, JSONValue.of(#"""
                {"_id": "\#(id)", "_entity": "Value", "s": "b", "i": 7, "d": 0.25, "b": true, "t": "2000-01-01T00:00:00Z",
                 "bytes": "AAEC", "u": "00000000-0000-0000-0000-00000000000A", "link": "file:///tmp/x", "money": "1.1",
                 "doc": {"k": [1]}, "mood": "happy", "level": 1, "label": "set"}
                """#))
        }
    }

    // MARK: Rejected input

    func assertRejected(_ json: String, attribute: String, code: StrataError.Code = .validation,
                        file: StaticString = #filePath, line: UInt = #line) {
        forEachSetup(Self.schema, [.inMemory], file: file, line: line) { h in
            let e = assertError(code, file: file, line: line) { try h.context.insert(entity: "Value", json: json) }
            XCTAssertEqual(e?.entity, "Value", json, file: file, line: line)
            XCTAssertEqual(e?.attribute, attribute, json, file: file, line: line)
            XCTAssertEqual(e?.path, "/" + attribute, json, file: file, line: line)
            XCTAssertTrue(e?.message.contains("Value.\(attribute)") == true, e?.message ?? "", file: file, line: line)
            XCTAssertFalse(h.context.hasChanges, file: file, line: line)
            XCTAssertEqual(try count(h.context, "Value"), 0, file: file, line: line)
        }
    }

    func testWrongTypesAreRejected() {
        assertRejected(#"{"s": 5}"#, attribute: "s")
        assertRejected(#"{"s": ["a"]}"#, attribute: "s")
        assertRejected(#"{"i": "5"}"#, attribute: "i")
        assertRejected(#"{"i": 1.5}"#, attribute: "i")
        assertRejected(#"{"i": 9223372036854775808}"#, attribute: "i")
        assertRejected(#"{"i": true}"#, attribute: "i")
        assertRejected(#"{"d": "1.0"}"#, attribute: "d")
        assertRejected(#"{"d": 1e999}"#, attribute: "d")
        assertRejected(#"{"b": 1}"#, attribute: "b")
        assertRejected(#"{"b": "true"}"#, attribute: "b")
        assertRejected(#"{"t": "yesterday"}"#, attribute: "t")
        assertRejected(#"{"t": "2026-02-30T00:00:00Z"}"#, attribute: "t")
        assertRejected(#"{"t": true}"#, attribute: "t")
        assertRejected(#"{"bytes": "not base64!"}"#, attribute: "bytes")
        assertRejected(#"{"bytes": [1, 2]}"#, attribute: "bytes")
        assertRejected(#"{"u": "not-a-uuid"}"#, attribute: "u")
        assertRejected(#"{"u": "e621e1f8c36c495a93fc0c247a3e6e5f"}"#, attribute: "u")
        assertRejected(#"{"link": 5}"#, attribute: "link")
        assertRejected(#"{"link": "has space"}"#, attribute: "link")
        assertRejected(#"{"link": ""}"#, attribute: "link")
        assertRejected(#"{"money": "abc"}"#, attribute: "money")
        assertRejected(#"{"money": true}"#, attribute: "money")
        assertRejected(#"{"money": "NaN"}"#, attribute: "money")
    }

    func testNullOnARequiredAttributeIsRejected() {
        assertRejected(#"{"label": null}"#, attribute: "label")
    }

    func testMissingRequiredValueIsRejected() {
        forEachSetup(#"{"version": "1", "entities": [{"name": "R", "attributes": [{"name": "need", "type": "string"}]}]}"#, [.inMemory]) { h in
            let e = assertError(.validation) { try h.context.insert(entity: "R", json: "{}") }
            XCTAssertEqual(e?.entity, "R")
            XCTAssertEqual(e?.attribute, "need")
            XCTAssertFalse(h.context.hasChanges)
        }
    }

    func testEnumViolationIsRejected() {
        assertRejected(#"{"mood": "angry"}"#, attribute: "mood")
        assertRejected(#"{"level": 4}"#, attribute: "level")
        assertRejected(#"{"level": "1"}"#, attribute: "level")
    }

    func testRejectedInNestedArrayNamesTheElementPath() throws {
        let context = try openInMemory(Self.schema).makeContext()
        let e = assertError(.validation) { try context.insertMany(entity: "Value", json: #"[{"i": 1}, {"i": 2}, {"i": "x"}]"#) }
        XCTAssertEqual(e?.path, "/2/i")
        XCTAssertEqual(e?.attribute, "i")
        XCTAssertFalse(context.hasChanges)
    }

    func testRejectedUpdateChangesNothing() {
        forEachSetup(Self.schema) { h in
            let id = try h.context.insert(entity: "Value", json: #"{"s": "keep", "i": 1}"#)
            try h.context.save()
            let e = assertError(.validation) { try h.context.update(id: id.description, patch: #"{"s": "changed", "i": "two"}"#) }
            XCTAssertEqual(e?.path, "/i")
            XCTAssertEqual(e?.attribute, "i")
            XCTAssertFalse(h.context.hasChanges)
            assertError(.validation) { try h.context.update(id: id.description, patch: #"{"label": null}"#) }
            assertError(.validation) { try h.context.update(id: id.description, patch: #"{"mood": "meh"}"#) }
            XCTAssertFalse(h.context.hasChanges)
            try h.reopen()
            let v = try get(h.context, id)
            XCTAssertEqual(v["s"], .string("keep"))
            XCTAssertEqual(v["i"]?.numberText, "1")
        }
    }

    func testUnknownKeyIsInvalidAndNamed() throws {
        let context = try openInMemory(Self.schema).makeContext()
        let e = assertError(.invalid) { try context.insert(entity: "Value", json: #"{"sss": 1}"#) }
        XCTAssertEqual(e?.path, "/sss")
        XCTAssertTrue(e?.message.contains("sss") == true)
        XCTAssertFalse(context.hasChanges)
    }

    func testMalformedJSONIsInvalid() throws {
        let context = try openInMemory(Self.schema).makeContext()
        assertError(.invalid) { try context.insert(entity: "Value", json: #"{"s": "a""#) }
        assertError(.invalid) { try context.insert(entity: "Value", json: #"{"s": "a"} trailing"#) }
        assertError(.invalid) { try context.insert(entity: "Value", json: #"[]"#) }
        assertError(.invalid) { try context.insert(entity: "Value", json: #"{"s": "a", "s": "b"}"#) }
        XCTAssertFalse(context.hasChanges)
    }
}
