import Foundation
import XCTest
@testable import Strata

/// Graphs deeper than a call stack: nested input at the JSON nesting limit,
/// and cascades down long chains, on threads with small stacks.
final class DeepGraphTests: StoreTestCase {
    static let schema = #"""
        {"version": "1", "entities": [
          {"name": "Node", "attributes": [{"name": "n", "type": "int"}],
           "relationships": [{"name": "next", "destination": "Node", "optional": true, "deleteRule": "cascade", "inverse": "previous"},
                             {"name": "previous", "destination": "Node", "optional": true}]}]}
        """#

    /// Runs `body` on a thread with a 512 KiB stack (the default of secondary threads).
    func onSmallStack(kilobytes: Int = 512, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let t = Thread { body(); done.signal() }
        t.stackSize = kilobytes << 10
        t.start()
        XCTAssertEqual(done.wait(timeout: .now() + 300), .success)
    }

    func testNestedObjectsAtTheLimitAndBeyond() throws {
        let container = UncheckedBox(try openFile(Self.schema))
        let result = ConcurrencyTests.Failures()
        let limit = ModelContext.maxNestedObjects
        onSmallStack {
            do {
                let context = try container.value.makeContext()
                func chain(_ depth: Int) -> String {
                    var json = #"{"n": \#(depth)}"#
                    for n in stride(from: depth - 1, through: 1, by: -1) { json = #"{"n": \#(n), "next": \#(json)}"# }
                    return json
                }
                _ = try context.insert(entity: "Node", json: chain(limit))
                try context.save()
                // Deeper input is a clean error, never a crash.
                for depth in [limit + 1, 2 * limit] {
                    do {
                        _ = try context.insert(entity: "Node", json: chain(depth))
                        result.add("no error at depth \(depth)")
                    } catch let e as StrataError {
                        if e.code != .invalid { result.add("wrong error \(e)") }
                    }
                    if context.hasChanges { result.add("changes left after a failed insert") }
                }
                // Through an update too.
                let root = try context.insert(entity: "Node", json: #"{"n": 0}"#)
                try context.save()
                do {
                    try context.update(id: root.description, patch: #"{"next": \#(chain(limit + 1))}"#)
                    result.add("no error from update")
                } catch let e as StrataError {
                    if e.code != .invalid { result.add("wrong error \(e)") }
                }
            } catch {
                result.add("\(error)")
            }
        }
        XCTAssertEqual(result.items, [])
        XCTAssertEqual(try rowCount(storePath(), "Node"), Int64(limit + 1))
    }

    func testObjectsAtTheJSONNestingLimit() throws {
        // 255 nested objects: the insert stops at its own limit. (Skipping that much JSON
        // recursively needs more than 512 KiB of stack in a debug build, hence 2 MiB here.)
        let container = UncheckedBox(try openFile(Self.schema))
        let result = ConcurrencyTests.Failures()
        onSmallStack(kilobytes: 2048) {
            do {
                let context = try container.value.makeContext()
                var json = #"{"n": 255}"#
                for n in stride(from: 254, through: 1, by: -1) { json = #"{"n": \#(n), "next": \#(json)}"# }
                _ = try context.insert(entity: "Node", json: json)
                result.add("no error")
            } catch let e as StrataError {
                if e.code != .invalid { result.add("wrong error \(e)") }
            } catch {
                result.add("\(error)")
            }
        }
        XCTAssertEqual(result.items, [])
        XCTAssertEqual(try rowCount(storePath(), "Node"), 0)
    }

    func testCascadeDownALongChain() throws {
        let container = try openFile(Self.schema)
        let context = try container.makeContext()
        let count = 20_000
        var ids: [ObjectID] = []
        ids.append(try context.insert(entity: "Node", json: #"{"n": 0}"#))
        for n in 1..<count {
            ids.append(try context.insert(entity: "Node", json: #"{"n": \#(n), "previous": "\#(ids[n - 1])"}"#))
        }
        try context.save()
        XCTAssertEqual(try rowCount(storePath(), "Node"), Int64(count))
        let box = UncheckedBox(context)
        let first = ids[0].description
        let result = ConcurrencyTests.Failures()
        onSmallStack {
            do {
                try box.value.delete(id: first)
                try box.value.save()
            } catch {
                result.add("\(error)")
            }
        }
        XCTAssertEqual(result.items, [])
        XCTAssertEqual(try rowCount(storePath(), "Node"), 0)
    }
}
