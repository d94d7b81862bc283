import XCTest
@testable import Strata

/// Lightweight migrations keep full-text indexes right: turning `searchable` on and off,
/// renaming the attribute (`originalName`), removing it, and changes of the table around it.
final class SearchMigrationTests: MigrationTestCase {
    private static let note = #"{"name": "note", "type": "string", "optional": true}"#

    /// Item with these attributes (a title declaration and `note`, unless others are given).
    private func itemSchema(_ version: String, _ title: String, attributes: String? = nil) -> String {
        schema(version, #"{"name": "Item", "attributes": [\#(attributes ?? title + ", " + Self.note)]}"#)
    }

    private static let titles = ["Zürich Old Town", "zurich airport", "Café crème", "東京タワー", "Travel light"]

    private func makeItems(_ titleDeclaration: String) throws -> [String] {
        try makeStore(itemSchema("1.0.0", titleDeclaration), Self.titles.map { ("Item", #"{"title": \#(JSONValue.string($0).text)}"#) })
    }

    /// The titles `matches` finds for `search` on attribute `key`, sorted.
    private func found(_ container: ModelContainer, _ key: String, _ search: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let c = try container.makeContext()
        let d = try Query.descriptor(#"{"entity": "Item", "predicate": {"matches": [{"key": "\#(key)"}, \#(JSONValue.string(search).text)]}}"#, c.schema)
        return try Query.objects(c, d).map { $0[key]?.stringValue ?? "nil" }.sorted()
    }

    /// The store answers every search as ``TextSearch`` does over the stored values, after a save too.
    private func checkAll(_ container: ModelContainer, _ key: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let c = try container.makeContext()
        _ = try c.insert(entity: "Item", json: #"{"\#(key)": "zürich zoo"}"#)
        try c.save()
        let values = Self.titles + ["zürich zoo"]
        for q in ["zurich", "zur*", "creme", "東", "travel light", "nothing"] {
            XCTAssertEqual(try found(container, key, q), values.filter { TextSearch.matches($0, q) }.sorted(), "\(key) \(q)", file: file, line: line)
        }
        XCTAssertEqual(try found(container, key, "zurich").count, 3, file: file, line: line)
    }

    func testSearchableTurnedOnAndOff() throws {
        try makeItems(#"{"name": "title", "type": "string"}"#)
        let on = try openFile(itemSchema("2.0.0", #"{"name": "title", "type": "string", "searchable": true}"#), path: storePath())
        try checkAll(on, "title")
        let off = try openFile(itemSchema("3.0.0", #"{"name": "title", "type": "string"}"#), path: storePath())
        let c = try off.makeContext()
        XCTAssertThrowsError(try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(\"x\")"}"#, c.schema))
        if onSQLite { XCTAssertFalse(try tableNames(storePath()).contains("Item.search(title)")) }
        XCTAssertEqual(try count(c, "Item"), 6)
        // On again: the index is built from the values saved while it was off.
        _ = try c.insert(entity: "Item", json: #"{"title": "Zurich again"}"#)
        try c.save()
        let again = try openFile(itemSchema("4.0.0", #"{"name": "title", "type": "string", "searchable": true}"#), path: storePath())
        XCTAssertEqual(try found(again, "title", "zurich"), ["Zurich again", "zurich airport", "zürich zoo", "Zürich Old Town"].sorted())
    }

    func testTheIndexSurvivesARenameAndGoesWithARemoval() throws {
        try makeItems(#"{"name": "title", "type": "string", "searchable": true}"#)
        let renamed = try openFile(itemSchema("2.0.0", #"{"name": "heading", "originalName": "title", "type": "string", "searchable": true}"#), path: storePath())
        try checkAll(renamed, "heading")
        if onSQLite {
            let tables = try tableNames(storePath())
            XCTAssertTrue(tables.contains("Item.search(heading)") && !tables.contains("Item.search(title)"), "\(tables)")
        }
        // A change elsewhere in the table (a column removed: SQLite rebuilds the table).
        let rebuilt = try openFile(itemSchema("3.0.0", "", attributes: #"{"name": "heading", "type": "string", "searchable": true}"#), path: storePath())
        XCTAssertEqual(try found(rebuilt, "heading", "zurich").count, 3)
        // Removed: the index goes with it, and the store opens clean again.
        let removed = try openFile(itemSchema("4.0.0", "", attributes: Self.note), path: storePath())
        XCTAssertEqual(try count(removed.makeContext(), "Item"), 6)
        let objects = try schemaObjects()
        XCTAssertFalse(objects.contains { $0.contains("search(") }, "\(objects)")
        _ = try openFile(itemSchema("4.0.0", "", attributes: Self.note), path: storePath())
    }

    func testARequiredValueFilledByAMigrationIsSearchable() throws {
        try makeItems(#"{"name": "title", "type": "string", "optional": true, "searchable": true}"#)
        let c0 = try openFile(itemSchema("1.0.0", #"{"name": "title", "type": "string", "optional": true, "searchable": true}"#), path: storePath()).makeContext()
        _ = try c0.insert(entity: "Item", json: #"{"note": "untitled"}"#)
        try c0.save()
        let required = try openFile(itemSchema("2.0.0", #"{"name": "title", "type": "string", "default": "Untitled zurich", "searchable": true}"#), path: storePath())
        XCTAssertEqual(try found(required, "title", "untitled"), ["Untitled zurich"])
        XCTAssertEqual(try found(required, "title", "zurich").count, 3)
    }
}
