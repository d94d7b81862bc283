import XCTest
@testable import Strata

final class HistorySmokeTests: StoreTestCase {
    func testInsertUpdateDeleteRecorded() throws {
        let c = try openFile()
        let ctx = try c.makeContext()
        ctx.author = "app"
        ctx.name = "main"
        let id = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": 0, "endDate": 10, "bucketList": [{"title": "Louvre"}]}"#)
        try ctx.save()
        try ctx.update(id: id.description, patch: #"{"name": "Lyon"}"#)
        try ctx.save()
        try ctx.delete(id: id.description)
        try ctx.save()
        let out = try ctx.fetchHistory("{}")
        print(out)
        let latest = try ctx.fetchHistory(#"{"sortBy": [{"key": "transactionIdentifier", "order": "reverse"}], "fetchLimit": 1}"#)
        print(latest)
        print(String(decoding: try "{\"sortBy\": [{\"key\": \"transactionIdentifier\", \"order\": \"reverse\"}], \"fetchLimit\": 1}".withUTF8Copy { try ctx.explainHistory($0) }, as: UTF8.self))
    }
}

extension String {
    func withUTF8Copy<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        var s = self
        return try s.withUTF8(body)
    }
}

final class HistoryEntityNamesTests: StoreTestCase {
    /// The session's second listing as written: `entityNames.contains($0.changedPersistentIdentifier.entityName)`
    /// with `entityNames` a bound array (the parser reads a variable's contains(x) as a string test).
    func testEntityNamesContainsBinding() throws {
        let c = try openFile()
        let ctx = try c.makeContext()
        let id = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": 0, "endDate": 10, "bucketList": [{"title": "Louvre"}]}"#)
        try ctx.save()
        try ctx.update(id: id.description, patch: #"{"name": "Lyon"}"#)
        try ctx.save()
        func tokens(_ names: [String]) throws -> Int {
            let list = names.map { "\"\($0)\"" }.joined(separator: ", ")
            let out = try ctx.fetchHistory(#"{"predicate": "$0.changes.contains { entityNames.contains($0.changedPersistentIdentifier.entityName) }", "#
                                           + #""bindings": {"entityNames": ["# + list + "]}}")
            return out.components(separatedBy: "\"token\":").count - 1
        }
        XCTAssertEqual(try tokens(["BucketListItem"]), 1)   // the first save only
        XCTAssertEqual(try tokens(["Trip"]), 2)
        XCTAssertEqual(try tokens([]), 0)
        XCTAssertThrowsError(try ctx.fetchHistory(#"{"predicate": "$0.changes.contains { entityNames.contains($0.author) }", "bindings": {"entityNames": ["Trip"]}}"#))
    }
}
