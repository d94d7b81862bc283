import XCTest
@testable import Strata

/// Delete rules applied at save (nullify, cascade, deny, noAction), and the
/// relationship checks a save makes: minimum/maximum counts and required to-ones.
final class DeleteRuleTests: StoreTestCase {

    /// Folder -> notes with the given delete rule; Note.folder is the inverse.
    func folders(_ rule: String, noteFolderOptional: Bool = true, extraFolder: String = "") -> String {
        #"""
        {"version": "1", "entities": [
          {"name": "Folder", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "toMany": true, "inverse": "folder", "deleteRule": "\#(rule)"\#(extraFolder)}]},
          {"name": "Note", "attributes": [{"name": "body", "type": "string"}],
           "relationships": [{"name": "folder", "destination": "Folder", "optional": \#(noteFolderOptional)}]}]}
        """#
    }

    func testNullify() {
        forEachSetup(folders("nullify")) { h in
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": [{"body": "a"}, {"body": "b"}]}"#)
            try h.context.save()
            let notes = try identifiers(h.context, "Note")
            XCTAssertEqual(notes.count, 2)
            try h.context.delete(id: f.description)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Folder"), 0)
            XCTAssertEqual(try identifiers(h.context, "Note"), notes)
            for n in notes { XCTAssertEqual(try get(h.context, n)["folder"], .null) }
        }
    }

    func testNullifyIsTheDefaultAndDeletingTheToOneSideLeavesTheOwner() {
        forEachSetup(folders("nullify")) { h in
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": [{"body": "a"}, {"body": "b"}]}"#)
            try h.context.save()
            let notes = try identifiers(h.context, "Note")
            try h.context.delete(id: notes[0])
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, f)["notes"], .array([.string(notes[1])]))
        }
    }

    func testCascadeIsRecursiveAndReachesSubentities() {
        let schema = #"""
            {"version": "1", "entities": [
              {"name": "Owner", "attributes": [{"name": "name", "type": "string"}],
               "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "owner", "deleteRule": "cascade"}]},
              {"name": "Trip", "attributes": [{"name": "name", "type": "string"}],
               "relationships": [{"name": "owner", "destination": "Owner", "optional": true},
                                 {"name": "items", "destination": "Item", "toMany": true, "inverse": "trip", "deleteRule": "cascade"}]},
              {"name": "PersonalTrip", "superentity": "Trip",
               "relationships": [{"name": "diary", "destination": "Diary", "optional": true, "deleteRule": "cascade"}]},
              {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
               "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
              {"name": "Diary", "attributes": [{"name": "text", "type": "string"}]}]}
            """#
        forEachSetup(schema) { h in
            let keep = try h.context.insert(entity: "Owner", json: #"{"name": "keep", "trips": [{"name": "k", "items": [{"title": "k1"}]}]}"#)
            let o = try h.context.insert(entity: "Owner", json: #"""
                {"name": "gone", "trips": [
                  {"name": "t", "items": [{"title": "i1"}, {"title": "i2"}]},
                  {"_entity": "PersonalTrip", "name": "p", "items": [{"title": "i3"}], "diary": {"text": "dear diary"}}]}
                """#)
            try h.context.save()
            XCTAssertEqual(try count(h.context, "Item"), 4)
            XCTAssertEqual(try count(h.context, "Diary"), 1)
            XCTAssertEqual(try count(h.context, "PersonalTrip"), 1)
            try h.context.delete(id: o.description)
            // A read with the pending delete shows the cascade already.
            XCTAssertEqual(try count(h.context, "Item"), 1)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Owner"), [keep.description])
            XCTAssertEqual(try count(h.context, "Trip"), 1)
            XCTAssertEqual(try count(h.context, "PersonalTrip"), 0)
            XCTAssertEqual(try fetch(h.context, "Item").map { $0["title"] }, [.string("k1")])
            XCTAssertEqual(try count(h.context, "Diary"), 0, "cascade through a relationship of the subentity")
        }
    }

    func testCascadeFromTheSampleTrips() {
        forEachSetup { h in
            let t = try h.context.insert(entity: "PersonalTrip", json: #"""
                {"name": "P", "startDate": 0, "endDate": 1, "bucketList": [{"title": "a"}, {"title": "b"}],
                 "livingAccommodation": {"address": "x", "placeName": "y"}}
                """#)
            try h.context.save()
            try h.context.delete(id: t.description)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 0)
            XCTAssertEqual(try count(h.context, "BucketListItem"), 0)
            XCTAssertEqual(try count(h.context, "LivingAccommodation"), 0)
        }
    }

    func testCascadeHandlesCycles() {
        let schema = #"""
            {"version": "1", "entities": [
              {"name": "Node", "attributes": [{"name": "n", "type": "int"}],
               "relationships": [{"name": "next", "destination": "Node", "optional": true, "deleteRule": "cascade", "inverse": "previous"},
                                 {"name": "previous", "destination": "Node", "optional": true, "deleteRule": "cascade"}]}]}
            """#
        forEachSetup(schema) { h in
            let a = try h.context.insert(entity: "Node", json: #"{"n": 1, "next": {"n": 2, "next": {"n": 3}}}"#)
            try h.context.save()
            XCTAssertEqual(try count(h.context, "Node"), 3)
            try h.context.delete(id: a.description)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Node"), 0)
        }
    }

    func testDenyFailsTheSaveAndKeepsEverything() {
        forEachSetup(folders("deny")) { h in
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": [{"body": "a"}]}"#)
            try h.context.save()
            let other = try h.context.insert(entity: "Folder", json: #"{"title": "pending"}"#)
            try h.context.delete(id: f.description)
            let e = assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(e?.entity, "Folder")
            XCTAssertEqual(e?.attribute, "notes")
            XCTAssertTrue(e?.message.contains("deny") == true, e?.message ?? "")
            XCTAssertTrue(h.context.hasChanges, "pending changes are kept")
            // The store is unchanged: a fresh context sees the folder and its note, not the pending insert.
            let fresh = try h.container.makeContext()
            XCTAssertEqual(try identifiers(fresh, "Folder"), [f.description])
            XCTAssertEqual(try count(fresh, "Note"), 1)
            // Fix the cause and retry: the kept changes are saved.
            let note = try XCTUnwrap(identifiers(h.context, "Note", pending: false).first)
            try h.context.delete(id: note)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Folder"), [other.description])
            XCTAssertEqual(try count(h.context, "Note"), 0)
        }
    }

    func testDenyAllowsAnEmptyRelationship() {
        forEachSetup(folders("deny")) { h in
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F"}"#)
            try h.context.save()
            try h.context.delete(id: f.description)
            try h.context.save()
            XCTAssertEqual(try count(h.context, "Folder"), 0)
        }
    }

    func testDenyAllowsRelatedObjectsDeletedInTheSameSave() {
        // Order must not matter: deleting the folder and its notes together is fine.
        forEachSetup(folders("deny")) { h in
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": [{"body": "a"}, {"body": "b"}]}"#)
            try h.context.save()
            let notes = try identifiers(h.context, "Note")
            try h.context.delete(id: f.description)
            for n in notes { try h.context.delete(id: n) }
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Folder"), 0)
            XCTAssertEqual(try count(h.context, "Note"), 0)
        }
    }

    func testNoActionLeavesTheLinkAsItIs() throws {
        let h = try harness(.file, folders("noAction"))
        let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": [{"body": "a"}]}"#)
        try h.context.save()
        let note = try XCTUnwrap(identifiers(h.context, "Note").first)
        try h.context.delete(id: f.description)
        try h.context.save()
        XCTAssertEqual(try count(h.context, "Folder"), 0)
        XCTAssertEqual(try count(h.context, "Note"), 1)
        // The note's foreign key still holds the deleted folder's key: nothing was done to it.
        XCTAssertEqual(try scalar(storePath("file"), "SELECT folder FROM Note"), .int(f.pk))
        XCTAssertNoThrow(try h.context.get(id: note))
    }

    // MARK: Counts and required links at save

    func testMinimumAndMaximumCountsAreCheckedAtSave() {
        forEachSetup(folders("nullify", extraFolder: #", "minimumModelCount": 1, "maximumModelCount": 2"#)) { h in
            _ = try h.context.insert(entity: "Folder", json: #"{"title": "empty"}"#)
            var e = assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(e?.entity, "Folder")
            XCTAssertEqual(e?.attribute, "notes")
            XCTAssertTrue(e?.message.contains("minimumModelCount") == true, e?.message ?? "")
            h.context.rollback()
            _ = try h.context.insert(entity: "Folder", json: #"{"title": "full", "notes": [{"body": "1"}, {"body": "2"}, {"body": "3"}]}"#)
            e = assertError(.constraint) { try h.context.save() }
            XCTAssertTrue(e?.message.contains("maximumModelCount") == true, e?.message ?? "")
            h.context.rollback()
            let ok = try h.context.insert(entity: "Folder", json: #"{"title": "ok", "notes": [{"body": "1"}, {"body": "2"}]}"#)
            try h.context.save()
            // Linking a third note from the note's side breaks the maximum too.
            _ = try h.context.insert(entity: "Note", json: #"{"body": "3", "folder": "\#(ok)"}"#)
            assertError(.constraint) { try h.context.save() }
            h.context.rollback()
            // Deleting both notes leaves the folder below its minimum.
            for n in try identifiers(h.context, "Note") { try h.context.delete(id: n) }
            assertError(.constraint) { try h.context.save() }
            h.context.rollback()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Folder"), [ok.description])
            XCTAssertEqual(try count(h.context, "Note"), 2)
        }
    }

    func testMovingALinkChecksTheObjectLeftBehind() {
        forEachSetup(folders("nullify", extraFolder: #", "minimumModelCount": 1"#)) { h in
            let a = try h.context.insert(entity: "Folder", json: #"{"title": "A", "notes": [{"body": "a"}]}"#)
            let b = try h.context.insert(entity: "Folder", json: #"{"title": "B", "notes": [{"body": "b"}]}"#)
            try h.context.save()
            let noteOfA = try XCTUnwrap(get(h.context, a)["notes"]?.array?.first?.stringValue)
            // Moving A's only note to B (from the note's side) leaves A with none.
            try h.context.update(id: noteOfA, patch: #"{"folder": "\#(b)"}"#)
            var e = assertError(.constraint) { try h.context.save() }
            XCTAssertTrue(e?.message.contains(a.description) == true, e?.message ?? "")
            h.context.rollback()
            // The same move from B's side.
            let noteOfB = try XCTUnwrap(get(h.context, b)["notes"]?.array?.first?.stringValue)
            try h.context.update(id: b.description, patch: #"{"notes": ["\#(noteOfB)", "\#(noteOfA)"]}"#)
            e = assertError(.constraint) { try h.context.save() }
            XCTAssertTrue(e?.message.contains(a.description) == true, e?.message ?? "")
            h.context.rollback()
            try h.reopen()
            XCTAssertEqual(try get(h.context, a)["notes"], .array([.string(noteOfA)]))
        }
    }

    func testRequiredToOneIsCheckedAtSave() {
        forEachSetup(folders("nullify", noteFolderOptional: false)) { h in
            _ = try h.context.insert(entity: "Note", json: #"{"body": "orphan"}"#)
            let e = assertError(.validation) { try h.context.save() }
            XCTAssertEqual(e?.entity, "Note")
            XCTAssertEqual(e?.attribute, "folder")
            h.context.rollback()
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": [{"body": "n"}]}"#)
            try h.context.save()
            let note = try XCTUnwrap(identifiers(h.context, "Note").first)
            // Clearing it fails at save...
            try h.context.update(id: note, patch: #"{"folder": null}"#)
            assertError(.validation) { try h.context.save() }
            h.context.rollback()
            // ...and so does nullifying it by deleting the folder.
            try h.context.delete(id: f.description)
            assertError(.validation) { try h.context.save() }
            h.context.rollback()
            try h.reopen()
            XCTAssertEqual(try get(h.context, note)["folder"], .string(f.description))
        }
    }

    func testRequiredToOneCanBeSatisfiedLaterInTheSameSave() {
        forEachSetup(folders("nullify", noteFolderOptional: false)) { h in
            let n = try h.context.insert(entity: "Note", json: #"{"body": "n"}"#)
            let f = try h.context.insert(entity: "Folder", json: #"{"title": "F", "notes": ["\#(n)"]}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, n)["folder"], .string(f.description))
        }
    }
}
