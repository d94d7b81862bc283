import XCTest
@testable import Strata

/// Change rows: objects changed one after another, of one entity and kind, with the
/// same changed attributes and no values, share a row; they read back one by one.
final class HistoryRunTests: HistoryTestCase {
    private let schema = Fixtures.schema(attributes: #"{"name": "name", "type": "string"}, {"name": "n", "type": "int"}"#)

    func testScatteredUpdatesShareRowsAndReadBackInOrder() throws {
        forEachHistorySetup {
            let path = storePath()
            let c = try openFile(schema, path: path)
            let ctx = try c.makeContext()
            let items = (0..<10_000).map { #"{"name": "t\#($0)", "n": \#($0)}"# }.joined(separator: ",")
            var array = "[\(items)]"
            let ids = try array.withUTF8 { try ctx.insertMany(entity: "Thing", json: $0) }
            try ctx.save()
            XCTAssertEqual(try rowCount(path, "strata_history_change"), 3, "consecutive inserts: 4,096 to a row")

            // Every other object, in reverse order: no two keys are neighbours.
            let updated = ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).reversed()
            for id in updated { try ctx.update(id: id.description, patch: #"{"n": -1}"#) }
            try ctx.save()
            // 5,000 keys, at most 4,096 listed per row.
            XCTAssertEqual(try rowCount(path, "strata_history_change"), 5)

            let out = try parse(Array(try ctx.fetchHistory(#"{"sortBy": [{"key": "token", "order": "reverse"}], "fetchLimit": 1}"#).utf8))
            guard case .array(let transactions) = out, case .array(let changes)? = transactions.first?["changes"] else {
                return XCTFail("expected one transaction with changes: \(out.text.prefix(200))")
            }
            XCTAssertEqual(changes.map { $0["id"] }, updated.map { JSONValue.string($0.description) })
            XCTAssertEqual(Set(changes.map { $0["attributes"]?.text }), [#"["n"]"#])
            XCTAssertEqual(Set(changes.map { $0["kind"]?.text }), [#""update""#])
        }
    }
}
