import XCTest
@testable import Strata

/// A store's history is untrusted input: damaged rows fail with `.corrupt`, never crash or `.internal`.
final class HistoryCorruptTests: HistoryTestCase {
    /// A store with an insert, an update and a delete recorded by `writer`; returns its path.
    private func makeHistoryStore(_ path: String) throws {
        let c = try openHistory(path: path)
        let ctx = try c.makeContext()
        let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "items": [{"title": "a"}, {"title": "b"}]}"#)
        try ctx.save()
        try ctx.update(id: trip.description, patch: #"{"name": "Lyon"}"#)
        try ctx.save()
        try ctx.delete(id: trip.description)
        try ctx.save()
        XCTAssertEqual(try history(ctx).count, 3)
    }

    /// Damages a fresh store with `sql`, then expects reading the history, and polling it
    /// from a container that observed the store before its writes, to fail with `.corrupt`.
    private func assertCorrupt(_ name: String, _ sql: String, _ args: [SQLValue] = [],
                               descriptor: String = "{}", poll: Bool = true,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let path = storePath(name)
        let c = try openHistory(path: path)
        let got = Received()
        _ = try c.observers.add(entityNames: nil) { got.add($0) }
        try makeHistoryStore(path)
        try writeRaw(path, sql, args)
        let ctx = try c.makeContext()
        let e = assertError(.corrupt, file: file, line: line) { try ctx.fetchHistory(descriptor) }
        XCTAssertFalse(e?.message.isEmpty ?? true, file: file, line: line)
        if poll {
            assertError(.corrupt, file: file, line: line) { try c.observers.poll() }
            XCTAssertEqual(got.all.count, 0, file: file, line: line)
        }
        // The store still works.
        _ = try ctx.insert(entity: "Item", json: #"{"title": "still"}"#)
        try ctx.save()
    }

    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func testBadKind() throws {
        forEachHistorySetup {
            try assertCorrupt("kind", "UPDATE strata_history_change SET kind = 9")
        }
    }

    func testZeroOrNegativeCount() throws {
        forEachHistorySetup {
            try assertCorrupt("zero", "UPDATE strata_history_change SET count = 0")
            try assertCorrupt("negative", "UPDATE strata_history_change SET count = -3")
        }
    }

    func testHugeCount() throws {
        forEachHistorySetup {
            try assertCorrupt("huge", "UPDATE strata_history_change SET count = 1000000000000")
            try assertCorrupt("overflow", "UPDATE strata_history_change SET pk = 9223372036854775800, count = 100")
        }
    }

    func testAttributesNotJSON() throws {
        forEachHistorySetup {
            // (PostgreSQL keeps them as bigint[]: a null number, or a list of lists.)
            try assertCorrupt("attributes", sql("UPDATE strata_history_change SET attributes = 'not json' WHERE kind = 1",
                                                postgres: "UPDATE strata_history_change SET attributes = '{NULL}' WHERE kind = 1"))
            try assertCorrupt("attributes2", sql(#"UPDATE strata_history_change SET attributes = '["x"]' WHERE kind = 1"#,
                                                 postgres: "UPDATE strata_history_change SET attributes = '{{1},{2}}' WHERE kind = 1"))
            try assertCorrupt("attributes3", sql("UPDATE strata_history_change SET attributes = '{}' WHERE kind = 1",
                                                 postgres: "UPDATE strata_history_change SET attributes = '{1,NULL}' WHERE kind = 1"))
        }
    }

    func testValuesNotJSON() throws {
        forEachHistorySetup {
            try assertCorrupt("tombstone", "UPDATE strata_history_change SET tombstone = 'nope' WHERE tombstone IS NOT NULL")
            try assertCorrupt("tombstone2", "UPDATE strata_history_change SET tombstone = '[1, 2]' WHERE tombstone IS NOT NULL")
            try assertCorrupt("old", #"UPDATE strata_history_change SET old = '{"x": 1}' WHERE old IS NOT NULL"#, poll: false)
            try assertCorrupt("new", sql("UPDATE strata_history_change SET new = X'00FF' WHERE new IS NOT NULL",
                                         postgres: #"UPDATE strata_history_change SET new = '{"7": ' WHERE new IS NOT NULL"#), poll: false)
        }
    }

    func testUnknownNameID() throws {
        forEachHistorySetup {
            try assertCorrupt("entity", "UPDATE strata_history_change SET entity = 999")
            try assertCorrupt("attribute", sql("UPDATE strata_history_change SET attributes = '[999]' WHERE attributes IS NOT NULL",
                                               postgres: "UPDATE strata_history_change SET attributes = '{999}' WHERE attributes IS NOT NULL"))
            try assertCorrupt("tombstoneKey", #"UPDATE strata_history_change SET tombstone = '{"999": 1}' WHERE tombstone IS NOT NULL"#)
        }
    }

    func testWrongTypesInRows() throws {
        forEachHistorySetup {
            if onPostgres {
                // Typed columns take no value of another type: what an edit can still write.
                try assertCorrupt("nanTimestamp", "UPDATE strata_history_transaction SET timestamp = 'NaN'")
                try assertCorrupt("infiniteTimestamp", "UPDATE strata_history_transaction SET timestamp = '-Infinity'")
                for column in ["kind", "entity", "pk", "count"] {
                    try assertCorrupt("null\(column)", "ALTER TABLE strata_history_change ALTER COLUMN \(column) DROP NOT NULL; "
                                      + "UPDATE strata_history_change SET \(column) = NULL")
                }
                return
            }
            try assertCorrupt("textKind", "UPDATE strata_history_change SET kind = 'insert'")
            try assertCorrupt("textKey", "UPDATE strata_history_change SET pk = 'one'")
            try assertCorrupt("realCount", "UPDATE strata_history_change SET count = 1.5")
            try assertCorrupt("textEntity", "UPDATE strata_history_change SET entity = 'Trip'")
            try assertCorrupt("textTimestamp", "UPDATE strata_history_transaction SET timestamp = 'yesterday'")
            // (Polling reads the changes themselves, not the transaction's list of entities.)
            try assertCorrupt("entities", "UPDATE strata_history_transaction SET entities = 'nope'",
                              descriptor: #"{"predicate": "$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Trip\" }"}"#,
                              poll: false)
        }
    }

    func testCompleteFromNotANumber() throws {
        forEachHistorySetup {
            let path = storePath("meta")
            try makeHistoryStore(path)
            let t = try XCTUnwrap(tokens(openHistory(path: path).makeContext()).first)
            // (PostgreSQL keeps it as a number, beside the last token: its row gone.)
            try writeRaw(path, sql("INSERT OR REPLACE INTO strata_metadata (key, value) VALUES ('historyCompleteFrom', 'soon')",
                                   postgres: "DELETE FROM strata_history_counter"))
            let c = try openHistory(path: path)
            let ctx = try c.makeContext()
            assertError(.corrupt) { try ctx.fetchHistory("{}") }
            assertError(.corrupt) { try ctx.fetchHistory(#"{"predicate": "$0.token > t", "bindings": {"t": "\#(t)"}}"#) }
            assertError(.corrupt) { try c.observers.add(entityNames: nil) { _ in } }
        }
    }
}
