import XCTest
@testable import Strata

/// A PostgreSQL store's hierarchy tables carry a validated check (`strata_entities`) that their
/// rows name only the hierarchy's entities: the server refuses any other name from any client,
/// and the planner leaves a read's search for other names out of every plan while the check
/// holds (`constraint_exclusion`). A table without it, with it `NOT VALID` or wider, is searched
/// at every read; migrations that change a hierarchy's entities make it again over the migrated
/// rows. Runs only with `STRATA_TEST_POSTGRES`.
final class PostgresEntityCheckTests: StoreTestCase {
    static let trips = #"""
        {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "days", "type": "int", "default": 1}],
         "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
        {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
        {"name": "PersonalTrip", "superentity": "Trip"},
        {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
         "relationships": [{"name": "trip", "destination": "Trip", "optional": true, "inverse": "items"}]}
        """#
    static let v1 = #"{"version": "1.0.0", "entities": [\#(trips)]}"#
    /// v1 with a subentity more.
    static let v2 = #"{"version": "2.0.0", "entities": [\#(trips), {"name": "CruiseTrip", "superentity": "Trip", "attributes": [{"name": "ship", "type": "string", "default": ""}]}]}"#

    func location(_ name: String) throws -> String {
        guard let path = PostgresTestServer.freshStore(name) else { throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run this test") }
        return path
    }

    /// A store of `v1` with Trip "A" (and its Item "x") and PersonalTrip "B"; returns B's key.
    func makeStore(_ path: String) throws -> (ModelContainer, Int64) {
        let container = try ModelContainer(path: path, configuration: configuration(Self.v1))
        let c = try container.makeContext()
        _ = try c.insert(entity: "Trip", json: #"{"name": "A", "items": [{"title": "x"}]}"#)
        let b = try c.insert(entity: "PersonalTrip", json: #"{"name": "B", "days": 3}"#)
        try c.save()
        return (container, b.pk)
    }

    func execute(_ path: String, _ sql: String) throws { try PGConnection(uri: path).execute(script: sql) }

    /// `(validated, definition)` of the check of `table`, nil without one.
    func check(_ path: String, _ table: String) throws -> (Bool, String)? {
        let r = try PGConnection(uri: path).query("SELECT convalidated, pg_get_constraintdef(oid) FROM pg_constraint "
                                                  + "WHERE conrelid = CAST($1 AS regclass) AND conname = 'strata_entities'", [.text("\"\(table)\"")])
        return r.count == 0 ? nil : (r.int64(0, 0) != 0, r.string(0, 1))
    }

    /// Every read of the whole Trip hierarchy: objects, a page that is not the damaged row, a count,
    /// identifiers, a cursor, a prepared fetch, an aggregate, Items with their trips prefetched.
    static let reads = [
        #"{"entity": "Trip"}"#, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "fetchLimit": 1}"#,
        #"{"entity": "Trip", "predicate": "$0.days > 0"}"#, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["items"]}"#,
        #"{"entity": "Trip", "groupBy": ["days"], "aggregates": [{"name": "n", "function": "count"}]}"#,
    ]

    /// The outcome of each read kind of each of ``reads``: nil when it succeeded, else the error's code.
    func readAll(_ context: ModelContext) throws -> [String: StrataError.Code?] {
        var out: [String: StrataError.Code?] = [:]
        func run(_ name: String, _ body: () throws -> Void) {
            do { try body(); out[name] = .some(nil) } catch let e as StrataError { out[name] = e.code } catch { out[name] = .internal }
        }
        for json in Self.reads {
            var j = json
            let d = try j.withUTF8 { try context.descriptor($0) }
            run("fetch \(json)") { _ = try context.fetch(d) }
            guard d.aggregation == nil else { continue }
            run("prepared \(json)") {
                var k = json
                _ = try k.withUTF8 { try context.prepare($0) }.fetch(bindings: nil)
            }
            run("count \(json)") { _ = try context.fetchCount(d) }
            run("identifiers \(json)") { _ = try context.fetchIdentifiers(d) }
            run("cursor \(json)") {
                let cursor = try context.cursor(d)
                while try !(parse(cursor.next(1).bytes).array ?? []).isEmpty {}
            }
        }
        return out
    }

    /// Asserts every read of `context` fails with `code` (nil: succeeds).
    func assertReads(_ context: ModelContext, _ code: StrataError.Code?, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let outcomes = try readAll(context)
        XCTAssertEqual(outcomes.count, Self.reads.count * 5 - 4, file: file, line: line)
        for (name, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(outcome, code, "\(what): \(name)", file: file, line: line)
        }
    }

    /// Whether the plan of a read of the whole hierarchy searches the `_entity` index.
    func searches(_ context: ModelContext) throws -> Bool {
        var json = #"{"entity": "Trip", "predicate": "$0.days > 0"}"#
        let plan = try parse(try json.withUTF8 { try context.explain(descriptorJSON: $0) })
        let lines = try XCTUnwrap(plan["queryPlan"]?.array).compactMap { $0["detail"]?.stringValue }
        XCTAssertTrue(lines.contains { $0.contains("InitPlan") }, "\(lines)")
        return lines.contains { $0.contains("(_entity < 'BusinessTrip'::text)") }
    }

    func testAHierarchysTableRefusesAnEntityNameOfNoneOfItsEntities() throws {
        let path = try location("entity-check-refuses")
        _ = try makeStore(path)
        for table in ["Trip", "Item"] {
            let (validated, definition) = try XCTUnwrap(try check(path, table), table)
            XCTAssertTrue(validated, table)
            XCTAssertEqual(definition, table == "Item" ? "CHECK ((_entity = 'Item'::text))"
                           : "CHECK ((_entity = ANY (ARRAY['BusinessTrip'::text, 'PersonalTrip'::text, 'Trip'::text])))")
        }
        for name in ["Ghost", "trip", "Item", ""] {
            XCTAssertThrowsError(try execute(path, #"INSERT INTO "Trip" (_pk, _entity, name, days) VALUES (1000, '\#(name)', 'G', 1)"#)) { e in
                XCTAssertEqual((e as? StrataError)?.postgresState, "23514", "\(name): \(e)")
            }
            XCTAssertThrowsError(try execute(path, #"UPDATE "Trip" SET _entity = '\#(name)'"#)) { e in
                XCTAssertEqual((e as? StrataError)?.postgresState, "23514", "\(name): \(e)")
            }
        }
        try execute(path, #"INSERT INTO "Trip" (_pk, _entity, name, days) VALUES (1000, 'BusinessTrip', 'G', 1)"#)
    }

    /// While the check holds the plans leave the search out; dropped, every plan searches again
    /// (PostgreSQL plans anew what read the table), for this container's prepared statements too.
    func testTheSearchIsLeftOutOfThePlanWhileTheCheckHolds() throws {
        let path = try location("entity-check-plan")
        let (container, _) = try makeStore(path)
        let context = try container.makeContext()
        XCTAssertFalse(try searches(context))
        try assertReads(context, nil, "sound")
        try execute(path, #"ALTER TABLE "Trip" DROP CONSTRAINT strata_entities"#)
        XCTAssertTrue(try searches(context))
    }

    /// A check dropped behind Strata's back, then a row of an unknown name: every read of the
    /// hierarchy fails, in the container that read the store before (its statements prepared, with
    /// generic plans) and in a fresh one.
    func testEveryReadFailsOnAnUnknownNameOnceTheCheckIsDropped() throws {
        let path = try location("entity-check-dropped")
        let (container, b) = try makeStore(path)
        let context = try container.makeContext()
        for _ in 0..<6 { try assertReads(context, nil, "sound") }
        try execute(path, #"ALTER TABLE "Trip" DROP CONSTRAINT strata_entities; UPDATE "Trip" SET _entity = 'Ghost' WHERE _pk = \#(b)"#)
        for _ in 0..<2 { try assertReads(context, .corrupt, "dropped, same container") }
        try assertReads(try ModelContainer(path: path, configuration: configuration(Self.v1)).makeContext(), .corrupt, "dropped, fresh container")
    }

    /// Neither a check `NOT VALID` (rows before it unchecked) nor one of more names is trusted.
    func testACheckNotValidatedOrOfMoreNamesIsNotTrusted() throws {
        for (name, check) in [("not-valid", "CHECK (_entity IN ('BusinessTrip', 'PersonalTrip', 'Trip')) NOT VALID"),
                              ("wider", "CHECK (_entity IN ('BusinessTrip', 'Ghost', 'PersonalTrip', 'Trip'))")] {
            let path = try location("entity-check-\(name)")
            let (container, b) = try makeStore(path)
            let context = try container.makeContext()
            for _ in 0..<6 { try assertReads(context, nil, name) }
            try execute(path, #"ALTER TABLE "Trip" DROP CONSTRAINT strata_entities; UPDATE "Trip" SET _entity = 'Ghost' WHERE _pk = \#(b); "#
                        + #"ALTER TABLE "Trip" ADD CONSTRAINT strata_entities \#(check)"#)
            try assertReads(context, .corrupt, name)
            try assertReads(try ModelContainer(path: path, configuration: configuration(Self.v1)).makeContext(), .corrupt, name + ", fresh container")
        }
    }

    /// A migration adding a subentity makes the check again, validated, with the new name: objects
    /// of the new entity are saved and read, and the plans leave the search out.
    func testAMigrationAddingASubentityMakesTheCheckAgain() throws {
        let path = try location("entity-check-migration")
        _ = try makeStore(path)
        let context = try ModelContainer(path: path, configuration: configuration(Self.v2)).makeContext()
        let (validated, definition) = try XCTUnwrap(try check(path, "Trip"))
        XCTAssertTrue(validated)
        XCTAssertEqual(definition, "CHECK ((_entity = ANY (ARRAY['BusinessTrip'::text, 'CruiseTrip'::text, 'PersonalTrip'::text, 'Trip'::text])))")
        let cruise = try context.insert(entity: "CruiseTrip", json: #"{"name": "C", "ship": "Nordlys"}"#)
        try context.save()
        XCTAssertEqual(try count(context, "Trip"), 3)
        XCTAssertEqual(try get(context, cruise)["ship"], .string("Nordlys"))
        XCTAssertFalse(try searches(context))
        try assertReads(context, nil, "migrated")
        XCTAssertThrowsError(try execute(path, #"UPDATE "Trip" SET _entity = 'Ghost'"#)) { e in
            XCTAssertEqual((e as? StrataError)?.postgresState, "23514", "\(e)")
        }
    }

    /// A row the migration would leave with a name of no entity fails it, naming the row, and the
    /// store stays as it was (version, rows, no check).
    func testAMigrationThatWouldKeepAnUnknownNameFailsAndChangesNothing() throws {
        let path = try location("entity-check-migration-fails")
        let (_, b) = try makeStore(path)
        try execute(path, #"ALTER TABLE "Trip" DROP CONSTRAINT strata_entities; UPDATE "Trip" SET _entity = 'Ghost' WHERE _pk = \#(b)"#)
        XCTAssertThrowsError(try ModelContainer(path: path, configuration: configuration(Self.v2))) { e in
            let error = e as? StrataError
            XCTAssertEqual(error?.code, .corrupt, "\(e)")
            XCTAssertTrue(error?.message.contains("Trip/\(b)") == true && error?.message.contains("'Ghost'") == true, "\(e)")
        }
        XCTAssertNil(try check(path, "Trip"))
        XCTAssertEqual(try PGConnection(uri: path).scalar("SELECT value FROM strata_metadata WHERE key = 'version'", []), .text("1.0.0"))
        XCTAssertEqual(try PGConnection(uri: path).scalar(#"SELECT _entity FROM "Trip" WHERE _pk = \#(b)"#, []), .text("Ghost"))
    }

    /// Another container's migration that widens the check is seen by a container of the old
    /// version: its reads search again and, meeting the new entity's row, report the migration.
    func testAnotherContainersMigrationIsSeen() throws {
        let path = try location("entity-check-other-container")
        let (old, _) = try makeStore(path)
        let context = try old.makeContext()
        for _ in 0..<6 { try assertReads(context, nil, "before") }
        let migrated = try ModelContainer(path: path, configuration: configuration(Self.v2)).makeContext()
        _ = try migrated.insert(entity: "CruiseTrip", json: #"{"name": "C"}"#)
        try migrated.save()
        try assertReads(context, .incompatibleStore, "after another container's migration")
    }
}
