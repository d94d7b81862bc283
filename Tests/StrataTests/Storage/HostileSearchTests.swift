import CSQLite
import Foundation
import XCTest
@testable import Strata

/// A store file's full-text tables are untrusted input like the rest of it: a crafted
/// declaration (another tokenizer, external content, a plain table in its place), a shadow
/// table missing or redeclared is `.corrupt` on open (the file left untouched); damaged
/// contents of the shadow tables are `.corrupt` when a search or a save reads them. Never a
/// crash, never `.internal`.
final class HostileSearchTests: StoreTestCase {
    var path: String { storePath() }
    static let schema = SearchTests.schema
    static let fts = "Item.search(title)"

    @discardableResult
    func makeStore() throws -> ModelContainer {
        let container = try openFile(Self.schema, path: path)
        let c = try container.makeContext()
        for i in 0..<300 { _ = try c.insert(entity: "Item", json: #"{"title": "zurich walk number \#(i) café", "note": "n\#(i)"}"#) }
        try c.save()
        return container
    }

    /// Changes the file as a program with SQLite and no defensive mode would (shadow tables and
    /// the schema itself are writable there).
    func tamper(_ script: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else { throw StrataError(.io, "cannot open") }
        defer { sqlite3_close_v2(db) }
        var err: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, script, nil, nil, &err) == SQLITE_OK else {
            let m = err.map { String(cString: $0) } ?? "?"
            sqlite3_free(err)
            throw StrataError(.internal, "tamper failed: \(m)")
        }
    }

    func search(_ c: ModelContext, _ text: String = "zurich") throws -> Int64 {
        try c.fetchCount(try Query.descriptor(#"{"entity": "Item", "predicate": {"matches": [{"key": "title"}, \#(JSONValue.string(text).text)]}}"#, c.schema))
    }

    func testCraftedDeclarationsAreCorruptOnOpen() throws {
        let q = "\"\(Self.fts)\""
        let cases: [(String, String)] = [
            ("another tokenizer", "DROP TABLE \(q); CREATE VIRTUAL TABLE \(q) USING fts5(tokens, tokenize = 'unicode61')"),
            ("external content", "DROP TABLE \(q); CREATE VIRTUAL TABLE \(q) USING fts5(tokens, tokenize = 'ascii', content = 'Item')"),
            ("contentless", "DROP TABLE \(q); CREATE VIRTUAL TABLE \(q) USING fts5(tokens, tokenize = 'ascii', content = '')"),
            ("another column", "DROP TABLE \(q); CREATE VIRTUAL TABLE \(q) USING fts5(title, tokenize = 'ascii')"),
            ("a plain table", "DROP TABLE \(q); CREATE TABLE \(q) (rowid INTEGER PRIMARY KEY, tokens TEXT)"),
            ("no table", "DROP TABLE \(q)"),
            ("a shadow table dropped", "DROP TABLE \"\(Self.fts)_idx\""),
            ("a shadow table redeclared", "DROP TABLE \"\(Self.fts)_docsize\"; CREATE TABLE \"\(Self.fts)_docsize\" (id INTEGER PRIMARY KEY, sz BLOB, x)"),
            ("an extra shadow-like table", "CREATE TABLE \"\(Self.fts)_extra\" (x)"),
            ("the declaration rewritten", """
                PRAGMA writable_schema = ON;
                UPDATE sqlite_schema SET sql = 'CREATE VIRTUAL TABLE "\(Self.fts)" USING fts5(tokens, tokenize = ''trigram'')' WHERE name = '\(Self.fts)';
                PRAGMA writable_schema = OFF;
                """),
        ]
        for (label, script) in cases {
            try? FileManager.default.removeItem(atPath: path)
            try makeStore()
            try tamper(script)
            let before = fileBytes(path)
            let e = assertError(.corrupt) { try openFile(Self.schema, path: path) }
            XCTAssertTrue(e?.message.contains("search(title)") == true, "\(label): \(e?.message ?? "")")
            XCTAssertEqual(fileBytes(path), before, "\(label): the file is left untouched")
        }
    }

    func testDamagedShadowTablesAreCorruptOnSearchNeverACrash() throws {
        let cases: [(String, String)] = [
            ("index blocks overwritten", "UPDATE \"\(Self.fts)_data\" SET block = x'0102030405060708090a0b0c' WHERE id > 10"),
            ("index blocks truncated", "UPDATE \"\(Self.fts)_data\" SET block = substr(block, 1, 3) WHERE id > 1"),
            ("index blocks gone", "DELETE FROM \"\(Self.fts)_data\" WHERE id > 1"),
            ("structure record damaged", "UPDATE \"\(Self.fts)_data\" SET block = x'ffffffffffffffff' WHERE id = 10"),
            ("version changed", "UPDATE \"\(Self.fts)_config\" SET v = 99 WHERE k = 'version'"),
            ("config gone", "DELETE FROM \"\(Self.fts)_config\""),
        ]
        for (label, script) in cases {
            try? FileManager.default.removeItem(atPath: path)
            try makeStore()
            try tamper(script)
            let c: ModelContext
            do { c = try openFile(Self.schema, path: path).makeContext() } catch let e as StrataError {
                XCTAssertEqual(e.code, .corrupt, "\(label) on open: \(e)")
                continue
            }
            for text in ["zurich", "walk*", "café number"] {
                do {
                    let n = try search(c, text)
                    // Damage FTS5 does not notice here can only hide rows, never show wrong ones: matches checks each row.
                    XCTAssertLessThanOrEqual(n, 300, label)
                } catch let e as StrataError {
                    XCTAssertEqual(e.code, .corrupt, "\(label): \(e)")
                }
            }
            // A save that writes the index meets the damage as corruption too, or succeeds.
            do {
                _ = try c.insert(entity: "Item", json: #"{"title": "zurich again"}"#)
                try c.save()
            } catch let e as StrataError {
                XCTAssertEqual(e.code, .corrupt, "\(label), save: \(e)")
            }
        }
    }

    func testStrataConnectionsStillReadTheirOwnFullTextTables() throws {
        // Defensive mode and trusted_schema = 0 leave Strata's own FTS5 table usable: searches,
        // saves (which write its shadow tables through FTS5) and a reopen.
        try makeStore()
        let c = try openFile(Self.schema, path: path).makeContext()
        XCTAssertEqual(try search(c), 300)
        _ = try c.insert(entity: "Item", json: #"{"title": "Zürich"}"#)
        try c.save()
        XCTAssertEqual(try search(c), 301)
    }
}
