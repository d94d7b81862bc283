import XCTest
@testable import Strata

/// Opening a PostgreSQL location: libpq is loaded only then, its absence and a server that
/// cannot be reached are plain errors, and no error repeats the location's password.
final class PostgresLocationTests: StoreTestCase {
    func testAFunctionTheStoreLacksIsAnIncompatibleStoreSayingHowToInstallIt() {
        // A store whose functions an older Strata installed, opened read-only (no refresh).
        let e = PGConnection.mapError(state: "42883", message: "function strata_iarith(bigint, bigint, integer) does not exist", detail: nil)
        XCTAssertEqual(e.code, .incompatibleStore)
        XCTAssertTrue(e.message.contains("strata_iarith") && e.message.contains("opening the store once without readOnly installs them"), e.message)
        XCTAssertEqual(PGConnection.mapError(state: "42P01", message: "relation does not exist", detail: nil).code, .internal)
    }

    /// A store whose functions an older Strata installed (version 3: no exact sums) answers a sum
    /// read-only with an incompatible-store error, and gets this version's functions when it is
    /// opened writable. Runs only with `STRATA_TEST_POSTGRES`.
    func testAStoreOfOlderFunctionsGetsTheExactSumsWhenOpenedWritable() throws {
        guard let path = PostgresTestServer.freshStore("functions-refresh") else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test")
        }
        let descriptor = #"{"entity": "Trip", "predicate": "$0.bucketList.map { $0.priority }.reduce(0, +) == 3 && $0.tags.map { $0.trips.count }.average() == nil"}"#
        do {
            let c = try ModelContainer(path: path, configuration: configuration(QuerySchemas.trips)).makeContext()
            _ = try c.insert(entity: "Trip", json: #"{"name": "a", "destination": "", "startDate": 0, "endDate": 0, "bucketList": [{"title": "x", "priority": 1}, {"title": "y", "priority": 2}]}"#)
            try c.save()
            XCTAssertEqual(try c.fetchCount(Query.descriptor(descriptor, c.schema)), 1)
        }
        // As version 3 left the store's schema.
        _ = try PGConnection(uri: path).execute(script: """
            DROP AGGREGATE strata_fsum(double precision); DROP FUNCTION strata_int_total(numeric);
            UPDATE strata_metadata SET value = '3' WHERE key = 'functionsVersion'
            """)
        let readOnly = try ModelContainer(path: path, configuration: configuration(QuerySchemas.trips) { $0.readOnly = true }).makeContext()
        XCTAssertThrowsError(try readOnly.fetchCount(Query.descriptor(descriptor, readOnly.schema))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleStore, "\(error)")
        }
        let writable = try ModelContainer(path: path, configuration: configuration(QuerySchemas.trips)).makeContext()
        XCTAssertEqual(try writable.fetchCount(Query.descriptor(descriptor, writable.schema)), 1)
        let version = try PGConnection(uri: path).scalar("SELECT value FROM strata_metadata WHERE key = 'functionsVersion'", [])
        guard case .text(let ns)? = try PGConnection(uri: path).scalar("SELECT current_schema()", []) else { return XCTFail("no schema") }
        XCTAssertEqual(version, .text(PostgresFunctions.installedVersion(ns)))
    }

    /// `strata_fold` names its tables by the schema's name, written in when it is installed: a
    /// renamed schema holds functions that name the old one, which an open takes for functions to
    /// install again (read-only, which may not install them, it fails), so that a namesake of the
    /// old schema is never read. Folded reads answer as before the rename.
    func testARenamedSchemaGetsItsFunctionsInstalledAgainBeforeAnyFold() throws {
        guard let uri = PostgresTestServer.uri else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test")
        }
        let old = "Fold Before \(getpid())", new = "Fold After \(getpid())"
        let drop = "DROP SCHEMA IF EXISTS \"\(old)\" CASCADE; DROP SCHEMA IF EXISTS \"\(new)\" CASCADE"
        _ = try PGConnection(uri: uri).execute(script: drop)
        defer { _ = try? PGConnection(uri: uri).execute(script: drop) }
        func config(_ ns: String, readOnly: Bool = false) throws -> StoreConfiguration {
            try configuration(QuerySchemas.trips) { $0.postgresSchema = ns; $0.readOnly = readOnly }
        }
        // "É" folds to "é" only through the fold table (lower() knows ASCII only).
        let counts: [(String, Int64)] = [(#"{"contains": [{"key": "name"}, "é"], "options": "c"}"#, 2), (#"{"contains": [{"key": "name"}, "e"], "options": "cd"}"#, 3)]
        func check(_ c: ModelContext) throws {
            for (predicate, count) in counts {
                XCTAssertEqual(try c.fetchCount(Query.descriptor(#"{"entity": "Trip", "predicate": \#(predicate)}"#, c.schema)), count, predicate)
            }
        }
        do {
            let c = try ModelContainer(path: uri, configuration: config(old)).makeContext()
            for name in ["ÉCOLE", "école", "Ecole"] {
                _ = try c.insert(entity: "Trip", json: #"{"name": "\#(name)", "destination": "", "startDate": 0, "endDate": 0}"#)
            }
            try c.save()
            try check(c)
        }
        // The old name now holds a namesake whose fold table folds nothing.
        _ = try PGConnection(uri: uri).execute(script: """
            ALTER SCHEMA "\(old)" RENAME TO "\(new)"; CREATE SCHEMA "\(old)";
            CREATE FUNCTION "\(old)".strata_fold_map() RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$ SELECT '{}'::jsonb $$
            """)
        XCTAssertThrowsError(try ModelContainer(path: uri, configuration: config(new, readOnly: true))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleStore, "\(error)")
            XCTAssertTrue("\(error)".contains("without readOnly"), "\(error)")
        }
        try check(try ModelContainer(path: uri, configuration: config(new)).makeContext())
        let version = try PGConnection(uri: uri).scalar("SELECT value FROM \"\(new)\".strata_metadata WHERE key = 'functionsVersion'", [])
        XCTAssertEqual(version, .text(PostgresFunctions.installedVersion(new)))
        try check(try ModelContainer(path: uri, configuration: config(new, readOnly: true)).makeContext())
    }

    /// `strata_fold`'s body names its tables by the schema's name inside `$strata$` quotes,
    /// which nothing escapes: a schema named with `$strata$`, a backslash and a double quote
    /// still gets functions whose bodies end where Strata ends them, and folds as any other.
    func testASchemaNamedWithTheFunctionsQuoteTagFolds() throws {
        guard let uri = PostgresTestServer.uri else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test")
        }
        let ns = "q$strata$ \\ \" $x$ \(getpid())"
        let drop = "DROP SCHEMA IF EXISTS " + PostgresDialect().quote(ns) + " CASCADE"
        _ = try PGConnection(uri: uri).execute(script: drop)
        defer { _ = try? PGConnection(uri: uri).execute(script: drop) }
        let config = try configuration(QuerySchemas.trips) { $0.postgresSchema = ns }
        let folded = #"{"entity": "Trip", "predicate": {"contains": [{"key": "name"}, "é"], "options": "c"}}"#
        do {
            let c = try ModelContainer(path: uri, configuration: config).makeContext()
            for name in ["ÉCOLE", "école", "Ecole"] {
                _ = try c.insert(entity: "Trip", json: #"{"name": "\#(name)", "destination": "", "startDate": 0, "endDate": 0}"#)
            }
            try c.save()
            XCTAssertEqual(try c.fetchCount(Query.descriptor(folded, c.schema)), 2)
        }
        let c = try ModelContainer(path: uri, configuration: config).makeContext()
        XCTAssertEqual(try c.fetchCount(Query.descriptor(folded, c.schema)), 2)
        let version = try PGConnection(uri: uri).scalar("SELECT value FROM " + PostgresDialect().quote(ns) + ".strata_metadata WHERE key = 'functionsVersion'", [])
        XCTAssertEqual(version, .text(PostgresFunctions.installedVersion(ns)))
    }

    /// An open sends its unlock without waiting for the answer, which the connection reads before
    /// its next statement: another connection takes the store's lock as soon as the open returns,
    /// and the store's first statement, a save's or a read's, gets its own answer, not the unlock's.
    /// Runs only with `STRATA_TEST_POSTGRES`.
    func testAnOpenReleasesTheStoreLockBeforeTheStoresFirstStatement() throws {
        guard let path = PostgresTestServer.freshStore("open-unlock") else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test")
        }
        let trip = #"{"name": "a", "destination": "", "startDate": 0, "endDate": 0}"#
        let count = #"{"entity": "Trip"}"#
        _ = try ModelContainer(path: path, configuration: configuration(QuerySchemas.trips))
        let other = try PGConnection(uri: path)
        try other.execute(script: "SET lock_timeout = '10s'")
        for firstSaves in [true, false] {
            let context = try ModelContainer(path: path, configuration: configuration(QuerySchemas.trips)).makeContext()
            // Waits at most 10 s, then fails: the open kept the lock.
            _ = try other.query(PostgresStore.lockStore)
            _ = try other.query(PostgresStore.unlockStore)
            if firstSaves {
                _ = try context.insert(entity: "Trip", json: trip)
                try context.save()
            }
            XCTAssertEqual(try context.fetchCount(Query.descriptor(count, context.schema)), 1)
        }
    }

    /// A store's schema is any name PostgreSQL holds: one of capitals and a space opens (made on
    /// first open, then checked), saves with history, reopens, and is checked and vacuumed; every
    /// catalog read of the store finds it by its exact name, not as folded to lower case.
    /// Runs only with `STRATA_TEST_POSTGRES`.
    func testAStoreInASchemaNamedWithCapitalsAndASpaceOpensAndIsMaintained() throws {
        guard let uri = PostgresTestServer.uri else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test")
        }
        let ns = "Mixed Case \(getpid())"
        let drop = "DROP SCHEMA IF EXISTS \"\(ns)\" CASCADE"
        _ = try PGConnection(uri: uri).execute(script: drop)
        defer { _ = try? PGConnection(uri: uri).execute(script: drop) }
        let config = try configuration(QuerySchemas.trips) { $0.postgresSchema = ns }
        let trip = #"{"name": "a", "destination": "", "startDate": 0, "endDate": 0}"#
        do {
            let c = try ModelContainer(path: uri, configuration: config).makeContext()
            _ = try c.insert(entity: "Trip", json: trip)
            try c.save()
        }
        let container = try ModelContainer(path: uri, configuration: config)
        let c = try container.makeContext()
        XCTAssertEqual(try c.fetchCount(Query.descriptor(#"{"entity": "Trip"}"#, c.schema)), 1)
        XCTAssertTrue(try c.fetchHistory("{}").contains("\"Trip\""))
        let report = try container.checkIntegrity()
        XCTAssertTrue(report.ok, "\(report.problems)")
        try container.vacuum()
        let tables = try PGConnection(uri: uri).scalar("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1", [.text(ns)])
        XCTAssertNotEqual(tables, .int(0))
    }

    /// The open reads the schema's columns unsorted: each table's come back in column order
    /// whatever order the server sent them in (the history tables' check compares them in order).
    func testTheCatalogPutsEachTablesColumnsInColumnOrder() {
        let numbered: [String: [(number: Int, column: (String, String))]] = [
            "Trip": [(3, ("name", "text")), (1, ("_pk", "bigint")), (10, ("endDate", "double precision")), (2, ("_entity", "text"))],
            "empty": [],
        ]
        let columns = PostgresCatalog.inColumnOrder(numbered)
        XCTAssertEqual(columns["Trip"]?.map(\.0), ["_pk", "_entity", "name", "endDate"])
        XCTAssertEqual(columns["Trip"]?.map(\.1), ["bigint", "text", "text", "double precision"])
        XCTAssertEqual(columns["empty"]?.count, 0)
        XCTAssertEqual(columns.count, 2)
    }

    /// A store whose functions version 4 installed (no search functions) answers a search
    /// read-only with an incompatible-store error, and gets them when it is opened writable.
    func testAStoreOfOlderFunctionsGetsTheSearchFunctionsWhenOpenedWritable() throws {
        guard let path = PostgresTestServer.freshStore("functions-search") else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test")
        }
        let descriptor = #"{"entity": "Item", "predicate": "$0.title.matches(\"zurich\")", "sortBy": [{"key": "$relevance"}]}"#
        do {
            let c = try ModelContainer(path: path, configuration: configuration(SearchTests.schema)).makeContext()
            _ = try c.insert(entity: "Item", json: #"{"title": "Zürich"}"#)
            try c.save()
        }
        // As version 4 left the store's schema (strata_tokens stays: the index of a store made by this version uses it).
        _ = try PGConnection(uri: path).execute(script: """
            DROP FUNCTION strata_search_match(text, text); DROP FUNCTION strata_search_words(text); DROP FUNCTION strata_relevance(text, text);
            UPDATE strata_metadata SET value = '4' WHERE key = 'functionsVersion'
            """)
        let readOnly = try ModelContainer(path: path, configuration: configuration(SearchTests.schema) { $0.readOnly = true }).makeContext()
        XCTAssertThrowsError(try readOnly.fetchCount(Query.descriptor(descriptor, readOnly.schema))) { error in
            XCTAssertEqual((error as? StrataError)?.code, .incompatibleStore, "\(error)")
        }
        let writable = try ModelContainer(path: path, configuration: configuration(SearchTests.schema)).makeContext()
        XCTAssertEqual(try writable.fetchCount(Query.descriptor(descriptor, writable.schema)), 1)
    }

    func testAMissingClientLibraryIsAnIOErrorNamingIt() {
        guard case .failure(let e) = LibPQ.load(["libpq-strata-test-missing.so.5"]) else { return XCTFail("loaded a library that does not exist") }
        XCTAssertEqual(e.code, .io)
        XCTAssertTrue(e.message.contains("libpq"), e.message)
    }

    func testAnUnreachableServerIsAnIOErrorWithoutThePassword() throws {
        for uri in ["postgresql://alice:pa%73s-word@127.0.0.1:1/trips?connect_timeout=5",
                    "postgresql:///trips?host=/nonexistent-strata-socket-dir&password=pass-word"] {
            XCTAssertThrowsError(try ModelContainer(path: uri, configuration: configuration())) { error in
                let e = error as? StrataError
                XCTAssertEqual(e?.code, .io)
                XCTAssertFalse("\(error)".contains("pass-word") || "\(error)".contains("pa%73s"), "\(error)")
                XCTAssertTrue("\(error)".contains("PostgreSQL"), "\(error)")
            }
        }
    }

    func testTheSchemaComesFromTheConfigurationThenTheSearchPath() {
        XCTAssertEqual(PostgresStore.firstSchema("\"$user\", public"), "public")
        XCTAssertEqual(PostgresStore.firstSchema("trips_a,public"), "trips_a")
        XCTAssertEqual(PostgresStore.firstSchema("\"We\"\"ird\", x"), "We\"ird")
        XCTAssertNil(PostgresStore.firstSchema("\"$user\""))
    }

    func testPasswordsAreFoundInEveryPlaceALocationHoldsThem() {
        let secrets = PGConnection.secrets(in: "postgresql://u:p%40ss@h/db?password=other&x=1")
        XCTAssertTrue(secrets.contains("p%40ss") && secrets.contains("p@ss") && secrets.contains("other"), "\(secrets)")
        XCTAssertEqual(PGConnection.scrub("bad p@ss and other", secrets), "bad ******** and ********")
    }
}
