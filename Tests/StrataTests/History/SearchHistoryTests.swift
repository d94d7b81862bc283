import XCTest
@testable import Strata

/// A change of a searchable attribute is recorded as any update is (its full-text index is
/// storage, not history).
final class SearchHistoryTests: HistoryTestCase {
    static let schema = #"""
        {"version": "1", "entities": [{"name": "Item", "attributes": [
           {"name": "title", "type": "string", "searchable": true, "historyValues": true, "preserveValueOnDeletion": true},
           {"name": "note", "type": "string", "default": ""}]}]}
        """#

    func testChangesOfASearchableAttributeAreRecordedLikeAnyUpdate() throws {
        forEachHistorySetup {
            let ctx = try openFile(Self.schema, path: storePath("search")).makeContext()
            let item = try ctx.insert(entity: "Item", json: #"{"title": "Zürich walk"}"#)
            try ctx.save()
            try ctx.update(id: item.description, patch: #"{"title": "Geneva lake"}"#)
            try ctx.save()
            try ctx.update(id: item.description, patch: #"{"note": "x"}"#)
            try ctx.save()
            try ctx.delete(id: item.description)
            try ctx.save()
            let all = try history(ctx)
            XCTAssertEqual(all.count, 4)
            XCTAssertEqual(lines(all[1]), [#"update Item/1 [title] old={"title":"Zürich walk"} new={"title":"Geneva lake"}"#])
            XCTAssertEqual(lines(all[2]), ["update Item/1 [note]"])
            XCTAssertEqual(lines(all[3]), [#"delete Item/1 tombstone={"title":"Geneva lake"}"#])
        }
    }
}
