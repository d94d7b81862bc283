import XCTest
@testable import Strata

/// A schema's version hashes are what every store written before keeps in its metadata: the
/// same schema must hash to the same values in every release (else each store would read as
/// damaged or as another version). Pinned here for a schema with every part the hash covers:
/// a hierarchy, unique, indexed, searchable, transient and hash-modified attributes, to-one and
/// to-many relationships with and without inverses, several unique constraints and indexes
/// (their order in the text), and entity names that sort differently with and without `:hash`.
final class VersionHashTests: XCTestCase {
    static let schema = """
        {"version": "3.1", "entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string", "unique": true},
        {"name": "bio", "type": "string", "optional": true, "searchable": true}, {"name": "age", "type": "int", "index": true, "hashModifier": "v2"},
        {"name": "nick", "type": "string", "transient": true, "optional": true}, {"name": "code", "type": "string"}, {"name": "zone", "type": "string"}],
        "relationships": [{"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner"}, {"name": "tags", "destination": "Tag", "toMany": true}],
        "uniqueConstraints": [["zone", "code"], ["code", "age"]], "indexes": [["zone", "age"], ["code"]]},
        {"name": "Employee", "superentity": "Person", "attributes": [{"name": "salary", "type": "double", "optional": true}]},
        {"name": "Pet", "attributes": [{"name": "kind", "type": "string"}], "relationships": [{"name": "owner", "destination": "Person", "optional": true, "inverse": "pets"}]},
        {"name": "Tag", "attributes": [{"name": "label", "type": "string"}]}]}
        """

    func testVersionHashesAreThoseStoresKeep() throws {
        let schema = try SchemaDecoder.decode(Self.schema)
        XCTAssertEqual(schema.versionHash, "38633e977929d8b3b98ebf756809b1344d400b546d7bf9480fd4c576071cf632")
        let hashes = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, $0.versionHash) })
        XCTAssertEqual(hashes, [
            "Employee": "d837a6ab808916a3ffeb2958920c44eedc0c608f9050dae84b6d5e814388ab2b",
            "Person": "2a58b497d390522d168c60ac465bfce57533b7387ed0833729b97fb2a4c29cf4",
            "Pet": "c4cd3ec55d8d58b08953b91491c846dd678aa9ae9971612f65d8fc1339607dca",
            "Tag": "ad0ae819e9e5db63cb612460e7c0f3451d6cf5489661e9e35169e5ea5769f8cc",
        ])
    }

    /// Entity names where one is another's prefix followed by a digit: `A1:…` sorts before `A:…`
    /// although `A` sorts before `A1` (the schema hash is over the `name:hash` texts in order).
    func testTheSchemaHashOrdersNameAndHashTexts() throws {
        let schema = try SchemaDecoder.decode("""
            {"version": "1", "entities": [{"name": "A", "attributes": [{"name": "x", "type": "int"}]},
            {"name": "A1", "attributes": [{"name": "y", "type": "string"}]}]}
            """)
        let texts = schema.entities.map { $0.name + ":" + $0.versionHash }.sorted()
        XCTAssertTrue(texts[0].hasPrefix("A1:"))
        XCTAssertEqual(schema.versionHash, SHA256.hex(texts[0] + ";" + texts[1]))
    }
}
