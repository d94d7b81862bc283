import Foundation
import XCTest
@testable import Strata

/// A cursor reads the snapshot of the moment strata_fetch_cursor returns, not of its first batch.
final class CursorSnapshotTests: StoreTestCase {
    private let note = #"{"version": "1.0.0", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}]}]}"#

    func testSavesAfterTheCursorOpensAreNotInIt() {
        forEachSetup(note, StoreSetup.allCases.filter { $0 != .inMemory }) { h in
            for pending in [false, true] {
                let reader = h.context
                let writer = try h.container.makeContext()
                _ = try writer.delete(entity: "Note", predicate: nil)
                try writer.save()
                _ = try writer.insert(entity: "Note", json: #"{"title": "before"}"#)
                try writer.save()
                if pending { _ = try reader.insert(entity: "Note", json: #"{"title": "mine"}"#) }
                let cursor = try reader.cursor(FetchDescriptor(entity: XCTUnwrap(reader.schema.entity(named: "Note"))))
                _ = try writer.insert(entity: "Note", json: #"{"title": "after"}"#)
                try writer.save()
                // The reader's context stays free while its cursor is open.
                XCTAssertEqual(try reader.fetchCount(FetchDescriptor(entity: XCTUnwrap(reader.schema.entity(named: "Note")))), pending ? 3 : 2)
                let batch = try parse(cursor.next(100).bytes).array ?? []
                XCTAssertEqual(Set(batch.compactMap { $0["title"]?.stringValue }), pending ? ["before", "mine"] : ["before"], "pending: \(pending)")
                XCTAssertEqual(try parse(cursor.next(100).bytes).array, [])
                cursor.close()
            }
        }
    }
}
