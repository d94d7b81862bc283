import Foundation
import XCTest
@testable import Strata

/// A store file is untrusted input, its schema included: a file may carry views,
/// triggers, indexes, columns or tables Strata did not make, or miss some it did.
/// Opening such a file is `.corrupt` (the file left untouched); what another
/// process changes after an open never runs inside Strata's calls (views and
/// triggers of the file are off on every connection) and surfaces as `.corrupt`,
/// never `.internal`, `.busy` or a hang.
final class HostileSchemaTests: StoreTestCase {
    var path: String { storePath() }

    /// A store with three trips (one a subentity), two bucket-list items and an accommodation.
    @discardableResult
    func makeStore() throws -> ModelContainer {
        let container = try openFile(path: path)
        let context = try container.makeContext()
        let paris = try context.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": 0, "endDate": 1, "bucketList": [{"title": "Louvre"}, {"title": "Seine"}]}"#)
        _ = try context.insert(entity: "BusinessTrip", json: #"{"name": "Oslo", "startDate": 2, "endDate": 3, "perdiem": 80}"#)
        _ = try context.insert(entity: "Trip", json: #"{"name": "Rome", "startDate": 4, "endDate": 5}"#)
        _ = try context.insert(entity: "LivingAccommodation", json: #"{"address": "1 Rue", "placeName": "Inn"}"#)
        _ = paris
        try context.save()
        return container
    }

    /// Changes the store file behind Strata's back, as an attacker with the sqlite3 shell would.
    func tamper(_ script: String) throws {
        let c = try Connection(path: path, readOnly: false, create: false)
        try c.execute(script: script)
    }

    func bytes() -> [UInt8]? { fileBytes(path) }

    /// Opening fails with `.corrupt`, its message containing `words`, and the file is left as it was.
    @discardableResult
    func assertOpenIsCorrupt(_ words: String, file: StaticString = #filePath, line: UInt = #line) -> StrataError? {
        let before = bytes()
        let e = assertError(.corrupt, file: file, line: line) { try openFile(path: path) }
        XCTAssertTrue(e?.message.contains(words) == true, "message: \(e?.message ?? "")", file: file, line: line)
        XCTAssertEqual(bytes(), before, "the file is left untouched", file: file, line: line)
        return e
    }

    func trip(_ context: ModelContext) throws -> FetchDescriptor { FetchDescriptor(entity: try XCTUnwrap(context.schema.entity(named: "Trip"))) }
    func items(_ context: ModelContext) throws -> FetchDescriptor {
        FetchDescriptor(entity: try XCTUnwrap(context.schema.entity(named: "BucketListItem")))
    }

    // MARK: Checks kept by the process

    /// An open that passed the check is remembered for exactly the rows of `sqlite_master` it read:
    /// a file changed after it (here: an index the schema does not declare, then a column's type
    /// changed) is checked again and refused, in the same process.
    func testAStoreChangedAfterAPassingOpenIsCheckedAgain() throws {
        let container = try makeStore()
        let schema = container.schema
        func kept() throws -> Bool {
            let c = try Connection(path: path, readOnly: true, create: false)
            return VerifiedStorage.shared.contains(schema, try StoredSchemaCheck.objects(c))
        }
        // Creating the store checks nothing; opening it again checks it, and keeps the answer.
        _ = try openFile(path: path)
        XCTAssertTrue(try kept(), "the passing open is kept")
        _ = try openFile(path: path)
        try tamper("CREATE INDEX extra ON Trip (name);")
        XCTAssertFalse(try kept())
        assertOpenIsCorrupt("index 'extra'")
        try tamper("DROP INDEX extra;")
        _ = try openFile(path: path)
        try tamper("ALTER TABLE BucketListItem DROP COLUMN details; ALTER TABLE BucketListItem ADD COLUMN details BLOB")
        assertOpenIsCorrupt("column 'details'")
    }

    // MARK: Views and triggers

    /// A table replaced by a view over an endless recursive CTE: reading it would never end.
    static let endlessView = """
        DROP TABLE BucketListItem;
        CREATE VIEW BucketListItem AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
          SELECT n AS _pk, 'BucketListItem' AS _entity, 't' AS title, '' AS details, 0 AS hasReservation, 0 AS isInPlan, NULL AS trip FROM r;
        """

    func testAViewInPlaceOfATableIsRefusedOnOpen() throws {
        try makeStore()
        try tamper(Self.endlessView)
        assertOpenIsCorrupt("view 'BucketListItem'")
    }

    func testAViewMadeAfterOpenIsNeverRead() throws {
        let container = try makeStore()
        let context = try container.makeContext()
        try tamper(Self.endlessView)
        // Views of the file are off on Strata's connections: the read fails at once.
        let e = assertError(.corrupt) { try context.fetch(try items(context)) }
        XCTAssertTrue(e?.message.contains("no longer match its schema") == true, e?.message ?? "")
        assertError(.corrupt) { try context.fetchCount(try items(context)) }
        // Reading through the overlay of pending changes too.
        _ = try context.insert(entity: "BucketListItem", json: #"{"title": "new"}"#)
        assertError(.corrupt) { try context.fetch(try items(context)) }
        context.rollback()
        assertOpenIsCorrupt("view 'BucketListItem'")
    }

    /// A trigger that deletes every other row when one is inserted.
    static let wipingTrigger = """
        CREATE TRIGGER wipe AFTER INSERT ON BucketListItem BEGIN DELETE FROM BucketListItem WHERE _pk <> NEW._pk; END;
        """

    func testATriggerIsRefusedOnOpen() throws {
        try makeStore()
        try tamper(Self.wipingTrigger)
        assertOpenIsCorrupt("trigger 'wipe'")
    }

    func testATriggerMadeAfterOpenNeverRuns() throws {
        let container = try makeStore()
        let context = try container.makeContext()
        try tamper(Self.wipingTrigger)
        _ = try context.insert(entity: "BucketListItem", json: #"{"title": "new"}"#)
        try context.save()
        XCTAssertEqual(try rowCount(path, "BucketListItem"), 3, "the trigger did not run: no item was deleted")
        // An endless trigger cannot hang a save either.
        try tamper("""
            CREATE TRIGGER spin AFTER INSERT ON Trip BEGIN
              INSERT INTO LivingAccommodation (_pk, _entity, address, placeName)
                SELECT -n, 'LivingAccommodation', 'a', 'b' FROM (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r);
            END;
            """)
        _ = try context.insert(entity: "Trip", json: #"{"name": "Lima", "startDate": 6, "endDate": 7}"#)
        try context.save()
        XCTAssertEqual(try rowCount(path, "LivingAccommodation"), 1)
        assertOpenIsCorrupt("trigger")
    }

    // MARK: Objects Strata did not make, or that differ from what it made

    func testSchemaObjectsStrataDidNotMakeAreRefused() throws {
        let cases: [(String, String, String)] = [
            ("table", "CREATE TABLE notes (x)", "table 'notes'"),
            ("virtual table", "CREATE VIRTUAL TABLE words USING fts5(w)", "'words'"),
            ("index", #"CREATE INDEX extra ON Trip (destination)"#, "index 'extra'"),
            ("duplicate index", #"CREATE INDEX extra ON Trip (name)"#, "index 'extra'"),
            ("expression index", #"CREATE INDEX extra ON Trip (length(zeroblob(100000)))"#, "index 'extra'"),
            ("partial index", #"CREATE INDEX extra ON Trip (destination) WHERE destination > 0"#, "index 'extra'"),
            ("unique index", #"CREATE UNIQUE INDEX extra ON BucketListItem (title)"#, "index 'extra'"),
            ("generated column", #"ALTER TABLE Trip ADD COLUMN g AS (zeroblob(1000000000))"#, "Trip"),
            ("column with a default", #"ALTER TABLE Trip ADD COLUMN d BLOB DEFAULT x'00'"#, "Trip"),
            ("extra column", #"ALTER TABLE Trip ADD COLUMN e TEXT"#, "Trip"),
            ("column of another type", #"ALTER TABLE BucketListItem DROP COLUMN details; ALTER TABLE BucketListItem ADD COLUMN details BLOB"#,
             "BucketListItem"),
            ("check constraint", """
                DROP TABLE LivingAccommodation;
                CREATE TABLE "LivingAccommodation" ("_pk" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "address" TEXT,
                  "placeName" TEXT, "trip" INTEGER, CHECK (length(zeroblob(1000000)) > 0));
                CREATE INDEX "LivingAccommodation.fk(trip)" ON "LivingAccommodation" ("trip");
                """, "LivingAccommodation"),
            ("collation", """
                DROP TABLE LivingAccommodation;
                CREATE TABLE "LivingAccommodation" ("_pk" INTEGER PRIMARY KEY, "_entity" TEXT NOT NULL, "address" TEXT COLLATE NOCASE,
                  "placeName" TEXT, "trip" INTEGER);
                CREATE INDEX "LivingAccommodation.fk(trip)" ON "LivingAccommodation" ("trip");
                """, "LivingAccommodation"),
            ("missing index", #"DROP INDEX "Trip.index(startDate)""#, "Trip"),
            ("missing unique index", #"DROP INDEX "Trip.unique(name,startDate,endDate)""#, "Trip"),
            ("missing table", "DROP TABLE LivingAccommodation", "LivingAccommodation"),
            ("changed metadata table", "DROP TABLE strata_sequence; CREATE TABLE strata_sequence (entity TEXT PRIMARY KEY, next DEFAULT (zeroblob(1000000000))) WITHOUT ROWID",
             "strata_sequence"),
            ("changed history table", """
                DROP TABLE strata_history_name;
                CREATE TABLE strata_history_name (id INTEGER PRIMARY KEY, entity TEXT NOT NULL,
                  property TEXT NOT NULL DEFAULT (zeroblob(1000000000)), live INTEGER NOT NULL DEFAULT 1);
                """, "strata_history_name"),
            ("history index", "CREATE INDEX extra ON strata_history_change (pk)", "index 'extra'"),
        ]
        for (name, sql, words) in cases {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-wal")
            try? FileManager.default.removeItem(atPath: path + "-shm")
            try makeStore()
            try tamper(sql)
            let before = bytes()
            do {
                _ = try openFile(path: path)
                XCTFail("\(name): the open succeeded")
            } catch let e as StrataError {
                XCTAssertEqual(e.code, .corrupt, "\(name): \(e.message)")
                XCTAssertTrue(e.message.contains(words), "\(name): \(e.message)")
            }
            XCTAssertEqual(bytes(), before, "\(name): the file is left untouched")
        }
    }

    func testWhatStrataMakesOpensAgain() throws {
        // Stores made, migrated and given history by Strata pass the check (the C and migration
        // tests open many more); ANALYZE's statistics tables are SQLite's own.
        try makeStore()
        try tamper("ANALYZE")
        let context = try openFile(path: path).makeContext()
        XCTAssertEqual(try fetch(context, "Trip").count, 3)
    }

    // MARK: Damaged tables

    func testADroppedColumnIsCorruptOnOpen() throws {
        try makeStore()
        try tamper("ALTER TABLE BucketListItem DROP COLUMN details")
        assertOpenIsCorrupt("BucketListItem")
    }

    func testAStoreMissingAColumnIsNotMigrated() throws {
        // Nothing a migration runs would notice the column is gone: the check before it does.
        try makeStore()
        try tamper("ALTER TABLE Trip DROP COLUMN destination")
        let v2 = Fixtures.sampleTrips.replacingOccurrences(of: #""version": "1.0.0""#, with: #""version": "2.0.0""#)
            .replacingOccurrences(of: #"{"name": "placeName", "type": "string"}"#,
                                  with: #"{"name": "placeName", "type": "string"}, {"name": "stars", "type": "int", "optional": true}"#)
        let before = bytes()
        let e = assertError(.corrupt) { try openFile(v2, path: path) }
        XCTAssertTrue(e?.message.contains("column 'destination' is missing") == true, e?.message ?? "")
        XCTAssertTrue(e?.message.contains("version 1.0.0") == true, e?.message ?? "")
        XCTAssertEqual(bytes(), before, "not migrated")
    }

    func testADroppedColumnAfterOpenIsCorruptEverywhere() throws {
        let container = try makeStore()
        let context = try container.makeContext()
        let rome = try XCTUnwrap(try identifiers(context, "Trip").last)
        let item = try XCTUnwrap(try identifiers(context, "BucketListItem").first)
        try tamper("ALTER TABLE BucketListItem DROP COLUMN details; ALTER TABLE Trip DROP COLUMN destination")
        assertError(.corrupt) { try context.fetch(try trip(context)) }
        assertError(.corrupt) { try context.get(id: rome) }
        assertError(.corrupt) { try context.get(id: item) }
        try context.update(id: item, patch: #"{"details": "x"}"#)
        assertError(.corrupt) { try context.save() }
        context.rollback()
        _ = try context.insert(entity: "BucketListItem", json: #"{"title": "new"}"#)
        assertError(.corrupt) { try context.save() }
        context.rollback()
    }

    func testADroppedTableAfterOpenIsCorruptEverywhere() throws {
        let container = try makeStore()
        let context = try container.makeContext()
        let rome = try XCTUnwrap(try identifiers(context, "Trip").last)
        try tamper("DROP TABLE Trip")
        assertError(.corrupt) { try context.fetch(try trip(context)) }
        assertError(.corrupt) { try context.fetchCount(try trip(context)) }
        assertError(.corrupt) { try context.get(id: rome) }
        // Inserting the same unique values again looks the object up first.
        assertError(.corrupt) { try context.insert(entity: "Trip", json: #"{"name": "Rome", "startDate": 4, "endDate": 5}"#) }
        context.rollback()
        assertError(.corrupt) {
            _ = try context.insert(entity: "LivingAccommodation", json: #"{"address": "2 Rue", "placeName": "B&B", "trip": "\#(rome)"}"#)
            try context.save()
        }
    }

    func testAMaxedKeySequenceIsCorrupt() throws {
        try makeStore()
        for next in ["9223372036854775807", "9223372036854775800", "0", "-9223372036854775808", "'many'", "2.5"] {
            try tamper("UPDATE strata_sequence SET next = \(next) WHERE entity = 'Trip'")
            let context = try openFile(path: path).makeContext()
            do {
                // A new object each time (inserting the same unique values again would update).
                _ = try context.insert(entity: "Trip", json: #"{"name": "Lima \#(next)", "startDate": 6, "endDate": 7}"#)
                try context.save()
                XCTFail("\(next): the save succeeded")
            } catch let e as StrataError {
                XCTAssertEqual(e.code, .corrupt, "\(next): \(e.message)")
                XCTAssertTrue(e.message.contains("Trip"), "\(next): \(e.message)")
            }
        }
        // A sequence with room left works up to its end.
        try tamper("UPDATE strata_sequence SET next = 9223372036854775000 WHERE entity = 'Trip'")
        let context = try openFile(path: path).makeContext()
        let id = try context.insert(entity: "Trip", json: #"{"name": "Quito", "startDate": 6, "endDate": 7}"#)
        try context.save()
        XCTAssertEqual(id.pk, 9223372036854775000)
        XCTAssertEqual(try get(context, id)["name"], .string("Quito"))
    }

    // MARK: Metadata

    func testAStoredHashThatDoesNotMatchTheStoredSchemaIsDecidedOnce() throws {
        try makeStore()
        try tamper("UPDATE strata_metadata SET value = '\(String(repeating: "ab", count: 32))' WHERE key = 'versionHash'")
        // Damage, decided before any migration runs: not a no-op migration retried until BUSY.
        let e = assertOpenIsCorrupt("version hash")
        XCTAssertNil(e?.stage, "no stage ran")
        // Read-only, the same answer.
        assertError(.corrupt) { try openFile(path: path) { $0.readOnly = true } }
    }

    // MARK: Connections

    func testStrataConnectionsDistrustTheFilesSchema() throws {
        try makeStore()
        let c = try Connection(path: path, readOnly: false, create: false)
        XCTAssertEqual(try c.statement("PRAGMA trusted_schema").scalar(), .int(0))
        // Defensive mode: the schema cannot be written as a table.
        XCTAssertThrowsError(try c.execute(script: "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = 'x' WHERE name = 'Trip'"))
    }
}
