import Foundation
import XCTest
@testable import Strata

/// A store file is untrusted input (DESIGN §5): someone may hand a user a
/// store whose external-storage columns name files outside `<store>.strata/`.
/// Nothing read from the file may open or remove anything outside the folder.
final class UntrustedStoreTests: StoreTestCase {
    static let threshold = 16

    var path: String { storePath() }
    var folder: String { path + ".strata" }

    func open() throws -> ModelContainer {
        try openFile(path: path) { $0.externalStorageThreshold = Self.threshold }
    }

    func bytes(_ n: Int, seed: UInt8 = 1) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) } }
    func trip(_ name: String, photo: [UInt8]?) -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": 1, "photo": \#(photo.map { "\"\(Base64.encode($0))\"" } ?? "null")}"#
    }

    /// Changes the store file behind Strata's back, as an attacker would.
    func tamper(_ sql: String, _ args: [SQLValue] = []) throws {
        let c = try Connection(path: path, readOnly: false, create: false)
        try c.execute(sql, args)
    }

    /// A file outside the store's folder that must survive everything below.
    func secretFile() throws -> String {
        let secret = tempDirectory + "/secret.txt"
        try Data("top secret".utf8).write(to: URL(fileURLWithPath: secret))
        return secret
    }

    func testTraversalNamesAreCorruptAndNothingOutsideIsTouched() throws {
        let secret = try secretFile()
        let names = ["../secret.txt", "../../" + String(tempDirectory.dropFirst()) + "/secret.txt", tempDirectory + "/secret.txt",
                     "..", ".", "", "x/../../secret.txt", "0A1B2C3D-0000-4000-8000-000000000000/../../secret.txt"]
        for name in names {
            let container = try open()
            let context = try container.makeContext()
            let id = try context.insert(entity: "Trip", json: trip("A \(name)", photo: bytes(64)))
            try context.save()
            try tamper("UPDATE Trip SET photo = ? WHERE _pk = ?", [.text(name), .int(id.pk)])
            assertError(.corrupt) { _ = try context.get(id: id.description) }
            assertError(.corrupt) { _ = try context.fetch(FetchDescriptor(entity: try XCTUnwrap(context.schema.entity(named: "Trip")))) }
            // Replacing or deleting the value must not unlink the named file.
            try context.update(id: id.description, patch: #"{"photo": null}"#)
            assertError(.corrupt) { try context.save() }
            context.rollback()
            try context.delete(id: id.description)
            assertError(.corrupt) { try context.save() }
            context.rollback()
            XCTAssertEqual(fileBytes(secret), Array("top secret".utf8), "\(name): the file outside the store is untouched")
            try tamper("DELETE FROM Trip")
        }
    }

    /// Only an external-storage column holds file names: text in another data column is damage.
    func testNonExternalDataHoldingTextIsCorruptAndNoFileIsRead() throws {
        let secret = try secretFile()
        let schema = Fixtures.schema(attributes: #"{"name": "blob", "type": "data", "optional": true}"#)
        let other = try openFile(schema, path: storePath("plain")).makeContext()
        let thing = try other.insert(entity: "Thing", json: #"{"blob": null}"#)
        try other.save()
        let c = try Connection(path: storePath("plain"), readOnly: false, create: false)
        try c.execute("UPDATE Thing SET blob = ? WHERE _pk = ?", [.text("../secret.txt"), .int(thing.pk)])
        let e = assertError(.corrupt) { try get(other, thing) }
        XCTAssertEqual(e?.attribute, "blob")
        XCTAssertEqual(fileBytes(secret), Array("top secret".utf8))
    }

    func testSymbolicLinksAreNotFollowed() throws {
        let secret = try secretFile()
        let context = try open().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
        try context.save()
        let name = try XCTUnwrap(filesIn(folder).first)
        // A file in the folder replaced by a link to a file outside.
        unlink(folder + "/" + name)
        XCTAssertEqual(symlink(secret, folder + "/" + name), 0)
        assertError(.corrupt) { _ = try context.get(id: id.description) }
        try context.delete(id: id.description)
        try context.save()
        XCTAssertEqual(fileBytes(secret), Array("top secret".utf8), "removing the link leaves its target alone")
        XCTAssertEqual(filesIn(folder), [])

        // The folder itself replaced by a link to another folder.
        let id2 = try context.insert(entity: "Trip", json: trip("B", photo: bytes(64, seed: 2)))
        try context.save()
        let name2 = try XCTUnwrap(filesIn(folder).first)
        let elsewhere = tempDirectory + "/elsewhere"
        XCTAssertEqual(rename(folder, elsewhere), 0)
        XCTAssertEqual(symlink(elsewhere, folder), 0)
        assertError(.corrupt) { _ = try context.get(id: id2.description) }
        try context.delete(id: id2.description)
        try context.save()
        XCTAssertEqual(fileBytes(elsewhere + "/" + name2), bytes(64, seed: 2), "nothing is removed through a linked folder")
        _ = try context.insert(entity: "Trip", json: trip("C", photo: bytes(64, seed: 3)))
        assertError(.corrupt) { try context.save() }
    }

    func testAMissingFileIsAnErrorNotALoop() throws {
        let context = try open().makeContext()
        let id = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
        try context.save()
        for name in filesIn(folder) { unlink(folder + "/" + name) }
        assertError(.io) { _ = try context.get(id: id.description) }
    }

    func testOrphanedFilesAreSweptOnOpen() throws {
        var kept = ""
        do {
            let context = try open().makeContext()
            _ = try context.insert(entity: "Trip", json: trip("A", photo: bytes(64)))
            try context.save()
            kept = try XCTUnwrap(filesIn(folder).first)
        }
        // What a process killed between writing a file and committing leaves behind.
        let orphan = UUIDText.random()
        try Data(bytes(64, seed: 5)).write(to: URL(fileURLWithPath: folder + "/" + orphan))
        // Files Strata did not name are never Strata's to remove.
        try Data("notes".utf8).write(to: URL(fileURLWithPath: folder + "/README.txt"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/" + orphan.lowercased()))
        XCTAssertEqual(Set(filesIn(folder)), [kept, orphan, "README.txt", orphan.lowercased()])
        // A read-only open changes nothing.
        _ = try openFile(path: path) { $0.readOnly = true; $0.externalStorageThreshold = Self.threshold }
        XCTAssertEqual(filesIn(folder).count, 4)
        let context = try open().makeContext()
        XCTAssertEqual(Set(filesIn(folder)), [kept, "README.txt", orphan.lowercased()])
        XCTAssertEqual(try fetch(context, "Trip").first?["photo"], .string(Base64.encode(bytes(64))))
    }

    /// One thread replaces a blob and saves while others read it: a read of a
    /// committed state never fails, though each commit removes the file the
    /// previous state named.
    func testReadersNeverSeeAMissingFileWhileAWriterReplacesIt() throws {
        let container = try open()
        let writer = try container.makeContext()
        let id = try writer.insert(entity: "Trip", json: trip("A", photo: bytes(4096, seed: 0)))
        try writer.save()
        let problems = try readWhileWriting(container, readers: 3, minimum: 50, read: { reader, _, _ in
            let json = try JSONValue.parse(String(decoding: reader.get(id: id.description), as: UTF8.self))
            return json["photo"]?.stringValue == nil ? "no photo: \(json)" : nil
        }, writing: {
            for i in 1...300 {
                try writer.update(id: id.description, patch: #"{"photo": "\#(Base64.encode(self.bytes(4096, seed: UInt8(i % 250))))"}"#)
                try writer.save()
            }
        })
        XCTAssertEqual(problems, [])
        XCTAssertEqual(filesIn(folder).count, 1)
    }
}
