import XCTest
@testable import Strata

/// History descriptors: predicates (text and JSON), sorting, limits, and their errors.
final class HistoryPredicateTests: HistoryTestCase {
    /// Five transactions: 1 trip (app), 2 business trip (widget, "bg"), 3 item (no author),
    /// 4 lodging (app), 5 trip update (widget).
    private func fiveTransactions() throws -> (ModelContext, [String]) {
        let c = try openHistory { $0.author = "app" }
        let app = try c.makeContext()
        let widget = try c.makeContext()
        widget.author = "widget"
        widget.name = "bg"
        let none = try c.makeContext()
        none.author = nil
        _ = try app.insert(entity: "Trip", json: #"{"name": "A"}"#)
        try app.save()
        _ = try widget.insert(entity: "BusinessTrip", json: #"{"name": "B"}"#)
        try widget.save()
        _ = try none.insert(entity: "Item", json: #"{"title": "i"}"#)
        try none.save()
        _ = try app.insert(entity: "Lodging", json: #"{"place": "l"}"#)
        try app.save()
        try widget.update(id: "Trip/1", patch: #"{"notes": "n"}"#)
        try widget.save()
        let t = try tokens(app)
        XCTAssertEqual(t.count, 5)
        return (app, t)
    }

    private func seqs(_ ctx: ModelContext, _ descriptor: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Int64] {
        try tokens(ctx, descriptor).map(sequence)
    }

    private func pred(_ text: String, bindings: String = "{}", extra: String = "") -> String {
        var s = "{\"predicate\": \(JSONValue.string(text).text), \"bindings\": \(bindings)"
        if !extra.isEmpty { s += ", " + extra }
        return s + "}"
    }

    func testTokenComparisons() throws {
        forEachHistorySetup {
            let (ctx, t) = try fiveTransactions()
            XCTAssertEqual(try seqs(ctx, pred("$0.token > last", bindings: #"{"last": "\#(t[1])"}"#)), [3, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.transactionIdentifier >= last", bindings: #"{"last": "\#(t[1])"}"#)), [2, 3, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.token == \"\(t[2])\"")), [3])
            XCTAssertEqual(try seqs(ctx, pred("$0.token < last", bindings: #"{"last": "\#(t[2])"}"#)), [1, 2])
            XCTAssertEqual(try seqs(ctx, pred("list.contains($0.token)", bindings: #"{"list": ["\#(t[0])", "\#(t[4])"]}"#)), [1, 5])
            XCTAssertEqual(try seqs(ctx, pred("!($0.token > last)", bindings: #"{"last": "\#(t[3])"}"#)), [1, 2, 3, 4])
            // The JSON form.
            XCTAssertEqual(try seqs(ctx, #"{"predicate": {">": [{"key": "token"}, "\#(t[3])"]}}"#), [5])
            XCTAssertEqual(try seqs(ctx, #"{"predicate": {"in": [{"key": "token"}, {"var": "l"}]}, "bindings": {"l": ["\#(t[1])"]}}"#), [2])
            XCTAssertEqual(try seqs(ctx, #"{"predicate": {"and": [{">=": [{"key": "token"}, {"var": "l"}]}, {"==": [{"key": "author"}, null]}]}, "bindings": {"l": "\#(t[1])"}}"#), [3])
            // After the latest token: nothing, no error.
            XCTAssertEqual(try seqs(ctx, pred("$0.token > last", bindings: #"{"last": "\#(t[4])"}"#)), [])
        }
    }

    func testTimestampAuthorAndContextName() throws {
        forEachHistorySetup {
            let (ctx, _) = try fiveTransactions()
            let all = try history(ctx)
            let third = try XCTUnwrap(all[2]["timestamp"]?.stringValue)
            XCTAssertEqual(try seqs(ctx, pred("$0.timestamp >= d", bindings: #"{"d": "\#(third)"}"#)), [3, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.timestamp == d", bindings: #"{"d": "\#(third)"}"#)), [3])
            XCTAssertEqual(try seqs(ctx, pred("$0.timestamp <= d", bindings: #"{"d": "\#(third)"}"#)), [1, 2, 3])
            XCTAssertEqual(try seqs(ctx, pred("$0.timestamp > d", bindings: #"{"d": "2000-01-01T00:00:00Z"}"#)), [1, 2, 3, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.timestamp < d", bindings: #"{"d": {"date": "2000-01-01T00:00:00Z"}}"#)), [])
            XCTAssertEqual(try seqs(ctx, pred("$0.timestamp < d", bindings: #"{"d": 4102444800}"#)), [1, 2, 3, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.author == \"app\"")), [1, 4])
            XCTAssertEqual(try seqs(ctx, pred("$0.author != \"app\"")), [2, 3, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.author == nil")), [3])
            XCTAssertEqual(try seqs(ctx, pred("$0.author != nil")), [1, 2, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.author == a", bindings: #"{"a": null}"#)), [3])
            XCTAssertEqual(try seqs(ctx, pred("$0.contextName == \"bg\"")), [2, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.contextName == nil && $0.author == \"app\"")), [1, 4])
            XCTAssertEqual(try seqs(ctx, pred("$0.author == \"widget\" || $0.author == nil")), [2, 3, 5])
        }
    }

    func testChangesOfEntities() throws {
        forEachHistorySetup {
            let (ctx, t) = try fiveTransactions()
            let containsTrip = "$0.changes.contains { names.contains($0.changedPersistentIdentifier.entityName) }"
            // Trip covers BusinessTrip.
            XCTAssertEqual(try seqs(ctx, pred(containsTrip, bindings: #"{"names": ["Trip"]}"#)), [1, 2, 5])
            XCTAssertEqual(try seqs(ctx, pred(containsTrip, bindings: #"{"names": ["BusinessTrip"]}"#)), [2])
            // The session's listing: after a token, only Trip and Lodging changes.
            XCTAssertEqual(try seqs(ctx, pred("$0.token > last && " + containsTrip, bindings: #"{"last": "\#(t[1])", "names": ["Trip", "Lodging"]}"#)), [4, 5])
            XCTAssertEqual(try seqs(ctx, pred("$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Item\" }")), [3])
            XCTAssertEqual(try seqs(ctx, pred("$0.changes.allSatisfy { $0.changedPersistentIdentifier.entityName != \"Item\" }")), [1, 2, 4, 5])
            XCTAssertEqual(try seqs(ctx, pred("!$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Trip\" }")), [3, 4])
            XCTAssertEqual(try seqs(ctx, pred("$0.changes.isEmpty")), [])
            XCTAssertEqual(try seqs(ctx, pred("!$0.changes.isEmpty")), [1, 2, 3, 4, 5])
            // The JSON form.
            XCTAssertEqual(try seqs(ctx, #"{"predicate": {"any": [{"key": "changes"}, {"in": [{"key": "changedPersistentIdentifier.entityName"}, {"var": "names"}]}]}, "bindings": {"names": ["Lodging"]}}"#), [4])
            XCTAssertEqual(try seqs(ctx, #"{"predicate": {"not": {"isEmpty": {"key": "changes"}}}}"#), [1, 2, 3, 4, 5])
            // A name the history never saw matches nothing.
            XCTAssertEqual(try seqs(ctx, pred(containsTrip, bindings: #"{"names": ["Guide"]}"#)), [])
        }
    }

    func testSortAndLimit() throws {
        forEachHistorySetup {
            let (ctx, t) = try fiveTransactions()
            let latest = #"{"sortBy": [{"key": "transactionIdentifier", "order": "reverse"}], "fetchLimit": 1}"#
            XCTAssertEqual(try tokens(ctx, latest), [t[4]])
            XCTAssertEqual(try seqs(ctx, #"{"sortBy": [{"key": "token", "order": "reverse"}]}"#), [5, 4, 3, 2, 1])
            XCTAssertEqual(try seqs(ctx, #"{"sortBy": [{"key": "timestamp", "order": "reverse"}], "fetchLimit": 2}"#), [5, 4])
            XCTAssertEqual(try seqs(ctx, #"{"sortBy": [{"key": "author"}, {"key": "token", "order": "reverse"}]}"#), [3, 4, 1, 5, 2])
            XCTAssertEqual(try seqs(ctx, #"{"sortBy": [{"key": "author", "order": "reverse"}, {"key": "token"}]}"#), [2, 5, 1, 4, 3])
            XCTAssertEqual(try seqs(ctx, #"{"fetchLimit": 0}"#), [])
            XCTAssertEqual(try seqs(ctx, #"{"fetchLimit": 3}"#), [1, 2, 3])
            // The latest token is served by the primary key, no sort step.
            var text = latest
            let plan = String(decoding: try text.withUTF8 { try ctx.explainHistory($0) }, as: UTF8.self)
            XCTAssertFalse(plan.contains(onPostgres ? "Sort" : "TEMP B-TREE"), plan)
            XCTAssertTrue(plan.contains("strata_history_transaction"), plan)
        }
    }

    func testErrorsAreInvalidWithAPath() throws {
        forEachHistorySetup {
            let (ctx, t) = try fiveTransactions()
            func invalid(_ descriptor: String, _ path: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
                let e = assertError(.invalid, file: file, line: line) { try ctx.fetchHistory(descriptor) }
                XCTAssertNotNil(e?.path, "no path: \(e?.message ?? "")", file: file, line: line)
                if let path { XCTAssertEqual(e?.path, path, e?.message ?? "", file: file, line: line) }
            }
            invalid(pred("$0.colour == \"red\""))
            invalid(pred("$0.token.count > 1"))
            invalid(pred("$0.author.localizedStandardContains(\"a\")"))
            invalid(pred("$0.token > last"))  // no binding
            invalid(pred("$0.token > \"banana\""))
            invalid(pred("$0.token > \"0@\(t[0].split(separator: "@")[1])\""))
            invalid(pred("$0.token > 3"))
            invalid(pred("$0.timestamp > \"yesterday\""))
            invalid(pred("$0.author > nil"))
            invalid(pred("$0.author == 3"))
            invalid(pred("$0.changes.contains { $0.changedPersistentIdentifier.entityName > \"A\" }"))
            invalid(pred("$0.changes.contains { $0.id == \"A\" }"))
            invalid(pred("$0.changes.count > 1"))
            invalid(#"{"predicate": {">": [{"key": "colour"}, 1]}}"#, "/predicate/>/0/key")
            invalid(#"{"predicate": {">": [{"key": "token"}, {"var": "x"}]}}"#, "/predicate/>/1/var")
            invalid(#"{"predicate": {">": [{"key": "token"}, "nope"]}}"#, "/predicate/>/1")
            invalid(#"{"predicate": {"is": "Trip"}}"#)
            invalid(#"{"sortBy": [{"key": "colour"}]}"#, "/sortBy/0/key")
            invalid(#"{"sortBy": [{"key": "token", "order": "sideways"}]}"#, "/sortBy/0/order")
            invalid(#"{"fetchLimit": -1}"#, "/fetchLimit")
            invalid(#"{"limit": 1}"#)
            invalid(#"{"bindings": 3}"#, "/bindings")
            assertError(.invalid) { try ctx.fetchHistory("{") }
            assertError(.invalid) { try ctx.deleteHistory(#"{"fetchLimit": 1}"#) }
            assertError(.invalid) { try ctx.deleteHistory(#"{"sortBy": [{"key": "token"}]}"#) }
            // Errors left the history as it was.
            XCTAssertEqual(try tokens(ctx), t)
        }
    }
}
