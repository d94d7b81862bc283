import XCTest
import Synchronization
@testable import Strata

/// A save's inserts on every store, in numbers past one batch of the PostgreSQL store's
/// batched inserts (``PostgresInsertBatch``): every value reads back as written, unique
/// values are still refused or resolved by name, and a refused save writes nothing.
final class BatchedInsertTests: StoreTestCase {
    static let things = Fixtures.schema(entity: "Thing", attributes: """
        {"name": "s", "type": "string"}, {"name": "o", "type": "string", "optional": true},
        {"name": "i", "type": "int", "optional": true}, {"name": "d", "type": "double", "optional": true},
        {"name": "b", "type": "bool", "default": false}, {"name": "when", "type": "date", "optional": true},
        {"name": "bytes", "type": "data", "optional": true}, {"name": "dec", "type": "decimal", "optional": true},
        {"name": "j", "type": "json", "optional": true}, {"name": "u", "type": "uuid", "optional": true},
        {"name": "url", "type": "url", "optional": true}
        """, relationships: #"{"name": "next", "destination": "Thing", "optional": true}"#)

    static let people = #"""
        {"version": "1", "entities": [
          {"name": "Person", "attributes": [
             {"name": "email", "type": "string", "unique": true},
             {"name": "name", "type": "string", "optional": true}]}]}
        """#

    /// Texts an array literal must quote and escape, and what it must not take for NULL.
    static let texts = ["q\"uote", "back\\slash", "{a,b}", "NULL", "", " spaced ", "é ✓ 𝄞", "a\nb\t", "\\\"\\"]
    static let doubles = ["-0.0", "1e-300", "1.5e300", "0.1", "-2.5", "3", "123456789.125"]

    /// The object `k` of the every-kind save: a value of each kind, or null, by `k`.
    static func thing(_ k: Int) -> JSONValue {
        var members: [(String, JSONValue)] = [("s", .string(texts[k % texts.count] + "\(k)"))]
        members.append(("o", k % 5 == 0 ? .null : .string(texts[(k / 3) % texts.count])))
        members.append(("i", k % 7 == 0 ? .null : .number(String(Int64(k) * 1_000_003 - (k % 2 == 0 ? Int64.max / 2 : 0)))))
        members.append(("d", k % 6 == 0 ? .null : .number(doubles[k % doubles.count])))
        members.append(("b", .bool(k % 2 == 1)))
        members.append(("when", k % 4 == 0 ? .null : .number(String(Double(k) * 86_400.5))))
        let bytes = (0..<(k % 9)).map { UInt8((k * 31 + $0 * 7) % 256) }
        members.append(("bytes", k % 3 == 0 ? .null : .string(Data(bytes).base64EncodedString())))
        members.append(("dec", k % 8 == 0 ? .null : .string("\(k).\(k % 100)")))
        members.append(("j", k % 10 == 0 ? .null : .object([("k", .number("\(k)")), ("t", .string(texts[k % texts.count]))])))
        members.append(("u", k % 11 == 0 ? .null : .string(String(format: "00000000-0000-4000-8000-%012d", k))))
        members.append(("url", k % 12 == 0 ? .null : .string("https://example.com/\(k)?a=\"b\"")))
        return .object(members)
    }

    /// Every kind of value, nulls among them, past one batch: the texts, numbers and bytes read
    /// back as written, and every store gives the same objects.
    func testManyInsertsOfEveryValueKindReadBackAsWritten() {
        let n = 2_345
        let answers = Mutex<[StoreSetup: [JSONValue]]>([:])
        forEachSetup(Self.things) { h in
            let statements = Mutex<[String]>([])
            h.container.store.trace.set { sql in statements.withLock { $0.append(sql) } }
            _ = try h.context.insertMany(entity: "Thing", json: JSONValue.array((0..<n).map(Self.thing)).text)
            try h.context.save()
            h.container.store.trace.set(nil)
            let things = try self.fetch(h.context, "Thing")
            XCTAssertEqual(things.count, n)
            for (k, thing) in things.enumerated() {
                guard case .object(let expected) = Self.thing(k) else { continue }
                for (name, value) in expected where ["s", "o", "i", "d", "b", "bytes"].contains(name) {
                    XCTAssertEqual(thing[name], value, "Thing \(k).\(name)")
                }
            }
            answers.withLock { $0[h.setup] = things }
            if h.setup == .postgres {
                // One statement per batch of rows, not one per row.
                let inserts = statements.withLock { $0 }.filter { $0.hasPrefix("INSERT INTO \"Thing\"") }
                XCTAssertEqual(inserts.count, (n + PostgresInsertBatch.maxRows - 1) / PostgresInsertBatch.maxRows, "\(inserts.count) INSERTs")
            }
        }
        let all = answers.withLock { $0 }
        for (setup, things) in all { XCTAssertTrue(things == all[.inMemory], "\(setup) differs from an in-memory store") }
    }

    /// Links between the objects of one save, and a read of pending inserts (written on the
    /// read's overlay the same way): what a fetch shows before and after the save agrees.
    func testLinksAndPendingReadsOfManyInserts() {
        forEachSetup(Self.things) { h in
            var ids: [ObjectID] = []
            for k in 0..<1_500 {
                let next = ids.last.map { #", "next": "\#($0)""# } ?? ""
                ids.append(try h.context.insert(entity: "Thing", json: #"{"s": "t\#(k)"\#(next)}"#))
            }
            let pending = try self.fetch(h.context, "Thing")
            XCTAssertEqual(try self.count(h.context, "Thing"), 1_500)
            try h.context.save()
            XCTAssertEqual(try self.fetch(h.context, "Thing"), pending)
            XCTAssertEqual(try self.get(h.context, ids[1_499])["next"], .string(ids[1_498].description))
        }
    }

    /// An insert meeting a unique value another context saved while it waited, among many
    /// others of the same save: an upsert updates the saved object, an `error` insert is
    /// refused by name, and the refused save writes none of its rows.
    func testAUniqueValueSavedMeanwhileAmongManyInserts() {
        forEachSetup(Self.people) { h in
            let mine = h.context, theirs = try h.container.makeContext()
            let many = (0..<1_500).map { #"{"email": "p\#($0)@x"}"# }.joined(separator: ",")
            _ = try mine.insertMany(entity: "Person", json: "[\(many)]")
            _ = try mine.insert(entity: "Person", json: #"{"email": "a@x", "name": "mine"}"#)
            _ = try theirs.insert(entity: "Person", json: #"{"email": "a@x", "name": "theirs"}"#)
            try theirs.save()
            try mine.save()
            XCTAssertEqual(try self.count(theirs, "Person"), 1_501)
            var r = try FetchDescriptor.decode(try JSONValue.parse(#"{"entity": "Person", "predicate": "$0.email == \"a@x\""}"#), schema: theirs.schema)
            r.includePendingChanges = false
            XCTAssertEqual(try self.parse(theirs.fetch(r)).array?.map { $0["name"] }, [.string("mine")])

            let more = (0..<1_500).map { #"{"email": "q\#($0)@x"}"# }.joined(separator: ",")
            _ = try mine.insertMany(entity: "Person", json: "[\(more)]")
            let refused = try mine.insert(entity: "Person", json: #"{"email": "b@x", "_onConflict": "error"}"#)
            _ = try theirs.insert(entity: "Person", json: #"{"email": "b@x"}"#)
            try theirs.save()
            let e = self.assertError(.constraint) { try mine.save() }
            XCTAssertEqual(e?.reason, .uniqueViolation(attributes: ["email"]))
            XCTAssertTrue(e?.message.contains(refused.description) == true, e?.message ?? "")
            mine.rollback()
            XCTAssertEqual(try self.count(theirs, "Person"), 1_502)
        }
    }

    /// Text PostgreSQL cannot hold (NUL) in the last of many inserts (of an entity without
    /// unique values, so that only the save meets it): refused as `.invalid`, nothing of the
    /// save written; the other stores keep it.
    func testTextWithNULAfterManyInserts() {
        forEachSetup(Self.things) { h in
            let many = (0..<1_200).map { #"{"s": "t\#($0)"}"# }.joined(separator: ",")
            _ = try h.context.insertMany(entity: "Thing", json: "[\(many), {\"s\": \"nul\\u0000\"}]")
            if h.setup == .postgres {
                let e = self.assertError(.invalid) { try h.context.save() }
                XCTAssertTrue(e?.message.contains("NUL") == true, e?.message ?? "")
                h.context.rollback()
                XCTAssertEqual(try self.count(h.context, "Thing"), 0)
            } else {
                try h.context.save()
                XCTAssertEqual(try self.count(h.context, "Thing"), 1_201)
            }
        }
    }
}
