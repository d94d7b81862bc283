import Foundation
import XCTest
@testable import Strata

/// Two containers on one file, the second migrating it (an app and its extension, two
/// services): the first notices that the stored version changed and refuses, naming
/// both versions, before it writes anything; its reads never answer INTERNAL.
final class SharedStoreTests: MigrationTestCase {
    /// Reads the SQL a SQLite session runs (`captureSQL`).
    override class var runsOnPostgreSQL: Bool { false }

    private var trips: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples/trips")
    }

    private func text(_ name: String) throws -> String {
        try String(contentsOf: trips.appendingPathComponent(name), encoding: .utf8)
    }

    private let v1 = #"""
    {"version": "1.0.0", "entities": [
      {"name": "Note", "attributes": [{"name": "title", "type": "string"}]}]}
    """#

    /// Version 2 adds a required attribute (filled with its default by the migration).
    private let v2 = #"""
    {"version": "2.0.0", "entities": [
      {"name": "Note", "attributes": [{"name": "title", "type": "string"},
                                      {"name": "rank", "type": "int", "default": 7}]}]}
    """#

    private func assertIncompatible(_ e: StrataError?, _ old: String, _ new: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let e else { return }
        XCTAssertTrue(e.message.contains(old) && e.message.contains(new), "names both versions: \(e.message)", file: file, line: line)
    }

    func testAnOldContainerRefusesToSaveOnceAnotherMigratedTheFile() throws {
        let old = try openFile(v1)
        let ctx = try old.makeContext()
        _ = try ctx.insert(entity: "Note", json: #"{"title": "before"}"#)
        try ctx.save()

        let new = try openFile(v2)
        XCTAssertEqual(new.schema.version, "2.0.0")

        // A change made before or after the migration: either way the save refuses, writing nothing.
        _ = try ctx.insert(entity: "Note", json: #"{"title": "after"}"#)
        assertIncompatible(assertError(.incompatibleStore) { try ctx.save() }, "1.0.0", "2.0.0")
        XCTAssertTrue(ctx.hasChanges, "the pending changes stay")
        let notes = try fetch(try new.makeContext(), "Note")
        XCTAssertEqual(notes.count, 1)
        XCTAssertEqual(notes.first?["rank"], .number("7"), "no row without the new version's required value")

        // A context made after the migration refuses too: reserving keys for the insert is a write.
        let late = try old.makeContext()
        assertIncompatible(assertError(.incompatibleStore) { try late.insert(entity: "Note", json: #"{"title": "late"}"#) }, "1.0.0", "2.0.0")
        XCTAssertFalse(late.hasChanges)
        XCTAssertEqual(try count(try new.makeContext(), "Note"), 1)
    }

    /// examples/trips: a version 1 container after a version 4 container migrated its file.
    func testTripsVersionOneAfterTheMigrationToFour() throws {
        let old = try openFile(try text("schema-v1.json"))
        let ctx = try old.makeContext()
        let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "destination": "FR", "start_date": 0, "end_date": 86400}"#)
        try ctx.save()

        let new = try open(config: #"{"migrationPlan": \#(try text("plan.json"))}"#)
        XCTAssertEqual(new.schema.version, "4.0.0")

        // Reads: an answer or INCOMPATIBLE_STORE, never INTERNAL.
        let entity = try XCTUnwrap(ctx.schema.entity(named: "Trip"))
        let reads: [(String, () throws -> Any)] = [
            ("fetch", { try ctx.fetch(FetchDescriptor(entity: entity)) }),
            ("count", { try ctx.fetchCount(FetchDescriptor(entity: entity)) }),
            ("identifiers", { try ctx.fetchIdentifiers(FetchDescriptor(entity: entity)) }),
            ("get", { try ctx.get(id: trip.description) }),
            ("cursor", { try ctx.cursor(FetchDescriptor(entity: entity)).next(10) }),
            ("insert", { try ctx.insert(entity: "Trip", json: #"{"name": "Rome", "destination": "IT", "start_date": 0, "end_date": 1}"#) }),
            ("update", { try ctx.update(id: trip.description, patch: #"{"destination": "France"}"#) }),
        ]
        for (name, read) in reads {
            do { _ = try read() } catch let e as StrataError {
                XCTAssertEqual(e.code, .incompatibleStore, "\(name): \(e.message)")
                assertIncompatible(e, "1.0.0", "4.0.0")
            }
        }
        if ctx.hasChanges {
            assertIncompatible(assertError(.incompatibleStore) { try ctx.save() }, "1.0.0", "4.0.0")
        }
        let fresh = try old.makeContext()
        try fresh.delete(id: trip.description)
        assertIncompatible(assertError(.incompatibleStore) { try fresh.save() }, "1.0.0", "4.0.0")
        XCTAssertEqual(try count(try new.makeContext(), "Trip"), 1, "nothing was written")
    }

    /// A store migrated and reopened many times: the check costs one metadata read per save.
    func testTheCheckReadsOneMetadataRowPerSave() throws {
        let c = try openFile(v1)
        let ctx = try c.makeContext()
        _ = try ctx.insert(entity: "Note", json: #"{"title": "a"}"#)
        let sql = try captureSQL(ctx) { try ctx.save() }
        XCTAssertEqual(sql.filter { $0.contains("strata_metadata") }.count, 1, "\(sql)")
    }
}
