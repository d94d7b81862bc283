import Foundation
import XCTest
@testable import Strata

/// Whole-store export and import (`strata_export`, `strata_import`, docs/JSON.md §10): a store
/// of every attribute type, inheritance, every kind of link, external storage and history
/// goes out as JSON lines and into a new store with the same fetches and identifiers; bad
/// input names its line and leaves the destination as it was; memory stays bounded.
final class ExportImportTests: StoreTestCase {
    static let schema = #"""
        {"version": "1.0.0", "entities": [
          {"name": "Trip", "attributes": [
             {"name": "name", "type": "string"},
             {"name": "count", "type": "int", "default": 0},
             {"name": "rating", "type": "double", "optional": true},
             {"name": "done", "type": "bool", "default": false},
             {"name": "startDate", "type": "date"},
             {"name": "photo", "type": "data", "optional": true, "externalStorage": true},
             {"name": "thumb", "type": "data", "optional": true},
             {"name": "ref", "type": "uuid", "optional": true},
             {"name": "site", "type": "url", "optional": true},
             {"name": "budget", "type": "decimal", "optional": true},
             {"name": "extra", "type": "json", "optional": true},
             {"name": "address", "type": "composite", "optional": true, "fields": [
                {"name": "city", "type": "string"}, {"name": "zip", "type": "string", "optional": true}]},
             {"name": "views", "type": "int", "transient": true, "default": 0}],
           "relationships": [
             {"name": "items", "destination": "Item", "toMany": true, "inverse": "trip", "deleteRule": "cascade"},
             {"name": "stay", "destination": "Stay", "optional": true, "inverse": "trip"},
             {"name": "tags", "destination": "Tag", "toMany": true, "inverse": "trips"},
             {"name": "seen", "destination": "Tag", "toMany": true}],
           "uniqueConstraints": [["name"]]},
          {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
          {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "enum": ["family", "rest"], "default": "rest"}]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "trip", "destination": "Trip", "optional": false}]},
          {"name": "Stay", "attributes": [{"name": "place", "type": "string"}],
           "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
          {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "tags"}]}]}
        """#

    /// A file store and, with `STRATA_TEST_POSTGRES`, a PostgreSQL one; in-memory stores too.
    static let setups: [StoreSetup] = StoreSetup.allCases.filter { $0 != .reopenedFile }

    private func open(_ setup: StoreSetup, _ name: String, _ schemaJSON: String = ExportImportTests.schema) throws -> StoreHarness {
        try harness(setup, schemaJSON, name: name) { $0.externalStorageThreshold = 64 }
    }

    private func caught(_ body: () throws -> Any) -> StrataError? {
        do { _ = try body(); return nil } catch { return error as? StrataError }
    }

    private func export(_ container: ModelContainer, batchSize: Int = 1_000) throws -> [UInt8] {
        var out: [UInt8] = []
        try container.export(batchSize: batchSize) { out += $0 }
        return out
    }

    /// Imports `bytes`, handed out `step` bytes at a time (lines split anywhere).
    @discardableResult
    private func importBytes(_ container: ModelContainer, _ bytes: [UInt8], step: Int = 7_001) throws -> Int64 {
        var offset = 0
        return try container.importObjects { buffer in
            let n = min(step, buffer.count, bytes.count - offset)
            bytes[offset..<offset + n].withUnsafeBytes { buffer.copyMemory(from: $0) }
            offset += n
            return n
        }
    }

    /// Every entity's objects, in key order, as JSON.
    private func everything(_ c: ModelContext) throws -> [String: [JSONValue]] {
        var all: [String: [JSONValue]] = [:]
        for e in c.schema.entities { all[e.name] = try fetch(c, e.name, subentities: false) }
        return all
    }

    /// A store with every attribute type, inheritance, every kind of link, external storage
    /// and history (saves, an update and a delete); keys from two contexts (blocks apart).
    private func fill(_ h: StoreHarness) throws {
        let c = h.context
        let tags = try c.insertMany(entity: "Tag", json: #"[{"label": "sea"}, {"label": "food"}, {"label": "art"}]"#)
        let big = Data((0..<300).map { UInt8($0 % 251) }).base64EncodedString()
        _ = try c.insert(entity: "BusinessTrip", json: """
            {"name": "Paris", "count": 3, "rating": 4.5, "done": true, "startDate": "2026-11-22T09:30:00.25Z",
             "photo": "\(big)", "thumb": "AAEC/w==", "ref": "2f1b7c7e-3c5a-4e59-9b8e-3f6a2a1d0c11", "site": "https://example.com/a?b=1",
             "budget": "1234.50", "extra": {"k": [1, "two", null, {"x": true}]}, "address": {"city": "Paris", "zip": "75001"},
             "perdiem": 120.25, "items": [{"title": "Louvre"}, {"title": "Seine"}], "stay": {"place": "Hotel"},
             "tags": ["\(tags[0])", "\(tags[2])"], "seen": ["\(tags[1])"]}
            """)
        _ = try c.insert(entity: "PersonalTrip", json: """
            {"name": "Rome", "startDate": 1700000000, "reason": "family", "address": {"city": "Rome"},
             "items": [{"title": "Colosseum"}], "tags": ["\(tags[0])"], "extra": "text"}
            """)
        _ = try c.insert(entity: "Trip", json: #"{"name": "Gone", "startDate": "2026-01-01"}"#)
        try c.save()
        try c.update(id: "Trip/3", patch: #"{"name": "Lyon", "budget": 0.001}"#)
        try c.save()
        // A second context reserves its own block: keys far apart.
        let other = try h.container.makeContext()
        _ = try other.insert(entity: "Trip", json: #"{"name": "Nice", "startDate": "2027-05-05", "stay": {"place": "Flat"}}"#)
        _ = try other.insert(entity: "Trip", json: #"{"name": "Temp", "startDate": "2027-05-05"}"#)
        try other.save()
        try other.delete(id: try identifiers(other, "Trip").last!)
        try other.save()
    }

    func testARoundTripKeepsEveryFetchAndIdentifierAndLaterInsertsGetNewKeys() {
        for setup in Self.setups {
            do {
                let source = try open(setup, "source")
                try fill(source)
                let exported = try export(source.container, batchSize: 2)
                let text = String(decoding: exported, as: UTF8.self)
                XCTAssertTrue(text.hasPrefix(#"{"strata":"export","version":1,"#), "[\(setup)] \(text.prefix(80))")
                XCTAssertTrue(text.contains("\"photo\":\"AAECAwQF"), "[\(setup)] the external-storage value is inline")

                let destination = try open(setup, "destination")
                XCTAssertEqual(try importBytes(destination.container, exported), 12, "[\(setup)]")
                try destination.reopen()
                let want = try everything(source.context)
                XCTAssertEqual(try everything(destination.context), want, "[\(setup)]")
                XCTAssertEqual(want["Trip"]?.count, 2, "[\(setup)]")
                XCTAssertEqual(want["Tag"]?.first?["trips"]?.array?.count, 2, "[\(setup)]")
                // Exporting the copy gives the same lines.
                XCTAssertEqual(String(decoding: try export(destination.container), as: UTF8.self), text, "[\(setup)]")

                // New objects get keys past every imported one.
                let keys = try identifiers(destination.context, "Trip").compactMap { ObjectID.parse($0)?.pk }
                let id = try destination.context.insert(entity: "Trip", json: #"{"name": "New", "startDate": "2028-01-01"}"#)
                try destination.context.save()
                XCTAssertGreaterThan(id.pk, keys.max() ?? 0, "[\(setup)]")
                let item = try destination.context.insert(entity: "Item", json: #"{"title": "x", "trip": "\#(id)"}"#)
                try destination.context.save()
                XCTAssertFalse(try identifiers(source.context, "Item").contains(item.description), "[\(setup)] \(item)")
            } catch {
                XCTFail("[\(setup)] unexpected error: \(error)")
            }
        }
    }

    func testAnotherSchemaOrAStoreWithObjectsIsRefusedBeforeAnythingIsWritten() {
        for setup in Self.setups {
            do {
                let source = try open(setup, "source")
                try fill(source)
                let exported = try export(source.container)
                // Another schema: Tag gains an attribute.
                let otherSchema = Self.schema.replacingOccurrences(of: #"{"name": "label", "type": "string"}"#,
                                                                   with: #"{"name": "label", "type": "string"}, {"name": "color", "type": "string", "optional": true}"#)
                XCTAssertNotEqual(otherSchema, Self.schema)
                let other = try open(setup, "other", otherSchema)
                let e = caught { try self.importBytes(other.container, exported) }
                XCTAssertEqual(e?.code, .incompatibleStore, "[\(setup)] \(String(describing: e))")
                XCTAssertTrue(e?.message.hasPrefix("line 1:") == true && e?.message.contains("'Tag' differs") == true, "[\(setup)] \(e?.message ?? "")")
                XCTAssertEqual(try count(other.context, "Tag"), 0, "[\(setup)]")
                // A store that holds objects.
                let full = try open(setup, "full")
                _ = try full.context.insert(entity: "Tag", json: #"{"label": "mine"}"#)
                try full.context.save()
                let f = caught { try self.importBytes(full.container, exported) }
                XCTAssertEqual(f?.code, .incompatibleStore, "[\(setup)] \(String(describing: f))")
                XCTAssertEqual(try fetch(full.context, "Tag").compactMap { $0["label"]?.stringValue }, ["mine"], "[\(setup)]")
                XCTAssertEqual(try count(full.context, "Trip"), 0, "[\(setup)]")
            } catch {
                XCTFail("[\(setup)] unexpected error: \(error)")
            }
        }
    }

    func testABadLineIsNamedAndTheDestinationStaysEmpty() {
        for setup in Self.setups {
            do {
                let source = try open(setup, "source")
                try fill(source)
                let lines = String(decoding: try export(source.container), as: UTF8.self).split(separator: "\n").map(String.init)
                let linksAt = try XCTUnwrap(lines.firstIndex(of: #"{"strata":"links"}"#))
                let firstTrip = try XCTUnwrap(lines.firstIndex { $0.hasPrefix(#"{"_id":"BusinessTrip/"#) })
                let itemLink = try XCTUnwrap(lines[linksAt...].firstIndex { $0.hasPrefix(#"{"_id":"Item/"#) })
                let destination = try open(setup, "destination")
                // Each damage, the line it is on (1-based), the code.
                let cases: [(String, Int, StrataError.Code, (inout [String]) -> Void)] = [
                    ("bad JSON", firstTrip + 1, .invalid, { $0[firstTrip] = String($0[firstTrip].dropLast()) }),
                    ("unknown entity", firstTrip + 1, .invalid, { $0[firstTrip] = $0[firstTrip].replacingOccurrences(of: "BusinessTrip", with: "Yacht") }),
                    ("bad value", firstTrip + 1, .validation, { $0[firstTrip] = $0[firstTrip].replacingOccurrences(of: "2026-11-22T09:30:00.250Z", with: "someday") }),
                    ("dangling identifier", itemLink + 1, .invalid, { $0[itemLink] = $0[itemLink].replacingOccurrences(of: #""trip":"BusinessTrip/"#, with: #""trip":"BusinessTrip/9"#) }),
                    ("missing required link", lines.count, .validation, { $0.remove(at: itemLink); $0[$0.count - 1] = Self.endLine($0[$0.count - 1], linksLess: 1) }),
                    ("truncated", lines.count, .invalid, { $0.removeLast() }),
                ]
                for (what, line, code, damage) in cases {
                    var damaged = lines
                    damage(&damaged)
                    let e = caught { try self.importBytes(destination.container, Array((damaged.joined(separator: "\n") + "\n").utf8)) }
                    XCTAssertEqual(e?.code, code, "[\(setup)] \(what): \(String(describing: e))")
                    if what != "missing required link" {
                        XCTAssertTrue(e?.message.hasPrefix("line \(line):") == true, "[\(setup)] \(what): \(e?.message ?? "no error")")
                    }
                    for entity in ["Trip", "Item", "Stay", "Tag"] {
                        XCTAssertEqual(try count(destination.context, entity), 0, "[\(setup)] \(what): \(entity)")
                    }
                }
                // The destination took nothing: the whole export still goes in.
                XCTAssertEqual(try importBytes(destination.container, Array((lines.joined(separator: "\n") + "\n").utf8)), 12, "[\(setup)]")
            } catch {
                XCTFail("[\(setup)] unexpected error: \(error)")
            }
        }
    }

    func testTheWholeExportReadsOneSnapshotWhileOthersSave() {
        for setup in Self.setups where setup != .inMemory {
            do {
                let h = try open(setup, "snapshot")
                let long = String(repeating: "y", count: 2_000)
                _ = try h.context.insertMany(entity: "Trip", json: "[" + (0..<100).map { #"{"name": "\#(long)\#($0)", "startDate": 0}"# }.joined(separator: ",") + "]")
                _ = try h.context.insert(entity: "Tag", json: #"{"label": "before"}"#)
                try h.context.save()
                // Another context saves while the export is between its first chunk and the Tag pages.
                let other = try h.container.makeContext()
                var chunks = 0
                var out: [UInt8] = []
                try h.container.export(batchSize: 10) { chunk in
                    chunks += 1
                    out += chunk
                    if chunks == 1 {
                        _ = try other.insert(entity: "Tag", json: #"{"label": "after"}"#)
                        _ = try other.insert(entity: "Trip", json: #"{"name": "late", "startDate": 0}"#)
                        try other.save()
                    }
                }
                XCTAssertGreaterThan(chunks, 1, "[\(setup)]")
                let text = String(decoding: out, as: UTF8.self)
                XCTAssertTrue(text.contains(#""label":"before""#), "[\(setup)]")
                XCTAssertFalse(text.contains(#""label":"after""#), "[\(setup)] a save after the export began is in it")
                XCTAssertFalse(text.contains(#""name":"late""#), "[\(setup)] a save after the export began is in it")
                XCTAssertEqual(try count(h.context, "Tag"), 2, "[\(setup)]")
            } catch {
                XCTFail("[\(setup)] unexpected error: \(error)")
            }
        }
    }

    /// The end line with its link count lowered.
    static func endLine(_ line: String, linksLess: Int64) -> String {
        guard case .object(let members)? = try? JSONValue.parse(line) else { return line }
        let changed = members.map { m -> (String, JSONValue) in
            guard m.0 == "links", case .number(let n) = m.1, let v = Int64(n) else { return m }
            return (m.0, .number(String(v - linksLess)))
        }
        return JSONValue.object(changed).text
    }

    /// The peak resident memory (VmHWM, kilobytes), after resetting it to the current size.
    private func peakMemory(resetFirst: Bool) -> Int? {
        if resetFirst { _ = try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8) }
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(resetFirst ? "VmRSS:" : "VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }

    func testAnExportOf50000ObjectsReadsInPagesWithBoundedMemory() throws {
        let text = String(repeating: "x", count: 1_000)
        for setup in Self.setups where setup != .inMemory {
            let h = try open(setup, "large")
            for batch in 0..<10 {
                let items = (0..<5_000).map { #"{"label": "\#(text)\#(batch * 5_000 + $0)"}"# }
                _ = try h.context.insertMany(entity: "Tag", json: "[" + items.joined(separator: ",") + "]")
                try h.context.save()
            }
            var statements = 0
            h.container.store.trace.set { sql in if sql.contains("LIMIT") { statements += 1 } }
            var bytes = 0
            var lines = 0
            let before = try XCTUnwrap(peakMemory(resetFirst: true))
            let n = try h.container.export(batchSize: 500) { chunk in
                bytes += chunk.count
                lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            }
            let peak = try XCTUnwrap(peakMemory(resetFirst: false))
            h.container.store.trace.set(nil)
            XCTAssertEqual(n, 50_000, "[\(setup)]")
            XCTAssertEqual(lines, 50_000 + 3, "[\(setup)]")
            XCTAssertGreaterThan(bytes, 50_000_000, "[\(setup)]")
            // 100 pages of 500 (and one empty page after the last full one) for the objects.
            XCTAssertGreaterThanOrEqual(statements, 100, "[\(setup)]")
            // The 50 MB export never was in memory at once: a page is 0.5 MB.
            XCTAssertLessThan(peak - before, 16_000, "[\(setup)] peak resident memory grew by \(peak - before) kB")
        }
    }
}
