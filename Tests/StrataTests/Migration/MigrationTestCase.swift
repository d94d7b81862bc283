import XCTest
@testable import Strata

/// The stores a migration test runs on.
enum MigrationStore: String {
    /// A store file.
    case sqlite
    /// A fresh schema of the PostgreSQL server `STRATA_TEST_POSTGRES` names.
    case postgres
}

/// Stores made at one schema version, opened at another. Every test runs once per
/// store: on a SQLite file, then (when `STRATA_TEST_POSTGRES` names a server) on a
/// PostgreSQL store, where `storePath(_:)` is a fresh schema of that server and the
/// inspection helpers below read its catalog. A failure on PostgreSQL is marked
/// `[postgres]`.
class MigrationTestCase: StoreTestCase {
    /// Whether the class's tests run on PostgreSQL too (not those of history, which the
    /// PostgreSQL store does not keep yet).
    class var runsOnPostgreSQL: Bool { true }

    /// The store the running test is on.
    private(set) var store: MigrationStore = .sqlite
    var onSQLite: Bool { store == .sqlite }
    /// The PostgreSQL locations of this run, by store name.
    private var locations: [String: String] = [:]

    /// The test's body (XCTest runs it once per test case: the second run calls it again).
    private let body: XCTestCaseClosure

    required init(name: String, testClosure: @escaping XCTestCaseClosure) {
        body = testClosure
        super.init(name: name, testClosure: testClosure)
    }

    /// Runs the test as XCTest does, on SQLite; then, on PostgreSQL, set up again, the body,
    /// torn down again (XCTest's own sequence runs once per test case).
    override func invokeTest() {
        super.invokeTest()
        guard Self.runsOnPostgreSQL, PostgresTestServer.uri != nil else { return }
        store = .postgres
        locations = [:]
        defer { store = .sqlite }
        do {
            try setUpWithError()
            setUp()
            do { try body(self) } catch { recordFailure(withDescription: "threw error \"\(error)\"", inFile: #filePath, atLine: #line, expected: false) }
            tearDown()
            try tearDownWithError()
        } catch {
            recordFailure(withDescription: "set-up or tear-down threw \"\(error)\"", inFile: #filePath, atLine: #line, expected: false)
        }
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        super.recordFailure(withDescription: onSQLite ? description : "[postgres] " + description, inFile: filePath, atLine: lineNumber,
                            expected: expected)
    }

    /// A store file in the test's folder, or on PostgreSQL a fresh schema per name (the same
    /// one for the whole run of a test).
    override func storePath(_ name: String = "store") -> String {
        guard store == .postgres else { return super.storePath(name) }
        if let known = locations[name] { return known }
        let test = (self.name.split(whereSeparator: { $0 == "." || $0 == " " || $0 == "]" }).last.map { String($0.prefix(20)) } ?? "")
            + (name == "store" ? "" : "_" + name)
        let uri = PostgresTestServer.freshStore(test) ?? ""
        locations[name] = uri
        return uri
    }

    func isPostgreSQL(_ path: String) -> Bool { path.hasPrefix("postgresql://") }

    /// A schema of `version` with these entity declarations (JSON objects, comma-separated).
    func schema(_ version: String, _ entities: String) -> String {
        #"{"version": "\#(version)", "entities": [\#(entities)]}"#
    }

    /// Creates the store at `path` with `schemaJSON` and inserts `objects` ((entity, object JSON) pairs),
    /// returning their identifiers in order.
    @discardableResult
    func makeStore(_ schemaJSON: String, _ objects: [(String, String)], path: String? = nil) throws -> [String] {
        let container = try openFile(schemaJSON, path: path ?? storePath())
        let context = try container.makeContext()
        var ids: [String] = []
        for (entity, json) in objects { ids.append(try context.insert(entity: entity, json: json).description) }
        _ = try context.save()
        return ids
    }

    /// Opens the store at `path` with `configJSON` (a whole configuration).
    func open(config configJSON: String, path: String? = nil,
              _ configure: (inout StoreConfiguration) throws -> Void = { _ in }) throws -> ModelContainer {
        var c = try StoreConfiguration.decode(configJSON)
        try configure(&c)
        return try ModelContainer(path: path ?? storePath(), configuration: c)
    }

    /// Every object of `entity` (with subentities), by identifier.
    func objects(_ container: ModelContainer, _ entity: String) throws -> [String: JSONValue] {
        let context = try container.makeContext()
        var out: [String: JSONValue] = [:]
        for o in try fetch(context, entity) {
            guard let id = o["_id"]?.stringValue else { XCTFail("object without _id: \(o)"); continue }
            out[id] = o
        }
        return out
    }

    /// The value of `key` in object `id` of `all`.
    func value(_ all: [String: JSONValue], _ id: String, _ key: String) -> JSONValue? { all[id]?[key] }

    /// The error opening throws.
    func openError(config configJSON: String, path: String? = nil, file: StaticString = #filePath, line: UInt = #line,
                   _ configure: (inout StoreConfiguration) throws -> Void = { _ in }) -> StrataError? {
        do {
            _ = try open(config: configJSON, path: path, configure)
            XCTFail("the open succeeded", file: file, line: line)
            return nil
        } catch let e as StrataError {
            return e
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    // MARK: What a store holds, read behind Strata's back (SQLite: a second connection; PostgreSQL: the catalog)

    /// Rows of a query; on PostgreSQL quote mixed-case names (`"Trip"`), which SQLite takes too.
    override func rows(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws -> [[SQLValue]] {
        guard isPostgreSQL(path) else { return try super.rows(path, sql, args) }
        let r = try PGConnection(uri: path).query(sql, args)
        return (0..<r.count).map { row in (0..<r.columns).map { r.value(row, $0) } }
    }

    /// Runs a statement that changes the store behind Strata's back.
    func execute(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws {
        if isPostgreSQL(path) {
            if args.isEmpty { try PGConnection(uri: path).execute(script: sql) } else { try PGConnection(uri: path).execute(sql, args) }
        } else {
            try Connection(path: path, readOnly: false, create: false).execute(sql, args)
        }
    }

    override func tableNames(_ path: String) throws -> Set<String> {
        guard isPostgreSQL(path) else { return try super.tableNames(path) }
        return Set(try rows(path, "SELECT relname FROM pg_catalog.pg_class WHERE relnamespace = \(PostgresDialect.currentNamespace) AND relkind = 'r'")
            .compactMap(\.first?.text))
    }

    override func columnNames(_ path: String, table: String) throws -> [String] {
        guard isPostgreSQL(path) else { return try super.columnNames(path, table: table) }
        return try rows(path, "SELECT a.attname FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
                        + "WHERE c.relnamespace = \(PostgresDialect.currentNamespace) AND c.relname = $1 AND a.attnum > 0 AND NOT a.attisdropped "
                        + "ORDER BY a.attnum", [.text(table)]).compactMap(\.first?.text)
    }

    /// The indexes of `table` (made by CREATE INDEX, or unique constraints; not the primary key).
    func storeIndexes(_ table: String, path: String? = nil) throws -> [StoreLayout.Index] {
        let path = path ?? storePath()
        if isPostgreSQL(path) { return try PostgresMigrationConnection.indexes(PGConnection(uri: path), table) }
        return try SQLiteStore.indexes(Connection(path: path, readOnly: true, create: false), table)
    }

    /// Whether the store keeps a key sequence for root table `table`.
    func hasKeySequence(_ table: String, path: String? = nil) throws -> Bool {
        let path = path ?? storePath()
        if isPostgreSQL(path) {
            return try scalar(path, "SELECT count(*) FROM pg_catalog.pg_class WHERE relnamespace = \(PostgresDialect.currentNamespace) "
                              + "AND relkind = 'S' AND relname = $1", [.text(PostgresDialect.sequenceName(table))]) == .int(1)
        }
        return try scalar(path, "SELECT count(*) FROM strata_sequence WHERE entity = ?", [.text(table)]) == .int(1)
    }

    /// Makes the next key of root table `table` `next`.
    func setNextKey(_ table: String, _ next: Int64, path: String? = nil) throws {
        let path = path ?? storePath()
        if isPostgreSQL(path) {
            try execute(path, "SELECT setval(CAST($1 AS regclass), $2, false)", [.text(PostgresDialect().quote(PostgresDialect.sequenceName(table))), .int(next)])
        } else {
            try execute(path, "UPDATE strata_sequence SET next = ? WHERE entity = ?", [.int(next), .text(table)])
        }
    }

    /// The version label the store holds.
    func storedVersion(_ path: String? = nil) throws -> String? { try storedMetadata("version", path: path) }

    /// An entry of the store's metadata (`version`, `versionHash`, …).
    func storedMetadata(_ key: String, path: String? = nil) throws -> String? {
        let path = path ?? storePath()
        return try scalar(path, "SELECT value FROM strata_metadata WHERE key = \(isPostgreSQL(path) ? "$1" : "?")", [.text(key)])?.text
    }

    /// The store's tables, indexes and other objects, with their definitions (SQLite:
    /// `sqlite_master`; PostgreSQL: relations, columns and constraints of its schema).
    func schemaObjects(_ path: String? = nil) throws -> [String] {
        let path = path ?? storePath()
        guard isPostgreSQL(path) else {
            return try rows(path, "SELECT name, sql FROM sqlite_master ORDER BY name").map { r in r.map { $0.text ?? "" }.joined(separator: " ") }
        }
        let ns = "c.relnamespace = \(PostgresDialect.currentNamespace)"
        var out: [String] = []
        for r in try rows(path, "SELECT c.relname, c.relkind, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_class c "
                          + "LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped WHERE \(ns) "
                          + "ORDER BY c.relname, a.attnum") {
            out.append(r.map { $0.text ?? "" }.joined(separator: " "))
        }
        for r in try rows(path, "SELECT conname, pg_catalog.pg_get_constraintdef(o.oid) FROM pg_catalog.pg_constraint o "
                          + "JOIN pg_catalog.pg_class c ON c.oid = o.conrelid WHERE \(ns) ORDER BY conname") {
            out.append(r.map { $0.text ?? "" }.joined(separator: " "))
        }
        return out
    }

    /// Everything the store holds: the file's bytes (its WAL checkpointed: the last connection
    /// closed), or on PostgreSQL a dump of the schema's tables, columns, indexes, constraints,
    /// sequences and rows. Equal dumps: the store is exactly as it was.
    func storeContents(_ path: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let path = path ?? storePath()
        guard isPostgreSQL(path) else {
            XCTAssertNil(SQLiteStore.fileSize(path + "-wal").flatMap { $0 > 0 ? $0 : nil }, "a WAL with frames is left", file: file, line: line)
            return try XCTUnwrap(fileBytes(path), file: file, line: line)
        }
        var dump = try schemaObjects(path)
        let relations = try rows(path, "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c WHERE c.relnamespace = \(PostgresDialect.currentNamespace) "
                                 + "AND c.relkind IN ('r', 'S') ORDER BY c.relname")
        for r in relations {
            guard let name = r[0].text else { continue }
            let q = PostgresDialect().quote(name)
            let sql = r[1].text == "S" ? "SELECT CAST(last_value AS text) || ' ' || CAST(is_called AS text) FROM \(q)"
                : "SELECT CAST(row_to_json(t) AS text) FROM \(q) AS t ORDER BY 1"
            for row in try rows(path, sql) {
                dump.append(name + " " + (row.first?.text ?? ""))
            }
        }
        return Array(dump.joined(separator: "\n").utf8)
    }
}
