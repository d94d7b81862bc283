import XCTest
@testable import Strata

/// The cache of compiled descriptors behind `strata_fetch` and `strata_fetch_count`
/// (``DescriptorCache``): a text seen before answers exactly as decoding and compiling it
/// afresh would — with other bindings, with pending changes and after a rollback, after
/// another container migrated the store — errors included, and the cache stays at its bound.
/// Runs on a store file and on PostgreSQL.
final class DescriptorCacheTests: MigrationTestCase {
    private let v1 = #"""
    {"version": "1.0.0", "entities": [
      {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "day", "type": "int"}]}]}
    """#

    /// Version 2 adds an attribute.
    private let v2 = #"""
    {"version": "2.0.0", "entities": [
      {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "day", "type": "int"},
                                      {"name": "rank", "type": "int", "default": 7}]}]}
    """#

    /// Version 2 renames `title` to `heading`.
    private let renamed = #"""
    {"version": "2.0.0", "entities": [
      {"name": "Note", "attributes": [{"name": "heading", "type": "string", "originalName": "title"}, {"name": "day", "type": "int"}]}]}
    """#

    /// The notes from `day` on, by day, two at most, with `from` bound in the text.
    private func fromDay(_ from: String, bindingsFirst: Bool = false) -> String {
        bindingsFirst
            ? #"{"bindings": {"from": \#(from)}, "entity": "Note", "predicate": "$0.day >= from", "sortBy": [{"key": "day"}], "fetchLimit": 2}"#
            : #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": {"from": \#(from)}}"#
    }

    private func notes(_ schema: String? = nil, _ n: Int = 20) throws -> (ModelContainer, ModelContext) {
        let container = try openFile(schema ?? v1, path: storePath())
        let c = try container.makeContext()
        for i in 0..<n { _ = try c.insert(entity: "Note", json: #"{"title": "n\#(i)", "day": \#(i)}"#) }
        try c.save()
        return (container, c)
    }

    /// What a call gives: its JSON or count, or its error's code, path and message.
    private func outcome(_ body: () throws -> String) -> String {
        do { return try body() } catch let e as StrataError {
            return "error \(e.code) \(e.path ?? "-") \(e.message)"
        } catch { return "error \(error)" }
    }

    /// `strata_fetch` of `json` (through the cache).
    private func fetch(_ c: ModelContext, _ json: String) -> String {
        outcome { String(decoding: try Array(json.utf8).withUnsafeBufferPointer { try c.fetchBuffer(descriptorJSON: $0) }.bytes, as: UTF8.self) }
    }

    /// `strata_fetch_count` of `json` (through the cache).
    private func count(_ c: ModelContext, _ json: String) -> String {
        outcome { String(try Array(json.utf8).withUnsafeBufferPointer { try c.fetchCount(descriptorJSON: $0) }) }
    }

    /// The same fetch decoded and compiled afresh.
    private func uncachedFetch(_ c: ModelContext, _ json: String) -> String {
        outcome { String(decoding: try c.fetch(try Array(json.utf8).withUnsafeBufferPointer { try c.descriptor($0) }), as: UTF8.self) }
    }

    private func uncachedCount(_ c: ModelContext, _ json: String) -> String {
        outcome { String(try c.fetchCount(try Array(json.utf8).withUnsafeBufferPointer { try c.descriptor($0) })) }
    }

    /// Fetch and count of `json` through the cache, each the same as uncached.
    private func assertSame(_ c: ModelContext, _ json: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fetch(c, json), uncachedFetch(c, json), "fetch \(what): \(json)", file: file, line: line)
        XCTAssertEqual(count(c, json), uncachedCount(c, json), "count \(what): \(json)", file: file, line: line)
    }

    func testARepeatedTextRunsOnePlanWithEachCallsBindings() throws {
        let (_, c) = try notes()
        for bindingsFirst in [false, true] {
            for from in ["0", "5", "18", "19", "25", "-3", "7.0"] {
                assertSame(c, fromDay(from, bindingsFirst: bindingsFirst), "from \(from)")
            }
        }
        XCTAssertEqual(fetch(c, fromDay("18")), #"[{"_id":"Note/19","_entity":"Note","title":"n18","day":18},{"_id":"Note/20","_entity":"Note","title":"n19","day":19}]"#)
        XCTAssertEqual(count(c, fromDay("15")), "2", "the count of the page")
        XCTAssertEqual(c.descriptorCache.count, 2, "one plan per text (bindings first or last), whatever the bindings")
        XCTAssertGreaterThanOrEqual(c.descriptorCache.hits, 26, "every call after the first found its plan")
    }

    func testPendingChangesAndRollbackAreSeenByACachedPlan() throws {
        let (_, c) = try notes()
        let text = fromDay("10")
        assertSame(c, text, "saved")
        _ = try c.insert(entity: "Note", json: #"{"title": "new", "day": 10}"#)
        assertSame(c, text, "a pending insert")
        XCTAssertEqual(count(c, fromDay("10")), "2")
        XCTAssertTrue(fetch(c, fromDay("10")).contains(#""title":"new""#), "the pending insert is read")
        try c.update(id: "Note/12", patch: #"{"day": 3}"#)
        try c.delete(id: "Note/11")
        for from in ["0", "2", "10", "11"] { assertSame(c, fromDay(from), "pending changes, from \(from)") }
        XCTAssertFalse(fetch(c, fromDay("3")).contains(#""_id":"Note/11""#), "the pending delete is read")
        c.rollback()
        for from in ["0", "3", "10"] { assertSame(c, fromDay(from), "after the rollback, from \(from)") }
        XCTAssertEqual(fetch(c, fromDay("10")), #"[{"_id":"Note/11","_entity":"Note","title":"n10","day":10},{"_id":"Note/12","_entity":"Note","title":"n11","day":11}]"#)
        XCTAssertEqual(c.descriptorCache.count, 1)
    }

    func testErrorsOfACachedTextAreThoseOfAnUncachedOne() throws {
        let (_, c) = try notes()
        XCTAssertEqual(count(c, fromDay("1")), "2")
        let texts = [
            fromDay(#""soon""#), fromDay("null"), fromDay("[1, 2]"), fromDay(#"{"a": 1}"#), fromDay("1.5"), fromDay("true"),
            fromDay("9223372036854775808"),
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": {}}"#,
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": 5}"#,
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2}"#,
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": {"from": 1, "from": 2}}"#,
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": {"from": 1}"#,
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": {"from": 1}} x"#,
            #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": {"from": 1, "to": 3}}"#,
            fromDay("1") + " ",
        ]
        for text in texts {
            // Twice each: the first call may cache, the second must not answer differently.
            assertSame(c, text, "first call")
            assertSame(c, text, "second call")
        }
        XCTAssertTrue(fetch(c, fromDay(#""soon""#)).contains("/predicate"), "a bad value names the predicate's path, as uncached")
        XCTAssertTrue(fetch(c, texts[7]).contains("unknown variable 'from'"))
        XCTAssertTrue(fetch(c, texts[8]).contains("/bindings"))
        XCTAssertEqual(fetch(c, fromDay("18")), uncachedFetch(c, fromDay("18")), "the plan still serves good bindings")
    }

    /// The text last run is found by comparing the bytes around its bindings value and reading
    /// only that value: texts that differ from it anywhere else, or whose value at that place is
    /// spaced, nested, malformed or followed by more text, answer as an uncached call does.
    func testTextsThatDifferFromTheLastOneAroundItsBindings() throws {
        let (_, c) = try notes()
        let last = fromDay("3")
        let head = #"{"entity": "Note", "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "sortBy": [{"key": "day"}], "fetchLimit": 2, "bindings": "#
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let texts = [
            head + #" {"from": 6}}"#,
            head + #"{"from": 6} }"#,
            head + #"{"from": 6}, "fetchOffset": 1}"#,
            head + #"{"from": 6}}}"#,
            head + #"{"from": 6}"#,
            head + #"{"from": 6, "deep": \#(deep)}}"#,
            head + #"{"from": "6}, "fetchLimit": 9"}}"#,
            head + #"{"from": 6}}"# + " ",
            head + "5}",
            head + "null}",
            head + #"{"from": 6, "from": 7}}"#,
            head + "}",
            String(head.dropLast(2)) + "}",
            head.replacingOccurrences(of: #""fetchLimit": 2"#, with: #""fetchLimit": 1"#) + #"{"from": 6}}"#,
        ]
        for text in texts {
            // The good text first, so that it is the one last run when `text` comes.
            assertSame(c, last, "the text last run")
            assertSame(c, text, "after the text last run")
        }
        XCTAssertEqual(count(c, texts[2]), "2", "the fetch offset of the longer text is read")
        XCTAssertEqual(count(c, texts[13]), "1", "the other fetch limit is read")
        XCTAssertTrue(fetch(c, texts[8]).contains("/bindings"))
        XCTAssertEqual(fetch(c, head + #"{"from": 18}}"#), uncachedFetch(c, head + #"{"from": 18}}"#))
    }

    func testDescriptorsAPreparedFetchCannotRunAreCompiledEachCall() throws {
        let (_, c) = try notes()
        let texts = [
            #"{"entity": "Note", "aggregates": [{"name": "total", "function": "sum", "keyPath": "day"}], "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "bindings": {"from": 3}}"#,
            #"{"entity": "Note", "aggregates": [{"name": "total", "function": "sum", "keyPath": "day"}], "predicate": {">=": [{"key": "day"}, {"var": "from"}]}, "bindings": {"from": 15}}"#,
            #"{"entity": "Note", "predicate": "a == b && $0.day < 4", "bindings": {"a": 1, "b": 1}}"#,
            #"{"entity": "Note", "predicate": "a == b && $0.day < 4", "bindings": {"a": 1, "b": 2}}"#,
            #"{"entity": "Note", "predicate": {"in": [{"key": "day"}, {"var": "days"}]}, "bindings": {"days": [1, 4, 9]}}"#,
            #"{"entity": "Note", "predicate": {"in": [{"key": "day"}, {"var": "days"}]}, "bindings": {"days": [2]}}"#,
        ]
        for text in texts + texts { assertSame(c, text, "not cacheable") }
        XCTAssertTrue(fetch(c, texts[1]).contains("85"), "15 + 16 + 17 + 18 + 19: \(fetch(c, texts[1]))")
        XCTAssertEqual(count(c, texts[5]), "1")
        XCTAssertLessThanOrEqual(c.descriptorCache.count, 3, "one mark per text without its bindings")
    }

    func testAMigrationByAnotherContainerAddingAnAttribute() throws {
        let (_, c) = try notes()
        let text = fromDay("4")
        let before = fetch(c, text)
        XCTAssertEqual(count(c, text), "2")
        let migrated = try openFile(v2, path: storePath())
        XCTAssertEqual(migrated.schema.version, "2.0.0")
        // The old container's reads answer as before where the new layout still answers them.
        for from in ["4", "9"] { assertSame(c, fromDay(from), "after the migration") }
        XCTAssertEqual(fetch(c, text), before)
        // The new version's contexts read the new attribute, through their own cache.
        let n = try migrated.makeContext()
        let ranked = #"{"entity": "Note", "predicate": "$0.rank == r && $0.day >= from", "sortBy": [{"key": "day"}], "fetchLimit": 1, "bindings": {"r": 7, "from": 4}}"#
        XCTAssertEqual(fetch(n, ranked), #"[{"_id":"Note/5","_entity":"Note","title":"n4","day":4,"rank":7}]"#)
        XCTAssertEqual(fetch(n, ranked.replacingOccurrences(of: #""r": 7"#, with: #""r": 8"#)), "[]")
        XCTAssertTrue(fetch(c, ranked).contains("rank"), "version 1 has no rank: \(fetch(c, ranked))")
        assertSame(c, ranked, "a key path of the new version on the old container")
    }

    func testAMigrationByAnotherContainerRenamingAnAttribute() throws {
        let (_, c) = try notes()
        let text = #"{"entity": "Note", "predicate": "$0.title == t", "bindings": {"t": "n3"}}"#
        XCTAssertEqual(fetch(c, text), #"[{"_id":"Note/4","_entity":"Note","title":"n3","day":3}]"#)
        XCTAssertEqual(count(c, text), "1")
        let migrated = try openFile(renamed, path: storePath())
        // The old plan reads a column the new layout no longer has: the migration is reported,
        // as uncached, naming both versions; never a stale answer.
        for t in ["n3", "n4"] {
            let again = text.replacingOccurrences(of: "n3", with: t)
            assertSame(c, again, "after the rename")
            let f = fetch(c, again)
            XCTAssertTrue(f.hasPrefix("error incompatibleStore") && f.contains("1.0.0") && f.contains("2.0.0"), f)
        }
        let n = try migrated.makeContext()
        XCTAssertEqual(fetch(n, text.replacingOccurrences(of: "title", with: "heading")), #"[{"_id":"Note/4","_entity":"Note","heading":"n3","day":3}]"#)
        XCTAssertTrue(fetch(n, text).contains("/predicate"), "the new version has no title")
    }

    /// 100,000 descriptors on a store file (10,000 on PostgreSQL, whose round trips are slower:
    /// the cache sits above the store and is bounded the same way on both).
    func testTheCacheStaysAtItsBoundOverDistinctDescriptors() throws {
        let (_, c) = try notes()
        let n = onSQLite ? 100_000 : 10_000
        for i in 0..<n {
            let text = #"{"entity": "Note", "predicate": {"==": [{"key": "title"}, "n\#(i)"]}}"#
            let got = count(c, text)
            if i % 9_973 == 0 || i < 21 { XCTAssertEqual(got, i < 20 ? "1" : "0", text) }
            XCTAssertLessThanOrEqual(c.descriptorCache.count, DescriptorCache.maxEntries)
            XCTAssertLessThanOrEqual(c.descriptorCache.bytes, DescriptorCache.maxBytes)
        }
        XCTAssertEqual(c.descriptorCache.count, DescriptorCache.maxEntries, "full, not over")
        // The most recent ones are still there; the first ones were evicted and compile again.
        let hits = c.descriptorCache.hits
        XCTAssertEqual(count(c, #"{"entity": "Note", "predicate": {"==": [{"key": "title"}, "n\#(n - 1)"]}}"#), "0")
        XCTAssertEqual(c.descriptorCache.hits, hits + 1)
        XCTAssertEqual(count(c, #"{"entity": "Note", "predicate": {"==": [{"key": "title"}, "n3"]}}"#), "1")
        XCTAssertEqual(c.descriptorCache.hits, hits + 1)
    }

    /// A conjunction of seven comparisons of `day`, their operators the base-6 digits of `i`:
    /// a distinct shape, and so distinct SQL, for each `i` below 6⁷.
    private func shape(_ i: Int) -> String {
        let ops = ["==", "!=", "<", "<=", ">", ">="]
        var digits = i, terms: [String] = []
        for k in 0..<7 {
            terms.append(#"{"\#(ops[digits % 6])": [{"key": "day"}, \#(k + 3)]}"#)
            digits /= 6
        }
        return #"{"entity": "Note", "predicate": {"and": [\#(terms.joined(separator: ", "))]}}"#
    }

    /// How many statements the context's connection holds prepared, and the most it may.
    private func preparedStatements(_ c: ModelContext) throws -> (count: Int, bound: Int) {
        if let s = c.session as? SQLiteSession { return (s.connection.cachedStatements, Connection.statementCacheSize) }
        let s = try XCTUnwrap(c.session as? PostgresSession)
        return (s.connection.preparedCount, PGConnection.preparedLimit)
    }

    /// Descriptors of distinct shapes through `strata_fetch` (100,000 on a store file, 1,000 on
    /// PostgreSQL, past its bound of prepared statements) each compile to other SQL: the
    /// descriptor cache and the connection's prepared statements both stay at their bounds, and
    /// every answer is that of an uncached fetch.
    func testDistinctShapesLeaveTheStatementCacheAtItsBound() throws {
        let (_, c) = try notes()
        let n = onSQLite ? 100_000 : 1_000
        for i in 0..<n {
            let text = shape(i)
            let got = fetch(c, text)
            if i % 4_999 == 0 { XCTAssertEqual(got, uncachedFetch(c, text), text) }
            XCTAssertFalse(got.hasPrefix("error"), "\(text): \(got)")
            XCTAssertLessThanOrEqual(c.descriptorCache.count, DescriptorCache.maxEntries)
            let statements = try preparedStatements(c)
            XCTAssertLessThanOrEqual(statements.count, statements.bound)
        }
        XCTAssertEqual(c.descriptorCache.count, DescriptorCache.maxEntries, "full, not over")
        if onSQLite { XCTAssertEqual(try preparedStatements(c).count, Connection.statementCacheSize, "full, not over") }
        // An evicted statement is prepared again: the first shape still answers as uncached.
        XCTAssertEqual(fetch(c, shape(0)), uncachedFetch(c, shape(0)))
        XCTAssertEqual(fetch(c, shape(3)), uncachedFetch(c, shape(3)))
    }
}
