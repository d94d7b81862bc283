import Glibc
import XCTest
@testable import Strata

/// Stages of a migration plan: hooks on the old and new schemas, one transaction per
/// stage, operations, duplicate policies, resuming, dry runs.
final class PlanMigrationTests: MigrationTestCase {
    static let item = #"{"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "optional": true, "inverse": "items"}]}"#
    static func trip(_ attributes: String, unique: Bool = false) -> String {
        #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"\#(unique ? #", "unique": true"# : "")}, \#(attributes)], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "deleteRule": "cascade", "inverse": "trip"}]}"#
    }
    var v1: String { schema("1.0.0", Self.trip(#"{"name": "start_date", "type": "date", "optional": true}"#) + ", " + Self.item) }
    var v2: String { schema("2.0.0", Self.trip(#"{"name": "startDate", "type": "date", "optional": true, "originalName": "start_date"}"#, unique: true) + ", " + Self.item) }
    /// Version 3 has version 2's storage: only its label differs.
    var v3: String { schema("3.0.0", Self.trip(#"{"name": "startDate", "type": "date", "optional": true, "originalName": "start_date"}"#, unique: true) + ", " + Self.item) }

    func plan(_ stage1: String = #""kind": "custom""#, _ stage2: String = #""kind": "custom""#) -> String {
        #"{"migrationPlan": {"schemas": [\#(v1), \#(v2), \#(v3)], "stages": [{"name": "v1toV2", "from": "1.0.0", "to": "2.0.0", \#(stage1)}, {"name": "v2toV3", "from": "2.0.0", "to": "3.0.0", \#(stage2)}]}}"#
    }

    /// A version-1 store: Paris twice (the first with two items), Rome once.
    @discardableResult
    func makeV1Store() throws -> [String] {
        try makeStore(v1, [("Trip", #"{"name": "Paris", "start_date": 10, "items": [{"title": "a"}, {"title": "b"}]}"#),
                           ("Trip", #"{"name": "Rome", "start_date": 20}"#),
                           ("Trip", #"{"name": "Paris", "start_date": 30, "items": [{"title": "c"}]}"#)])
    }

    func testHooksSeeTheOldAndTheNewSchemaAndCommitWithTheStage() throws {
        let ids = try makeV1Store()
        let seen = Box<[String]>([])
        let container = try open(config: plan()) { c in
            try c.setStageHooks(StageHooks(willMigrate: { ctx in
                XCTAssertEqual(ctx.schema.version, "1.0.0")
                // Version 1's shape: start_date; de-duplicate Paris keeping the first.
                let trips = try XCTUnwrap(JSONValue.parse(String(decoding: ctx.fetch(FetchDescriptor(entity: XCTUnwrap(ctx.schema.entity(named: "Trip")))), as: UTF8.self)).array)
                XCTAssertEqual(trips.first?["start_date"], .string("1970-01-01T00:00:10Z"))
                try ctx.delete(id: ids[2])
                seen.value.append("will")
            }, didMigrate: { ctx in
                XCTAssertEqual(ctx.schema.version, "2.0.0")
                try ctx.update(id: ids[1], patch: #"{"startDate": 25}"#)
                seen.value.append("did")
            }), forStage: "v1toV2")
        }
        XCTAssertEqual(seen.value, ["will", "did"])
        let all = try objects(container, "Trip")
        XCTAssertEqual(Set(all.keys), [ids[0], ids[1]])
        XCTAssertEqual(value(all, ids[0], "startDate"), .string("1970-01-01T00:00:10Z"))
        XCTAssertEqual(value(all, ids[1], "startDate"), .string("1970-01-01T00:00:25Z"))
        XCTAssertEqual(try count(container.makeContext(), "Item"), 2, "the deleted duplicate's items went with it (cascade)")
        XCTAssertEqual(try storedVersion(), "3.0.0")
    }

    func testAFailingHookLeavesTheStoreByteForByteAtThePreviousVersionAndNamesTheStage() throws {
        try makeV1Store()
        let before = try storeContents()
        for which in ["willMigrate", "didMigrate"] {
            let fail: StageHooks.Hook = { ctx in
                // Changes made before failing are rolled back with the stage.
                if ctx.schema.version == "1.0.0" { try ctx.delete(id: "Trip/1") }
                throw StrataError(.constraint, "refused by the app")
            }
            let e = openError(config: plan(#""kind": "custom", "onDuplicates": "keepFirst""#)) { c in
                try c.setStageHooks(which == "willMigrate" ? StageHooks(willMigrate: fail) : StageHooks(didMigrate: fail), forStage: "v1toV2")
            }
            XCTAssertEqual(e?.code, .callback)
            XCTAssertEqual(e?.stage, "v1toV2")
            XCTAssertEqual(e?.hookStatus, StrataError.Code.constraint.rawValue)
            XCTAssertEqual(e?.message, "stage 'v1toV2': the \(which) hook failed: refused by the app")
            XCTAssertEqual(try storeContents(), before, "\(which): the file changed")
        }
        XCTAssertEqual(try count(openFile(v1).makeContext(), "Trip"), 3)
    }

    func testAStageThatRebuiltTablesAndThenFailsLeavesTheStoreAsItWas() throws {
        // Version 2 moves the links of a to-many kept in pairs into the rows (every store rebuilds
        // Trip), renames Tag and drops a column; its didMigrate hook fails after the storage change.
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "note", "type": "string", "optional": true}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string", "unique": true}]}"#)
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tag", "originalName": "tags", "destination": "Label", "optional": true}]}, {"name": "Label", "originalName": "Tag", "attributes": [{"name": "label", "type": "string", "unique": true}]}"#)
        try makeStore(v1, [("Tag", #"{"label": "sea"}"#), ("Trip", #"{"name": "Oslo", "note": "n", "tags": ["Tag/1"]}"#), ("Trip", #"{"name": "Rome"}"#)])
        let before = try storeContents()
        let planJSON = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2)], "stages": [{"name": "v1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}]}}"#
        let e = openError(config: planJSON) { c in
            try c.setStageHooks(StageHooks(didMigrate: { ctx in
                XCTAssertEqual(try self.get(ctx, "Trip/1")["tag"], .string("Label/1"))
                throw StrataError(.constraint, "refused by the app")
            }), forStage: "v1toV2")
        }
        XCTAssertEqual(e?.code, .callback)
        XCTAssertEqual(try storeContents(), before)
        // The next open runs the stage.
        let c = try open(config: planJSON)
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["tag"]?.stringValue }, ["Trip/1": "Label/1", "Trip/2": nil])
        try assertFreshKey(c, "Label", #"{"label": "sun"}"#, past: ["Label/1"])
        try assertFreshKey(c, "Trip", #"{"name": "Lima"}"#, past: ["Trip/1", "Trip/2"])
    }

    func testAHookFailingWithAStatusOfItsOwnCarriesItInTheReason() throws {
        try makeV1Store()
        for (status, name) in [(Int32(42), "not a strata_status"), (StrataError.Code.readOnly.rawValue, "STRATA_ERR_READONLY")] {
            let e = openError(config: plan(#""kind": "custom", "onDuplicates": "keepFirst""#)) { c in
                try c.setStageHooks(StageHooks(didMigrate: { _ in throw StageHooks.failure(status: status) }), forStage: "v1toV2")
            }
            XCTAssertEqual(e?.code, .callback)
            XCTAssertEqual(e?.reason, .hookFailed(status: status))
            XCTAssertEqual(e?.hookStatus, status)
            XCTAssertEqual(e?.message, "stage 'v1toV2': didMigrate hook returned \(status) (\(name))")
            XCTAssertTrue(e?.json.contains(#""reason":"hook_failed""#) == true, e?.json ?? "")
        }
        XCTAssertEqual(try storedVersion(), "1.0.0")
    }

    func testAHookErrorIsRecognisedByItsReasonNotByItsMessage() throws {
        try makeV1Store()
        // Worded as a hook's status, without the reason: quoted as any other error of the hook.
        let e = openError(config: plan()) { c in
            try c.setStageHooks(StageHooks(willMigrate: { _ in throw StrataError(.callback, "stage hook returned 7 (STRATA_ERR_CONSTRAINT)") }),
                                forStage: "v1toV2")
        }
        XCTAssertEqual(e?.code, .callback)
        XCTAssertEqual(e?.reason, .hookFailed(status: nil))
        XCTAssertNil(e?.hookStatus)
        XCTAssertEqual(e?.message, "stage 'v1toV2': the willMigrate hook failed: stage hook returned 7 (STRATA_ERR_CONSTRAINT)")
        // Anything else a hook throws: no status.
        struct Refused: Error {}
        let other = openError(config: plan()) { c in
            try c.setStageHooks(StageHooks(willMigrate: { _ in throw Refused() }), forStage: "v1toV2")
        }
        XCTAssertEqual(other?.reason, .hookFailed(status: nil))
        XCTAssertEqual(try storedVersion(), "1.0.0")
    }

    func testAStageWithTheSameStorageStillRunsItsHooksOnce() throws {
        try makeStore(v2, [("Trip", #"{"name": "Oslo"}"#)])
        let runs = Box(0)
        let configure: (inout StoreConfiguration) throws -> Void = { c in
            try c.setStageHooks(StageHooks(willMigrate: { _ in runs.value += 1 }), forStage: "v2toV3")
        }
        _ = try open(config: plan(), configure)
        XCTAssertEqual(runs.value, 1)
        XCTAssertEqual(try storedVersion(), "3.0.0")
        _ = try open(config: plan(), configure)
        XCTAssertEqual(runs.value, 1, "a completed stage does not run again")
    }

    func testAFailedStageLeavesTheLastCompletedOneAndTheNextOpenResumes() throws {
        try makeV1Store()
        let e = openError(config: plan(#""kind": "custom", "onDuplicates": "keepFirst""#)) { c in
            try c.setStageHooks(StageHooks(willMigrate: { _ in throw StrataError(.invalid, "not yet") }), forStage: "v2toV3")
        }
        XCTAssertEqual(e?.stage, "v2toV3")
        XCTAssertEqual(try storedVersion(), "2.0.0")
        let container = try open(config: plan(#""kind": "custom", "onDuplicates": "keepFirst""#))
        XCTAssertEqual(try storedVersion(), "3.0.0")
        XCTAssertEqual(try count(container.makeContext(), "Trip"), 2)
    }

    func testUniquenessOverDuplicatesFailsNamingAValueAndTheWayOut() throws {
        let ids = try makeV1Store()
        let before = try storeContents()
        let e = openError(config: plan())
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.stage, "v1toV2")
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "name")
        let m = e?.message ?? ""
        XCTAssertTrue(m.contains(#"cannot adopt unique attribute 'name': 2 objects share name = "Paris" (\#(ids[0]), \#(ids[2]))"#), m)
        XCTAssertTrue(m.contains(#""onDuplicates": "keepFirst" or "keepLast""#), m)
        XCTAssertEqual(try storeContents(), before)
    }

    func testOnDuplicatesKeepsTheFirstOrTheLast() throws {
        for (policy, kept) in [("keepFirst", 0), ("keepLast", 2)] {
            let path = storePath(policy)
            let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "start_date": 10}"#), ("Trip", #"{"name": "Rome"}"#),
                                         ("Trip", #"{"name": "Paris", "start_date": 30}"#)], path: path)
            let container = try open(config: plan(#""kind": "custom", "onDuplicates": "\#(policy)""#), path: path)
            let all = try objects(container, "Trip")
            XCTAssertEqual(Set(all.keys), [ids[kept], ids[1]], policy)
        }
    }

    func testTheDeduplicateOperationKeepsOneAndMergesRelationships() throws {
        let ids = try makeV1Store()
        let op = #""kind": "custom", "willMigrate": [{"op": "deduplicate", "entity": "Trip", "by": ["name"], "keep": "last", "mergeRelationships": true}]"#
        let container = try open(config: plan(op))
        let context = try container.makeContext()
        let all = try objects(container, "Trip")
        XCTAssertEqual(Set(all.keys), [ids[1], ids[2]])
        let items = try XCTUnwrap(all[ids[2]]?["items"]?.array)
        XCTAssertEqual(items.count, 3, "the kept Paris holds the removed one's items")
        XCTAssertEqual(try count(context, "Item"), 3)
    }

    func testAStoreOlderThanThePlanMigratesLightweightFirst() throws {
        // Version 0.9 has no start date at all.
        try makeStore(schema("0.9", Self.trip(#"{"name": "note", "type": "string", "optional": true}"#) + ", " + Self.item),
                      [("Trip", #"{"name": "Oslo", "note": "x"}"#)])
        if onSQLite {  // strata_check_store reads store files only
            let c = try StoreConfiguration.decode(plan())
            XCTAssertTrue(try ModelContainer.checkStore(path: storePath(), configuration: c)
                            .contains(#""status":"migratable","storedVersion":"0.9","currentVersion":"3.0.0","stages":[{"name":"lightweight 0.9 -> 1.0.0""#))
        }
        let container = try open(config: plan())
        XCTAssertEqual(try fetch(container.makeContext(), "Trip").first?["name"], .string("Oslo"))
        XCTAssertEqual(try storedVersion(), "3.0.0")
    }

    func testDryRunsTouchNoStore() throws {
        let steps = try ModelContainer.inferMigration(from: v1, to: v2)
        XCTAssertTrue(steps.contains(#"{"kind":"renameAttribute","entity":"Trip","property":"startDate","from":"start_date","to":"startDate","sql":["ALTER TABLE \"Trip\" RENAME COLUMN \"start_date\" TO \"startDate\""]}"#), steps)
        XCTAssertTrue(steps.contains(#""kind":"addUniqueConstraint","entity":"Trip","property":"name""#), steps)
        let e = assertError(.migration) {
            try ModelContainer.inferMigration(from: v1, to: schema("2.0.0", Self.trip(#"{"name": "start_date", "type": "string"}"#) + ", " + Self.item))
        }
        XCTAssertEqual(e?.attribute, "start_date")
        let bad = assertError(.invalid) { try ModelContainer.inferMigration(from: "{", to: v2) }
        XCTAssertEqual(bad?.path, "/from")

        guard onSQLite else { return }  // strata_check_store reads store files only
        try makeV1Store()
        let before = try storeContents()
        let report = try ModelContainer.checkStore(path: storePath(), configuration: StoreConfiguration.decode(plan()))
        XCTAssertTrue(report.hasPrefix(#"{"status":"migratable","storedVersion":"1.0.0","currentVersion":"3.0.0","stages":[{"name":"v1toV2","kind":"custom","from":"1.0.0","to":"2.0.0","changesStorage":true},{"name":"v2toV3","kind":"custom","from":"2.0.0","to":"3.0.0","changesStorage":false}]}"#), report)
        XCTAssertEqual(try storeContents(), before)
        let same = try ModelContainer.checkStore(path: storePath(), configuration: StoreConfiguration.decode(#"{"schema": \#(v1)}"#))
        XCTAssertEqual(same, #"{"status":"compatible","storedVersion":"1.0.0","currentVersion":"1.0.0","stages":[]}"#)
        let other = try ModelContainer.checkStore(path: storePath(), configuration: StoreConfiguration.decode(
            #"{"schema": \#(schema("2.0.0", Self.trip(#"{"name": "start_date", "type": "string"}"#) + ", " + Self.item))}"#))
        XCTAssertTrue(other.hasPrefix(#"{"status":"incompatible""#), other)
        XCTAssertTrue(other.contains("changes type from date to string"), other)
    }

    func descriptor(_ context: ModelContext, _ json: String) throws -> FetchDescriptor {
        var bytes = Array(json.utf8)
        return try bytes.withUnsafeMutableBufferPointer { try context.descriptor(UnsafeBufferPointer($0)) }
    }

    func testDidMigrateReadsTheOldVersionWithTheSameIdentifiers() throws {
        // Version 2 drops start_date for a text "when": didMigrate fills it from the old shape.
        let ids = try makeV1Store()
        let v2 = schema("2.0.0", Self.trip(#"{"name": "when", "type": "string", "optional": true}"#) + ", " + Self.item)
        let planJSON = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2)], "stages": [{"name": "v1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}]}}"#
        let container = try open(config: planJSON) { c in
            try c.setStageHooks(StageHooks(willMigrate: { ctx in
                // Saved inside the stage: the old version is read as committed before the stage began.
                try ctx.update(id: ids[1], patch: #"{"start_date": 99}"#)
                _ = try ctx.save()
            }, didMigrate: { ctx in
                let old = try self.descriptor(ctx, #"{"entity": "Trip", "fromVersion": "1.0.0", "propertiesToFetch": ["start_date"], "sortBy": [{"key": "start_date", "order": "reverse"}]}"#)
                let trips = try XCTUnwrap(JSONValue.parse(String(decoding: ctx.fetch(old), as: UTF8.self)).array)
                XCTAssertEqual(trips.map { $0["_id"]?.stringValue }, [ids[2], ids[1], ids[0]])
                XCTAssertEqual(trips.map { $0["start_date"] }, [30, 20, 10].map { .string("1970-01-01T00:00:\($0)Z") })
                for t in trips {
                    guard let id = t["_id"]?.stringValue, case .string(let date)? = t["start_date"] else { continue }
                    try ctx.update(id: id, patch: #"{"when": "\#(date)"}"#)
                }
                XCTAssertEqual(try ctx.fetchCount(old), 3)
                // Between reads of the old version, the new one is read and saved as usual.
                _ = try ctx.save()
                XCTAssertEqual(try ctx.fetchCount(self.descriptor(ctx, #"{"entity": "Trip", "predicate": "$0.when != nil"}"#)), 3)
                let paris = try self.descriptor(ctx, #"{"entity": "Trip", "fromVersion": "1.0.0", "predicate": "$0.name == \"Paris\"", "relationshipKeyPathsForPrefetching": ["items"]}"#)
                let two = try XCTUnwrap(JSONValue.parse(String(decoding: ctx.fetch(paris), as: UTF8.self)).array)
                XCTAssertEqual(two.map { $0["_id"]?.stringValue }, [ids[0], ids[2]])
                XCTAssertEqual(two.map { $0["items"]?.array?.count }, [2, 1])
                // Another version, or a key of the new version, is refused.
                XCTAssertThrowsError(try self.descriptor(ctx, #"{"entity": "Trip", "fromVersion": "0.1"}"#))
                XCTAssertThrowsError(try self.descriptor(ctx, #"{"entity": "Trip", "fromVersion": "1.0.0", "propertiesToFetch": ["when"]}"#))
            }), forStage: "v1toV2")
        }
        let all = try objects(container, "Trip")
        XCTAssertEqual(value(all, ids[0], "when"), .string("1970-01-01T00:00:10Z"))
        XCTAssertEqual(value(all, ids[2], "when"), .string("1970-01-01T00:00:30Z"))
        let e = assertError(.invalid) { try self.descriptor(container.makeContext(), #"{"entity": "Trip", "fromVersion": "1.0.0"}"#) }
        XCTAssertEqual(e?.path, "/fromVersion")
        XCTAssertTrue(e?.message.contains("only a didMigrate hook reads an earlier version") == true, e?.message ?? "")
    }

    func testAddingSubentitiesChecksNoOldRowAndClearsNoLink() throws {
        // Version 4's shape: business and personal trips below Trip, with required attributes.
        let v4 = schema("4.0.0", Self.trip(#"{"name": "startDate", "type": "date", "optional": true, "originalName": "start_date"}"#, unique: true)
                        + ", " + Self.item + #", {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "default": 0}]}"#
                        + #", {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string"}]}"#)
        let steps = try ModelContainer.inferMigration(from: v2, to: v4)
        for kind in ["checkRequired", "fillDefault", "clearLinks", "clearValues"] {
            XCTAssertFalse(steps.contains(#""kind":"\#(kind)""#), "\(kind) in \(steps)")
        }
        XCTAssertTrue(steps.contains(#""kind":"addAttribute","entity":"PersonalTrip","property":"reason""#), steps)
    }

    func testTablesThatDoNotMatchTheStoredSchemaAreCorruptAndLeftAsTheyWere() throws {
        try makeV1Store()
        // Someone removed a column behind Strata's back.
        try execute(storePath(), #"ALTER TABLE "Trip" DROP COLUMN "start_date""#)
        let before = try storeContents()
        let e = openError(config: plan(#""kind": "custom", "onDuplicates": "keepFirst""#))
        XCTAssertEqual(e?.code, .corrupt)
        // Found when the store opens, before any stage runs (the open checks the tables against the stored schema).
        XCTAssertNil(e?.stage)
        let missing = onSQLite ? "its table 'Trip' does not match the stored schema: column 'start_date' is missing"
            : "the table 'Trip' has the columns _pk, _entity, name, not _pk, _entity, name, start_date"
        XCTAssertTrue(e?.message.contains(missing) == true, e?.message ?? "")
        XCTAssertTrue(e?.message.contains("stored schema version 1.0.0") == true, e?.message ?? "")
        XCTAssertEqual(try storeContents(), before)
    }

    func testProgressReportsEachStage() throws {
        try makeStore(v2, [("Trip", #"{"name": "Oslo"}"#)])
        let events = Box<[String]>([])
        _ = try open(config: plan()) { c in c.progress = { events.value.append($0) } }
        XCTAssertEqual(events.value.first, #"{"stage":"v2toV3","step":"begin"}"#)
        XCTAssertEqual(events.value.last, #"{"stage":"v2toV3","step":"commit"}"#)
    }
}

/// A value hooks (escaping, Sendable closures) can change.
final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
