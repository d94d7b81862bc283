import XCTest
@testable import Strata

/// Pruning, expired tokens, history turned off, tokens never reused.
final class HistoryExpiryTests: HistoryTestCase {
    private func after(_ token: String, _ op: String = ">") -> String {
        #"{"predicate": "$0.token \#(op) t", "bindings": {"t": "\#(token)"}}"#
    }

    private func saveTrips(_ ctx: ModelContext, _ names: [String]) throws {
        for n in names {
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "\#(n)"}"#)
            try ctx.save()
        }
    }

    func testDeleteBeforeATokenThenExpiry() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            try saveTrips(ctx, ["A", "B", "C", "D"])
            let t = try tokens(ctx)
            XCTAssertEqual(try ctx.deleteHistory(after(t[1], "<=")), 2)
            XCTAssertEqual(try tokens(ctx), [t[2], t[3]])
            XCTAssertEqual(try rowCount(storePath(), "strata_history_transaction"), 2)
            XCTAssertEqual(try rowCount(storePath(), "strata_history_change"), 2)
            // Older than the newest deleted: expired.
            let e = assertError(.historyExpired) { try ctx.fetchHistory(after(t[0])) }
            // The error says where the token is, not what it is (errors never hold bound values).
            XCTAssertFalse(e?.message.contains(t[0]) ?? true, e?.message ?? "")
            XCTAssertEqual(e?.path, "/bindings/t")
            assertError(.historyExpired) { try ctx.fetchHistory(after(t[1], ">=")) }
            // From the newest deleted on: complete.
            XCTAssertEqual(try tokens(ctx, after(t[1])), [t[2], t[3]])
            XCTAssertEqual(try tokens(ctx, after(t[2], ">=")), [t[2], t[3]])
            // Other predicates never expire.
            XCTAssertEqual(try tokens(ctx, after(t[0], "!=")), [t[2], t[3]])
            XCTAssertEqual(try tokens(ctx, #"{"predicate": "$0.author == nil"}"#), [t[2], t[3]])
            // Explaining never expires.
            var d = after(t[0])
            XCTAssertNoThrow(try d.withUTF8 { try ctx.explainHistory($0) })
            // The expiry survives reopening.
            let again = try openHistory().makeContext()
            assertError(.historyExpired) { try again.fetchHistory(after(t[0])) }
            XCTAssertEqual(try tokens(again, after(t[2])), [t[3]])
        }
    }

    func testATokenOfAnotherStoreOrFromTheFutureExpires() throws {
        forEachHistorySetup {
            let a = try openHistory(path: storePath("a")).makeContext()
            let b = try openHistory(path: storePath("b")).makeContext()
            try saveTrips(a, ["A"])
            try saveTrips(b, ["B"])
            let ta = try XCTUnwrap(tokens(a).first)
            let tb = try XCTUnwrap(tokens(b).first)
            XCTAssertEqual(sequence(ta), sequence(tb))
            XCTAssertNotEqual(ta, tb, "tokens name their store")
            assertError(.historyExpired) { try a.fetchHistory(after(tb)) }
            assertError(.historyExpired) { try a.fetchHistory(#"{"predicate": "$0.token == t", "bindings": {"t": "\#(tb)"}}"#) }
            assertError(.historyExpired) { try a.deleteHistory(after(tb, "<")) }
            let tag = ta.split(separator: "@")[1]
            assertError(.historyExpired) { try a.fetchHistory(after("99@\(tag)")) }
            XCTAssertEqual(try tokens(a), [ta], "nothing was deleted")
        }
    }

    func testHistoryOffMarksOlderTokensExpiredAndStaysWritable() throws {
        forEachHistorySetup {
            let on = try openHistory()
            let ctx = try on.makeContext()
            try saveTrips(ctx, ["A", "B"])
            let t = try tokens(ctx)

            let off = try openHistory { $0.history = false }
            let offCtx = try off.makeContext()
            _ = try offCtx.insert(entity: "Trip", json: #"{"name": "C"}"#)
            let mark = try XCTUnwrap(offCtx.save().token, "an unrecorded save leaves its mark in the history")
            XCTAssertEqual(sequence(mark), sequence(t[1]) + 1)
            _ = try offCtx.insert(entity: "Trip", json: #"{"name": "D"}"#)
            try offCtx.save()
            XCTAssertEqual(try count(offCtx, "Trip"), 4)

            assertError(.historyExpired) { try ctx.fetchHistory(after(t[0])) }
            assertError(.historyExpired) { try ctx.fetchHistory(after(t[1])) }
            let all = try tokens(ctx)
            XCTAssertEqual(Array(all.prefix(2)), t, "the older transactions are kept")
            XCTAssertEqual(all.count, 4)
            // The marks: no changes, "unrecorded": true (a token before either, even ">= mark", expired).
            assertError(.historyExpired) { try ctx.fetchHistory(after(mark, ">=")) }
            let marks = Array(try history(ctx).suffix(2))
            XCTAssertEqual(marks.map(lines), [[], []])
            XCTAssertEqual(marks.map { $0["unrecorded"] }, [.bool(true), .bool(true)])

            // A reader continues from the latest token (the last mark): never stuck behind it.
            XCTAssertEqual(try tokens(ctx, after(all[3])), [])
            try saveTrips(ctx, ["E"])
            let e = try XCTUnwrap(fetch(ctx, "Trip").first { $0["name"]?.stringValue == "E" }?["_id"]?.stringValue)
            XCTAssertEqual(try history(ctx, after(all[3])).map(lines), [["insert \(e)"]])
            let latest = try XCTUnwrap(tokens(ctx).last)
            XCTAssertGreaterThan(sequence(latest), sequence(all[3]))
            _ = try offCtx.insert(entity: "Trip", json: #"{"name": "F"}"#)
            try offCtx.save()
            assertError(.historyExpired) { try ctx.fetchHistory(after(latest)) }
        }
    }

    func testTokensAreNeverReused() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            try saveTrips(ctx, ["A", "B", "C"])
            let t = try tokens(ctx)
            XCTAssertEqual(try ctx.deleteHistory("{}"), 3)
            XCTAssertEqual(try tokens(ctx), [])
            XCTAssertEqual(try rowCount(storePath(), "strata_history_change"), 0)
            assertError(.historyExpired) { try ctx.fetchHistory(after(t[1])) }
            // The latest token is still good: nothing happened after it.
            XCTAssertEqual(try tokens(ctx, after(t[2])), [])
            try saveTrips(ctx, ["D"])
            XCTAssertEqual(try tokens(ctx).map(sequence), [4])
            XCTAssertEqual(try tokens(ctx, after(t[2])).map(sequence), [4])
            // Reopened: still not reused.
            XCTAssertEqual(try ctx.deleteHistory("{}"), 1)
            let again = try openHistory().makeContext()
            try saveTrips(again, ["E"])
            XCTAssertEqual(try tokens(again).map(sequence), [5])
        }
    }

    func testDeleteHistoryLeavesPendingChangesAndNeedsAWritableStore() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let ctx = try c.makeContext()
            try saveTrips(ctx, ["A"])
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "pending"}"#)
            XCTAssertEqual(try ctx.deleteHistory("{}"), 1)
            XCTAssertTrue(ctx.hasChanges)
            try ctx.save()
            XCTAssertEqual(try history(ctx).map(lines), [["insert Trip/2"]])
            let ro = try openHistory { $0.readOnly = true }.makeContext()
            assertError(.readOnly) { try ro.deleteHistory("{}") }
            XCTAssertEqual(try tokens(ro).count, 1)
        }
    }
}
