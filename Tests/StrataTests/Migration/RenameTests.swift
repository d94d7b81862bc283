import XCTest
@testable import Strata

/// Renames through `originalName`: how a refusal words them, and what a rename
/// costs (README, "Evolving the schema").
final class RenameTests: MigrationTestCase {
    static let v1 = #"""
        {"version": "1.0.0", "entities": [
          {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}],
           "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}],
           "indexes": [["start_date"]]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]}]}
        """#

    /// Version 2: `Trip` renamed `Voyage`, `start_date` renamed `startDate`.
    static let v2 = v1
        .replacingOccurrences(of: #"{"name": "Trip", "attributes""#, with: #"{"name": "Voyage", "originalName": "Trip", "attributes""#)
        .replacingOccurrences(of: #""destination": "Trip""#, with: #""destination": "Voyage""#)
        .replacingOccurrences(of: #"{"name": "start_date", "type": "date", "optional": true}"#,
                              with: #"{"name": "startDate", "originalName": "start_date", "type": "date", "optional": true}"#)
        .replacingOccurrences(of: #"[["start_date"]]"#, with: #"[["startDate"]]"#)
        .replacingOccurrences(of: "1.0.0", with: "2.0.0")

    // MARK: Words (issue item 17)

    func testARefusedRenameIsNamedAsARename() throws {
        try makeStore(Self.v1, [("Trip", #"{"name": "Oslo"}"#)])
        let e = assertError(.incompatibleStore) { try openFile(Self.v2, path: storePath()) { $0.automaticMigration = false } }
        let message = e?.message ?? ""
        XCTAssertTrue(message.contains("entity 'Trip' renamed to 'Voyage'"), message)
        XCTAssertTrue(message.contains("entity 'Voyage': attribute 'start_date' renamed to 'startDate'"), message)
        XCTAssertFalse(message.contains("removed"), message)
        XCTAssertFalse(message.contains("added"), message)
        // Item's link now points at Voyage: the same link, renamed with its destination.
        XCTAssertFalse(message.contains("destination changed"), message)
        XCTAssertFalse(message.contains("indexes changed"), message)
    }

    func testRenamesAreOneChangeEach() throws {
        let changes = SchemaDiff.changes(from: try makeSchema(Self.v1), to: try makeSchema(Self.v2))
        XCTAssertEqual(changes, [.entityRenamed(entity: "Voyage", from: "Trip"),
                                 .attributeRenamed(entity: "Voyage", attribute: "startDate", from: "start_date")])
        // A relationship renamed through originalName.
        let linkRenamed = Self.v1.replacingOccurrences(of: #"{"name": "trip", "destination": "Trip", "optional": true}"#,
                                                       with: #"{"name": "journey", "originalName": "trip", "destination": "Trip", "optional": true}"#)
            .replacingOccurrences(of: #""inverse": "trip""#, with: #""inverse": "journey""#)
        let words = SchemaDiff.describe(from: try makeSchema(Self.v1), to: try makeSchema(linkRenamed))
        XCTAssertTrue(words.contains("entity 'Item': relationship 'trip' renamed to 'journey'"), "\(words)")
        XCTAssertFalse(words.contains { $0.contains("removed") || $0.contains("added") }, "\(words)")
        // originalName naming nothing of the old version is no rename: the old one is removed.
        let unrelated = Self.v1.replacingOccurrences(of: #"{"name": "title", "type": "string"}"#,
                                                     with: #"{"name": "label", "originalName": "caption", "type": "string"}"#)
        XCTAssertEqual(SchemaDiff.describe(from: try makeSchema(Self.v1), to: try makeSchema(unrelated)),
                       ["entity 'Item': attribute 'title' removed", "entity 'Item': attribute 'label' added"])
    }

    // MARK: Cost (issue item 15)

    /// The SQL of each step of migrating v1 to `to`.
    func stepSQL(_ to: String) throws -> [(kind: String, sql: [String])] {
        let steps = try JSONValue.parse(ModelContainer.inferMigration(from: Self.v1, to: to))
        guard case .array(let list)? = steps["steps"] else { XCTFail("steps: \(steps)"); return [] }
        return list.map { s in (s["kind"]?.stringValue ?? "", (s["sql"]?.array ?? []).compactMap(\.stringValue)) }
    }

    func testAnAttributeRenameTouchesNoRow() throws {
        let onlyAttribute = Self.v1
            .replacingOccurrences(of: #"{"name": "start_date", "type": "date", "optional": true}"#,
                                  with: #"{"name": "startDate", "originalName": "start_date", "type": "date", "optional": true}"#)
            .replacingOccurrences(of: #"[["start_date"]]"#, with: #"[["startDate"]]"#)
        let sql = try stepSQL(onlyAttribute).flatMap(\.sql)
        XCTAssertEqual(sql, [#"ALTER TABLE "Trip" RENAME COLUMN "start_date" TO "startDate""#], "\(sql)")
    }

    /// What README says: an entity rename renames the table in place and rewrites the
    /// `_entity` column of that entity's rows in one UPDATE (no copy, no other table).
    func testAnEntityRenameRewritesOnlyItsRowsEntityNames() throws {
        let steps = try stepSQL(Self.v2)
        let updates = steps.flatMap(\.sql).filter { $0.hasPrefix("UPDATE") }
        XCTAssertEqual(updates.count, 1, "\(steps)")
        XCTAssertTrue(updates.first?.contains(#"SET "_entity""#) == true, "\(updates)")
        XCTAssertFalse(steps.contains { $0.kind == "copyRows" }, "\(steps)")
        XCTAssertTrue(steps.flatMap(\.sql).contains(#"ALTER TABLE "Trip" RENAME TO "_strata_new_Voyage""#), "\(steps)")
        // And the migrated store reads under the new names, the link kept.
        let ids = try makeStore(Self.v1, [("Trip", #"{"name": "Oslo", "start_date": 5, "items": [{"title": "fjord"}]}"#)])
        let container = try openFile(Self.v2, path: storePath())
        let voyage = try XCTUnwrap(try fetch(container.makeContext(), "Voyage").first)
        XCTAssertEqual(voyage["_id"], .string(ids[0].replacingOccurrences(of: "Trip/", with: "Voyage/")))
        XCTAssertNotEqual(voyage["startDate"] ?? .null, .null)
        XCTAssertEqual(voyage["items"]?.array?.count, 1)
    }
}
