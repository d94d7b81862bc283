import Foundation
import XCTest
@testable import Strata

/// `data` attributes with `externalStorage: true` at or above the threshold
/// live in files in `<store>.strata/`: written before the commit, removed
/// after the commit that deletes or replaces them (DESIGN §5).
final class ExternalStorageTests: StoreTestCase {
    static let threshold = 16
    static let albums = #"""
        {"version": "1", "entities": [
          {"name": "Album", "attributes": [{"name": "title", "type": "string", "unique": true}],
           "relationships": [{"name": "photos", "destination": "Photo", "toMany": true, "inverse": "album", "deleteRule": "cascade"}]},
          {"name": "Photo", "attributes": [{"name": "caption", "type": "string", "optional": true},
                                            {"name": "image", "type": "data", "optional": true, "externalStorage": true},
                                            {"name": "thumb", "type": "data", "optional": true}],
           "relationships": [{"name": "album", "destination": "Album", "optional": true}]}]}
        """#

    var path: String { storePath() }
    var folder: String { path + ".strata" }

    func open(_ schema: String = Fixtures.sampleTrips) throws -> ModelContainer {
        try openFile(schema, path: path) { $0.externalStorageThreshold = Self.threshold }
    }

    func bytes(_ n: Int, seed: UInt8 = 1) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) } }
    func b64(_ b: [UInt8]) -> String { Base64.encode(b) }
    func trip(_ name: String, photo: [UInt8]?) -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": 1, "photo": \#(photo.map { "\"\(b64($0))\"" } ?? "null")}"#
    }

    /// The stored form of the photo column: ("text", file name) or ("blob", nil) or ("null", nil).
    func storedPhoto(_ id: ObjectID, table: String = "Trip", column: String = "photo") throws -> (type: String, name: String?) {
        let row = try XCTUnwrap(rows(path, "SELECT typeof(\"\(column)\"), \"\(column)\" FROM \"\(table)\" WHERE _pk = ?", [.int(id.pk)]).first)
        return (row[0].text ?? "", row[1].text)
    }

    func testFileWrittenOnSaveAndReadBack() throws {
        let photo = bytes(64)
        do {
            let context = try open().makeContext()
            let id = try context.insert(entity: "Trip", json: trip("A", photo: photo))
            XCTAssertEqual(filesIn(folder), [], "nothing is written before save")
            XCTAssertEqual(try get(context, id)["photo"], .string(b64(photo)), "a pending read shows the data")
            XCTAssertEqual(filesIn(folder), [], "a pending read writes no file")
            try context.save()
            let files = filesIn(folder)
            XCTAssertEqual(files.count, 1)
            let stored = try storedPhoto(id)
            XCTAssertEqual(stored.type, "text")
            XCTAssertEqual(stored.name, files.first)
            XCTAssertEqual(fileBytes(folder + "/" + files[0]), photo)
        }
        let context = try open().makeContext()
        XCTAssertEqual(try fetch(context, "Trip").first?["photo"], .string(b64(photo)))
        // A read-only store reads the files too.
        let ro = try openFile(path: path) { $0.readOnly = true; $0.externalStorageThreshold = Self.threshold }.makeContext()
        XCTAssertEqual(try fetch(ro, "Trip").first?["photo"], .string(b64(photo)))
    }

    func testSmallDataStaysInline() throws {
        let context = try open().makeContext()
        let small = try context.insert(entity: "Trip", json: trip("small", photo: bytes(Self.threshold - 1)))
        let exact = try context.insert(entity: "Trip", json: trip("exact", photo: bytes(Self.threshold)))
        let empty = try context.insert(entity: "Trip", json: trip("empty", photo: []))
        let none = try context.insert(entity: "Trip", json: trip("none", photo: nil))
        try context.save()
        XCTAssertEqual(try storedPhoto(small).type, "blob")
        XCTAssertEqual(try storedPhoto(exact).type, "text", "at the threshold the data goes to a file")
        XCTAssertEqual(try storedPhoto(empty).type, "blob")
        XCTAssertEqual(try storedPhoto(none).type, "null")
        XCTAssertEqual(filesIn(folder).count, 1)
        XCTAssertEqual(try get(context, small)["photo"], .string(b64(bytes(Self.threshold - 1))))
        XCTAssertEqual(try get(context, exact)["photo"], .string(b64(bytes(Self.threshold))))
        XCTAssertEqual(try get(context, empty)["photo"], .string(""))
        XCTAssertEqual(try get(context, none)["photo"], .null)
    }

    func testAttributesWithoutExternalStorageStayInline() throws {
        let context = try open(Self.albums).makeContext()
        let id = try context.insert(entity: "Photo", json: #"{"thumb": "\#(b64(bytes(100)))"}"#)
        try context.save()
        XCTAssertEqual(try storedPhoto(id, table: "Photo", column: "thumb").type, "blob")
        XCTAssertEqual(filesIn(folder), [])
    }

    func testNoFileAfterAFailedSave() throws {
        let context = try open().makeContext()
        let a = try context.insert(entity: "Trip", json: trip("A", photo: nil))
        _ = try context.insert(entity: "Trip", json: trip("B", photo: nil))
        try context.save()
        _ = try context.insert(entity: "Trip", json: trip("C", photo: bytes(100)))
        try context.update(id: a.description, patch: #"{"photo": "\#(b64(bytes(200)))"}"#)
        try context.update(id: a.description, patch: #"{"name": "B"}"#)  // collides with B at save
        assertError(.constraint) { try context.save() }
        XCTAssertEqual(filesIn(folder), [], "files written for the failed save are removed")
        XCTAssertTrue(context.hasChanges)
        context.rollback()
        XCTAssertEqual(try count(context, "Trip"), 2)
        XCTAssertEqual(try get(context, a)["photo"], .null)
    }

    func testFileRemovedAfterTheDeletingCommit() throws {
        let context = try open().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
        try context.save()
        let file = try XCTUnwrap(filesIn(folder).first)
        try context.delete(id: id.description)
        XCTAssertEqual(try count(context, "Trip"), 0, "the pending delete shows")
        XCTAssertEqual(filesIn(folder), [file], "the file stays until the commit")
        try context.save()
        XCTAssertEqual(filesIn(folder), [])
    }

    func testFileKeptWhenTheDeletingSaveFails() throws {
        let context = try open().makeContext()
        let a = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
        _ = try context.insert(entity: "Trip", json: trip("B", photo: nil))
        try context.save()
        let file = try XCTUnwrap(filesIn(folder).first)
        try context.delete(id: a.description)
        _ = try context.insert(entity: "Trip", json: trip("C", photo: nil))
        try context.update(id: "Trip/\(a.pk + 2)", patch: #"{"name": "B"}"#)  // C collides with B at save
        assertError(.constraint) { try context.save() }
        XCTAssertEqual(filesIn(folder), [file])
        context.rollback()
        XCTAssertEqual(try get(context, a)["photo"], .string(b64(bytes(64))))
    }

    func testCascadeRemovesFiles() throws {
        let context = try open(Self.albums).makeContext()
        let album = try context.insert(entity: "Album", json: #"""
            {"title": "Summer", "photos": [{"image": "\#(b64(bytes(40, seed: 1)))"}, {"image": "\#(b64(bytes(40, seed: 2)))"}, {"image": "AAE="}]}
            """#)
        try context.save()
        XCTAssertEqual(filesIn(folder).count, 2)
        try context.delete(id: album.description)
        try context.save()
        XCTAssertEqual(filesIn(folder), [])
        XCTAssertEqual(try count(context, "Photo"), 0)
    }

    func testReplacingDataRemovesTheOldFileAfterCommit() throws {
        let context = try open().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64, seed: 1)))
        try context.save()
        let first = try XCTUnwrap(filesIn(folder).first)
        try context.update(id: id.description, patch: #"{"photo": "\#(b64(bytes(64, seed: 2)))"}"#)
        try context.save()
        let now = filesIn(folder)
        XCTAssertEqual(now.count, 1)
        XCTAssertNotEqual(now.first, first)
        XCTAssertEqual(fileBytes(folder + "/" + now[0]), bytes(64, seed: 2))
        XCTAssertEqual(try get(context, id)["photo"], .string(b64(bytes(64, seed: 2))))
        // Small data replaces the file with an inline value; null clears it.
        try context.update(id: id.description, patch: #"{"photo": "AAEC"}"#)
        try context.save()
        XCTAssertEqual(filesIn(folder), [])
        XCTAssertEqual(try storedPhoto(id).type, "blob")
        try context.update(id: id.description, patch: #"{"photo": "\#(b64(bytes(64, seed: 3)))"}"#)
        try context.save()
        XCTAssertEqual(filesIn(folder).count, 1)
        try context.update(id: id.description, patch: #"{"photo": null}"#)
        try context.save()
        XCTAssertEqual(filesIn(folder), [])
        XCTAssertEqual(try get(context, id)["photo"], .null)
    }

    func testUpsertReplacingDataRemovesTheOldFile() throws {
        let context = try open().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64, seed: 1)))
        try context.save()
        XCTAssertEqual(try context.insert(entity: "Trip", json: trip("A", photo: bytes(64, seed: 9))), id)
        try context.save()
        XCTAssertEqual(filesIn(folder).count, 1)
        XCTAssertEqual(fileBytes(folder + "/" + (filesIn(folder).first ?? "")), bytes(64, seed: 9))
    }

    func testInsertAndDeleteInOneSaveLeavesNoFile() throws {
        let context = try open().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
        try context.delete(id: id.description)
        try context.save()
        XCTAssertEqual(filesIn(folder), [])
        XCTAssertEqual(try count(context, "Trip"), 0)
    }

    func testInMemoryStoreKeepsDataInline() throws {
        let context = try openInMemory { $0.externalStorageThreshold = Self.threshold }.makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
        try context.save()
        XCTAssertEqual(try get(context, id)["photo"], .string(b64(bytes(64))))
        XCTAssertEqual(filesIn(tempDirectory), [])
    }
}
