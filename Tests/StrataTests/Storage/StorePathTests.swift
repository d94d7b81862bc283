import Foundation
import XCTest
@testable import Strata

/// Store paths are plain file names (DESIGN §5), never SQLite URIs, whatever
/// the SQLite build's URI setting.
final class StorePathTests: StoreTestCase {
    func open(_ path: String) throws -> ModelContainer {
        try ModelContainer(path: path, configuration: configuration())
    }

    func testURIsAndMemoryNamesAreRejected() throws {
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(tempDirectory))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        for path in [":memory:", "file:x.store?nolock=1", "file:x.store?mode=rwc", "file::memory:", "", "x.store/", tempDirectory] {
            let e = assertError(.invalid) { try open(path) }
            if path == ":memory:" { XCTAssertTrue(e?.message.contains("inMemory") == true, e?.message ?? "") }
        }
        XCTAssertEqual(filesIn(tempDirectory), [], "nothing was created")
        // A file whose name really starts with "file:" opens as a plain file.
        let context = try open("./file:x.store?nolock=1").makeContext()
        _ = try context.insert(entity: "Trip", json: #"{"name": "A", "startDate": 0, "endDate": 1}"#)
        try context.save()
        XCTAssertTrue(filesIn(tempDirectory).contains("file:x.store?nolock=1"))
    }

    func testAFailedFirstOpenLeavesNoFile() throws {
        // What an open that failed after SQLite created the file leaves: an empty database (in WAL mode).
        let empty = storePath("empty")
        do {
            let c = try Connection(path: empty, readOnly: false, create: true)
            try c.execute(script: "PRAGMA journal_mode=WAL")
        }
        XCTAssertNotNil(fileBytes(empty))
        SQLiteStore.removeIfEmpty(empty)
        XCTAssertNil(fileBytes(empty))
        XCTAssertNil(fileBytes(empty + "-wal"))
        // A database with anything in it is never removed.
        let used = storePath("used")
        do { try Connection(path: used, readOnly: false, create: true).execute(script: "CREATE TABLE t (x)") }
        SQLiteStore.removeIfEmpty(used)
        XCTAssertNotNil(fileBytes(used))
        // A store that exists keeps its file when an open fails.
        let path = storePath()
        _ = try open(path)
        let other = Fixtures.schema(attributes: #"{"name": "n", "type": "int"}"#)
        assertError(.incompatibleStore) { try ModelContainer(path: path, configuration: configuration(other)) }
        XCTAssertNotNil(fileBytes(path))
    }
}
