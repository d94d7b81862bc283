import XCTest
@testable import Strata

/// Unique constraints: a colliding insert updates the existing object (DESIGN §5),
/// against saved rows and against the context's own pending inserts;
/// `_onConflict` chooses "error" or "ignore" instead.
final class UpsertTests: StoreTestCase {
    static let schema = #"""
        {"version": "1", "entities": [
          {"name": "Person", "attributes": [
             {"name": "email", "type": "string", "unique": true},
             {"name": "name", "type": "string", "optional": true},
             {"name": "age", "type": "int", "optional": true}],
           "relationships": [{"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner", "deleteRule": "cascade"}]},
          {"name": "Pet", "attributes": [{"name": "name", "type": "string"}, {"name": "species", "type": "string", "optional": true}],
           "relationships": [{"name": "owner", "destination": "Person", "optional": true}],
           "uniqueConstraints": [["name", "owner"]]}]}
        """#

    func trip(_ name: String, _ end: Int = 86400, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": \#(end)\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    func testUniqueAttributeUpsertsASavedObject() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Ann", "age": 30}"#)
            try h.context.save()
            try h.reopen()
            let b = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "age": 31}"#)
            XCTAssertEqual(b, a)
            XCTAssertEqual(b.description, a.description)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Person"), 1)
            let v = try get(h.context, a)
            XCTAssertEqual(v["age"]?.numberText, "31")
            XCTAssertEqual(v["name"], .string("Ann"), "keys not given keep their values")
        }
    }

    func testUniqueAttributeUpsertsAPendingInsert() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Ann"}"#)
            let b = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Anna"}"#)
            XCTAssertEqual(a, b)
            XCTAssertEqual(try count(h.context, "Person"), 1)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Person"), 1)
            XCTAssertEqual(try get(h.context, a)["name"], .string("Anna"))
        }
    }

    func testAnInsertMeetsAPendingInsertMadeThousandsOfInsertsBefore() {
        forEachSetup { h in
            // The pending keys' table grows many times over between the two inserts (each key's
            // hash is computed once and moves with it).
            let many = "[" + (0..<3_000).map { trip("Trip \($0)", 86_400 + $0) }.joined(separator: ", ") + "]"
            let ids = try h.context.insertMany(entity: "Trip", json: many)
            let again = try h.context.insert(entity: "Trip", json: trip("Trip 7", 86_407, #""destination": "Porto""#))
            XCTAssertEqual(again, ids[7], "the same name and dates: the pending trip 7")
            let other = try h.context.insert(entity: "Trip", json: trip("Trip 7", 86_408))
            XCTAssertFalse(ids.contains(other), "another end date: a new trip")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 3_001)
            XCTAssertEqual(try get(h.context, ids[7])["destination"], .string("Porto"))
        }
    }

    func testCompoundUniqueUpsertsSavedAndPending() {
        forEachSetup { h in
            let saved = try h.context.insert(entity: "Trip", json: trip("Paris", 86400, #""destination": "France""#))
            try h.context.save()
            try h.reopen()
            // Same name, startDate, endDate: the saved trip (dates given in another notation).
            let again = try h.context.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": "1970-01-01T00:00:00Z", "endDate": "1970-01-02T00:00:00Z", "destination": "FR"}"#)
            XCTAssertEqual(again, saved)
            // A different endDate is another trip.
            let other = try h.context.insert(entity: "Trip", json: trip("Paris", 2 * 86400))
            XCTAssertNotEqual(other, saved)
            // And colliding with that pending insert updates it.
            let otherAgain = try h.context.insert(entity: "Trip", json: trip("Paris", 2 * 86400, #""destination": "Texas""#))
            XCTAssertEqual(otherAgain, other)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 2)
            XCTAssertEqual(try get(h.context, saved)["destination"], .string("FR"))
            XCTAssertEqual(try get(h.context, other)["destination"], .string("Texas"))
        }
    }

    func testCompoundUniqueWithAToOneLink() {
        forEachSetup(Self.schema) { h in
            let ann = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org"}"#)
            let bob = try h.context.insert(entity: "Person", json: #"{"email": "b@x.org"}"#)
            let rex = try h.context.insert(entity: "Pet", json: #"{"name": "Rex", "owner": "\#(ann)"}"#)
            try h.context.save()
            // Rex of Ann again: the same pet. Rex of Bob: another pet.
            XCTAssertEqual(try h.context.insert(entity: "Pet", json: #"{"name": "Rex", "owner": "\#(ann)", "species": "dog"}"#), rex)
            let bobsRex = try h.context.insert(entity: "Pet", json: #"{"name": "Rex", "owner": "\#(bob)"}"#)
            XCTAssertNotEqual(bobsRex, rex)
            // A pet without an owner has no complete key: never a collision (NULLs are distinct, as in SQL).
            let stray1 = try h.context.insert(entity: "Pet", json: #"{"name": "Rex"}"#)
            let stray2 = try h.context.insert(entity: "Pet", json: #"{"name": "Rex"}"#)
            XCTAssertNotEqual(stray1, stray2)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Pet"), 4)
            XCTAssertEqual(try get(h.context, rex)["species"], .string("dog"))
        }
    }

    func testNestedObjectsUpsertOnTheirKeys() {
        forEachSetup(Self.schema) { h in
            let ann = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "pets": [{"name": "Rex"}]}"#)
            try h.context.save()
            let rex = try XCTUnwrap(get(h.context, ann)["pets"]?.array?.first?.stringValue)
            // The person is upserted; her pet list is replaced by the given one, where Rex is upserted too.
            let again = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "pets": [{"name": "Rex", "species": "dog"}, {"name": "Tom"}]}"#)
            XCTAssertEqual(again, ann)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Pet"), 2)
            XCTAssertEqual(try get(h.context, rex)["species"], .string("dog"))
            XCTAssertEqual(try get(h.context, ann)["pets"]?.array?.count, 2)
        }
    }

    func testOnConflictError() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Ann"}"#)
            try h.context.save()
            let e = assertError(.constraint) { try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "X", "_onConflict": "error"}"#) }
            XCTAssertEqual(e?.entity, "Person")
            XCTAssertEqual(e?.attribute, "email")
            XCTAssertTrue(e?.message.contains(a.description) == true, e?.message ?? "")
            XCTAssertFalse(h.context.hasChanges)
            // Against a pending insert too.
            _ = try h.context.insert(entity: "Person", json: #"{"email": "b@x.org"}"#)
            assertError(.constraint) { try h.context.insert(entity: "Person", json: #"{"email": "b@x.org", "_onConflict": "error"}"#) }
            // No collision: "error" inserts normally.
            XCTAssertNoThrow(try h.context.insert(entity: "Person", json: #"{"email": "c@x.org", "_onConflict": "error"}"#))
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Person"), 3)
            XCTAssertEqual(try get(h.context, a)["name"], .string("Ann"))
        }
    }

    func testOnConflictIgnore() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Ann", "pets": [{"name": "Rex"}]}"#)
            try h.context.save()
            let b = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Other", "pets": [], "_onConflict": "ignore"}"#)
            XCTAssertEqual(b, a)
            XCTAssertFalse(h.context.hasChanges)
            let p = try h.context.insert(entity: "Person", json: #"{"email": "p@x.org", "name": "Pending"}"#)
            XCTAssertEqual(try h.context.insert(entity: "Person", json: #"{"email": "p@x.org", "name": "Ignored", "_onConflict": "ignore"}"#), p)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, a)
            XCTAssertEqual(v["name"], .string("Ann"))
            XCTAssertEqual(v["pets"]?.array?.count, 1)
            XCTAssertEqual(try get(h.context, p)["name"], .string("Pending"))
        }
    }

    func testBadOnConflictValue() throws {
        let context = try openInMemory(Self.schema).makeContext()
        let e = assertError(.invalid) { try context.insert(entity: "Person", json: #"{"email": "a", "_onConflict": "replace"}"#) }
        XCTAssertEqual(e?.path, "/_onConflict")
        XCTAssertFalse(context.hasChanges)
    }

    func testDeleteThenReinsertTheSameKeyInOneSave() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Old"}"#)
            try h.context.save()
            try h.context.delete(id: a.description)
            let b = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "New"}"#)
            XCTAssertNotEqual(b, a, "a deleted object is not upserted")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Person"), [b.description])
            XCTAssertEqual(try get(h.context, b)["name"], .string("New"))
        }
    }

    func testDeleteAPendingInsertThenReinsertTheSameKey() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Old"}"#)
            try h.context.delete(id: a.description)
            let b = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "New"}"#)
            XCTAssertNotEqual(b, a)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Person"), [b.description])
        }
    }

    func testAnUpdatedKeyIsSeenByLaterInserts() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Ann"}"#)
            try h.context.save()
            // Ann moves to a new address: the old one is free, the new one is hers.
            try h.context.update(id: a.description, patch: #"{"email": "ann@y.org"}"#)
            let newcomer = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "name": "Newcomer"}"#)
            XCTAssertNotEqual(newcomer, a, "the old key no longer belongs to Ann")
            let annAgain = try h.context.insert(entity: "Person", json: #"{"email": "ann@y.org", "age": 40}"#)
            XCTAssertEqual(annAgain, a, "the new key is Ann's")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Person"), 2)
            let ann = try get(h.context, a)
            XCTAssertEqual(ann["name"], .string("Ann"))
            XCTAssertEqual(ann["email"], .string("ann@y.org"))
            XCTAssertEqual(ann["age"]?.numberText, "40")
            XCTAssertEqual(try get(h.context, newcomer)["name"], .string("Newcomer"))
        }
    }

    func testAnUpsertThatMovesASecondKey() {
        let schema = #"""
            {"version": "1", "entities": [{"name": "Member", "attributes": [
              {"name": "email", "type": "string", "unique": true},
              {"name": "phone", "type": "string", "unique": true, "optional": true},
              {"name": "name", "type": "string", "optional": true}]}]}
            """#
        forEachSetup(schema) { h in
            let m = try h.context.insert(entity: "Member", json: #"{"email": "m@x.org", "phone": "111"}"#)
            try h.context.save()
            // Upsert on the email gives the member a new phone: "111" is free, "222" is hers.
            XCTAssertEqual(try h.context.insert(entity: "Member", json: #"{"email": "m@x.org", "phone": "222"}"#), m)
            let other = try h.context.insert(entity: "Member", json: #"{"email": "o@x.org", "phone": "111", "name": "Other"}"#)
            XCTAssertNotEqual(other, m)
            XCTAssertEqual(try h.context.insert(entity: "Member", json: #"{"email": "m@x.org", "phone": "222", "name": "Mia"}"#), m)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Member"), 2)
            XCTAssertEqual(try get(h.context, m)["phone"], .string("222"))
            XCTAssertEqual(try get(h.context, m)["name"], .string("Mia"))
            XCTAssertEqual(try get(h.context, other)["phone"], .string("111"))
        }
    }

    func testAFailedUpdateForgetsTheKeyItSet() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org"}"#)
            try h.context.save()
            // The update fails (a missing pet) after taking the new email: the new key must not stick.
            assertError(.notFound) { try h.context.update(id: a.description, patch: #"{"email": "new@x.org", "pets": ["Pet/999"]}"#) }
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try h.context.insert(entity: "Person", json: #"{"email": "a@x.org", "age": 3}"#), a)
            XCTAssertNotEqual(try h.context.insert(entity: "Person", json: #"{"email": "new@x.org"}"#), a)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Person"), 2)
        }
    }

    func testAnUpdateThatCollidesFailsAtSave() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org"}"#)
            _ = try h.context.insert(entity: "Person", json: #"{"email": "b@x.org"}"#)
            try h.context.save()
            try h.context.update(id: a.description, patch: #"{"email": "b@x.org"}"#)
            let e = assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(e?.entity, "Person")
            XCTAssertTrue(h.context.hasChanges, "pending changes stay after a failed save")
            h.context.rollback()
            XCTAssertEqual(try get(h.context, a)["email"], .string("a@x.org"))
        }
    }

    func testReadsShowAPendingCollisionThatTheSaveWillRefuse() {
        forEachSetup(Self.schema) { h in
            let a = try h.context.insert(entity: "Person", json: #"{"email": "a@x.org"}"#)
            let b = try h.context.insert(entity: "Person", json: #"{"email": "b@x.org"}"#)
            try h.context.save()
            try h.context.update(id: a.description, patch: #"{"email": "b@x.org"}"#)
            // Reads still work and show the pending state, as SwiftData's objects would...
            XCTAssertEqual(try get(h.context, a)["email"], .string("b@x.org"))
            XCTAssertEqual(try get(h.context, b)["email"], .string("b@x.org"))
            XCTAssertEqual(try count(h.context, "Person"), 2)
            XCTAssertEqual(try fetch(h.context, "Person").map { $0["email"] }, [.string("b@x.org"), .string("b@x.org")])
            // ...and the save refuses it, leaving the store and the unique index as they were.
            assertError(.constraint) { try h.context.save() }
            h.context.rollback()
            try h.reopen()
            XCTAssertEqual(try fetch(h.context, "Person").map { $0["email"] }, [.string("a@x.org"), .string("b@x.org")])
            _ = try h.context.insert(entity: "Person", json: #"{"email": "c@x.org"}"#)
            try h.context.save()
            try h.context.update(id: a.description, patch: #"{"email": "c@x.org"}"#)
            assertError(.constraint) { try h.context.save() }
        }
    }

    func testUpsertAcrossAHierarchy() {
        forEachSetup { h in
            let p = try h.context.insert(entity: "PersonalTrip", json: trip("Home", 86400, #""reason": "family""#))
            try h.context.save()
            // The same key as a PersonalTrip: the same object.
            XCTAssertEqual(try h.context.insert(entity: "PersonalTrip", json: trip("Home", 86400, #""reason": "reunion""#)), p)
            // Inserted as a Trip with the "_entity" of the existing one: the same object too.
            XCTAssertEqual(try h.context.insert(entity: "Trip", json: trip("Home", 86400, #""_entity": "PersonalTrip", "destination": "Lyon""#)), p)
            // As a BusinessTrip it cannot become that object: a constraint error, nothing changed.
            let e = assertError(.constraint) { try h.context.insert(entity: "BusinessTrip", json: trip("Home")) }
            XCTAssertTrue(e?.message.contains(p.description) == true, e?.message ?? "")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Trip"), [p.description])
            let v = try get(h.context, p)
            XCTAssertEqual(v["reason"], .string("reunion"))
            XCTAssertEqual(v["destination"], .string("Lyon"))
        }
    }

    func testInsertManyUpsertsWithinTheBatch() {
        forEachSetup(Self.schema) { h in
            let ids = try h.context.insertMany(entity: "Person", json: #"""
                [{"email": "a@x.org", "age": 1}, {"email": "b@x.org"}, {"email": "a@x.org", "age": 2}]
                """#)
            XCTAssertEqual(ids[0], ids[2])
            XCTAssertNotEqual(ids[0], ids[1])
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Person"), 2)
            XCTAssertEqual(try get(h.context, ids[0])["age"]?.numberText, "2")
        }
    }

    /// An insert of many objects asks once per snapshot whether a table holds any row and, when
    /// it holds none, probes none of its unique keys; the next insert asks again, so it meets
    /// the objects saved since, by this context or another.
    func testInsertManyIntoAnEmptyTableProbesNothingAndMeetsRowsSavedSince() throws {
        let container = try openFile(Self.schema)
        let context = try container.makeContext(), other = try container.makeContext()
        func lookups(_ sql: [String]) -> [String] { sql.filter { $0.hasPrefix("SELECT") && $0.contains("\"email\" = ?") } }
        var first: [ObjectID] = []
        let sql = try captureSQL(context) {
            first = try context.insertMany(entity: "Person", json: #"[{"email": "a@x.org"}, {"email": "b@x.org"}, {"email": "a@x.org", "age": 2}]"#)
        }
        XCTAssertEqual(lookups(sql), [], "\(sql)")
        // Asked again after the first key reservation, which ends the probes' snapshot: fewer asks than objects.
        let asks = sql.filter { $0.hasSuffix(" LIMIT 1") && !$0.contains("WHERE") }.count
        XCTAssertTrue((1...2).contains(asks), "\(sql)")
        XCTAssertEqual(first[0], first[2])
        // Saved by another context while this one holds its pending inserts.
        let saved = try other.insert(entity: "Person", json: #"{"email": "c@x.org", "name": "Cy"}"#)
        try other.save()
        let again = try context.insertMany(entity: "Person", json: #"[{"email": "c@x.org", "age": 3}, {"email": "d@x.org"}]"#)
        XCTAssertEqual(again[0], saved)
        try context.save()
        // Saved by this context: met by its next insert.
        let third = try context.insertMany(entity: "Person", json: #"[{"email": "b@x.org", "age": 4}]"#)
        XCTAssertEqual(third, [first[1]])
        try context.save()
        XCTAssertEqual(try count(context, "Person"), 4)
        XCTAssertEqual(try get(context, saved)["age"]?.numberText, "3")
        XCTAssertEqual(try get(context, saved)["name"], .string("Cy"))
        XCTAssertEqual(try get(context, first[1])["age"]?.numberText, "4")
    }

    func testUniqueLookupUsesTheIndex() throws {
        let container = try openFile(Self.schema)
        let context = try container.makeContext()
        _ = try context.insert(entity: "Person", json: #"{"email": "a@x.org"}"#)
        try context.save()
        let sql = try captureSQL(context) { _ = try context.insert(entity: "Person", json: #"{"email": "a@x.org", "age": 5}"#) }
        let lookups = sql.filter { $0.hasPrefix("SELECT") && $0.contains("\"email\" = ?") }
        XCTAssertEqual(lookups.count, 1, "\(sql)")
        let plan = try rows(storePath(), "EXPLAIN QUERY PLAN " + (lookups.first ?? ""), [.text("a@x.org")])
        XCTAssertTrue(plan.contains { ($0.last?.text ?? "").contains("USING INDEX") }, "\(plan)")
    }
}
