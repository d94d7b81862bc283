import Foundation
import Glibc
import XCTest
@testable import Strata

/// The open decision: create, open, or refuse (and the file is left untouched).
final class StoreOpenerTests: StoreTestCase {
    static func schema(_ version: String, _ attributes: String = #"{"name": "a", "type": "string"}"#) -> String {
        #"{"version": "\#(version)", "entities": [{"name": "Thing", "attributes": [\#(attributes)]}]}"#
    }
    static let v1 = schema("1.0.0")
    static let v2 = schema("2.0.0", #"{"name": "a", "type": "string"}, {"name": "b", "type": "int", "default": 0}"#)
    static let plan = #"{"schemas": [\#(v1), \#(v2)], "stages": [{"name": "v1toV2", "kind": "lightweight", "from": "1.0.0", "to": "2.0.0"}]}"#

    func openPlan(_ planJSON: String = plan, path: String, readOnly: Bool = false) throws -> ModelContainer {
        try ModelContainer(path: path, configuration: StoreConfiguration.decode(#"{"migrationPlan": \#(planJSON), "readOnly": \#(readOnly)}"#))
    }

    func state(_ path: String) throws -> StoredState? {
        let c = try Connection(path: path, readOnly: true, create: false)
        return try SQLiteStore.readState(c, path: path)
    }

    /// Bytes and modification time (nanoseconds) of a file.
    func snapshot(_ path: String) throws -> ([UInt8], Int) {
        var st = stat()
        XCTAssertEqual(stat(path, &st), 0)
        return (try XCTUnwrap(fileBytes(path)), st.st_mtim.tv_sec * 1_000_000_000 + st.st_mtim.tv_nsec)
    }

    func assertUntouched(_ path: String, since before: ([UInt8], Int), file: StaticString = #filePath, line: UInt = #line) throws {
        let after = try snapshot(path)
        XCTAssertTrue(after.0 == before.0, "the file's bytes changed", file: file, line: line)
        XCTAssertEqual(after.1, before.1, "the file's modification time changed", file: file, line: line)
    }

    func refusal(_ d: OpenDecision) -> StrataError? {
        if case .refuse(let e) = d { return e }
        XCTFail("expected a refusal, got \(d)")
        return nil
    }

    // MARK: Decisions, without a store

    func testAnEmptyDatabaseIsCreatedUnlessReadOnly() throws {
        let opener = StoreOpener(schema: try makeSchema(Self.v1))
        guard case .create = opener.decide(nil, name: .file("x"), readOnly: false, formatVersion: 1) else { return XCTFail("not create") }
        let e = refusal(opener.decide(nil, name: .file("x"), readOnly: true, formatVersion: 1))
        XCTAssertEqual(e?.code, .incompatibleStore)
        XCTAssertEqual(e?.message, "'x' is an empty database, not a Strata store; a read-only open cannot create one")
    }

    func testTheSameStorageOpensAndRefreshesTheDeclarationWhenWritable() throws {
        let schema = try makeSchema(Self.v1)
        let opener = StoreOpener(schema: schema)
        var stored = StoredState(schemaJSON: schema.json.text, version: "1.0.0", versionHash: schema.versionHash, formatVersion: 1)
        guard case .open(refreshDeclaration: false) = opener.decide(stored, name: .file("x"), readOnly: false, formatVersion: 1) else {
            return XCTFail("not a plain open")
        }
        stored.schemaJSON = Self.schema("1.0.0", #"{"name": "a", "type": "string", "default": "n"}"#)
        guard case .open(refreshDeclaration: true) = opener.decide(stored, name: .file("x"), readOnly: false, formatVersion: 1) else {
            return XCTFail("the declaration is not refreshed")
        }
        guard case .open(refreshDeclaration: false) = opener.decide(stored, name: .file("x"), readOnly: true, formatVersion: 1) else {
            return XCTFail("a read-only open wrote the declaration")
        }
    }

    func testMissingOrUnreadableStoredSchemaIsCorrupt() throws {
        let opener = StoreOpener(schema: try makeSchema(Self.v1))
        let missing = refusal(opener.decide(StoredState(versionHash: "abc"), name: .file("x"), readOnly: false, formatVersion: 1))
        XCTAssertEqual(missing?.code, .corrupt)
        XCTAssertEqual(missing?.message, "'x' has a strata_metadata table without a stored schema")
        let garbled = refusal(opener.decide(StoredState(schemaJSON: "{not json", versionHash: "abc"), name: .file("x"), readOnly: false, formatVersion: 1))
        XCTAssertEqual(garbled?.code, .corrupt)
        XCTAssertTrue(garbled?.message.hasPrefix("the schema stored in 'x' cannot be read: ") == true, garbled?.message ?? "")
    }

    func testANewerFormatIsRefused() throws {
        let schema = try makeSchema(Self.v1)
        let stored = StoredState(schemaJSON: schema.json.text, versionHash: schema.versionHash, formatVersion: 2)
        let e = refusal(StoreOpener(schema: schema).decide(stored, name: .file("x"), readOnly: false, formatVersion: 1))
        XCTAssertEqual(e?.code, .incompatibleStore)
        XCTAssertEqual(e?.message, "'x' was written by a newer Strata (store format 2, this library reads 1)")
    }

    func testAnotherSchemaMigratesWhenInferableElseIsRefusedNamingTheChanges() throws {
        let old = try makeSchema(Self.v1)
        let stored = StoredState(schemaJSON: old.json.text, version: "1.0.0", versionHash: old.versionHash, formatVersion: 1)
        guard case .migrate(let stages) = StoreOpener(schema: try makeSchema(Self.v2)).decide(stored, name: .file("x"), readOnly: false, formatVersion: 1) else {
            return XCTFail("an inferable change is migrated")
        }
        XCTAssertEqual(stages.map(\.name), ["lightweight 1.0.0 -> 2.0.0"])
        let off = StoreOpener(schema: try makeSchema(Self.v2), automaticMigration: false)
        let e = refusal(off.decide(stored, name: .file("x"), readOnly: false, formatVersion: 1))
        XCTAssertEqual(e?.code, .incompatibleStore)
        XCTAssertEqual(e?.message, "the store 'x' holds schema version 1.0.0, which differs from the configured version 2.0.0: "
                       + "entity 'Thing': attribute 'b' added; automatic migration is off (the file was left untouched)")
        let typeChange = try makeSchema(Self.schema("2.0.0", #"{"name": "a", "type": "int"}"#))
        let m = refusal(StoreOpener(schema: typeChange).decide(stored, name: .file("x"), readOnly: false, formatVersion: 1))
        XCTAssertEqual(m?.code, .migration)
        XCTAssertEqual(m?.entity, "Thing")
        XCTAssertEqual(m?.attribute, "a")
        XCTAssertTrue(m?.message.contains("attribute 'a' changes type from string to int") == true, m?.message ?? "")
    }

    // MARK: Opening stores

    func testCreatingAStoreRecordsItsState() throws {
        let path = storePath()
        let container = try openFile(Self.v1, path: path)
        let schema = container.schema
        let stored = try XCTUnwrap(try state(path))
        XCTAssertEqual(stored.schemaJSON, schema.json.text)
        XCTAssertEqual(stored.version, "1.0.0")
        XCTAssertEqual(stored.versionHash, schema.versionHash)
        XCTAssertEqual(stored.entityHashes, ["Thing": try XCTUnwrap(schema.entity(named: "Thing")).versionHash])
        XCTAssertEqual(stored.formatVersion, SQLiteStore.formatVersion)
        XCTAssertEqual(stored.storeUUID, try XCTUnwrap(container.store as? SQLiteStore).storeUUID)
        XCTAssertEqual(stored.storeUUID?.count, 36)
    }

    func testANewerFormatStoreIsRefusedAndLeftUntouched() throws {
        let path = storePath()
        _ = try openFile(Self.v1, path: path)
        do {
            let c = try Connection(path: path, readOnly: false, create: false)
            try c.execute("UPDATE strata_metadata SET value = ? WHERE key = 'formatVersion'", [.int(SQLiteStore.formatVersion + 1)])
        }
        let before = try snapshot(path)
        let e = assertError(.incompatibleStore) { try openFile(Self.v1, path: path) }
        XCTAssertTrue(e?.message.contains("was written by a newer Strata (store format 2, this library reads 1)") == true, e?.message ?? "")
        try assertUntouched(path, since: before)
    }

    func testAStoreOfAnOlderPlanVersionMigratesUnlessReadOnly() throws {
        let path = storePath()
        do {
            let context = try openFile(Self.v1, path: path).makeContext()
            _ = try context.insert(entity: "Thing", json: #"{"a": "kept"}"#)
            try context.save()
        }
        let before = try snapshot(path)
        let e = assertError(.readOnly) { try openPlan(path: path, readOnly: true) }
        XCTAssertEqual(e?.message, "the store '\(path)' holds version 1.0.0 and needs migrating to 2.0.0 (v1toV2); a read-only open cannot "
                       + "migrate it (the file was left untouched)")
        try assertUntouched(path, since: before)
        let container = try openPlan(path: path)
        let things = try fetch(container.makeContext(), "Thing")
        XCTAssertEqual(things.count, 1)
        XCTAssertEqual(things.first?["a"], .string("kept"))
        XCTAssertEqual(things.first?["b"], .number("0"))
        XCTAssertEqual(try state(path)?.version, "2.0.0")
    }

    func testTheOlderVersionIsFoundByItsStorageNotItsLabel() throws {
        // A store made before the plan existed, labelled 0.1: its storage is version 1.0.0's.
        let path = storePath()
        _ = try openFile(Self.schema("0.1"), path: path)
        let stored = try XCTUnwrap(try state(path))
        let opener = StoreOpener(schema: try makeSchema(Self.v2), plan: try MigrationPlan.decode(JSONValue.parse(Self.plan), path: JSONPath()))
        guard case .migrate(let stages) = opener.decide(stored, name: .file(path), readOnly: false, formatVersion: 1) else {
            return XCTFail("not a migration")
        }
        XCTAssertEqual(stages.map(\.name), ["v1toV2"])
        _ = try openPlan(path: path)
        XCTAssertEqual(try state(path)?.version, "2.0.0")
    }

    func testAStoreOfThePlansCurrentVersionOpens() throws {
        let path = storePath()
        do {
            let context = try openFile(Self.v2, path: path).makeContext()
            _ = try context.insert(entity: "Thing", json: #"{"a": "x", "b": 2}"#)
            try context.save()
        }
        let container = try openPlan(path: path)
        XCTAssertEqual(container.schema.version, "2.0.0")
        XCTAssertEqual(try count(container.makeContext(), "Thing"), 1)
        // And a new file opened with a plan is created at the current version.
        let fresh = storePath("fresh")
        _ = try openPlan(path: fresh)
        XCTAssertEqual(try state(fresh)?.version, "2.0.0")
    }

    func testAStoreClaimingAPlanVersionWithOtherStorageIsRefusedAndLeftUntouched() throws {
        let path = storePath()
        _ = try openFile(Self.schema("1.0.0", #"{"name": "z", "type": "double"}"#), path: path)
        let before = try snapshot(path)
        let e = assertError(.incompatibleStore) { try openPlan(path: path) }
        XCTAssertTrue(e?.message.contains("holds a version 1.0.0 whose storage differs from the migration plan's version 1.0.0: "
                                          + "entity 'Thing': attribute 'z' removed; entity 'Thing': attribute 'a' added "
                                          + "(the migration plan's versions: 1.0.0, 2.0.0)") == true, e?.message ?? "")
        try assertUntouched(path, since: before)
    }

    func testANewerStoreIsRefusedAndLeftUntouched() throws {
        let path = storePath()
        _ = try openFile(Self.schema("3.0.0", #"{"name": "a", "type": "string"}, {"name": "c", "type": "int", "optional": true}"#), path: path)
        let before = try snapshot(path)
        for config in [#"{"migrationPlan": \#(Self.plan)}"#, #"{"schema": \#(Self.v2)}"#] {
            let e = assertError(.incompatibleStore) { try ModelContainer(path: path, configuration: StoreConfiguration.decode(config)) }
            XCTAssertTrue(e?.message.contains("holds version 3.0.0, newer than this app's 2.0.0") == true, e?.message ?? "")
            try assertUntouched(path, since: before)
        }
    }

    func testAStoredStateWithoutASchemaIsCorrupt() throws {
        let path = storePath()
        _ = try openFile(Self.v1, path: path)
        do {
            let c = try Connection(path: path, readOnly: false, create: false)
            try c.execute("DELETE FROM strata_metadata WHERE key = 'schema'")
        }
        XCTAssertNil(try state(path)?.schemaJSON)
        let e = assertError(.corrupt) { try openFile(Self.v1, path: path) }
        XCTAssertTrue(e?.message.contains("has a strata_metadata table without a stored schema") == true, e?.message ?? "")
    }

    func testARefreshedDeclarationIsStored() throws {
        let path = storePath()
        _ = try openFile(Self.v1, path: path)
        let withDefault = Self.schema("1.0.0", #"{"name": "a", "type": "string", "default": "n"}"#)
        _ = try openFile(withDefault, path: path)
        XCTAssertEqual(try state(path)?.schemaJSON, try makeSchema(withDefault).json.text)
    }

    func testAnEmptyDatabaseStateIsNil() throws {
        let path = storePath()
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        XCTAssertNil(try state(path))
    }

    /// A policy that lets another container create the store between the state read and the create.
    final class Interloper: StoreOpenPolicy {
        let opener: StoreOpener
        let make: () throws -> ModelContainer
        var seen: [StoredState?] = []
        var other: ModelContainer?
        init(_ opener: StoreOpener, make: @escaping () throws -> ModelContainer) { self.opener = opener; self.make = make }
        func open(_ stored: StoredState?, _ store: StoreOpening) throws {
            seen.append(stored)
            if stored == nil, other == nil { other = try make() }
            try opener.open(stored, store)
        }
    }

    func testAStoreCreatedByAnotherConnectionFirstIsOpenedNotCreatedAgain() throws {
        let path = storePath()
        let config = try configuration(Self.v1)
        let policy = Interloper(StoreOpener(schema: config.schema, plan: config.migrationPlan)) { try ModelContainer(path: path, configuration: config) }
        let store = try SQLiteStore(path: path, options: config.storeOptions, policy: policy)
        XCTAssertEqual(policy.seen.count, 2, "asked again after losing the race")
        XCTAssertNil(policy.seen[0] ?? nil)
        let created = try XCTUnwrap(policy.other?.store as? SQLiteStore).storeUUID
        XCTAssertEqual(policy.seen[1]?.storeUUID, created)
        XCTAssertEqual(store.storeUUID, created)
    }
}
