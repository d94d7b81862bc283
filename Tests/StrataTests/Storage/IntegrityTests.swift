import XCTest
@testable import Strata

/// `ModelContainer.checkIntegrity()`, `backup(to:overwrite:)` and `vacuum()` on every store
/// setup: the report's shape, damage made with raw SQL found and named, the report bounded,
/// a vacuum that changes no answer, a backup that reads as the store (or is refused).
final class IntegrityTests: StoreTestCase {
    static let schema = """
    {"version": "1.0.0", "entities": [
      {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
      {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
      {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
       "relationships": [{"name": "trip", "destination": "BusinessTrip", "optional": true}]}]}
    """

    /// Runs SQL on the store behind Strata's back (foreign keys and triggers off on PostgreSQL).
    private func damage(_ h: StoreHarness, _ sql: String) throws {
        switch h.setup {
        case .inMemory:
            let c = try XCTUnwrap((h.container.store as? SQLiteStore)?.sharedConnection)
            try c.lock.withLock { try c.execute(script: sql) }
        case .file, .reopenedFile:
            try Connection(path: try XCTUnwrap(h.path), readOnly: false, create: false).execute(script: sql)
        case .postgres:
            let c = try PGConnection(uri: try XCTUnwrap(h.path))
            _ = try c.execute(script: "SET session_replication_role = replica")
            _ = try c.execute(script: sql)
        }
    }

    func testCleanStoreReportsOK() {
        forEachSetup(Self.schema) { h in
            let b = try h.context.insert(entity: "BusinessTrip", json: #"{"name": "b"}"#)
            _ = try h.context.insert(entity: "Item", json: #"{"title": "i", "trip": "\#(b)"}"#)
            try h.context.save()
            let report = try h.container.checkIntegrity()
            XCTAssertTrue(report.ok, "[\(h.setup)] \(report.problems)")
            XCTAssertEqual(String(decoding: report.json, as: UTF8.self), #"{"ok":true,"problems":[],"truncated":false}"#, "[\(h.setup)]")
        }
    }

    func testDamageIsFoundAndNamed() {
        forEachSetup(Self.schema) { h in
            let t = try h.context.insert(entity: "Trip", json: #"{"name": "t"}"#)
            let b = try h.context.insert(entity: "BusinessTrip", json: #"{"name": "b"}"#)
            let dangling = try h.context.insert(entity: "Item", json: #"{"title": "dangling", "trip": "\#(b)"}"#)
            let wrong = try h.context.insert(entity: "Item", json: #"{"title": "wrong"}"#)
            try h.context.save()
            try damage(h, #"UPDATE "Item" SET trip = 424242 WHERE _pk = \#(dangling.pk)"#)
            try damage(h, #"UPDATE "Item" SET trip = \#(t.pk) WHERE _pk = \#(wrong.pk)"#)
            // PostgreSQL refuses the name while the table holds its entity check.
            if h.setup == .postgres { try damage(h, #"ALTER TABLE "Trip" DROP CONSTRAINT strata_entities"#) }
            try damage(h, #"UPDATE "Trip" SET _entity = 'Gone' WHERE _pk = \#(b.pk)"#)
            let report = try h.container.checkIntegrity()
            XCTAssertFalse(report.ok)
            func has(_ kind: IntegrityReport.Problem.Kind, _ entity: String, _ id: String) -> Bool {
                report.problems.contains { $0.kind == kind && $0.entity == entity && $0.id == id }
            }
            XCTAssertTrue(has(.link, "Item", dangling.description), "[\(h.setup)] \(report.problems)")
            XCTAssertTrue(has(.link, "Item", wrong.description), "[\(h.setup)] \(report.problems)")
            XCTAssertTrue(has(.value, "Trip", "Gone/\(b.pk)"), "[\(h.setup)] \(report.problems)")
            XCTAssertFalse(report.problems.contains { $0.kind == .table || $0.kind == .sqlite }, "[\(h.setup)] \(report.problems)")
        }
    }

    func testReportIsBounded() {
        forEachSetup(Self.schema, StoreSetup.allCases.filter { $0 != .reopenedFile }) { h in
            let b = try h.context.insert(entity: "BusinessTrip", json: #"{"name": "b"}"#)
            for i in 0..<(IntegrityReport.limit + 5) { _ = try h.context.insert(entity: "Item", json: #"{"title": "i\#(i)", "trip": "\#(b)"}"#) }
            try h.context.save()
            try damage(h, #"DELETE FROM "Trip""#)
            let report = try h.container.checkIntegrity()
            XCTAssertEqual(report.problems.count, IntegrityReport.limit, "[\(h.setup)]")
            XCTAssertTrue(report.truncated, "[\(h.setup)]")
            XCTAssertTrue(String(decoding: report.json, as: UTF8.self).hasSuffix(#""truncated":true}"#))
        }
    }

    func testVacuumKeepsAnswers() {
        forEachSetup(Self.schema) { h in
            for i in 0..<200 { _ = try h.context.insert(entity: "Trip", json: #"{"name": "t\#(String(format: "%03d", i))"}"#) }
            try h.context.save()
            _ = try h.context.delete(entity: "Trip", predicateJSON: nil)
            _ = try h.context.insert(entity: "BusinessTrip", json: #"{"name": "kept", "perdiem": 2.5}"#)
            try h.context.save()
            let before = try fetch(h.context, "Trip")
            try h.container.vacuum()
            try h.reopen()
            XCTAssertEqual(try fetch(h.context, "Trip"), before, "[\(h.setup)]")
            XCTAssertTrue(try h.container.checkIntegrity().ok, "[\(h.setup)]")
        }
    }

    func testBackupCopiesOrRefuses() {
        forEachSetup(Self.schema) { h in
            _ = try h.context.insert(entity: "BusinessTrip", json: #"{"name": "b", "perdiem": 1}"#)
            try h.context.save()
            let destination = storePath("copy-\(h.setup.rawValue)")
            switch h.setup {
            case .inMemory, .postgres:
                XCTAssertThrowsError(try h.container.backup(to: destination)) { e in
                    XCTAssertEqual((e as? StrataError)?.code, .invalid, "[\(h.setup)]")
                }
                XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
            case .file, .reopenedFile:
                try h.container.backup(to: destination)
                XCTAssertThrowsError(try h.container.backup(to: destination)) { e in
                    XCTAssertEqual((e as? StrataError)?.code, .invalid)
                }
                try h.container.backup(to: destination, overwrite: true)
                let copy = try ModelContainer(path: destination, configuration: h.configuration)
                XCTAssertEqual(try fetch(copy.makeContext(), "Trip"), try fetch(h.context, "Trip"))
                XCTAssertTrue(try copy.checkIntegrity().ok)
            }
        }
    }
}
