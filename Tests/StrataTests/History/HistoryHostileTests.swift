import Foundation
import XCTest
@testable import Strata

/// A store's history edited as an attacker with the sqlite3 shell would, and requests at
/// the edges of what the API takes: nothing traps, a damaged history is `.corrupt` from
/// every history call, a healthy one never reads as damaged, and errors never carry the
/// tokens a caller bound.
final class HistoryHostileTests: HistoryTestCase {
    private let max = Int64.max

    /// A store with a trip and two items saved (one transaction); returns the container.
    private func store(_ path: String) throws -> ModelContainer {
        let c = try openHistory(path: path)
        let ctx = try c.makeContext()
        _ = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "items": [{"title": "a"}, {"title": "b"}]}"#)
        try ctx.save()
        return c
    }

    private func setSequence(_ path: String, _ n: Int64) throws {
        try writeRaw(path, sql("UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'strata_history_transaction'",
                               postgres: "UPDATE strata_history_counter SET last = ?1"), [.int(n)])
    }

    private func explain(_ ctx: ModelContext, _ descriptor: String) throws -> [UInt8] {
        var d = descriptor
        return try d.withUTF8 { try ctx.explainHistory($0) }
    }

    // MARK: Sequences at their limits (no trap)

    func testPollWithTheSequenceAtItsMaximum() throws {
        forEachHistorySetup {
            let path = storePath("seqmax")
            let c = try store(path)
            try setSequence(path, max)
            var got: [String] = []
            _ = try c.observers.add(entityNames: nil) { got.append($0) }
            try c.observers.poll()
            try c.observers.poll()
            XCTAssertEqual(got, [], "nothing new after the latest token")

            // The sequence is full: a save is refused as damage naming the sequence, not "disk is full".
            let ctx = try c.makeContext()
            _ = try ctx.insert(entity: "Item", json: #"{"title": "c"}"#)
            let e = assertError(.corrupt) { try ctx.save() }
            XCTAssertTrue(e?.message.contains("sequence") ?? false, e?.message ?? "")
            XCTAssertFalse(e?.message.contains("disk is full") ?? true, e?.message ?? "")
            XCTAssertEqual(try count(ctx, "Item", pending: false), 2, "nothing saved")

            // The sequence lowered again (the file restored): this container's next save is heard once.
            try setSequence(path, 7)
            try ctx.save()
            XCTAssertEqual(got.count, 1)
            try c.observers.poll()
            XCTAssertEqual(got.count, 2, "polled: the history went back, so it expired")
            XCTAssertEqual(try JSONValue.parse(got[1])["expired"], .bool(true))
        }
    }

    func testNegativeSequenceIsCorrupt() throws {
        forEachHistorySetup {
            let path = storePath("seqneg")
            let c = try store(path)
            try setSequence(path, -5)
            assertError(.corrupt) { try c.makeContext().fetchHistory("{}") }
            assertError(.corrupt) { try c.observers.add(entityNames: nil) { _ in } }
        }
    }

    func testTransactionWithANonPositiveTokenIsCorrupt() throws {
        forEachHistorySetup {
            let path = storePath("token0")
            let c = try store(path)
            try writeRaw(path, "UPDATE strata_history_transaction SET token = -3")
            let ctx = try c.makeContext()
            assertError(.corrupt) { try ctx.fetchHistory(#"{"sortBy": [{"key": "timestamp"}]}"#) }
        }
    }

    func testObjectsWithTheLargestKey() throws {
        forEachHistorySetup {
            let path = storePath("pkmax")
            let c = try store(path)
            try writeRaw(path, #"UPDATE "Item" SET _pk = ?1 WHERE _pk = 2"#, [.int(max)])
            let ctx = try c.makeContext()
            // The largest key first: the recorder must not add to it.
            try ctx.update(id: "Item/\(max)", patch: #"{"title": "x"}"#)
            try ctx.update(id: "Item/1", patch: #"{"title": "y"}"#)
            try ctx.save()
            let last = try XCTUnwrap(history(ctx).last)
            XCTAssertEqual(lines(last), ["update Item/\(max) [title]", "update Item/1 [title]"])
            try ctx.delete(id: "Item/\(max)")
            try ctx.save()
            XCTAssertEqual(Set(lines(try XCTUnwrap(history(ctx).last))), ["delete Item/\(max)", "update Trip/1 [items]"])
        }
    }

    // MARK: Change rows describe at most what the recorder writes

    func testChangeCountBoundedByWhatTheRowDescribes() throws {
        forEachHistorySetup {
            continueAfterFailure = false
            let path = storePath("counts")
            let c = try openHistory(path: path)
            // Another container's observer: its polls read every transaction.
            let watcher = try openHistory(path: path)
            let got = Received()
            _ = try watcher.observers.add(entityNames: nil) { got.add($0) }
            let ctx = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris"}"#)
            try ctx.save()
            try ctx.delete(id: trip.description)
            try ctx.save()
            let items = (0..<10).map { #"{"title": "t\#($0)"}"# }.joined(separator: ",")
            var array = "[\(items)]"
            _ = try array.withUTF8 { try ctx.insertMany(entity: "Item", json: $0) }
            try ctx.save()

            let original = try rows(path, sql("SELECT token, n, count, keys FROM strata_history_change",
                                              postgres: "SELECT token, n, count, CAST(keys AS text) FROM strata_history_change"))
            func damaged(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
                try writeRaw(path, sql)
                assertError(.corrupt, file: file, line: line) { try ctx.fetchHistory("{}") }
                assertError(.corrupt, file: file, line: line) { try watcher.observers.poll() }
                XCTAssertEqual(got.all.count, 0, file: file, line: line)
                for r in original {
                    try writeRaw(path, "UPDATE strata_history_change SET count = ?3, keys = ?4 WHERE token = ?1 AND n = ?2", r)
                }
            }
            // A delete with a tombstone is one object.
            try damaged("UPDATE strata_history_change SET count = 5000 WHERE tombstone IS NOT NULL")
            // A run of consecutive keys holds at most maxObjects.
            let tooMany = HistoryChangeRow.maxObjects + 1
            try damaged("UPDATE strata_history_change SET count = \(tooMany) WHERE token = 3")
            // A listed run as well, whatever the list says.
            let list = (1...tooMany).map(String.init).joined(separator: ",")
            let keys = onPostgres ? "{\(list)}" : "[\(list)]"
            try damaged("UPDATE strata_history_change SET count = \(tooMany), keys = '\(keys)' WHERE token = 3")
            try damaged("UPDATE strata_history_change SET count = 2147483647 WHERE token = 3")
            // Restored: everything reads again.
            XCTAssertEqual(try history(ctx).count, 3)
            try watcher.observers.poll()
            XCTAssertEqual(got.all.count, 3)
        }
    }

    func testLongRunsSplitIntoRows() throws {
        forEachHistorySetup {
            let path = storePath("split")
            let c = try openHistory(path: path)
            let ctx = try c.makeContext()
            let n = Int(HistoryChangeRow.maxObjects) * 2 + 5
            let items = (0..<n).map { #"{"title": "t\#($0)"}"# }.joined(separator: ",")
            var array = "[\(items)]"
            let ids = try array.withUTF8 { try ctx.insertMany(entity: "Item", json: $0) }
            try ctx.save()
            XCTAssertEqual(try rowCount(path, "strata_history_change"), 3)
            XCTAssertEqual(try history(ctx)[0]["changes"]?.array?.compactMap { $0["id"]?.stringValue }, ids.map(\.description))
        }
    }

    // MARK: Missing or damaged history tables: corrupt from every history call

    /// Damages a store with history with `sql`; every history call then fails with `.corrupt`.
    private func assertEveryCallCorrupt(_ name: String, _ sql: String..., file: StaticString = #filePath, line: UInt = #line) throws {
        let path = storePath(name)
        let c = try store(path)
        let watcher = try openHistory(path: path)
        _ = try watcher.observers.add(entityNames: nil) { _ in }
        // A container with history off, open before the damage (opening after it is refused).
        let off = try openHistory(path: path) { $0.history = false }.makeContext()
        for s in sql { try writeRaw(path, s) }
        let ctx = try c.makeContext()
        func check(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                XCTFail("\(name): \(what) succeeded", file: file, line: line)
            } catch let e as StrataError {
                XCTAssertEqual(e.code, .corrupt, "\(name): \(what): \(e.message)", file: file, line: line)
            } catch {
                XCTFail("\(name): \(what): \(error)", file: file, line: line)
            }
        }
        check("fetch_history") { _ = try ctx.fetchHistory("{}") }
        check("explain_history") { _ = try explain(ctx, "{}") }
        check("delete_history") { _ = try ctx.deleteHistory("{}") }
        check("observe") { _ = try openHistory(path: path).observers.add(entityNames: nil) { _ in } }
        check("poll") { try watcher.observers.poll() }
        _ = try ctx.insert(entity: "Item", json: #"{"title": "c"}"#)
        check("save") { _ = try ctx.save() }
        // History off: a save leaves its mark in the damaged history too.
        check("open with history off") { _ = try openHistory(path: path) { $0.history = false } }
        _ = try off.insert(entity: "Item", json: #"{"title": "d"}"#)
        check("unrecorded save") { _ = try off.save() }
    }

    func testMissingHistoryTables() throws {
        forEachHistorySetup {
            try assertEveryCallCorrupt("nochange", "DROP TABLE strata_history_change")
            try assertEveryCallCorrupt("noname", "DROP TABLE strata_history_name")
            try assertEveryCallCorrupt("notx", "DROP TABLE strata_history_transaction")
        }
    }

    func testMissingHistoryColumns() throws {
        forEachHistorySetup {
            try assertEveryCallCorrupt("nokeys", "ALTER TABLE strata_history_change DROP COLUMN keys")
            try assertEveryCallCorrupt("noorigin", "ALTER TABLE strata_history_transaction DROP COLUMN origin")
            try assertEveryCallCorrupt("nolive", "DROP INDEX strata_history_name_live", "ALTER TABLE strata_history_name DROP COLUMN live")
        }
    }

    // MARK: Errors never contain bound tokens

    func testErrorsLeaveOutTheBoundToken() throws {
        forEachHistorySetup {
            let path = storePath("tokens")
            let c = try store(path)
            let ctx = try c.makeContext()
            let mine = try XCTUnwrap(tokens(ctx).first)
            let tag = try XCTUnwrap(HistoryToken.parse(mine)).store
            let other = tag == "0badc0de" ? "1@0ddba11" : "1@0badc0de"
            func check(_ code: StrataError.Code, _ descriptor: String, secret: String, path: String,
                       file: StaticString = #filePath, line: UInt = #line) {
                let e = assertError(code, file: file, line: line) { try ctx.fetchHistory(descriptor) }
                XCTAssertFalse(e?.message.contains(secret) ?? true, "message carries the token: \(e?.message ?? "")", file: file, line: line)
                XCTAssertFalse(e?.json.contains(secret) ?? true, "error carries the token: \(e?.json ?? "")", file: file, line: line)
                XCTAssertEqual(e?.path, path, e?.message ?? "", file: file, line: line)
            }
            // Another store's token.
            check(.historyExpired, #"{"predicate": "$0.token > after", "bindings": {"after": "\#(other)"}}"#, secret: other, path: "/bindings/after")
            // Not a token at all.
            check(.invalid, #"{"predicate": "$0.token > after", "bindings": {"after": "secret-42"}}"#, secret: "secret", path: "/bindings/after")
            check(.invalid, #"{"predicate": "list.contains($0.token)", "bindings": {"list": ["\#(mine)", "secret-42"]}}"#,
                  secret: "secret", path: "/bindings/list/1")
            // Newer than the history, then expired.
            let newer = "99@\(tag)"
            check(.historyExpired, #"{"predicate": "$0.token > after", "bindings": {"after": "\#(newer)"}}"#, secret: newer, path: "/bindings/after")
            _ = try ctx.insert(entity: "Item", json: #"{"title": "c"}"#)
            let second = try XCTUnwrap(ctx.save().token)
            _ = try ctx.insert(entity: "Item", json: #"{"title": "d"}"#)
            try ctx.save()
            try ctx.deleteHistory(#"{"predicate": "$0.token <= t", "bindings": {"t": "\#(second)"}}"#)
            check(.historyExpired, #"{"predicate": "$0.token > after", "bindings": {"after": "\#(mine)"}}"#, secret: mine, path: "/bindings/after")
            // Deleting with another store's token.
            let e = assertError(.historyExpired) { try ctx.deleteHistory(#"{"predicate": "$0.token <= t", "bindings": {"t": "\#(other)"}}"#) }
            XCTAssertFalse(e?.json.contains(other) ?? true, e?.json ?? "")
            XCTAssertEqual(e?.path, "/bindings/t")
        }
    }

    // MARK: Tokens the store hands out are tokens it takes

    func testStoreWithoutUUIDHandsOutTokensItTakes() throws {
        forEachHistorySetup {
            let path = storePath("nouuid")
            _ = try store(path)
            try writeRaw(path, "DELETE FROM strata_metadata WHERE key = 'storeUUID'")
            let c = try openHistory(path: path)
            let ctx = try c.makeContext()
            _ = try ctx.insert(entity: "Item", json: #"{"title": "c"}"#)
            let saved = try XCTUnwrap(ctx.save().token)
            XCTAssertNotNil(HistoryToken.parse(saved), saved)
            let all = try tokens(ctx)
            XCTAssertEqual(all.last, saved)
            for t in all { XCTAssertNotNil(HistoryToken.parse(t), t) }
            XCTAssertEqual(try tokens(ctx, #"{"predicate": "$0.token >= t", "bindings": {"t": "\#(all[0])"}}"#), all)
        }
    }

    func testTokensOfMigrationHooksAreTakenAfterwards() throws {
        forEachHistorySetup {
            if skipped(on: .postgres, "the PostgreSQL store does not migrate its tables yet (its changeStorage refuses)") { return }
            let v1 = HistoryTestCase.schemaJSON
            let v2 = v1.replacingOccurrences(of: #""version": "1.0.0""#, with: #""version": "2.0.0""#)
                .replacingOccurrences(of: #"{"name": "place", "type": "string"}"#, with: #"{"name": "place", "type": "string"}, {"name": "stars", "type": "int", "default": 0}"#)
            let path = storePath("hooks")
            _ = try store(path)
            let plan = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2)], "stages": [{"name": "s12", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}]}}"#
            let seen = Seen()
            let c = try open(config: plan, path: path) { c in
                try c.setStageHooks(StageHooks(willMigrate: { ctx in
                    _ = try ctx.insert(entity: "Lodging", json: #"{"place": "Hotel"}"#)
                    seen.set(saved: try ctx.save().token)
                    let listed = try HistoryHostileTests.tokens(ctx)
                    seen.set(listed: listed)
                    // Pruning history inside a hook works: it is part of the migration's transaction.
                    seen.set(deleted: try ctx.deleteHistory(#"{"predicate": "$0.token < t", "bindings": {"t": "\#(listed.last ?? "")"}}"#))
                }), forStage: "s12")
            }
            let saved = try XCTUnwrap(seen.saved)
            XCTAssertNotNil(HistoryToken.parse(saved), "a hook's save hands out \(saved)")
            XCTAssertEqual(seen.listed.last, saved)
            for t in seen.listed { XCTAssertNotNil(HistoryToken.parse(t), t) }
            XCTAssertEqual(seen.deleted, 1)
            let ctx = try c.makeContext()
            XCTAssertEqual(try tokens(ctx), [saved])
            XCTAssertEqual(try tokens(ctx, #"{"predicate": "$0.token >= t", "bindings": {"t": "\#(saved)"}}"#), [saved])
        }
    }

    static func tokens(_ ctx: ModelContext) throws -> [String] {
        (try JSONValue.parse(ctx.fetchHistory("{}")).array ?? []).compactMap { $0["token"]?.stringValue }
    }

    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var values: (String?, [String], Int64?) = (nil, [], nil)
        func set(saved: String?) { lock.lock(); values.0 = saved; lock.unlock() }
        func set(listed: [String]) { lock.lock(); values.1 = listed; lock.unlock() }
        func set(deleted: Int64) { lock.lock(); values.2 = deleted; lock.unlock() }
        var saved: String? { lock.lock(); defer { lock.unlock() }; return values.0 }
        var listed: [String] { lock.lock(); defer { lock.unlock() }; return values.1 }
        var deleted: Int64? { lock.lock(); defer { lock.unlock() }; return values.2 }
    }

    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    // MARK: Descriptors strata_delete_history refuses

    func testDeleteRefusesSortByAndFetchLimitEvenEmpty() throws {
        forEachHistorySetup {
            let c = try store(storePath("delete"))
            let ctx = try c.makeContext()
            for (descriptor, path) in [(#"{"sortBy": []}"#, "/sortBy"), (#"{"fetchLimit": null}"#, "/fetchLimit"),
                                       (#"{"sortBy": null}"#, "/sortBy"), (#"{"fetchLimit": 0}"#, "/fetchLimit")] {
                let e = assertError(.invalid) { try ctx.deleteHistory(descriptor) }
                XCTAssertEqual(e?.path, path, descriptor)
            }
            XCTAssertEqual(try tokens(ctx).count, 1, "nothing deleted")
        }
    }

    // MARK: Big and deep predicates: run, or INVALID with a path; never damage

    private func orOfAuthors(_ n: Int) -> String {
        let terms = (0..<n).map { #"{"==": [{"key": "author"}, "a\#($0)"]}"# }.joined(separator: ", ")
        return #"{"predicate": {"or": [\#(terms)]}}"#
    }

    func testLongDisjunctionsRun() throws {
        forEachHistorySetup {
            let c = try openHistory(path: storePath("wide"))
            let ctx = try c.makeContext()
            ctx.author = "a998"
            _ = try ctx.insert(entity: "Item", json: #"{"title": "c"}"#)
            try ctx.save()
            for n in [999, 5_000] {
                XCTAssertEqual(try history(ctx, orOfAuthors(n)).count, 1, "\(n) terms")
                XCTAssertEqual(try ctx.deleteHistory(orOfAuthors(n).replacingOccurrences(of: "\"a998\"", with: "\"nobody\"")), 0)
            }
            let text = (0..<999).map { "$0.author == \"a\($0)\"" }.joined(separator: " || ")
            XCTAssertEqual(try history(ctx, #"{"predicate": \#(JSONValue.string(text).text)}"#).count, 1)
            let entities = (0..<999).map { "$0.changedPersistentIdentifier.entityName == \"E\($0)\"" }.joined(separator: " || ")
            XCTAssertEqual(try history(ctx, #"{"predicate": \#(JSONValue.string("$0.changes.contains { \(entities) || $0.changedPersistentIdentifier.entityName == \"Item\" }").text)}"#).count, 1)
            // Too many values for one statement: INVALID at the predicate.
            let e = assertError(.invalid) { try ctx.fetchHistory(orOfAuthors(40_000)) }
            XCTAssertEqual(e?.path, "/predicate")
        }
    }

    /// `depth` levels of alternating `&&` and `||`, each with a negated leaf beside it, as
    /// JSON (two JSON levels a level: JSON nests at most 128 deep) or as text.
    private func alternating(_ depth: Int, changes: Bool, text: Bool) -> String {
        // Each level: a test that holds (not a false one) beside the next level; the innermost holds too.
        if text {
            let leaf = changes ? #"$0.changedPersistentIdentifier.entityName == "Item""# : #"$0.author == "me""#
            let other = changes ? #"!($0.changedPersistentIdentifier.entityName == "Nope")"# : #"!($0.author == "nobody")"#
            var s = ""
            for i in 0..<depth { s += "\(other) \(i % 2 == 1 ? "||" : "&&") (" }
            s += leaf + String(repeating: ")", count: depth)
            return changes ? "$0.changes.contains { \(s) }" : s
        }
        let leaf = changes ? #"{"==": [{"key": "entityName"}, "Item"]}"# : #"{"==": [{"key": "author"}, "me"]}"#
        let other = changes ? #"{"not": {"==": [{"key": "entityName"}, "Nope"]}}"# : #"{"not": {"==": [{"key": "author"}, "nobody"]}}"#
        var s = ""
        for i in 0..<depth { s += (i % 2 == 1 ? #"{"or": ["# : #"{"and": ["#) + other + ", " }
        s += leaf + String(repeating: "]}", count: depth)
        return changes ? #"{"any": [{"key": "changes"}, \#(s)]}"# : s
    }

    func testDeepPredicatesRunOrAreInvalidWithAPath() throws {
        forEachHistorySetup {
            let c = try openHistory(path: storePath("deep"))
            let ctx = try c.makeContext()
            ctx.author = "me"
            _ = try ctx.insert(entity: "Item", json: #"{"title": "c"}"#)
            try ctx.save()
            for (changes, text) in [(false, false), (true, false), (false, true), (true, true)] {
                var refused: Int?
                // (58 levels of JSON: the delete below nests them two levels deeper, within JSON's 128.)
                for depth in 1...(text ? 99 : 58) {
                    let raw = alternating(depth, changes: changes, text: text)
                    let predicate = text ? JSONValue.string(raw).text : raw
                    do {
                        let found = try JSONValue.parse(ctx.fetchHistory(#"{"predicate": \#(predicate)}"#)).array?.count
                        XCTAssertEqual(found, 1, "depth \(depth)")
                        _ = try explain(ctx, #"{"predicate": \#(predicate)}"#)
                        // Selects nothing: the transaction's context has no name.
                        let none = #"{"==": [{"key": "contextName"}, "never"]}"#
                        let deleted = try ctx.deleteHistory(text ? #"{"predicate": \#(JSONValue.string("$0.contextName == \"never\" && " + raw).text)}"#
                                                                 : #"{"predicate": {"and": [\#(none), \#(predicate)]}}"#)
                        XCTAssertEqual(deleted, 0)
                        XCTAssertNil(refused, "depth \(depth) runs after depth \(refused ?? 0) was refused (changes: \(changes), text: \(text))")
                    } catch let e as StrataError {
                        XCTAssertEqual(e.code, .invalid, "depth \(depth) (changes: \(changes), text: \(text)): \(e.message)")
                        XCTAssertTrue(e.path?.hasPrefix("/predicate") ?? false, "depth \(depth): no path: \(e.json)")
                        XCTAssertGreaterThan(depth, 30, "depth \(depth) refused: \(e.message)")
                        if refused == nil { refused = depth }
                    }
                }
                // SQLite refuses what it cannot parse; PostgreSQL runs every depth the predicate parser takes.
                if text && !onPostgres { XCTAssertNotNil(refused, "some depth up to 99 is refused (changes: \(changes))") }
            }
            XCTAssertEqual(try tokens(ctx).count, 1)
        }
    }
}
