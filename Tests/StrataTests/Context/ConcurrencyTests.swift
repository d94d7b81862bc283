import Dispatch
import Foundation
import XCTest
@testable import Strata

/// One container, many threads, each with its own context (ModelContainer is
/// shared; a ModelContext belongs to one thread at a time).
final class ConcurrencyTests: StoreTestCase {
    static let threads = 4
    static let perThread = 250
    static let batch = 25

    /// Errors collected from worker threads.
    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var items: [String] = []
        func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
    }

    /// Runs `body(thread)` on `count` threads at once and waits for all of them.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for t in 0..<count {
            group.enter()
            let thread = Thread {
                body(t)
                group.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "threads did not finish")
    }

    func writers(_ container: ModelContainer, file: StaticString = #filePath, line: UInt = #line) -> [[String]] {
        let failures = Failures()
        let results = Failures()
        let containerBox = UncheckedBox(container)
        onThreads(Self.threads) { t in
            do {
                let context = try containerBox.value.makeContext()
                var ids: [String] = []
                for i in 0..<Self.perThread {
                    let id = try context.insert(entity: "Trip", json: #"""
                        {"name": "t\#(t)-\#(i)", "startDate": \#(i), "endDate": \#(i + 1),
                         "bucketList": [{"title": "item \#(t)-\#(i)"}]}
                        """#)
                    ids.append(id.description)
                    if (i + 1) % Self.batch == 0 { try context.save() }
                }
                try context.save()
                results.add(ids.joined(separator: " "))
            } catch {
                failures.add("thread \(t): \(error)")
            }
        }
        XCTAssertEqual(failures.items, [], file: file, line: line)
        return results.items.map { $0.split(separator: " ").map(String.init) }
    }

    func check(_ context: ModelContext, _ perThread: [[String]], file: StaticString = #filePath, line: UInt = #line) throws {
        let total = Self.threads * Self.perThread
        XCTAssertEqual(perThread.count, Self.threads, file: file, line: line)
        let all = perThread.flatMap { $0 }
        XCTAssertEqual(all.count, total, file: file, line: line)
        XCTAssertEqual(Set(all).count, total, "no identifier handed out twice", file: file, line: line)
        let stored = try identifiers(context, "Trip")
        XCTAssertEqual(stored.count, total, file: file, line: line)
        XCTAssertEqual(Set(stored), Set(all), "every row present", file: file, line: line)
        XCTAssertEqual(try count(context, "BucketListItem"), Int64(total), file: file, line: line)
        let names = Set(try fetch(context, "Trip").compactMap { $0["name"]?.stringValue })
        XCTAssertEqual(names.count, total, file: file, line: line)
        for t in 0..<Self.threads {
            XCTAssertTrue(names.contains("t\(t)-0") && names.contains("t\(t)-\(Self.perThread - 1)"), file: file, line: line)
        }
    }

    func testFourThreadsOnOneFileContainer() throws {
        let container = try openFile()
        let ids = writers(container)
        try check(try container.makeContext(), ids)
        // Primary keys in the table itself: distinct and as many as rows.
        let path = storePath()
        XCTAssertEqual(try scalar(path, "SELECT count(DISTINCT _pk) FROM Trip"), .int(Int64(Self.threads * Self.perThread)))
        XCTAssertEqual(try scalar(path, "SELECT count(*) FROM BucketListItem WHERE trip IS NULL"), .int(0))
        // And after a reopen.
        try check(try openFile().makeContext(), ids)
    }

    /// `insertMany` lets its unique probes share one read snapshot between key reservations:
    /// threads inserting arrays (distinct trips, then the same trips) get distinct keys, and
    /// trips another thread saved since a probe are met at save.
    func testFourThreadsInsertingArrays() throws {
        let container = try openFile()
        let failures = Failures()
        let results = Failures()
        let containerBox = UncheckedBox(container)
        func trips(_ t: Int?, _ range: Range<Int>) -> String {
            "[" + range.map { i in
                #"{"name": "\#(t.map { "t\($0)-" } ?? "shared-")\#(i)", "startDate": \#(i), "endDate": \#(i + 1), "bucketList": [{"title": "item \#(i)"}]}"#
            }.joined(separator: ",") + "]"
        }
        onThreads(Self.threads) { t in
            do {
                let context = try containerBox.value.makeContext()
                var ids: [String] = []
                for b in stride(from: 0, to: Self.perThread, by: Self.batch) {
                    ids += try context.insertMany(entity: "Trip", json: trips(t, b..<(b + Self.batch))).map(\.description)
                    _ = try context.insertMany(entity: "Trip", json: trips(nil, b..<(b + Self.batch)))
                    try context.save()
                }
                results.add(ids.joined(separator: " "))
            } catch {
                failures.add("thread \(t): \(error)")
            }
        }
        XCTAssertEqual(failures.items, [])
        let own = results.items.map { $0.split(separator: " ").map(String.init) }
        let context = try container.makeContext()
        let total = Self.threads * Self.perThread
        XCTAssertEqual(Set(own.flatMap { $0 }).count, total, "no identifier handed out twice")
        XCTAssertEqual(try count(context, "Trip"), Int64(total + Self.perThread), "each shared trip saved once")
        let path = storePath()
        XCTAssertEqual(try scalar(path, "SELECT count(DISTINCT _pk) FROM Trip"), .int(Int64(total + Self.perThread)))
        XCTAssertEqual(try scalar(path, "SELECT count(DISTINCT name) FROM Trip WHERE name LIKE 'shared-%'"), .int(Int64(Self.perThread)))
    }

    func testFourThreadsOnOneInMemoryContainer() throws {
        let container = try openInMemory()
        let ids = writers(container)
        try check(try container.makeContext(), ids)
    }

    func testTwoContainersOnOneFile() throws {
        // Two containers (as two processes would) share the key sequence through the file.
        let a = try openFile()
        let b = try openFile()
        let failures = Failures()
        let boxes = [UncheckedBox(a), UncheckedBox(b)]
        onThreads(2) { t in
            do {
                let context = try boxes[t].value.makeContext()
                for i in 0..<200 {
                    _ = try context.insert(entity: "Trip", json: #"{"name": "c\#(t)-\#(i)", "startDate": 0, "endDate": 1}"#)
                    if i % 50 == 49 { try context.save() }
                }
                try context.save()
            } catch {
                failures.add("container \(t): \(error)")
            }
        }
        XCTAssertEqual(failures.items, [])
        XCTAssertEqual(try count(a.makeContext(), "Trip"), 400)
        XCTAssertEqual(try scalar(storePath(), "SELECT count(DISTINCT _pk) FROM Trip"), .int(400))
    }

    func testContainersOpeningANewFileAtOnce() throws {
        // Several threads (as several processes would) create the same new store: one creates it, the others open it.
        for round in 0..<5 {
            let path = storePath("race\(round)")
            let config = UncheckedBox(try configuration())
            let failures = Failures()
            onThreads(4) { t in
                do {
                    let context = try ModelContainer(path: path, configuration: config.value).makeContext()
                    _ = try context.insert(entity: "Trip", json: #"{"name": "r\#(t)", "startDate": 0, "endDate": 1}"#)
                    try context.save()
                } catch {
                    failures.add("thread \(t): \(error) \((error as? StrataError)?.sqliteCode ?? 0)")
                }
            }
            XCTAssertEqual(failures.items, [], "round \(round)")
            XCTAssertEqual(try rowCount(path, "Trip"), 4)
        }
    }

    func testReadersSeeOnlyWholeSaves() throws {
        let container = try openFile()
        let box = UncheckedBox(container)
        let test = UncheckedBox(self)
        let failures = Failures()
        onThreads(2) { t in
            do {
                let context = try box.value.makeContext()
                if t == 0 {
                    for s in 0..<20 {
                        for i in 0..<10 {
                            _ = try context.insert(entity: "Trip", json: #"{"name": "s\#(s)-\#(i)", "startDate": 0, "endDate": 1}"#)
                        }
                        try context.save()
                    }
                } else {
                    var last: Int64 = 0
                    for _ in 0..<200 {
                        let n = try test.value.count(context, "Trip", pending: false)
                        if n % 10 != 0 { failures.add("saw a partial save: \(n) rows") }
                        if n < last { failures.add("count went back from \(last) to \(n)") }
                        last = n
                    }
                }
            } catch {
                failures.add("thread \(t): \(error)")
            }
        }
        XCTAssertEqual(failures.items, [])
        XCTAssertEqual(try count(container.makeContext(), "Trip"), 200)
    }
}

/// Hands a non-Sendable reference to worker threads (the type under test is what makes it safe).
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
