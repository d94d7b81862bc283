import Foundation
import XCTest
@testable import Strata

/// The check of a store file's schema compares each table's and index's definition with the DDL
/// Strata writes for it piece by piece (`DDLMatch`), without writing the text: it must accept
/// exactly that text and nothing else. And a configuration's schema text (`Schema.jsonText`,
/// which the open compares with the stored declaration) is copied from the configuration's bytes
/// when it holds no escape: it must be byte for byte the text written from the parsed JSON.
final class DDLMatchTests: XCTestCase {
    /// Pairs (many-to-many), a composite, a searchable column, unique constraints and indexes.
    static let tagged = #"""
    {"version": "1", "entities": [
      {"name": "Note", "attributes": [
         {"name": "title", "type": "string", "searchable": true},
         {"name": "place", "type": "composite", "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int", "optional": true}]},
         {"name": "code", "type": "string", "unique": true}, {"name": "at", "type": "date", "index": true}],
       "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "notes"}],
       "uniqueConstraints": [["title", "at"]], "indexes": [["at", "title"]]},
      {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
       "relationships": [{"name": "notes", "destination": "Note", "toMany": true, "inverse": "tags"}]}
    ]}
    """#

    /// `spell` accepts its own text, and refuses the text cut short, made longer, or changed in any one byte.
    func assertMatchesExactly(_ text: String, _ spell: (inout DDLMatch) -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(DDLMatch.matches(text, spell), text, file: file, line: line)
        let bytes = Array(text.utf8)
        XCTAssertTrue(bytes.allSatisfy { $0 < 0x80 }, "the DDL of these schemas is ASCII", file: file, line: line)
        for n in 0..<bytes.count {
            XCTAssertFalse(DDLMatch.matches(String(decoding: bytes[..<n], as: UTF8.self), spell), "cut at \(n): \(text)", file: file, line: line)
            var changed = bytes
            changed[n] = bytes[n] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
            XCTAssertFalse(DDLMatch.matches(String(decoding: changed, as: UTF8.self), spell), "byte \(n) changed: \(text)", file: file, line: line)
        }
        XCTAssertFalse(DDLMatch.matches(text + " ", spell), file: file, line: line)
        XCTAssertFalse(DDLMatch.matches(text + "\n)", spell), file: file, line: line)
        XCTAssertFalse(DDLMatch.matches("", spell), file: file, line: line)
    }

    func testMatchingAcceptsExactlyTheDDLStrataWrites() throws {
        let dialect = SQLiteDialect()
        var tables = 0, indexes = 0, pairTables = 0
        for json in [Fixtures.sampleTrips, DDLMatchTests.tagged] {
            for t in StoreLayout(try SchemaDecoder.decode(json)).tables {
                let text = dialect.createTable(t)
                assertMatchesExactly(text) { dialect.createTable(t, into: &$0) }
                tables += 1
                if t.withoutRowID || t.primaryKey.count > 1 { pairTables += 1 }
                for i in t.indexes {
                    assertMatchesExactly(dialect.createIndex(i, on: t.name)) { dialect.createIndex(i, on: t.name, into: &$0) }
                    indexes += 1
                }
            }
        }
        XCTAssertGreaterThanOrEqual(tables, 5)
        XCTAssertGreaterThanOrEqual(indexes, 8)
        XCTAssertGreaterThanOrEqual(pairTables, 1, "a table of pairs (its primary key a table constraint) is among them")
        // Another table's or index's text is not this one's.
        let layout = StoreLayout(try SchemaDecoder.decode(Fixtures.sampleTrips))
        let (trip, item) = (layout.tables[0], layout.tables[1])
        XCTAssertFalse(DDLMatch.matches(dialect.createTable(item)) { dialect.createTable(trip, into: &$0) })
        XCTAssertFalse(DDLMatch.matches(dialect.createIndex(trip.indexes[0], on: trip.name)) { dialect.createIndex(trip.indexes[1], on: trip.name, into: &$0) })
        XCTAssertFalse(DDLMatch.matches(dialect.createIndex(trip.indexes[0], on: trip.name)) { dialect.createIndex(trip.indexes[0], on: item.name, into: &$0) })
    }

    /// Configurations spelled in many ways: the schema's text is the one written from its parsed JSON.
    func testASchemaTextCopiedFromTheConfigurationIsTheWrittenOne() throws {
        let spaced = "{\n\t\"history\" : false ,\r\n \"schema\" :\n " + DDLMatchTests.tagged + " \n}\n"
        let texts = [
            #"{"schema": \#(Fixtures.sampleTrips)}"#,
            spaced,
            #"{"author": "schema", "schema":{"version":"1.0","entities":[{"name":"Uni","attributes":[{"name":"a","type":"double","default":-1.5E+3},{"name":"b","type":"string","default":"x  y"},{"name":"c","type":"string","default":"Ünï 日本 \#u{1F600}"}]}]}}"#,
            #"  {"author": "me", "schema": {"entities": [ ], "version" : "2"} , "readOnly" : false }  "#,
        ]
        for text in texts {
            let copied = text.utf8CString.withUnsafeBufferPointer { c in
                c.withMemoryRebound(to: UInt8.self) { JSONReader.minifiedMember("schema", of: UnsafeBufferPointer(rebasing: $0.dropLast())) }
            }
            let parsed = try XCTUnwrap(JSONValue.parse(text)["schema"])
            XCTAssertEqual(copied, parsed.text, text)
            let schema = try StoreConfiguration.decode(text).schema
            XCTAssertEqual(schema.jsonText, schema.json.text)
            XCTAssertEqual(schema.jsonText, parsed.text)
        }
        // Bytes with an escape are written from the tree instead (the writer spells escapes its own way).
        for text in [#"{"schema": {"version": "1\/2", "entities": []}}"#, #"{"schema": {"version": "\u0031", "entities": []}}"#,
                     #"{"sch\u0065ma": {"version": "3", "entities": []}}"#] {
            let copied = text.utf8CString.withUnsafeBufferPointer { c in
                c.withMemoryRebound(to: UInt8.self) { JSONReader.minifiedMember("schema", of: UnsafeBufferPointer(rebasing: $0.dropLast())) }
            }
            XCTAssertNil(copied, text)
            let schema = try StoreConfiguration.decode(text).schema
            XCTAssertEqual(schema.jsonText, schema.json.text)
            XCTAssertEqual(schema.jsonText, try XCTUnwrap(JSONValue.parse(text)["schema"]).text)
        }
    }

    /// Every configuration of the fuzz corpus that decodes has its schema's text as written from its JSON
    /// (whether copied from the bytes or, with an escape, written from the tree).
    func testTheConfigurationCorpusKeepsTheWrittenSchemaText() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/corpus/config")
        let files = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil)
        XCTAssertGreaterThan(files.count, 10)
        var decoded = 0
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            guard let configuration = try? bytes.withUnsafeBufferPointer({ try StoreConfiguration.decode($0) }) else { continue }
            decoded += 1
            let schema = configuration.schema
            XCTAssertEqual(schema.jsonText, schema.json.text, file.lastPathComponent)
            if configuration.migrationPlan == nil, let written = try? JSONValue.parse(String(decoding: bytes, as: UTF8.self))["schema"] {
                XCTAssertEqual(schema.jsonText, written.text, file.lastPathComponent)
            }
        }
        XCTAssertGreaterThan(decoded, 0)
    }
}
