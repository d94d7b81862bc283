import XCTest
@testable import Strata

/// A connection registers most of Strata's SQL functions before its first statement naming one
/// (``SQLFunctions/registerNamed(_:)``), not when it opens: every function must still be there for
/// every statement that names it, whichever comes first and however it is spelled.
final class SQLFunctionRegistrationTests: StoreTestCase {
    /// The functions registered on `c`, as `name/argument count`. The listing's own text names none
    /// (`strata!_` is not a `strata_` name).
    func functions(_ c: Connection) throws -> Set<String> {
        var names: Set<String> = []
        try c.statement(HashedSQL("SELECT name, narg FROM pragma_function_list WHERE name LIKE 'strata!_%' ESCAPE '!'")).query { s in
            names.insert("\(s.text(0))/\(s.int64(1))")
        }
        return names
    }

    func connection() throws -> Connection {
        try Connection(path: storePath(), readOnly: false, create: true)
    }

    /// Every function a connection can register, with its argument count.
    func allFunctions() throws -> Set<String> {
        let c = try connection()
        SQLFunctions.registerNamed(c.handle)
        return try functions(c)
    }

    static let atOpen: Set<String> = ["strata_damaged/3", "strata_entities_known/1", "strata_entities_checked/2"]

    func testAConnectionOpensWithTheFunctionsEveryReadNamesOnly() throws {
        let c = try connection()
        XCTAssertEqual(try functions(c), Self.atOpen)
        // The tables and functions every open names register nothing more.
        try c.execute(script: "CREATE TABLE strata_metadata (key TEXT PRIMARY KEY, value)")
        _ = try c.statement(HashedSQL("SELECT value FROM strata_metadata WHERE key = ?1 AND strata_entities_known('x') "
                                      + "AND strata_entities_checked('x', NULL) IS NULL ORDER BY value COLLATE strata_decimal"))
        XCTAssertFalse(c.registeredNamedFunctions)
        XCTAssertEqual(try functions(c), Self.atOpen)
        let all = try allFunctions()
        XCTAssertTrue(all.isSuperset(of: Self.atOpen))
        XCTAssertGreaterThanOrEqual(all.count, 22)
    }

    /// Each function, named first by a fresh connection's statement (prepared, or run as a script),
    /// in lower and upper case, quoted, or after an unknown `strata_` name: it is registered.
    func testEveryFunctionIsThereForTheFirstStatementNamingIt() throws {
        let all = try allFunctions()
        for entry in all.subtracting(Self.atOpen).sorted() {
            let parts = entry.split(separator: "/")
            let name = String(parts[0]), argc = Int(parts[1])!
            let args = Array(repeating: "NULL", count: max(argc, 0)).joined(separator: ", ")
            for sql in ["SELECT \(name)(\(args))", "SELECT \(name.uppercased())(\(args))", "SELECT \"\(name)\"(\(args))",
                        "SELECT 1 FROM (SELECT \(name)(\(args)) AS v) WHERE 1"] {
                let prepared = try connection()
                XCTAssertNoThrow(try prepared.statement(HashedSQL(sql)), sql)
                XCTAssertTrue(prepared.registeredNamedFunctions, sql)
                let script = try connection()
                XCTAssertNoThrow(try script.execute(script: "CREATE TEMP TABLE t AS " + sql), sql)
            }
        }
        // A `strata_` name this list does not know registers everything.
        let c = try connection()
        _ = try c.statement(HashedSQL("SELECT 1 AS strata_unknown"))
        XCTAssertTrue(c.registeredNamedFunctions)
        XCTAssertEqual(try functions(c), all)
    }

    /// A fresh store's first read compares folded text (`strata_fold`, `strata_contains`): it runs.
    func testAFoldingReadCanBeTheFirstStatementOfAnOpenedStore() throws {
        let path = storePath("fold")
        do {
            let container = try openFile(path: path)
            let context = try container.makeContext()
            _ = try context.insert(entity: "Trip", json: #"{"name": "Paris", "startDate": 0, "endDate": 1}"#)
            try context.save()
        }
        let context = try openFile(path: path).makeContext()
        let d = try Query.descriptor(#"{"entity": "Trip", "predicate": "$0.name.localizedStandardContains(\"PAR\") && $0.name.contains(\"ari\")"}"#,
                                     context.schema)
        let rows = String(decoding: try context.fetch(d), as: UTF8.self)
        XCTAssertTrue(rows.contains("Paris"), rows)
    }
}
