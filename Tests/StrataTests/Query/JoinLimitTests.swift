import XCTest
@testable import Strata

/// SQLite joins at most 64 tables in one SELECT. Key paths through to-one
/// relationships join a table each: a descriptor that would need more than
/// Strata allows (32) is STRATA_ERR_INVALID naming the key path, never a
/// SQLite failure, and every one within it runs and answers rightly.
final class JoinLimitTests: StoreTestCase {
    static let chain = Fixtures.schema(entity: "Node", attributes: #"{"name": "name", "type": "string"}"#,
                                       relationships: #"{"name": "next", "destination": "Node", "optional": true, "inverse": "previous"}, {"name": "previous", "destination": "Node", "optional": true, "inverse": "next"}"#)

    func keyPath(_ hops: Int) -> String { String(repeating: "next.", count: hops) + "name" }

    func testKeyPathsWithinTheLimitWorkAndBeyondAreInvalid() throws {
        let context = try openInMemory(Self.chain).makeContext()
        // A chain of 70 nodes: node i links to node i+1.
        var next = try context.insert(entity: "Node", json: #"{"name": "n69"}"#)
        for i in stride(from: 68, through: 0, by: -1) { next = try context.insert(entity: "Node", json: #"{"name": "n\#(i)", "next": "\#(next)"}"#) }
        try context.save()
        var lastOK = 0
        for hops in [1, 10, 20, 30, 31, 32, 33, 40, 63, 64, 65, 69, 100] {
            let text = #"{"entity": "Node", "predicate": "$0.\#(keyPath(hops)) == \"n\#(hops)\"", "sortBy": [{"key": "name"}]}"#
            do {
                let d = try Query.descriptor(text, context.schema)
                let names = try Query.objects(context, d).map { $0["name"]?.stringValue ?? "?" }
                XCTAssertEqual(names, hops < 70 ? ["n0"] : [], "\(hops) hops")
                lastOK = hops
            } catch let e as StrataError {
                XCTAssertEqual(e.code, .invalid, "\(hops) hops: \(e.message)")
                XCTAssertGreaterThan(hops, 25)
            }
        }
        XCTAssertGreaterThanOrEqual(lastOK, 30)
        // Sort keys join too; together with the predicate they stay within the limit or are invalid.
        let many = (1...20).map { #"{"key": "\#(keyPath($0))"}"# }.joined(separator: ", ")
        let text = #"{"entity": "Node", "predicate": "$0.\#(keyPath(20)) == \"n20\"", "sortBy": [\#(many)]}"#
        do {
            let d = try Query.descriptor(text, context.schema)
            XCTAssertEqual(try Query.objects(context, d).count, 1)
        } catch let e as StrataError {
            XCTAssertEqual(e.code, .invalid, e.message)
        }
    }
}
