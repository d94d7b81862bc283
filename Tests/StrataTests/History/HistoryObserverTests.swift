import XCTest
@testable import Strata

/// ModelContainer.observers: in-process delivery, filters, polling other writers, removal, expiry.
final class HistoryObserverTests: HistoryTestCase {
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
        var json: [JSONValue] { all.map { JSONValue.of($0) } }
    }

    private func latestToken(_ ctx: ModelContext) throws -> String? {
        try tokens(ctx, #"{"sortBy": [{"key": "token", "order": "reverse"}], "fetchLimit": 1}"#).first
    }

    func testInProcessOncePerSaveWithTheRightJSON() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let got = Received()
            _ = try c.observers.add(entityNames: nil) { got.add($0) }
            let ctx = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "items": [{"title": "x"}]}"#)
            try ctx.save()
            XCTAssertEqual(got.all.count, 1)
            var t = try XCTUnwrap(latestToken(ctx))
            XCTAssertEqual(got.json.last, JSONValue.of(#"{"token": "\#(t)", "inserted": {"Trip": ["Trip/1"], "Item": ["Item/1"]}, "updated": {}, "deleted": {}}"#))
            try ctx.update(id: trip.description, patch: #"{"notes": "n"}"#)
            try ctx.save()
            t = try XCTUnwrap(latestToken(ctx))
            XCTAssertEqual(got.json.last, JSONValue.of(#"{"token": "\#(t)", "inserted": {}, "updated": {"Trip": [{"id": "Trip/1", "attributes": ["notes"]}]}, "deleted": {}}"#))
            try ctx.delete(id: trip.description)
            try ctx.save()
            t = try XCTUnwrap(latestToken(ctx))
            XCTAssertEqual(got.json.last, JSONValue.of(#"{"token": "\#(t)", "inserted": {}, "updated": {}, "deleted": {"Trip": [{"id": "Trip/1", "tombstone": {"name": "Paris", "start": null}}], "Item": [{"id": "Item/1"}]}}"#))
            XCTAssertEqual(got.all.count, 3)
            // A save with nothing to save, and a failed save: no callback.
            try ctx.save()
            _ = try ctx.insert(entity: "Tag", json: #"{"label": "orphan"}"#)
            assertError(.validation) { try ctx.save() }
            XCTAssertEqual(got.all.count, 3)
            // Polling does not deliver this container's own saves again.
            try c.observers.poll()
            XCTAssertEqual(got.all.count, 3)
        }
    }

    func testFilterByEntityNames() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let got = Received()
            _ = try c.observers.add(entityNames: ["Trip", "Lodging"]) { got.add($0) }
            var filter = #"{"entityNames": ["Item"]}"#
            let items = Received()
            _ = try filter.withUTF8 { try c.observers.add(filter: $0) { items.add($0) } }
            let ctx = try c.makeContext()
            _ = try ctx.insert(entity: "Item", json: #"{"title": "x"}"#)
            try ctx.save()
            XCTAssertEqual(got.all.count, 0)
            XCTAssertEqual(items.all.count, 1)
            _ = try ctx.insert(entity: "BusinessTrip", json: #"{"name": "Expo"}"#)
            _ = try ctx.insert(entity: "Item", json: #"{"title": "y"}"#)
            try ctx.save()
            XCTAssertEqual(got.all.count, 1)
            XCTAssertEqual(got.json.last?["inserted"], JSONValue.of(#"{"BusinessTrip": ["BusinessTrip/1"]}"#))
            XCTAssertEqual(items.json.last?["inserted"], JSONValue.of(#"{"Item": ["Item/2"]}"#))
            // Bad filters.
            var bad = #"{"entityNames": ["Nope"]}"#
            var e = assertError(.invalid) { try bad.withUTF8 { try c.observers.add(filter: $0) { _ in } } }
            XCTAssertEqual(e?.path, "/entityNames/0")
            bad = #"{"entityNames": [1]}"#
            e = assertError(.invalid) { try bad.withUTF8 { try c.observers.add(filter: $0) { _ in } } }
            XCTAssertEqual(e?.path, "/entityNames/0")
            bad = #"{"entities": ["Trip"]}"#
            assertError(.invalid) { try bad.withUTF8 { try c.observers.add(filter: $0) { _ in } } }
            XCTAssertEqual(c.observers.count, 2)
        }
    }

    func testPollDeliversOtherWritersOnceInOrder() throws {
        forEachHistorySetup {
            let a = try openHistory()
            let b = try openHistory()
            let bctx = try b.makeContext()
            let actx = try a.makeContext()
            _ = try bctx.insert(entity: "Trip", json: #"{"name": "before"}"#)
            try bctx.save()
            let got = Received()
            let trips = Received()
            _ = try a.observers.add(entityNames: nil) { got.add($0) }
            _ = try a.observers.add(entityNames: ["Trip"]) { trips.add($0) }
            try a.observers.poll()
            XCTAssertEqual(got.all.count, 0, "transactions before the first observer are not delivered")
            let item = try bctx.insert(entity: "Item", json: #"{"title": "i"}"#)
            try bctx.save()
            _ = try actx.insert(entity: "Lodging", json: #"{"place": "own"}"#)
            try actx.save()
            XCTAssertEqual(got.all.count, 1, "the own save, at once")
            _ = try bctx.insert(entity: "Trip", json: #"{"name": "after"}"#)
            try bctx.update(id: item.description, patch: #"{"title": "j"}"#)
            try bctx.save()
            let t = try tokens(actx)
            XCTAssertEqual(t.count, 4)
            try a.observers.poll()
            let all = got.json
            XCTAssertEqual(all.count, 3)
            XCTAssertEqual(all.map { $0["token"]?.stringValue }, [t[2], t[1], t[3]], "own at save time, then B's in order")
            XCTAssertEqual(all[1], JSONValue.of(#"{"token": "\#(t[1])", "inserted": {"Item": ["\#(item)"]}, "updated": {}, "deleted": {}}"#))
            XCTAssertEqual(all[2]["updated"], JSONValue.of(#"{"Item": [{"id": "\#(item)", "attributes": ["title"]}]}"#))
            XCTAssertEqual(trips.json.map { $0["token"]?.stringValue }, [t[3]])
            XCTAssertEqual(trips.json.first?["updated"], JSONValue.of("{}"), "only the entities asked for")
            // Once.
            try a.observers.poll()
            XCTAssertEqual(got.all.count, 3)
            // B's own observers never poll A's saves unless B observes.
            try b.observers.poll()
        }
    }

    func testRemoveInsideTheCallback() throws {
        forEachHistorySetup {
            let c = try openHistory()
            let got = Received()
            let other = Received()
            var id = 0
            let observers = c.observers
            id = try c.observers.add(entityNames: nil) { [observers] s in
                got.add(s)
                observers.remove(id)
            }
            _ = try c.observers.add(entityNames: nil) { other.add($0) }
            let ctx = try c.makeContext()
            for n in ["A", "B"] {
                _ = try ctx.insert(entity: "Trip", json: #"{"name": "\#(n)"}"#)
                try ctx.save()
            }
            XCTAssertEqual(got.all.count, 1)
            XCTAssertEqual(other.all.count, 2)
            XCTAssertEqual(c.observers.count, 1)
            c.observers.remove(id)  // again: ignored
            c.observers.remove(12345)
            XCTAssertEqual(c.observers.count, 1)
        }
    }

    func testExpiredPoll() throws {
        forEachHistorySetup {
            let a = try openHistory()
            let b = try openHistory()
            let bctx = try b.makeContext()
            let got = Received()
            _ = try a.observers.add(entityNames: ["Trip"]) { got.add($0) }
            _ = try bctx.insert(entity: "Trip", json: #"{"name": "A"}"#)
            try bctx.save()
            _ = try bctx.insert(entity: "Trip", json: #"{"name": "B"}"#)
            try bctx.save()
            XCTAssertEqual(try bctx.deleteHistory("{}"), 2)
            try a.observers.poll()
            let latest = "2@\(tokenTag(bctx))"
            XCTAssertEqual(got.json, [JSONValue.of(#"{"token": "\#(latest)", "expired": true}"#)])
            // Once; then normal delivery resumes.
            try a.observers.poll()
            XCTAssertEqual(got.all.count, 1)
            _ = try bctx.insert(entity: "Trip", json: #"{"name": "C"}"#)
            try bctx.save()
            try a.observers.poll()
            XCTAssertEqual(got.all.count, 2)
            XCTAssertEqual(got.json.last?["inserted"], JSONValue.of(#"{"Trip": ["Trip/3"]}"#))
            // A save without history also expires what a poll would miss.
            let off = try openHistory { $0.history = false }.makeContext()
            _ = try off.insert(entity: "Item", json: #"{"title": "unseen"}"#)
            try off.save()
            try a.observers.poll()
            XCTAssertEqual(got.json.last?["expired"], .bool(true))
            XCTAssertEqual(got.all.count, 3)
            // Deleting a transaction this container delivered as it saved hides nothing from it.
            let actx = try a.makeContext()
            _ = try actx.insert(entity: "Trip", json: #"{"name": "own"}"#)
            try actx.save()
            XCTAssertEqual(got.all.count, 4)
            // C, the unrecorded save's mark, and this container's own save.
            XCTAssertEqual(try bctx.deleteHistory("{}"), 3)
            try a.observers.poll()
            XCTAssertEqual(got.all.count, 4)
        }
    }

    private func tokenTag(_ ctx: ModelContext) -> Substring {
        guard let s = ctx.session as? HistoryStorage else { return "" }
        return Substring(s.historyStoreTag)
    }
    func testContainerWithoutHistory() throws {
        forEachHistorySetup {
            let on = try openHistory()
            let onCtx = try on.makeContext()
            _ = try onCtx.insert(entity: "Item", json: #"{"title": "first"}"#)
            try onCtx.save()
            let off = try openHistory { $0.history = false }
            let got = Received()
            _ = try off.observers.add(entityNames: nil) { got.add($0) }
            let ctx = try off.makeContext()
            _ = try ctx.insert(entity: "Trip", json: #"{"name": "A"}"#)
            try ctx.save()
            // The store keeps history (another container records it): the save leaves an unrecorded mark, whose token it carries.
            XCTAssertEqual(got.json, [JSONValue.of(#"{"token": "2@\#(tokenTag(ctx))", "inserted": {"Trip": ["Trip/1"]}, "updated": {}, "deleted": {}}"#)])
            XCTAssertEqual(try history(onCtx).last?["unrecorded"], .bool(true))
            // Another container's recorded save reaches it through polling.
            let item = try onCtx.insert(entity: "Item", json: #"{"title": "second"}"#)
            try onCtx.save()
            // Its own unrecorded save was delivered as it committed: the poll finds nothing missing.
            try off.observers.poll()
            XCTAssertEqual(got.all.count, 2)
            XCTAssertEqual(got.json.last?["inserted"], JSONValue.of(#"{"Item": ["\#(item)"]}"#))
            // Another container's unrecorded save is missing: expired.
            let third = try openHistory { $0.history = false }.makeContext()
            _ = try third.insert(entity: "Item", json: #"{"title": "unseen"}"#)
            try third.save()
            try off.observers.poll()
            XCTAssertEqual(got.json.last?["expired"], .bool(true))
            XCTAssertEqual(got.all.count, 3)
        }
    }
    func testPollingWhileAnotherContainerWrites() throws {
        forEachHistorySetup {
            let a = try openHistory()
            let b = try openHistory()
            let got = Received()
            _ = try a.observers.add(entityNames: ["Item"]) { got.add($0) }
            let writer = try b.makeContext()
            let failures = Received()
            let done = ManagedFlag()
            let observers = a.observers
            let poller = Thread {
                while !done.value {
                    do { try observers.poll() } catch { failures.add("\(error)") }
                }
            }
            poller.start()
            for i in 1...40 {
                _ = try writer.insert(entity: "Item", json: #"{"title": "i\#(i)"}"#)
                try writer.save()
            }
            done.set()
            while !poller.isFinished { usleep(1000) }
            try a.observers.poll()
            XCTAssertEqual(failures.all, [])
            let delivered = got.json.compactMap { $0["inserted"]?["Item"]?.array?.first?.stringValue }
            let expected = try fetch(writer, "Item").compactMap { $0["_id"]?.stringValue }
            XCTAssertEqual(delivered, expected, "each once, in order")
            XCTAssertEqual(got.json.compactMap { $0["token"]?.stringValue }, try tokens(writer))
        }
    }
}
