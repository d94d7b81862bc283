import XCTest
@testable import Strata

/// `ModelContext.save()` returns what the save did: inserts, updates with the
/// changed names, deletions with their tombstones — cascades, nullified
/// links, one-to-one links taken from another object and both ends of a
/// changed link included.
final class ChangeSetTests: StoreTestCase {
    static let library = """
    {"version": "1", "entities": [
     {"name": "Author",
      "attributes": [{"name": "name", "type": "string", "preserveValueOnDeletion": true},
                     {"name": "bio", "type": "string", "optional": true}],
      "relationships": [{"name": "books", "destination": "Book", "toMany": true, "deleteRule": "cascade", "inverse": "author"},
                        {"name": "desk", "destination": "Desk", "optional": true, "deleteRule": "nullify", "inverse": "owner"}]},
     {"name": "Book",
      "attributes": [{"name": "title", "type": "string", "preserveValueOnDeletion": true},
                     {"name": "pages", "type": "int", "default": 0}],
      "relationships": [{"name": "author", "destination": "Author", "optional": true, "inverse": "books"},
                        {"name": "shelves", "destination": "Shelf", "toMany": true, "inverse": "books"}]},
     {"name": "Shelf",
      "attributes": [{"name": "label", "type": "string"}],
      "relationships": [{"name": "books", "destination": "Book", "toMany": true, "inverse": "shelves"}]},
     {"name": "Desk",
      "attributes": [{"name": "room", "type": "string"}],
      "relationships": [{"name": "owner", "destination": "Author", "optional": true, "inverse": "desk"}]}
    ]}
    """

    private func names(_ ids: [ObjectID]) -> [String] { ids.map(\.description).sorted() }

    func testInsertsListEveryNewObjectOnce() throws {
        forEachSetup(Self.library) { h in
            let c = h.context
            let a = try c.insert(entity: "Author", json: #"{"name": "Le Guin", "books": [{"title": "Earthsea"}, {"title": "Lathe"}]}"#)
            try c.update(id: a.description, patch: #"{"bio": "novelist"}"#)
            let done = try c.save()
            XCTAssertEqual(names(done.inserted), ["Author/1", "Book/1", "Book/2"])
            XCTAssertEqual(done.updated, [], "an object inserted and updated in one save is inserted")
            XCTAssertEqual(done.deleted, [])
            XCTAssertEqual(Set(done.entityNames), ["Author", "Book"])
            // Nothing pending: an empty change set.
            XCTAssertTrue(try c.save().isEmpty)
        }
    }

    func testUpdatesNameTheChangedAttributesAndBothEndsOfALink() throws {
        forEachSetup(Self.library) { h in
            let c = h.context
            let a1 = try c.insert(entity: "Author", json: #"{"name": "A"}"#)
            let a2 = try c.insert(entity: "Author", json: #"{"name": "B"}"#)
            let b = try c.insert(entity: "Book", json: "{\"title\": \"T\", \"author\": \"\(a1)\"}")
            try c.save()
            try c.update(id: b.description, patch: "{\"pages\": 10, \"title\": \"T2\", \"author\": \"\(a2)\"}")
            let done = try c.save()
            XCTAssertEqual(done.inserted, [])
            XCTAssertEqual(done.change(of: b)?.kind, .updated)
            XCTAssertEqual(done.change(of: b)?.attributes, ["pages", "title", "author"])
            // The book left a1's to-many and joined a2's.
            XCTAssertEqual(done.change(of: a1)?.attributes, ["books"])
            XCTAssertEqual(done.change(of: a2)?.attributes, ["books"])
            XCTAssertEqual(names(done.updated), ["Author/1", "Author/2", "Book/1"])
        }
    }

    func testCascadesNullifiedLinksAndTombstones() throws {
        forEachSetup(Self.library) { h in
            let c = h.context
            let a = try c.insert(entity: "Author", json: #"{"name": "Austen", "books": [{"title": "Emma"}, {"title": "Persuasion"}]}"#)
            let desk = try c.insert(entity: "Desk", json: "{\"room\": \"study\", \"owner\": \"\(a)\"}")
            let shelf = try c.insert(entity: "Shelf", json: #"{"label": "classics", "books": ["Book/1", "Book/2"]}"#)
            try c.save()
            try h.reopen()
            let c2 = h.context
            try c2.delete(id: a.description)
            let done = try c2.save()
            // The author and, by cascade, both books.
            XCTAssertEqual(names(done.deleted), ["Author/1", "Book/1", "Book/2"])
            // Tombstones hold the preserveValueOnDeletion attributes as saved.
            let authorTomb = try XCTUnwrap(done.change(of: a)).tombstone
            XCTAssertEqual(authorTomb.map(\.name), ["name"])
            XCTAssertEqual(authorTomb.first?.value, .text("Austen"))
            let titles = done.deleted.filter { $0.entity.name == "Book" }.compactMap { done.change(of: $0)?.tombstone.first?.value.text }
            XCTAssertEqual(titles.sorted(), ["Emma", "Persuasion"])
            // The desk's owner was nullified; the shelf lost both books (join table rows).
            XCTAssertEqual(done.change(of: desk)?.kind, .updated)
            XCTAssertEqual(done.change(of: desk)?.attributes, ["owner"])
            XCTAssertEqual(done.change(of: shelf)?.attributes, ["books"])
            XCTAssertEqual(names(done.updated), ["Desk/1", "Shelf/1"])
            XCTAssertEqual(try self.get(c2, desk).object?["owner"], .null)
            XCTAssertEqual(try self.get(c2, shelf).object?["books"], .array([]))
            // The JSON form lists them per entity.
            let json = JSONValue.of(done.json)
            XCTAssertEqual(json.object?["deleted"]?.object?["Author"], JSONValue.of(#"[{"id": "Author/1", "tombstone": {"name": "Austen"}}]"#))
            XCTAssertEqual(json.object?["updated"]?.object?["Desk"], JSONValue.of(#"[{"id": "Desk/1", "attributes": ["owner"]}]"#))
        }
    }

    func testAOneToOneTakenFromAnotherObjectUpdatesIt() throws {
        forEachSetup(Self.library) { h in
            let c = h.context
            let a1 = try c.insert(entity: "Author", json: #"{"name": "A"}"#)
            let a2 = try c.insert(entity: "Author", json: #"{"name": "B"}"#)
            let desk = try c.insert(entity: "Desk", json: "{\"room\": \"r\", \"owner\": \"\(a1)\"}")
            try c.save()
            // The desk moves to a2: a1 loses it.
            try c.update(id: a2.description, patch: "{\"desk\": \"\(desk)\"}")
            let done = try c.save()
            XCTAssertEqual(done.change(of: desk)?.attributes, ["owner"])
            XCTAssertEqual(done.change(of: a1)?.attributes, ["desk"])
            XCTAssertEqual(done.change(of: a2)?.attributes, ["desk"])
            XCTAssertEqual(try self.get(c, a1).object?["desk"], .null)
        }
    }

    func testInsertedThenDeletedInOneSaveIsNotThere() throws {
        forEachSetup(Self.library) { h in
            let c = h.context
            let keep = try c.insert(entity: "Shelf", json: #"{"label": "keep"}"#)
            let gone = try c.insert(entity: "Shelf", json: #"{"label": "gone"}"#)
            try c.delete(id: gone.description)
            let done = try c.save()
            XCTAssertEqual(done.inserted, [keep])
            XCTAssertNil(done.change(of: gone))
            XCTAssertEqual(done.deleted, [])
        }
    }

    func testATombstoneHoldsTheBytesOfAnExternalStorageValue() throws {
        let schema = Fixtures.schema(entity: "Photo", attributes: """
            {"name": "title", "type": "string", "preserveValueOnDeletion": true},
            {"name": "image", "type": "data", "optional": true, "externalStorage": true, "preserveValueOnDeletion": true}
            """)
        let path = storePath()
        let container = try openFile(schema, path: path) { $0.externalStorageThreshold = 4 }
        let c = try container.makeContext()
        let id = try c.insert(entity: "Photo", json: #"{"title": "sea", "image": "AAECAwQFBgcICQ=="}"#)
        try c.save()
        XCTAssertEqual(filesIn(path + ".strata").count, 1, "the image moved to a file")
        try c.delete(id: id.description)
        let done = try c.save()
        let tomb = try XCTUnwrap(done.change(of: id)).tombstone
        XCTAssertEqual(tomb.map(\.name), ["title", "image"])
        XCTAssertEqual(tomb.last?.value, .blob([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
        XCTAssertEqual(JSONValue.of(done.json).member("deleted"),
                       JSONValue.of(#"{"Photo": [{"id": "Photo/1", "tombstone": {"title": "sea", "image": "AAECAwQFBgcICQ=="}}]}"#))
        XCTAssertEqual(filesIn(path + ".strata"), [], "the file goes with the object")
    }

    func testSampleTripsCascadeAcrossTheHierarchy() throws {
        forEachSetup { h in
            let c = h.context
            let trip = try c.insert(entity: "BusinessTrip", json: """
                {"name": "Expo", "startDate": "2026-01-01T00:00:00Z", "endDate": "2026-01-03T00:00:00Z",
                 "bucketList": [{"title": "booth"}], "livingAccommodation": {"address": "1 Main", "placeName": "Inn"}}
                """)
            try c.save()
            try c.delete(id: trip.description)
            let done = try c.save()
            XCTAssertEqual(names(done.deleted), ["BucketListItem/1", "BusinessTrip/1", "LivingAccommodation/1"])
            XCTAssertEqual(done.updated, [])
        }
    }
}

private extension JSONValue {
    var object: [String: JSONValue]? {
        if case .object(let m) = self { return Dictionary(m, uniquingKeysWith: { a, _ in a }) }
        return nil
    }
}
