import Foundation
import XCTest
@testable import Strata

/// Writers whose saves overlap, and readers that catch up by asking for the changes after
/// their last token: a reader never misses a transaction, sees each once and in token order.
///
/// On PostgreSQL a save's transaction may start before another's and commit after it: tokens
/// follow commits, not starts, so that a transaction committing after a later-numbered one
/// cannot exist (the store numbers a save as its transaction's last statement, under the
/// counter row's lock). SQLite writes one transaction at a time: only the last test, which
/// needs no row locks, runs there too.
final class HistoryConcurrentWritersTests: HistoryTestCase {
    private func after(_ token: String) -> String {
        #"{"predicate": "$0.token > t", "bindings": {"t": "\#(token)"}}"#
    }

    final class Box<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var item: T
        init(_ v: T) { item = v }
        var value: T {
            get { lock.lock(); defer { lock.unlock() }; return item }
            set { lock.lock(); item = newValue; lock.unlock() }
        }
        func update(_ change: (inout T) -> Void) { lock.lock(); change(&item); lock.unlock() }
    }

    /// Runs `body` on a thread of its own; `wait()` joins it and returns its result or rethrows.
    private final class Background<T>: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<T, Error>?
        init(_ body: @escaping () throws -> T) {
            Thread { [self] in
                result = Result { try body() }
                done.signal()
            }.start()
        }
        func wait(seconds: Int = 60) throws -> T {
            guard done.wait(timeout: .now() + .seconds(seconds)) == .success else { throw StrataError(.busy, "the background save did not end") }
            return try result!.get()
        }
    }

    /// How many server processes wait for a lock `blocker` (a backend's pid) holds.
    private func waitingOn(_ raw: PGConnection, _ blocker: Int64) throws -> Int64 {
        try raw.scalar("SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE $1 = ANY(pg_catalog.pg_blocking_pids(pid))", [.int(blocker)])?.int ?? 0
    }

    /// Waits until `condition` holds (a few seconds at most).
    private func eventually(_ what: String, _ condition: () throws -> Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        for _ in 0..<2_000 {
            if try condition() { return }
            usleep(2_000)
        }
        XCTFail("timed out waiting until \(what)", file: file, line: line)
    }

    /// The issue's case: save A begins first (its rows are written) and commits last; save B begins
    /// after A and commits before it. A reader that asked for the changes after the token before
    /// both while only B had committed gets B, then asking after B's token gets A: both, each once,
    /// in token order; an observer polling between the commits hears of each once.
    func testASaveBegunFirstAndCommittedLastIsNotMissed() throws {
        forEachHistorySetup([.postgres]) {
            let path = storePath()
            let a = try openHistory(path: path)
            let b = try openHistory(path: path)
            let reader = try openHistory(path: path)
            let got = Box<[String]>([])
            _ = try reader.observers.add(entityNames: nil) { s in got.update { $0.append(s) } }
            let readerContext = try reader.makeContext()

            let aContext = try a.makeContext()
            let trip = try aContext.insert(entity: "Trip", json: #"{"name": "seed"}"#)
            let t1 = try XCTUnwrap(aContext.save().token)
            try reader.observers.poll()
            XCTAssertEqual(got.value.count, 1)

            // Another connection holds the trip's row: A's save writes its item, then waits for it.
            let raw = try PGConnection(uri: path)
            let monitor = try PGConnection(uri: path)
            let blocker = try XCTUnwrap(raw.scalar("SELECT pg_catalog.pg_backend_pid()")?.int)
            try raw.execute(script: "BEGIN")
            try raw.execute(#"SELECT 1 FROM "Trip" WHERE _pk = $1 FOR UPDATE"#, [.int(trip.pk)])
            let item = try aContext.insert(entity: "Item", json: #"{"title": "from A"}"#)
            try aContext.update(id: trip.description, patch: #"{"notes": "from A"}"#)
            let box = UncheckedBox(aContext)
            let saveA = Background { try box.value.save().token }
            try eventually("A's save waits inside its transaction") { try waitingOn(monitor, blocker) == 1 }

            // B begins after A and commits while A's transaction is open.
            let bContext = try b.makeContext()
            let lodging = try bContext.insert(entity: "Lodging", json: #"{"place": "from B"}"#)
            let t2 = try XCTUnwrap(bContext.save().token)
            XCTAssertEqual(sequence(t2), sequence(t1) + 1)
            XCTAssertEqual(try waitingOn(monitor, blocker), 1, "A is still waiting")

            // A reader now: B, nothing of A.
            XCTAssertEqual(try history(readerContext, after(t1)).map(lines), [["insert \(lodging)"]])
            try reader.observers.poll()
            XCTAssertEqual(got.value.count, 2)
            XCTAssertEqual(JSONValue.of(got.value[1])["token"]?.stringValue, t2)

            // A commits, after B.
            try raw.execute(script: "ROLLBACK")
            let t3 = try XCTUnwrap(try saveA.wait())
            XCTAssertEqual(sequence(t3), sequence(t2) + 1, "A is numbered as it commits: after B")

            // The reader continues after B's token: A, once.
            let rest = try history(readerContext, after(t2))
            XCTAssertEqual(rest.compactMap { $0["token"]?.stringValue }, [t3])
            XCTAssertEqual(Set(rest.first.map(lines) ?? []), ["insert \(item)", "update \(trip) [notes]"])
            XCTAssertEqual(try tokens(readerContext, after(t1)), [t2, t3])
            try reader.observers.poll()
            try reader.observers.poll()
            XCTAssertEqual(got.value.compactMap { JSONValue.of($0)["token"]?.stringValue }, [t1, t2, t3], "each once, in token order")
            XCTAssertEqual(JSONValue.of(got.value[2])["inserted"], JSONValue.of(#"{"Item": ["\#(item)"]}"#))
        }
    }

    /// A save that has taken its token holds every later save's numbering until it commits: a
    /// reader between the two sees neither, then both in order (with tokens from a sequence, the
    /// later save could commit first and the reader move past the earlier one for good).
    func testASaveThatHoldsItsTokenHoldsBackTheNext() throws {
        forEachHistorySetup([.postgres]) {
            let path = storePath()
            let a = try openHistory(path: path)
            let b = try openHistory(path: path)
            let readerContext = try openHistory(path: path).makeContext()
            let aContext = try a.makeContext()
            _ = try aContext.insert(entity: "Item", json: #"{"title": "first"}"#)
            let t1 = try XCTUnwrap(aContext.save().token)

            // A pauses after its history was written, before its COMMIT.
            let tookToken = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let pausing = Box(true)
            a.store.saveHooks.addParticipant { changes, _ in
                guard pausing.value else { return }
                pausing.value = false
                tookToken.signal()
                _ = release.wait(timeout: .now() + 30)
            }
            let itemA = try aContext.insert(entity: "Item", json: #"{"title": "A"}"#)
            let boxA = UncheckedBox(aContext)
            let saveA = Background { try boxA.value.save().token }
            XCTAssertEqual(tookToken.wait(timeout: .now() + 30), .success)

            let bContext = try b.makeContext()
            let itemB = try bContext.insert(entity: "Item", json: #"{"title": "B"}"#)
            let boxB = UncheckedBox(bContext)
            let saveB = Background { try boxB.value.save().token }
            // B waits for the counter row A holds: nothing committed yet.
            let raw = try PGConnection(uri: path)
            try eventually("B's save waits for A's") {
                try raw.scalar("SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")?.int ?? 0 > 0
            }
            XCTAssertEqual(try tokens(readerContext, after(t1)), [])

            release.signal()
            let t2 = try XCTUnwrap(try saveA.wait())
            let t3 = try XCTUnwrap(try saveB.wait())
            XCTAssertEqual([sequence(t2), sequence(t3)], [sequence(t1) + 1, sequence(t1) + 2])
            XCTAssertEqual(try history(readerContext, after(t1)).map(lines), [["insert \(itemA)"], ["insert \(itemB)"]])
        }
    }

    /// Two containers save at once, over and over, while a reader keeps asking for what came
    /// after its last token: it ends with every transaction, each once, tokens one after another.
    func testReaderCatchingUpWhileTwoWritersSave() throws {
        forEachHistorySetup {
            let path = storePath()
            let writers = [try openHistory(path: path), try openHistory(path: path)]
            let readerContext = try openHistory(path: path).makeContext()
            let rounds = 40
            let saved = Box<[String]>([])
            let failures = Box<[String]>([])
            let group = DispatchGroup()
            for (w, container) in writers.enumerated() {
                let box = UncheckedBox(try container.makeContext())
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        for i in 0..<rounds {
                            _ = try box.value.insert(entity: "Item", json: #"{"title": "w\#(w)-\#(i)"}"#)
                            if let t = try box.value.save().token { saved.update { $0.append(t) } }
                        }
                    } catch { failures.update { $0.append("writer \(w): \(error)") } }
                }.start()
            }
            let finished = Box(false)
            let waiter = Thread { group.wait(); finished.value = true }
            waiter.start()
            var seen: [String] = []
            var last: String?
            while true {
                let done = finished.value
                let descriptor = last.map(after) ?? "{}"
                for t in try history(readerContext, descriptor) {
                    guard let token = t["token"]?.stringValue else { continue }
                    seen.append(token)
                    last = token
                }
                if done { break }
            }
            XCTAssertEqual(failures.value, [])
            XCTAssertEqual(seen.count, 2 * rounds)
            XCTAssertEqual(Set(seen), Set(saved.value), "every save, each once")
            XCTAssertEqual(seen.map(sequence), Array(1...Int64(2 * rounds)), "in token order, none skipped")
        }
    }
}
