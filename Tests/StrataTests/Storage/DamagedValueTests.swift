import Foundation
import XCTest
@testable import Strata

/// A store file is untrusted input (docs/JSON.md, "Damaged stores"): every
/// value a read writes out is checked against its attribute's type, and a
/// value that fails is `.corrupt` naming the entity, the attribute and the
/// object. Each test damages one value as the sqlite3 shell would, then runs
/// every kind of read: get, fetch (with and without prefetching), a cursor,
/// a prepared fetch, counts and identifiers with and without a predicate.
/// A read either fails with `.corrupt` or returns valid JSON that invents
/// nothing, with as many objects as the count of the same descriptor.
final class DamagedValueTests: StoreTestCase {
    static let schema = """
    {"version": "1.0.0", "entities": [
     {"name": "Trip", "attributes": [
       {"name": "name", "type": "string"},
       {"name": "views", "type": "int", "default": 0},
       {"name": "flag", "type": "bool", "default": false},
       {"name": "rating", "type": "double", "optional": true},
       {"name": "start", "type": "date", "optional": true},
       {"name": "extra", "type": "json", "optional": true},
       {"name": "code", "type": "uuid", "optional": true},
       {"name": "price", "type": "decimal", "optional": true},
       {"name": "site", "type": "url", "optional": true},
       {"name": "kind", "type": "string", "enum": ["plain", "fancy"], "default": "plain"},
       {"name": "level", "type": "int", "enum": [1, 2, 3], "default": 1},
       {"name": "blob", "type": "data", "optional": true}],
      "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip", "deleteRule": "noAction"}]},
     {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "default": ""}]},
     {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
      "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
     {"name": "Note", "superentity": "Item", "attributes": [{"name": "text", "type": "string", "default": ""}]}
    ]}
    """

    static let entities: Set<String> = ["Trip", "PersonalTrip", "Item", "Note"]
    static let keys: Set<String> = ["_id", "_entity", "name", "views", "flag", "rating", "start", "extra", "code", "price", "site",
                                    "kind", "level", "blob", "items", "reason", "title", "trip", "text"]

    struct Store {
        let container: ModelContainer
        let context: ModelContext
        /// Trip "A" (views 1) with Item "x" and Note "y"; PersonalTrip "B" (views 2) with Item "z".
        let tripA: ObjectID, tripB: ObjectID, itemX: ObjectID, noteY: ObjectID, itemZ: ObjectID
    }

    func makeStore() throws -> Store {
        let container = try openFile(Self.schema)
        let context = try container.makeContext()
        let a = try context.insert(entity: "Trip", json: #"""
            {"name": "A", "views": 1, "rating": 4.5, "start": "2026-01-01T00:00:00Z", "extra": {"k": [1, 2]},
             "code": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "price": "12.50", "site": "https://example.com", "blob": "AAEC",
             "items": [{"title": "x"}, {"_entity": "Note", "title": "y"}]}
            """#)
        let b = try context.insert(entity: "PersonalTrip", json: #"{"name": "B", "views": 2, "items": [{"title": "z"}]}"#)
        try context.save()
        let items = try XCTUnwrap(parse(context.fetch(descriptor(context, #"{"entity": "Item", "sortBy": [{"key": "title"}]}"#))).array)
        let ids = try items.map { item -> ObjectID in
            let parsed = try XCTUnwrap(ObjectID.parse(XCTUnwrap(item["_id"]?.stringValue)))
            return ObjectID(entity: try XCTUnwrap(context.schema.entity(named: parsed.entity)), pk: parsed.pk)
        }
        XCTAssertEqual(ids.count, 3)
        return Store(container: container, context: try container.makeContext(), tripA: a, tripB: b, itemX: ids[0], noteY: ids[1], itemZ: ids[2])
    }

    /// Changes the store file behind Strata's back.
    func tamper(_ sql: String, _ args: [SQLValue] = []) throws {
        let c = try Connection(path: storePath(), readOnly: false, create: false)
        try c.execute(sql, args)
    }

    func descriptor(_ context: ModelContext, _ json: String) throws -> FetchDescriptor {
        var json = json
        return try json.withUTF8 { try context.descriptor($0) }
    }

    enum Outcome {
        case ok([UInt8])
        case count(Int64)
        case missing
        case corrupt(StrataError)
    }

    /// The descriptors every test reads with.
    static let descriptors: [String] = [
        #"{"entity": "Trip"}"#,
        #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["items"]}"#,
        #"{"entity": "Trip", "predicate": "$0.views > 0"}"#,
        #"{"entity": "Trip", "predicate": "$0.views < 0"}"#,
        #"{"entity": "Trip", "predicate": "$0.name == \"B\""}"#,
        #"{"entity": "Trip", "predicate": "$0.start != nil && $0.flag == false"}"#,
        #"{"entity": "Trip", "predicate": "$0.items.contains { $0.title == \"x\" }"}"#,
        #"{"entity": "PersonalTrip"}"#,
        #"{"entity": "Item"}"#,
        #"{"entity": "Item", "relationshipKeyPathsForPrefetching": ["trip"]}"#,
        #"{"entity": "Item", "predicate": "$0.trip != nil"}"#,
        #"{"entity": "Item", "predicate": "$0.trip?.name == \"A\""}"#,
        #"{"entity": "Item", "includeRelationshipIdentifiers": false}"#,
    ]

    /// Every read of the store, by name: get of each object, then per descriptor fetch, cursor,
    /// prepared fetch, count and identifiers.
    func readAll(_ s: Store) throws -> [(String, Outcome)] {
        let context = s.context
        var out: [(String, Outcome)] = []
        func run(_ name: String, _ body: () throws -> Outcome) throws {
            do {
                out.append((name, try body()))
            } catch let e as StrataError where e.code == .corrupt {
                out.append((name, .corrupt(e)))
            } catch let e as StrataError where e.code == .notFound {
                out.append((name, .missing))
            } catch {
                XCTFail("\(name): expected success or corrupt, got \(error)")
            }
        }
        for id in [s.tripA, s.tripB, s.itemX, s.noteY, s.itemZ] {
            try run("get \(id)") { .ok(try context.get(id: id.description)) }
        }
        for json in Self.descriptors {
            let d = try descriptor(context, json)
            try run("fetch \(json)") { .ok(try context.fetch(d)) }
            try run("cursor \(json)") {
                let cursor = try context.cursor(d)
                var all: [JSONValue] = []
                while true {
                    let bytes = try cursor.next(2).bytes
                    guard let batch = try parse(bytes).array else { throw StrataError(.internal, "not an array") }
                    if batch.isEmpty { break }
                    all += batch
                }
                return .ok(Array(JSONValue.array(all).text.utf8))
            }
            try run("prepared \(json)") {
                var j = json
                let p = try j.withUTF8 { try context.prepare($0) }
                return .ok(try p.fetch(bindings: nil))
            }
            try run("count \(json)") { .count(try context.fetchCount(d)) }
            try run("identifiers \(json)") { .ok(try context.fetchIdentifiers(d)) }
        }
        return out
    }

    /// Runs every read and checks what holds for all: valid UTF-8 JSON, nothing invented, as many
    /// objects and identifiers as the count. `corrupt` names reads that must fail with `.corrupt`
    /// (by prefix); every other read must succeed.
    @discardableResult
    func assertReads(_ s: Store, corrupt: [String], missing: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Outcome] {
        let outcomes = try readAll(s)
        var byName: [String: Outcome] = [:]
        for (name, outcome) in outcomes { byName[name] = outcome }
        for (name, outcome) in outcomes {
            let mustFail = corrupt.contains { name.hasPrefix($0) }
            switch outcome {
            case .corrupt(let e):
                XCTAssertTrue(mustFail, "\(name): unexpected corrupt: \(e.message)", file: file, line: line)
                XCTAssertFalse(e.message.isEmpty, file: file, line: line)
            case .ok(let bytes):
                XCTAssertFalse(mustFail, "\(name): expected corrupt, got \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
                try checkJSON(bytes, name, file: file, line: line)
            case .count(let n):
                XCTAssertFalse(mustFail, "\(name): expected corrupt, got \(n)", file: file, line: line)
            case .missing:
                XCTAssertTrue(missing.contains(name), "\(name): unexpected not_found", file: file, line: line)
            }
        }
        // The same descriptor: as many objects, cursor objects, prepared objects and identifiers as counted.
        for json in Self.descriptors {
            guard case .count(let n)? = byName["count \(json)"] else { continue }
            for kind in ["fetch", "cursor", "prepared", "identifiers"] {
                guard case .ok(let bytes)? = byName["\(kind) \(json)"] else { continue }
                let n2 = try XCTUnwrap(parse(bytes).array).count
                XCTAssertEqual(Int64(n2), n, "\(kind) \(json): \(n2) elements, count says \(n)", file: file, line: line)
            }
        }
        return byName
    }

    /// Valid UTF-8, valid JSON, objects with known keys only (no key twice), identifiers naming known entities.
    func checkJSON(_ bytes: [UInt8], _ name: String, file: StaticString, line: UInt) throws {
        guard String(data: Data(bytes), encoding: .utf8) != nil else {
            XCTFail("\(name): output is not valid UTF-8", file: file, line: line)
            return
        }
        let value: JSONValue
        do { value = try parse(bytes) } catch {
            XCTFail("\(name): invalid JSON \(String(decoding: bytes, as: UTF8.self)): \(error)", file: file, line: line)
            return
        }
        func identifier(_ v: JSONValue) {
            guard let s = v.stringValue else { return }
            let parts = s.split(separator: "/", omittingEmptySubsequences: false)
            XCTAssertTrue(parts.count == 2 && Self.entities.contains(String(parts[0])) && Int64(parts[1]) != nil,
                          "\(name): \(s) is no identifier", file: file, line: line)
        }
        func walk(_ v: JSONValue, top: Bool) {
            switch v {
            case .array(let a): for e in a { top ? (e.stringValue != nil ? identifier(e) : walk(e, top: false)) : walk(e, top: false) }
            case .object(let members):
                let names = members.map(\.0)
                XCTAssertEqual(Set(names).count, names.count, "\(name): a key twice in \(v.text)", file: file, line: line)
                for (k, member) in members {
                    XCTAssertTrue(Self.keys.contains(k), "\(name): unknown key \(k)", file: file, line: line)
                    switch k {
                    case "_id", "trip", "items":
                        if case .array(let a) = member { a.forEach { $0.stringValue != nil ? identifier($0) : walk($0, top: false) } }
                        else if member.stringValue != nil { identifier(member) } else { walk(member, top: false) }
                    case "_entity": XCTAssertTrue(Self.entities.contains(member.stringValue ?? ""), "\(name): _entity \(member.text)", file: file, line: line)
                    default: break
                    }
                }
            default: break
            }
        }
        walk(value, top: true)
    }

    /// The reads that see every Trip row's values: must be corrupt when one of them is damaged.
    static let tripReads = ["fetch {\"entity\": \"Trip\"", "cursor {\"entity\": \"Trip\"", "prepared {\"entity\": \"Trip\""]
    /// The reads that write Trip objects nested in Items (prefetching).
    static let itemPrefetch = ["fetch {\"entity\": \"Item\", \"relationshipKeyPathsForPrefetching\"",
                               "cursor {\"entity\": \"Item\", \"relationshipKeyPathsForPrefetching\"",
                               "prepared {\"entity\": \"Item\", \"relationshipKeyPathsForPrefetching\""]

    func without(_ reads: [String], _ excluded: String) -> [String] { reads.filter { !$0.contains(excluded) } }

    /// Reads of Trip A's values, which fail once one is damaged; a predicate `name == "B"` never reads A's row.
    func tripAReads(_ s: Store) -> [String] {
        ["get \(s.tripA)"] + Self.tripReads.flatMap { r in ["\(r)}", "\(r), \"relationshipKeyPathsForPrefetching\"", "\(r), \"predicate\": \"$0.views > 0\"",
                                                             "\(r), \"predicate\": \"$0.start", "\(r), \"predicate\": \"$0.items"] }
            + Self.itemPrefetch
    }

    // MARK: json columns

    func testJSONColumnThatClosesTheArrayIsCorrupt() throws {
        let s = try makeStore()
        try tamper("UPDATE Trip SET extra = ? WHERE _pk = ?", [.text(#"1],[{"x":1}"#), .int(s.tripA.pk)])
        let r = try assertReads(s, corrupt: tripAReads(s))
        guard case .corrupt(let e)? = r["get \(s.tripA)"] else { return XCTFail() }
        XCTAssertEqual(e.entity, "Trip")
        XCTAssertEqual(e.attribute, "extra")
        XCTAssertTrue(e.message.contains("Trip/\(s.tripA.pk)"), e.message)
        // Counting reads no value it does not compare: the row exists.
        guard case .count(let n)? = r["count {\"entity\": \"Trip\"}"] else { return XCTFail() }
        XCTAssertEqual(n, 2)
    }

    func testJSONColumnWithTwoValuesIsCorrupt() throws {
        let s = try makeStore()
        for text in [#"{"a":1}, "b""#, #"{"a":1} {"b":2}"#, #"{"a":"\u0000"#, #"{"a" 1}"#, "[1,]", "01", "\"\u{01}\"", "", " ", "nul", "[[[]]"] {
            try tamper("UPDATE Trip SET extra = ? WHERE _pk = ?", [.text(text), .int(s.tripA.pk)])
            let e = assertError(.corrupt) { try s.context.get(id: s.tripA.description) }
            XCTAssertEqual(e?.attribute, "extra", text)
        }
        try tamper("UPDATE Trip SET extra = ? WHERE _pk = ?", [.text(#"{"a":1}, "b""#), .int(s.tripA.pk)])
        try assertReads(s, corrupt: tripAReads(s))
        // Any one well-formed JSON value reads back as it is.
        for text in [#" {"a" : [1, -2.5e3, true, null, "\u00e9\n"]} "#, "0", "\"\"", "[]", String(repeating: "[", count: 100) + String(repeating: "]", count: 100)] {
            try tamper("UPDATE Trip SET extra = ? WHERE _pk = ?", [.text(text), .int(s.tripA.pk)])
            XCTAssertEqual(try get(s.context, s.tripA)["extra"]?.text, try JSONValue.parse(text).text)
        }
        // Deeper than a json value may be.
        try tamper("UPDATE Trip SET extra = ? WHERE _pk = ?", [.text(String(repeating: "[", count: 101) + String(repeating: "]", count: 101)), .int(s.tripA.pk)])
        assertError(.corrupt) { try s.context.get(id: s.tripA.description) }
    }

    // MARK: entity names

    func testEntityNameOfALinkedRowIsNeverCopied() throws {
        let s = try makeStore()
        try tamper("UPDATE Trip SET _entity = ? WHERE _pk = ?", [.text(#"Trip","evil":"1"#), .int(s.tripA.pk)])
        // Trip A's row names no entity: every read of it, and of the items linking to it, is corrupt.
        var reads = tripAReads(s).filter { !$0.contains("$0.views > 0") && !$0.contains("$0.start") } + [
            "get \(s.itemX)", "get \(s.noteY)",
            "fetch {\"entity\": \"Trip\", \"predicate\": \"$0.views > 0\"", "cursor {\"entity\": \"Trip\", \"predicate\": \"$0.views > 0\"",
            "prepared {\"entity\": \"Trip\", \"predicate\": \"$0.views > 0\"",
            "fetch {\"entity\": \"Item\"}", "cursor {\"entity\": \"Item\"}", "prepared {\"entity\": \"Item\"}",
            "fetch {\"entity\": \"Item\", \"predicate\"", "cursor {\"entity\": \"Item\", \"predicate\"", "prepared {\"entity\": \"Item\", \"predicate\"",
        ]
        // Every read of the whole hierarchy (a subentity's reads leave the row out).
        for kind in ["fetch", "cursor", "prepared", "count", "identifiers"] { reads.append("\(kind) {\"entity\": \"Trip\"") }
        let r = try assertReads(s, corrupt: reads)
        guard case .corrupt(let e)? = r["get \(s.itemX)"] else { return XCTFail() }
        XCTAssertEqual(e.entity, "Item")
        XCTAssertEqual(e.attribute, "trip")
        guard case .corrupt(let e2)? = r["count {\"entity\": \"Trip\"}"] else { return XCTFail() }
        XCTAssertEqual(e2.entity, "Trip")
        XCTAssertTrue(e2.message.contains("Trip/\(s.tripA.pk)"), e2.message)
    }

    func testEntityNameOfAnIdentifierItemIsNeverCopied() throws {
        let s = try makeStore()
        // Trip A's items are `Entity/key` items (Item has a subentity): a name with a quote or a comma.
        for name in [#"Note","evil":"1"#, "Item/99,Item", "Note/", "Item,Note"] {
            try tamper("UPDATE Item SET _entity = ? WHERE _pk = ?", [.text(name), .int(s.noteY.pk)])
            let e = assertError(.corrupt) { try s.context.get(id: s.tripA.description) }
            XCTAssertEqual(e?.entity, "Trip", name)
            XCTAssertEqual(e?.attribute, "items", name)
            var reads = ["get \(s.tripA)", "get \(s.noteY)"]
            for r in Self.tripReads { reads += ["\(r)}", "\(r), \"predicate\": \"$0.views > 0\"", "\(r), \"predicate\": \"$0.start", "\(r), \"predicate\": \"$0.items"] }
            for kind in ["fetch", "cursor", "prepared", "count", "identifiers"] { reads.append("\(kind) {\"entity\": \"Item\"") }
            reads += ["fetch {\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\"", "cursor {\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\"",
                      "prepared {\"entity\": \"Trip\", \"relationshipKeyPathsForPrefetching\""]
            try assertReads(s, corrupt: reads)
        }
    }

    func testUnknownEntityIsCorruptForFetchGetAndCount() throws {
        let s = try makeStore()
        try tamper("UPDATE Trip SET _entity = 'Ghost' WHERE _pk = ?", [.int(s.tripB.pk)])
        var reads = ["get \(s.tripB)", "get \(s.itemZ)"] + Self.itemPrefetch
        for kind in ["fetch", "cursor", "prepared", "count", "identifiers"] { reads.append("\(kind) {\"entity\": \"Trip\"") }
        // Items linking to the row fail when written out; `trip?.name == "A"` leaves Item z (B's) out.
        reads += ["fetch {\"entity\": \"Item\"}", "cursor {\"entity\": \"Item\"}", "prepared {\"entity\": \"Item\"}",
                  "fetch {\"entity\": \"Item\", \"predicate\": \"$0.trip != nil", "cursor {\"entity\": \"Item\", \"predicate\": \"$0.trip != nil",
                  "prepared {\"entity\": \"Item\", \"predicate\": \"$0.trip != nil"]
        let r = try assertReads(s, corrupt: reads)
        // A subentity's reads name their entities: the damaged row is not among them.
        guard case .count(let n)? = r["count {\"entity\": \"PersonalTrip\"}"] else { return XCTFail() }
        XCTAssertEqual(n, 0)
    }

    /// A hierarchy's rows are searched for unknown entity names once per version of the file: a
    /// read of an unchanged store after a clean one skips the search, and a row another connection
    /// then gives an unknown name fails every read of the hierarchy again, a count, a page of one
    /// row that is not the damaged one, and a prepared fetch.
    func testUnknownEntityWrittenAfterCleanReadsIsFound() throws {
        let s = try makeStore()
        let count = try descriptor(s.context, #"{"entity": "Trip"}"#)
        var firstJSON = #"{"entity": "Trip", "sortBy": [{"key": "name"}], "fetchLimit": 1}"#
        let first = try descriptor(s.context, firstJSON)
        let prepared = try firstJSON.withUTF8 { try s.context.prepare($0) }
        for _ in 0..<2 {
            XCTAssertEqual(try s.context.fetchCount(count), 2)
            XCTAssertEqual(try parse(s.context.fetch(first)).array?.count, 1)
            XCTAssertEqual(try parse(prepared.fetch(bindings: nil)).array?.count, 1)
        }
        try tamper("UPDATE Trip SET _entity = 'Ghost' WHERE _pk = ?", [.int(s.tripB.pk)])
        for _ in 0..<2 {
            XCTAssertThrowsError(try s.context.fetchCount(count)) { XCTAssertEqual(($0 as? StrataError)?.code, .corrupt, "\($0)") }
            XCTAssertThrowsError(try s.context.fetch(first)) { XCTAssertEqual(($0 as? StrataError)?.code, .corrupt, "\($0)") }
            XCTAssertThrowsError(try prepared.fetch(bindings: nil)) { XCTAssertEqual(($0 as? StrataError)?.code, .corrupt, "\($0)") }
        }
        // Repaired by another connection: reads succeed again.
        try tamper("UPDATE Trip SET _entity = 'PersonalTrip' WHERE _pk = ?", [.int(s.tripB.pk)])
        XCTAssertEqual(try s.context.fetchCount(count), 2)
    }

    // MARK: storage classes

    func testTextInAnIntColumnIsCorruptForReadsAndPredicates() throws {
        let s = try makeStore()
        try tamper("UPDATE Trip SET views = 'abc' WHERE _pk = ?", [.int(s.tripA.pk)])
        var reads = tripAReads(s)
        for kind in ["count", "identifiers"] {
            reads.append("\(kind) {\"entity\": \"Trip\", \"predicate\": \"$0.views")
        }
        for kind in ["fetch", "cursor", "prepared"] { reads.append("\(kind) {\"entity\": \"Trip\", \"predicate\": \"$0.views < 0") }
        let r = try assertReads(s, corrupt: reads)
        guard case .corrupt(let e)? = r["count {\"entity\": \"Trip\", \"predicate\": \"$0.views > 0\"}"] else { return XCTFail() }
        XCTAssertTrue(e.message.contains("Trip/\(s.tripA.pk)") && e.message.contains("views"), e.message)
        XCTAssertEqual(e.entity, "Trip")
        XCTAssertEqual(e.attribute, "views")
    }

    func testDateStoredAsTextIsCorrupt() throws {
        let s = try makeStore()
        try tamper("UPDATE Trip SET start = '2026-01-01' WHERE _pk = ?", [.int(s.tripA.pk)])
        var reads = tripAReads(s)
        for kind in ["count", "identifiers"] { reads.append("\(kind) {\"entity\": \"Trip\", \"predicate\": \"$0.start") }
        try assertReads(s, corrupt: reads)
    }

    func testTextIdentifierInALinkColumnIsCorrupt() throws {
        let s = try makeStore()
        try tamper("UPDATE Item SET trip = 'Trip/1' WHERE _pk = ?", [.int(s.itemX.pk)])
        var reads = ["get \(s.itemX)"]
        for kind in ["fetch", "cursor", "prepared"] {
            reads += ["\(kind) {\"entity\": \"Item\"}", "\(kind) {\"entity\": \"Item\", \"relationshipKeyPathsForPrefetching\"",
                      "\(kind) {\"entity\": \"Item\", \"predicate\""]
        }
        for kind in ["count", "identifiers"] { reads.append("\(kind) {\"entity\": \"Item\", \"predicate\"") }
        try assertReads(s, corrupt: reads)
    }

    func testOtherStorageClassesAreCorrupt() throws {
        let s = try makeStore()
        let damage: [(String, SQLValue)] = [
            ("flag", .int(2)), ("flag", .text("yes")), ("rating", .text("4.5x")), ("rating", .blob([1])), ("rating", .double(.infinity)),
            ("start", .double(1e300)), ("name", .blob(Array("A".utf8))), ("blob", .text("AAEC")),
            ("price", .text("12,50")), ("price", .blob(Array("1".utf8))), ("site", .text("has space")), ("level", .text("1x")),
        ]
        for (column, value) in damage {
            let e = try XCTUnwrap(assertError(.corrupt) {
                try tamper("UPDATE Trip SET \(column) = ? WHERE _pk = ?", [value, .int(s.tripA.pk)])
                return try s.context.get(id: s.tripA.description)
            }, "\(column) = \(value)")
            XCTAssertEqual(e.attribute, column)
            XCTAssertEqual(e.entity, "Trip")
            assertError(.corrupt) { try s.context.fetch(try descriptor(s.context, #"{"entity": "Trip"}"#)) }
            try tamper("UPDATE Trip SET \(column) = NULL WHERE _pk = ?", [.int(s.tripA.pk)])
        }
        XCTAssertEqual(try fetch(s.context, "Trip").count, 2)
    }

    // MARK: contents

    func testNonUUIDIsCorrupt() throws {
        let s = try makeStore()
        for text in ["not-a-uuid", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "E621E1F8C36C495A93FC0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F\""] {
            try tamper("UPDATE Trip SET code = ? WHERE _pk = ?", [.text(text), .int(s.tripA.pk)])
            try assertReads(s, corrupt: tripAReads(s))
        }
    }

    func testOutOfEnumValuesAreCorrupt() throws {
        let s = try makeStore()
        try tamper("UPDATE Trip SET kind = 'zzz' WHERE _pk = ?", [.int(s.tripA.pk)])
        try assertReads(s, corrupt: tripAReads(s))
        try tamper("UPDATE Trip SET kind = 'fancy', level = 9 WHERE _pk = ?", [.int(s.tripA.pk)])
        let r = try assertReads(s, corrupt: tripAReads(s))
        guard case .corrupt(let e)? = r["get \(s.tripA)"] else { return XCTFail() }
        XCTAssertEqual(e.attribute, "level")
        // Members read back.
        try tamper("UPDATE Trip SET level = 3 WHERE _pk = ?", [.int(s.tripA.pk)])
        XCTAssertEqual(try get(s.context, s.tripA)["kind"], .string("fancy"))
    }

    func testInvalidUTF8IsCorrupt() throws {
        let s = try makeStore()
        for bytes: [UInt8] in [[0xFF, 0x41], [0x41, 0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80]] {
            try tamper("UPDATE Trip SET name = CAST(? AS TEXT) WHERE _pk = ?", [.blob(bytes), .int(s.tripA.pk)])
            let r = try assertReads(s, corrupt: tripAReads(s))
            guard case .corrupt(let e)? = r["get \(s.tripA)"] else { return XCTFail() }
            XCTAssertEqual(e.attribute, "name")
        }
        // Valid multi-byte text and escapes read back exactly.
        let text = "Zürich \u{1F600} \"q\" \\ \u{7F}\n\u{0}"
        try tamper("UPDATE Trip SET name = ? WHERE _pk = ?", [.text(text), .int(s.tripA.pk)])
        XCTAssertEqual(try get(s.context, s.tripA)["name"], .string(text))
    }

    // MARK: links

    func testDanglingLinkReadsAsItsIdentifierEverywhere() throws {
        let s = try makeStore()
        // noAction leaves Trip A's items linking to it.
        try s.context.delete(id: s.tripA.description)
        try s.context.save()
        let id = "Trip/\(s.tripA.pk)"
        try assertReads(s, corrupt: [], missing: ["get \(id)"])
        XCTAssertEqual(try get(s.context, s.itemX)["trip"], .string(id))
        let fetched = try XCTUnwrap(parse(s.context.fetch(descriptor(s.context, #"{"entity": "Item", "sortBy": [{"key": "title"}]}"#))).array)
        XCTAssertEqual(fetched.first?["trip"], .string(id))
        let prefetched = try XCTUnwrap(parse(s.context.fetch(descriptor(s.context,
            #"{"entity": "Item", "sortBy": [{"key": "title"}], "relationshipKeyPathsForPrefetching": ["trip"]}"#))).array)
        XCTAssertEqual(prefetched.first?["trip"], .string(id), "a prefetched dangling link is its identifier, as without prefetching")
        XCTAssertEqual(prefetched.last?["trip"]?["_id"], .string(s.tripB.description))
        XCTAssertEqual(try s.context.fetchCount(descriptor(s.context, #"{"entity": "Item", "predicate": "$0.trip != nil"}"#)), 3)
        assertError(.notFound) { try s.context.get(id: id) }
        // A key the link column was given behind Strata's back reads the same way.
        try tamper("UPDATE Item SET trip = 999 WHERE _pk = ?", [.int(s.itemZ.pk)])
        try assertReads(s, corrupt: [], missing: ["get \(id)"])
        XCTAssertEqual(try get(s.context, s.itemZ)["trip"], .string("Trip/999"))
    }
}
