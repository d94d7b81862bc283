import XCTest
@testable import Strata

/// Stores with history: a schema with every kind of change, and readers of
/// the history's JSON.
class HistoryTestCase: MigrationTestCase {
    /// The PostgreSQL store keeps no history yet.
    override class var runsOnPostgreSQL: Bool { false }

    /// Trips (name and start preserved on deletion, name with historyValues), their
    /// items (cascade), lodgings (nullify), guides (deny) and tags (a required trip).
    static let schemaJSON = #"""
    {"version": "1.0.0", "entities": [
      {"name": "Trip",
       "attributes": [
         {"name": "name", "type": "string", "preserveValueOnDeletion": true, "historyValues": true},
         {"name": "start", "type": "date", "optional": true, "preserveValueOnDeletion": true},
         {"name": "notes", "type": "string", "optional": true}],
       "relationships": [
         {"name": "items", "destination": "Item", "toMany": true, "deleteRule": "cascade", "inverse": "trip"},
         {"name": "lodging", "destination": "Lodging", "optional": true, "deleteRule": "nullify", "inverse": "trip"}],
       "uniqueConstraints": [["name"]]},
      {"name": "BusinessTrip", "superentity": "Trip",
       "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
      {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
      {"name": "Lodging", "attributes": [{"name": "place", "type": "string"}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
      {"name": "Guide", "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "deleteRule": "deny"}]},
      {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": false}]}
    ]}
    """#

    func openHistory(path: String? = nil, _ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> ModelContainer {
        try openFile(HistoryTestCase.schemaJSON, path: path, configure)
    }

    /// The transactions a descriptor selects.
    func history(_ context: ModelContext, _ descriptor: String = "{}", file: StaticString = #filePath, line: UInt = #line) throws -> [JSONValue] {
        try XCTUnwrap(JSONValue.parse(context.fetchHistory(descriptor)).array, file: file, line: line)
    }

    /// The tokens of the transactions a descriptor selects.
    func tokens(_ context: ModelContext, _ descriptor: String = "{}") throws -> [String] {
        try history(context, descriptor).compactMap { $0["token"]?.stringValue }
    }

    /// A change as one line: `kind id [attributes] tombstone=… old=… new=…`
    /// (the entity shown only when it is not the identifier's).
    func line(_ c: JSONValue) -> String {
        var s = "\(c["kind"]?.stringValue ?? "?") \(c["id"]?.stringValue ?? "?")"
        let idEntity = c["id"]?.stringValue?.split(separator: "/").first.map(String.init)
        if c["entity"]?.stringValue != idEntity { s += " entity=\(c["entity"]?.text ?? "nil")" }
        if let a = c["attributes"]?.array { s += " [" + a.compactMap(\.stringValue).joined(separator: ",") + "]" }
        for k in ["tombstone", "old", "new"] { if let v = c[k] { s += " \(k)=\(v.text)" } }
        return s
    }

    /// The changes of a transaction, one line each, in order.
    func lines(_ t: JSONValue) -> [String] { (t["changes"]?.array ?? []).map(line) }

    func sequence(_ token: String) -> Int64 { HistoryToken.parse(token)?.sequence ?? -1 }

    /// Runs SQL on the store file with a connection of its own (a damaged or foreign writer).
    func writeRaw(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws {
        let c = try Connection(path: path, readOnly: false, create: false)
        try c.execute(sql, args)
    }
}
