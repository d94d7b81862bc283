import XCTest
@testable import Strata

/// `StrataError.reason`: what the library decides on when it handles a failure
/// (never the message text), and what `strata_last_error()` reports as "reason".
final class ErrorReasonTests: StoreTestCase {
    static let people = #"""
        {"version": "1", "entities": [
          {"name": "Person", "attributes": [
             {"name": "email", "type": "string", "unique": true},
             {"name": "name", "type": "string", "optional": true}]},
          {"name": "Pet", "attributes": [{"name": "name", "type": "string"}, {"name": "kind", "type": "string"}],
           "uniqueConstraints": [["name", "kind"]]}]}
        """#

    // MARK: malformedJSON

    func testMalformedJSONInAnInsertStaysInvalidWhileAWrongValueIsValidation() throws {
        let context = try openInMemory().makeContext()
        let trip = #""startDate": 0, "endDate": 1"#
        var e = assertError(.invalid) { try context.insert(entity: "Trip", json: #"{"name": "x\u00", "# + trip + "}") }
        XCTAssertEqual(e?.reason, .malformedJSON)
        // A well-formed value of the wrong kind is a value error, and has no reason.
        e = assertError(.validation) { try context.insert(entity: "Trip", json: #"{"name": 5, "# + trip + "}") }
        XCTAssertNil(e?.reason)
        // A wrong value before a syntax error: the syntax error is reported.
        e = assertError(.invalid) { try context.insert(entity: "Trip", json: #"{"name": 5, "# + trip + ",}") }
        XCTAssertEqual(e?.reason, .malformedJSON)
        XCTAssertTrue(e?.message.hasPrefix("malformed JSON at offset") == true, e?.message ?? "")
        XCTAssertFalse(context.hasChanges)
    }

    func testMalformedJSONInAPatchStaysInvalidWhileAWrongValueIsValidation() throws {
        let context = try openInMemory().makeContext()
        let id = try context.insert(entity: "Trip", json: #"{"name": "T", "startDate": 0, "endDate": 1}"#).description
        var e = assertError(.validation) { try context.update(id: id, patch: #"{"endDate": true}"#) }
        XCTAssertNil(e?.reason)
        e = assertError(.invalid) { try context.update(id: id, patch: #"{"endDate": true, "name": "#) }
        XCTAssertEqual(e?.reason, .malformedJSON)
        XCTAssertEqual(e?.message, "malformed JSON: unexpected end of input, expected a value")
        // A syntax error inside an attribute's value: the value reader's error keeps its code.
        e = assertError(.invalid) { try context.update(id: id, patch: #"{"name": "x\u00"}"#) }
        XCTAssertEqual(e?.reason, .malformedJSON)
        XCTAssertEqual(e?.attribute, "name")
        XCTAssertEqual(e?.message, "'Trip.name' (string): malformed JSON at offset 15: invalid \\u escape")
    }

    // MARK: uniqueViolation

    func testAUniqueViolationAtSaveNamesItsAttributesWithoutReadingSQLiteText() {
        forEachSetup(Self.people) { h in
            _ = try h.context.insertMany(entity: "Person", json: #"[{"email": "a@x"}, {"email": "b@x"}]"#)
            _ = try h.context.insertMany(entity: "Pet", json: #"[{"name": "Rex", "kind": "dog"}, {"name": "Rex", "kind": "cat"}]"#)
            try h.context.save()
            // Updates are checked by the store's unique indexes when saved.
            let b = try XCTUnwrap(self.identifiers(h.context, "Person").last)
            try h.context.update(id: b, patch: #"{"email": "a@x"}"#)
            var e = self.assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(e?.reason, .uniqueViolation(attributes: ["email"]))
            XCTAssertEqual(e?.attribute, "email")
            XCTAssertEqual(e?.message, "cannot save \(b): the update violates a unique constraint of 'Person' (email)")
            h.context.rollback()

            let cat = try XCTUnwrap(self.identifiers(h.context, "Pet").last)
            try h.context.update(id: cat, patch: #"{"kind": "dog"}"#)
            e = self.assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(e?.reason, .uniqueViolation(attributes: ["name", "kind"]))
            XCTAssertNil(e?.attribute)
            XCTAssertEqual(e?.message, "cannot save \(cat): the update violates a unique constraint of 'Pet' (name, kind)")
            XCTAssertTrue(e?.json.contains(#""reason":"unique_violation""#) == true, e?.json ?? "")
            h.context.rollback()
            XCTAssertEqual(try self.count(h.context, "Pet"), 2)
        }
    }

    func testAnInsertMeetingAnObjectSavedMeanwhileIsResolvedByTheReason() throws {
        let container = try openFile(Self.people)
        let (mine, theirs) = (try container.makeContext(), try container.makeContext())
        // An upsert (the default) made before another context saves the same key: it updates the saved object.
        _ = try mine.insert(entity: "Person", json: #"{"email": "a@x", "name": "mine"}"#)
        _ = try theirs.insert(entity: "Person", json: #"{"email": "a@x", "name": "theirs"}"#)
        try theirs.save()
        try mine.save()
        let people = try fetch(container.makeContext(), "Person")
        XCTAssertEqual(people.map { $0["name"] }, [.string("mine")])

        // An error insert fails, naming the key.
        _ = try mine.insert(entity: "Person", json: #"{"email": "b@x", "_onConflict": "error"}"#)
        _ = try theirs.insert(entity: "Person", json: #"{"email": "b@x"}"#)
        try theirs.save()
        var e = assertError(.constraint) { try mine.save() }
        XCTAssertEqual(e?.reason, .uniqueViolation(attributes: ["email"]))
        XCTAssertTrue(e?.message.contains("saved meanwhile") == true, e?.message ?? "")
        mine.rollback()

        // Met when the insert is made: the same reason.
        e = assertError(.constraint) { try mine.insert(entity: "Person", json: #"{"email": "b@x", "_onConflict": "error"}"#) }
        XCTAssertEqual(e?.reason, .uniqueViolation(attributes: ["email"]))
    }

    func testOtherConstraintFailuresHaveNoReason() throws {
        // Delete rule deny refuses with `constraint` too, but no unique constraint is involved.
        let schema = Fixtures.schema(entity: "Owner", attributes: #"{"name": "name", "type": "string"}"#,
                                     relationships: #"{"name": "pets", "destination": "Owner", "toMany": true, "deleteRule": "deny"}"#)
        let context = try openInMemory(schema).makeContext()
        let pet = try context.insert(entity: "Owner", json: #"{"name": "pet"}"#)
        let owner = try context.insert(entity: "Owner", json: #"{"name": "owner", "pets": ["\#(pet)"]}"#)
        try context.save()
        try context.delete(id: owner.description)
        let e = assertError(.constraint) { try context.save() }
        XCTAssertNil(e?.reason)
        XCTAssertFalse(e?.json.contains("reason") ?? true)
    }

    // MARK: JSON

    func testTheLastErrorJSONCarriesTheReasonByItsStableName() {
        XCTAssertEqual(StrataError.Reason.malformedJSON.name, "malformed_json")
        XCTAssertEqual(StrataError.Reason.uniqueViolation(attributes: ["a"]).name, "unique_violation")
        XCTAssertEqual(StrataError.Reason.hookFailed(status: nil).name, "hook_failed")
        let e = StrataError(.invalid, "malformed JSON at offset 3: expected a value", reason: .malformedJSON)
        XCTAssertEqual(e.json, #"{"code":"invalid","status":2,"reason":"malformed_json","message":"malformed JSON at offset 3: expected a value"}"#)
        XCTAssertEqual(StrataError(.invalid, "x").json, #"{"code":"invalid","status":2,"message":"x"}"#)
    }
}
