import XCTest
@testable import Strata

/// `JSONReader.readValue`'s two errors that name a JSON path (a duplicate key, nesting past the
/// limit): the path of the place, below the caller's own, however deep; other values read as before.
final class JSONTreeErrorTests: XCTestCase {
    private func failure(_ json: String, at base: JSONPath = JSONPath(), maxLevels: Int = .max) -> StrataError? {
        var text = json
        return text.withUTF8 { b -> StrataError? in
            var r = JSONReader(b)
            do {
                _ = try r.readValue(at: base, maxLevels: maxLevels)
                return nil
            } catch let e as StrataError {
                return e
            } catch {
                XCTFail("not a StrataError: \(error)")
                return nil
            }
        }
    }

    func testDuplicateKeyNamesItsPath() throws {
        let top = try XCTUnwrap(failure(#"{"a": 1, "a": 2}"#))
        XCTAssertEqual(top.code, .invalid)
        XCTAssertEqual(top.path, "/a")
        XCTAssertEqual(top.message, "duplicate key in JSON object at /a")

        let deep = try XCTUnwrap(failure(#"{"x": [0, {"y": [{}, {"k": 1, "k": 2}]}]}"#))
        XCTAssertEqual(deep.path, "/x/1/y/1/k")
        XCTAssertEqual(deep.message, "duplicate key in JSON object at /x/1/y/1/k")

        let based = try XCTUnwrap(failure(#"[{"s/t": {"~": 1, "~": 1}}]"#, at: JSONPath() / "entities" / 3))
        XCTAssertEqual(based.path, "/entities/3/0/s~1t/~0", "tokens escaped as JSON pointers")
    }

    func testNestingLimitNamesItsPath() throws {
        XCTAssertNil(failure(#"{"x": [1]}"#, maxLevels: 2))
        let deep = try XCTUnwrap(failure(#"{"x": [[1]]}"#, maxLevels: 2))
        XCTAssertEqual(deep.code, .invalid)
        XCTAssertEqual(deep.path, "/x/0")
        XCTAssertEqual(deep.message, "JSON value nests deeper than 2 levels at /x/0")

        let top = try XCTUnwrap(failure("[]", at: JSONPath() / "p", maxLevels: 0))
        XCTAssertEqual(top.path, "/p")
        XCTAssertEqual(try XCTUnwrap(failure("[]", maxLevels: 0)).path, "")
    }

    func testValuesReadAsBefore() throws {
        var text = #"{"a": [1, "two", null, true, {"b": -2.5e3}], "c": {}}"#
        let value = try text.withUTF8 { b -> JSONValue in
            var r = JSONReader(b)
            return try r.readValue()
        }
        XCTAssertEqual(value, .object([("a", .array([.number("1"), .string("two"), .null, .bool(true), .object([("b", .number("-2.5e3"))])])),
                                       ("c", .object([]))]))
    }

    func testSyntaxErrorsInsideKeepTheirOffsets() throws {
        let e = try XCTUnwrap(failure(#"{"a": [1, 2,]}"#))
        XCTAssertEqual(e.code, .invalid)
        XCTAssertNotNil(e.message.range(of: "offset"), e.message)
    }

    /// Past a dozen keys an object's keys are hashed, not scanned: a duplicate is found either side
    /// of that point, and objects beside and inside one another keep their own members.
    func testManyKeysAndNestedContainers() throws {
        let keys = (0..<20).map { "k\($0)" }
        func object(_ names: [String]) -> String { "{" + names.map { "\"\($0)\": 1" }.joined(separator: ", ") + "}" }
        XCTAssertNil(failure(object(keys)))
        for (dup, at) in [(3, 5), (3, 15), (14, 17), (0, 12), (11, 12)] {
            var names = keys
            names.insert(keys[dup], at: at)
            let e = try XCTUnwrap(failure(#"{"a": [\#(object(names))]}"#), "\(dup) at \(at)")
            XCTAssertEqual(e.path, "/a/0/\(keys[dup])")
        }
        var text = #"{"a": {"x": [1, [2, 3], {"y": []}], "z": {}}, "b": [[], [{}], "s"], "c": {"a": 1, "b": {"a": 2}}}"#
        let value = try text.withUTF8 { b -> JSONValue in
            var r = JSONReader(b)
            return try r.readValue()
        }
        XCTAssertEqual(value.text, #"{"a":{"x":[1,[2,3],{"y":[]}],"z":{}},"b":[[],[{}],"s"],"c":{"a":1,"b":{"a":2}}}"#)
        XCTAssertNotNil(failure(#"{"c": {"a": 1, "b": {"a": 2}, "a": 3}}"#), "a key of an outer object repeated after an inner one")
        XCTAssertNil(failure(#"{"a": {"a": {"a": 1}}, "b": {"a": 1}}"#), "the same key in different objects")
    }
}
