import Foundation
import XCTest
@testable import Strata

/// strata_set_trace "sees every SQL statement the container's connections
/// execute": every run of a statement reaches the hook, also a cached statement
/// run again (repeated fetches) and a prefetch's statement run once per owner row.
final class TraceHookTests: StoreTestCase {
    private static let owners = 50

    /// A store of 50 trips with one bucket-list item each, and a context on it.
    private func tripsWithItems() throws -> (ModelContainer, ModelContext) {
        let container = try openInMemory(Fixtures.sampleTrips)
        let context = try container.makeContext()
        var batch: [String] = []
        for i in 0..<Self.owners {
            batch.append(#"{"name": "T\#(i)", "startDate": "2026-01-01", "endDate": "2026-01-02", "bucketList": [{"title": "b\#(i)"}]}"#)
        }
        _ = try context.insertMany(entity: "Trip", json: "[" + batch.joined(separator: ",") + "]")
        try context.save()
        return (container, context)
    }

    private func descriptor(_ context: ModelContext, _ json: String) throws -> FetchDescriptor {
        try FetchDescriptor.decode(try JSONValue.parse(json), schema: context.schema)
    }

    /// The statements the hook sees while `body` runs.
    private func traced(_ container: ModelContainer, _ body: () throws -> Void) rethrows -> [String] {
        let lock = NSLock()
        var statements: [String] = []
        container.store.trace.set { sql in lock.lock(); statements.append(sql); lock.unlock() }
        defer { container.store.trace.set(nil) }
        try body()
        return lock.withLock { statements }
    }

    func testRepeatedFetchesAreTracedEachTime() throws {
        let (container, context) = try tripsWithItems()
        let d = try descriptor(context, #"{"entity": "Trip", "predicate": {"hasPrefix": [{"key": "name"}, "T1"]}}"#)
        let statements = try traced(container) {
            for _ in 0..<3 {
                _ = try context.fetch(d)
                _ = try context.fetchCount(d)
                _ = try context.fetchIdentifiers(d)
            }
        }
        XCTAssertEqual(statements.count, 9, statements.joined(separator: "\n"))
        XCTAssertEqual(statements[0], statements[3], "the same cached statement, seen at each run")
    }

    func testPrefetchIsTracedOncePerOwnerRow() throws {
        let (container, context) = try tripsWithItems()
        let d = try descriptor(context, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["bucketList"]}"#)
        for run in 0..<2 {
            var objects: [UInt8] = []
            let statements = try traced(container) { objects = try context.fetch(d) }
            // One query for the trips, then the bucket-list query run for each of the 50 trips.
            XCTAssertEqual(statements.count, 1 + Self.owners, "run \(run):\n" + statements.prefix(4).joined(separator: "\n"))
            XCTAssertEqual(Set(statements.dropFirst()).count, 1, "one prepared statement, run per owner row")
            let parsed = try JSONValue.parse(String(decoding: objects, as: UTF8.self))
            XCTAssertEqual(parsed.array?.count, Self.owners)
        }
    }

    func testNoHookNoCalls() throws {
        let (container, context) = try tripsWithItems()
        let d = try descriptor(context, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["bucketList"]}"#)
        var calls = 0
        container.store.trace.set { _ in calls += 1 }
        container.store.trace.set(nil)
        _ = try context.fetch(d)
        XCTAssertEqual(calls, 0)
    }
}
