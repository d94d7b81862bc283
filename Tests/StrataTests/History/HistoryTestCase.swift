import XCTest
@testable import Strata

/// Stores with history: a schema with every kind of change, and readers of
/// the history's JSON.
///
/// A test runs its body once per store setup with ``forEachHistorySetup(_:file:line:_:)``:
/// a SQLite file, then a PostgreSQL store when `STRATA_TEST_POSTGRES` names a server.
/// During a run, `storePath(name)` names that setup's store (for PostgreSQL a fresh schema
/// per name and run), and `rows`, `writeRaw` and `tableNames` work on it; failures of the
/// PostgreSQL run say `[postgres]`.
class HistoryTestCase: MigrationTestCase {
    /// History tests choose their setups themselves (``forEachHistorySetup(_:file:line:_:)``),
    /// not through the migration tests' second run.
    override class var runsOnPostgreSQL: Bool { false }

    /// The setups history tests run on: the file setup and, when available, PostgreSQL.
    static var historySetups: [StoreSetup] { StoreSetup.allCases.filter { $0 == .file || $0 == .postgres } }

    /// The setup of the current run.
    private(set) var setup: StoreSetup = .file
    private var postgresStores: [String: String] = [:]
    var onPostgres: Bool { setup == .postgres }

    /// Runs `body` once per setup of `setups` that is available (each with stores of its own);
    /// an error ends that run only.
    func forEachHistorySetup(_ setups: [StoreSetup] = HistoryTestCase.historySetups, file: StaticString = #filePath, line: UInt = #line,
                             _ body: () throws -> Void) {
        defer { setup = .file }
        for s in setups where HistoryTestCase.historySetups.contains(s) {
            setup = s
            postgresStores = [:]
            do { try body() } catch { XCTFail("unexpected error: \(error)", file: file, line: line) }
        }
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        super.recordFailure(withDescription: (onPostgres ? "[postgres] " : "") + description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// True (the run returns) on `setup`, for a test that cannot hold there, and why.
    func skipped(on setup: StoreSetup, _ why: String) -> Bool { self.setup == setup }

    /// The SQL of a raw edit for this run's store.
    func sql(_ sqlite: String, postgres: String) -> String { onPostgres ? postgres : sqlite }

    override func storePath(_ name: String = "store") -> String {
        guard onPostgres else { return super.storePath(name) }
        if let uri = postgresStores[name] { return uri }
        guard let uri = PostgresTestServer.freshStore(name) else { preconditionFailure("no PostgreSQL server") }
        postgresStores[name] = uri
        return uri
    }

    override func rows(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws -> [[SQLValue]] {
        guard path.hasPrefix("postgresql:") else { return try super.rows(path, sql, args) }
        let rows = try PGConnection(uri: path).query(HistoryTestCase.postgresParameters(sql), args)
        return (0..<rows.count).map { r in (0..<rows.columns).map { rows.value(r, $0) } }
    }

    override func tableNames(_ path: String) throws -> Set<String> {
        guard path.hasPrefix("postgresql:") else { return try super.tableNames(path) }
        return Set(try rows(path, "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()").compactMap(\.first?.text))
    }

    /// `?1`, `?2` … as PostgreSQL's `$1`, `$2` ….
    static func postgresParameters(_ sql: String) -> String {
        var out = ""
        var chars = sql[...]
        while let c = chars.first {
            chars = chars.dropFirst()
            if c == "?", let d = chars.first, d.isNumber { out.append("$") } else { out.append(c) }
        }
        return out
    }

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

    /// Runs SQL on the store with a connection of its own (a damaged or foreign writer).
    func writeRaw(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws {
        if path.hasPrefix("postgresql:") {
            let c = try PGConnection(uri: path)
            if args.isEmpty { try c.execute(script: sql) } else { try c.execute(HistoryTestCase.postgresParameters(sql), args) }
            return
        }
        let c = try Connection(path: path, readOnly: false, create: false)
        try c.execute(sql, args)
    }
}
