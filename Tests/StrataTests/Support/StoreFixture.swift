import CSQLite
import Foundation
import Synchronization
import XCTest
@testable import Strata

// The shared fixture of the Swift tests: schemas, unique temporary stores,
// store setups (in-memory, file, reopened file), SQL capture, JSON and error helpers.

enum Fixtures {
    /// The SampleTrips schema of Apple's SwiftData sessions (DESIGN §1, §4).
    static let sampleTrips = """
    {"version": "1.0.0",
     "entities": [
      {"name": "Trip",
       "attributes": [
         {"name": "name", "type": "string"},
         {"name": "destination", "type": "string", "optional": true},
         {"name": "startDate", "type": "date"},
         {"name": "endDate", "type": "date"},
         {"name": "photo", "type": "data", "optional": true, "externalStorage": true},
         {"name": "tripViews", "type": "int", "transient": true, "default": 0}],
       "relationships": [
         {"name": "bucketList", "destination": "BucketListItem", "toMany": true,
          "deleteRule": "cascade", "inverse": "trip"},
         {"name": "livingAccommodation", "destination": "LivingAccommodation",
          "optional": true, "deleteRule": "cascade"}],
       "uniqueConstraints": [["name", "startDate", "endDate"]],
       "indexes": [["name"], ["startDate"], ["endDate"], ["name", "startDate", "endDate"]]},
      {"name": "BusinessTrip", "superentity": "Trip",
       "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
      {"name": "PersonalTrip", "superentity": "Trip",
       "attributes": [{"name": "reason", "type": "string", "enum": ["family", "reunion", "wellness", "unknown"],
                       "default": "unknown"}]},
      {"name": "BucketListItem",
       "attributes": [
         {"name": "title", "type": "string"},
         {"name": "details", "type": "string", "default": ""},
         {"name": "hasReservation", "type": "bool", "default": false},
         {"name": "isInPlan", "type": "bool", "default": false}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
      {"name": "LivingAccommodation",
       "attributes": [
         {"name": "address", "type": "string"},
         {"name": "placeName", "type": "string"}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]}
     ]}
    """

    /// A one-entity schema wrapped around some attribute declarations.
    static func schema(version: String = "1.0.0", entity: String = "Thing", attributes: String,
                       relationships: String = "", extra: String = "") -> String {
        """
        {"version": "\(version)", "entities": [
          {"name": "\(entity)", "attributes": [\(attributes)], "relationships": [\(relationships)]\(extra.isEmpty ? "" : ", " + extra)}
        ]}
        """
    }
}

/// Where a test's store lives.
enum StoreSetup: String, CaseIterable {
    /// `inMemory: true`, no file.
    case inMemory
    /// One file container kept open for the whole test.
    case file
    /// A file container closed and opened again whenever the test calls `reopen()`.
    case reopenedFile
    /// A PostgreSQL store (a fresh schema of the server `STRATA_TEST_POSTGRES` names),
    /// opened again whenever the test calls `reopen()`; only when that variable is set
    /// (`scripts/postgres-test.sh` sets it).
    case postgres

    static var allCases: [StoreSetup] { [.inMemory, .file, .reopenedFile] + (PostgresTestServer.uri != nil ? [.postgres] : []) }
}

/// The PostgreSQL server of the tests, when `STRATA_TEST_POSTGRES` names one.
enum PostgresTestServer {
    static let uri: String? = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    private static let counter = Mutex(0)
    /// The schemas ``freshStore(_:)`` named since ``dropFreshSchemas()`` last ran.
    private static let named = Mutex<[String]>([])

    /// The server's URI with a fresh schema (namespace) as the connection's search_path.
    static func freshStore(_ name: String) -> String? {
        guard let uri else { return nil }
        let n = counter.withLock { $0 += 1; return $0 }
        let ns = "t_\(getpid())_\(n)_" + String(name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }.prefix(30))
        named.withLock { $0.append(ns) }
        return uri + (uri.contains("?") ? "&" : "?") + "options=-csearch_path%3D" + ns
    }

    /// Drops the schemas ``freshStore(_:)`` named since the last call (a test's stores, which a
    /// store makes when it first opens), with everything in them. A schema whose tables another
    /// session still holds (a store left inside a transaction) is left after a short wait rather
    /// than hang the suite.
    static func dropFreshSchemas() {
        let schemas = named.withLock { names -> [String] in
            defer { names.removeAll() }
            return names
        }
        guard let uri, !schemas.isEmpty, let connection = try? PGConnection(uri: uri) else { return }
        _ = try? connection.execute(script: "SET lock_timeout = '2s'", reported: false)
        for ns in schemas { _ = try? connection.execute(script: "DROP SCHEMA IF EXISTS \"\(ns)\" CASCADE", reported: false) }
    }
}

/// A container and a context on one store setup; `reopen()` starts a fresh
/// context and, for `.reopenedFile`, a fresh container on the same file.
final class StoreHarness {
    let setup: StoreSetup
    let path: String?
    var configuration: StoreConfiguration
    private(set) var container: ModelContainer
    private(set) var context: ModelContext

    init(setup: StoreSetup, path: String, configuration: StoreConfiguration) throws {
        self.setup = setup
        var config = configuration
        config.inMemory = setup == .inMemory
        self.configuration = config
        self.path = setup == .inMemory ? nil : setup == .postgres ? PostgresTestServer.freshStore((path as NSString).lastPathComponent) : path
        container = try ModelContainer(path: self.path, configuration: config)
        context = try container.makeContext()
    }

    /// A fresh context (and for `.reopenedFile` a fresh container): reads after
    /// this see only what was saved.
    func reopen() throws {
        if setup == .reopenedFile || setup == .postgres {
            container = try ModelContainer(path: path, configuration: configuration)
        }
        context = try container.makeContext()
    }
}

/// Base class: a unique temporary folder per test, removed afterwards.
class StoreTestCase: XCTestCase {
    private(set) var tempDirectory = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        var template = Array((NSTemporaryDirectory() + "/strata-tests-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buf -> Bool in mkdtemp(buf.baseAddress!) != nil }
        XCTAssertTrue(made, "mkdtemp failed")
        tempDirectory = String(cString: template)
    }

    override func tearDownWithError() throws {
        if !tempDirectory.isEmpty { try? FileManager.default.removeItem(atPath: tempDirectory) }
        PostgresTestServer.dropFreshSchemas()
        try super.tearDownWithError()
    }

    /// A path in the test's folder (no file is created).
    func storePath(_ name: String = "store") -> String { tempDirectory + "/" + name + ".sqlite" }

    func makeSchema(_ json: String = Fixtures.sampleTrips) throws -> Schema { try SchemaDecoder.decode(json) }

    func configuration(_ schemaJSON: String = Fixtures.sampleTrips,
                       _ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> StoreConfiguration {
        var c = StoreConfiguration(schema: try makeSchema(schemaJSON))
        configure(&c)
        return c
    }

    /// A container on a file store in the test's folder.
    func openFile(_ schemaJSON: String = Fixtures.sampleTrips, path: String? = nil,
                  _ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> ModelContainer {
        try ModelContainer(path: path ?? storePath(), configuration: configuration(schemaJSON, configure))
    }

    func openInMemory(_ schemaJSON: String = Fixtures.sampleTrips,
                      _ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> ModelContainer {
        try ModelContainer(path: nil, configuration: configuration(schemaJSON) { c in c.inMemory = true; configure(&c) })
    }

    func harness(_ setup: StoreSetup, _ schemaJSON: String = Fixtures.sampleTrips, name: String? = nil,
                 _ configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> StoreHarness {
        try StoreHarness(setup: setup, path: storePath(name ?? setup.rawValue), configuration: configuration(schemaJSON, configure))
    }

    /// Runs `body` once per store setup, each on its own store.
    func forEachSetup(_ schemaJSON: String = Fixtures.sampleTrips, _ setups: [StoreSetup] = StoreSetup.allCases,
                      _ configure: (inout StoreConfiguration) -> Void = { _ in },
                      file: StaticString = #filePath, line: UInt = #line,
                      _ body: (StoreHarness) throws -> Void) {
        for setup in setups {
            do {
                let h = try harness(setup, schemaJSON, configure)
                try body(h)
            } catch {
                XCTFail("[\(setup)] unexpected error: \(error)", file: file, line: line)
            }
        }
    }

    // MARK: SQL capture

    /// The SQL a context's connection prepares or runs while `body` runs.
    func captureSQL(_ context: ModelContext, _ body: () throws -> Void) rethrows -> [String] {
        let c = (context.session as! SQLiteSession).connection
        c.lock.withLock { c.statementLog = [] }
        defer { c.lock.withLock { c.statementLog = nil } }
        try body()
        return c.lock.withLock { c.statementLog ?? [] }
    }

    // MARK: Raw SQLite reads (a second, read-only connection)

    func rows(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws -> [[SQLValue]] {
        let c = try Connection(path: path, readOnly: true, create: false)
        let s = try Statement(connection: c, sql: sql)
        var out: [[SQLValue]] = []
        let n = sqlite3ColumnCount(s)
        try s.query(args) { st in out.append((0..<n).map { st.value(at: $0) }) }
        return out
    }

    func scalar(_ path: String, _ sql: String, _ args: [SQLValue] = []) throws -> SQLValue? {
        try rows(path, sql, args).first?.first
    }

    func tableNames(_ path: String) throws -> Set<String> {
        Set(try rows(path, "SELECT name FROM sqlite_master WHERE type = 'table'").compactMap(\.first?.text))
    }

    func columnNames(_ path: String, table: String) throws -> [String] {
        try rows(path, "SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap(\.first?.text)
    }

    func rowCount(_ path: String, _ table: String) throws -> Int64 {
        guard case .int(let n)? = try scalar(path, "SELECT count(*) FROM \"\(table)\"") else { return -1 }
        return n
    }

    // MARK: JSON

    func parse(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        try JSONValue.parse(String(decoding: bytes, as: UTF8.self))
    }

    func get(_ context: ModelContext, _ id: ObjectID) throws -> JSONValue { try parse(context.get(id: id.description)) }
    func get(_ context: ModelContext, _ id: String) throws -> JSONValue { try parse(context.get(id: id)) }

    func fetch(_ context: ModelContext, _ entity: String, subentities: Bool = true, pending: Bool = true) throws -> [JSONValue] {
        var r = FetchDescriptor(entity: try XCTUnwrap(context.schema.entity(named: entity)))
        r.includeSubentities = subentities
        r.includePendingChanges = pending
        return try XCTUnwrap(parse(context.fetch(r)).array)
    }

    func count(_ context: ModelContext, _ entity: String, subentities: Bool = true, pending: Bool = true) throws -> Int64 {
        var r = FetchDescriptor(entity: try XCTUnwrap(context.schema.entity(named: entity)))
        r.includeSubentities = subentities
        r.includePendingChanges = pending
        return try context.fetchCount(r)
    }

    func identifiers(_ context: ModelContext, _ entity: String, subentities: Bool = true, pending: Bool = true) throws -> [String] {
        var r = FetchDescriptor(entity: try XCTUnwrap(context.schema.entity(named: entity)))
        r.includeSubentities = subentities
        r.includePendingChanges = pending
        return try XCTUnwrap(parse(context.fetchIdentifiers(r)).array).compactMap(\.stringValue)
    }

    // MARK: Threads

    /// Runs `readers` threads, each with its own context of `container`, calling
    /// `read(context, reader, iteration)` while `writing` runs on this thread
    /// (and at least `minimum` times each). `read` returns a problem or nil.
    /// - Returns: the problems and errors the readers met.
    func readWhileWriting(_ container: ModelContainer, readers: Int, minimum: Int,
                          read: @escaping @Sendable (ModelContext, Int, Int) throws -> String?,
                          writing: () throws -> Void) throws -> [String] {
        let failures = ConcurrencyTests.Failures()
        let done = ManagedFlag()
        let box = UncheckedBox(container)
        let group = DispatchGroup()
        for r in 0..<readers {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let context = try box.value.makeContext()
                    var i = 0
                    while !done.value || i < minimum {
                        i += 1
                        if let problem = try read(context, r, i) { failures.add(problem); return }
                    }
                } catch { failures.add("\(error)") }
            }.start()
        }
        do { try writing() } catch {
            done.set()
            _ = group.wait(timeout: .now() + 120)
            throw error
        }
        done.set()
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "readers did not finish")
        return failures.items
    }

    // MARK: Errors

    /// Asserts that `body` throws a `StrataError` with `code`, and returns it.
    @discardableResult
    func assertError<T>(_ code: StrataError.Code, file: StaticString = #filePath, line: UInt = #line,
                        _ body: () throws -> T) -> StrataError? {
        do {
            let v = try body()
            XCTFail("expected a \(code.name) error, got \(v)", file: file, line: line)
            return nil
        } catch let e as StrataError {
            XCTAssertEqual(e.code, code, "wrong code for: \(e.message)", file: file, line: line)
            return e
        } catch {
            XCTFail("expected StrataError, got \(error)", file: file, line: line)
            return nil
        }
    }

    // MARK: Files

    func fileBytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    func filesIn(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }
}

private func sqlite3ColumnCount(_ s: Statement) -> Int32 { sqlite3_column_count(s.handle) }

extension SQLValue {
    var text: String? { if case .text(let s) = self { return s } else { return nil } }
    var int: Int64? { if case .int(let i) = self { return i } else { return nil } }
}

extension JSONValue {
    var array: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The exact number text (compare Int64 extremes as text: `==` on numbers goes through Double).
    var numberText: String? { if case .number(let n) = self { return n } else { return nil } }
    var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    var isNull: Bool { if case .null = self { return true } else { return false } }
    var keys: [String] { if case .object(let m) = self { return m.map(\.0) } else { return [] } }

    /// Parses JSON text in a test (a failure is a test bug).
    static func of(_ text: String) -> JSONValue {
        do { return try JSONValue.parse(text) } catch { preconditionFailure("bad test JSON: \(error) in \(text)") }
    }
}

extension ModelContext {
    /// `insertMany` from text.
    func insertMany(entity: String, json: String) throws -> [ObjectID] {
        var json = json
        return try json.withUTF8 { try insertMany(entity: entity, json: $0) }
    }
}

final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var value: Bool { lock.lock(); defer { lock.unlock() }; return flag }
    func set() { lock.lock(); flag = true; lock.unlock() }
}
