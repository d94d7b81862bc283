import XCTest
@testable import Strata

/// Inserts and updates read an object's keys through one decoder: the same key errors
/// (code, message, entity, attribute, JSON path) in the same order, and each its own
/// keys besides attributes and relationships (`_onConflict` is an insert's only).
final class ObjectKeysTests: StoreTestCase {
    /// A new trip's required values, after the keys under test.
    let required = #""name": "T", "startDate": 0, "endDate": 1"#

    /// Asserts the error of an insert of `{keys, required}` and of an update of a saved trip with `{keys}`.
    func assertBoth(_ keys: String, _ code: StrataError.Code, _ message: String, path: String, attribute: String?,
                    file: StaticString = #filePath, line: UInt = #line) throws {
        let context = try openInMemory().makeContext()
        let saved = try context.insert(entity: "Trip", json: "{" + required + "}")
        try context.save()
        let inserted = assertError(code, file: file, line: line) { try context.insert(entity: "Trip", json: "{" + keys + ", " + required + "}") }
        let updated = assertError(code, file: file, line: line) { try context.update(id: saved.description, patch: "{" + keys + "}") }
        for (what, e) in [("insert", inserted), ("update", updated)] {
            XCTAssertEqual(e?.message, message, what, file: file, line: line)
            XCTAssertEqual(e?.entity, "Trip", what, file: file, line: line)
            XCTAssertEqual(e?.attribute, attribute, what, file: file, line: line)
            XCTAssertEqual(e?.path, path, what, file: file, line: line)
        }
        XCTAssertFalse(context.hasChanges, "a failed insert or update leaves no change", file: file, line: line)
    }

    func testAKeyGivenTwiceIsInvalidAtItsSecondOccurrence() throws {
        try assertBoth(#""destination": "a", "destination": "b""#, .invalid, "duplicate key 'destination' in JSON object",
                       path: "/destination", attribute: "destination")
        try assertBoth(#""bucketList": [], "bucketList": []"#, .invalid, "duplicate key 'bucketList' in JSON object",
                       path: "/bucketList", attribute: "bucketList")
        try assertBoth(#""tripViews": 1, "tripViews": 2"#, .invalid, "duplicate key 'tripViews' in JSON object",
                       path: "/tripViews", attribute: "tripViews")
        try assertBoth(#""_entity": "Trip", "_entity": "Trip""#, .invalid, "duplicate key '_entity' in JSON object",
                       path: "/_entity", attribute: "_entity")
    }

    func testAnUnknownKeyIsInvalidAndTheFirstErrorWins() throws {
        try assertBoth(#""nope": 1"#, .invalid, "'Trip' has no attribute or relationship 'nope'", path: "/nope", attribute: "nope")
        try assertBoth(#""nope": 1, "destination": "a", "destination": "b""#, .invalid,
                       "'Trip' has no attribute or relationship 'nope'", path: "/nope", attribute: "nope")
        try assertBoth(#""destination": 1, "nope": 1"#, .validation,
                       "'Trip.destination' (string): expected a string, found a number", path: "/destination", attribute: "destination")
    }

    func testOnConflictIsAnInsertsKeyOnly() throws {
        let context = try openInMemory().makeContext()
        let e = assertError(.invalid) { try context.insert(entity: "Trip", json: #"{"_onConflict": 1, "#  + required + "}") }
        XCTAssertEqual(e?.message, "expected a string at /_onConflict")
        XCTAssertEqual(e?.path, "/_onConflict")
        let saved = try context.insert(entity: "Trip", json: "{" + required + "}")
        // An update does not take it: an unknown key, whatever its value.
        let u = assertError(.invalid) { try context.update(id: saved.description, patch: #"{"_onConflict": 1}"#) }
        XCTAssertEqual(u?.message, "'Trip' has no attribute or relationship '_onConflict'")
        XCTAssertEqual(u?.attribute, "_onConflict")
        XCTAssertEqual(u?.path, "/_onConflict")
    }

    func testIdentifierKeysAreCheckedWhereTheyAreRead() throws {
        let context = try openInMemory().makeContext()
        let saved = try context.insert(entity: "Trip", json: "{" + required + "}")
        let i = assertError(.invalid) { try context.insert(entity: "Trip", json: #"{"_id": "x", "nope": 1, "# + required + "}") }
        XCTAssertEqual(i?.message, #"'_id' is not an identifier like "Trip/1" (the concrete entity, '/', and the key without leading zeros)"#)
        XCTAssertEqual(i?.path, "/_id")
        let u = assertError(.invalid) { try context.update(id: saved.description, patch: #"{"_id": "Trip/99", "nope": 1}"#) }
        XCTAssertEqual(u?.message, "'_id' does not match the updated object \(saved)")
        XCTAssertEqual(u?.path, "/_id")
        let t = assertError(.invalid) { try context.update(id: saved.description, patch: #"{"_entity": 1}"#) }
        XCTAssertEqual(t?.message, "expected a string at /_entity")
    }
}
