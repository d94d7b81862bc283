import Foundation
import XCTest
@testable import Strata

/// History across migrations: every row survives, renames apply to older history.
final class HistoryMigrationTests: HistoryTestCase {
    private let v1 = #"""
    {"version": "1.0.0", "entities": [
      {"name": "Trip", "attributes": [
        {"name": "name", "type": "string", "preserveValueOnDeletion": true, "historyValues": true},
        {"name": "start_date", "type": "date", "preserveValueOnDeletion": true, "historyValues": true},
        {"name": "notes", "type": "string", "optional": true}]},
      {"name": "Place", "attributes": [{"name": "title", "type": "string"}]},
      {"name": "Scratch", "attributes": [{"name": "x", "type": "int", "preserveValueOnDeletion": true}]}
    ]}
    """#

    private let v2 = #"""
    {"version": "2.0.0", "entities": [
      {"name": "Trip", "attributes": [
        {"name": "name", "type": "string", "preserveValueOnDeletion": true, "historyValues": true},
        {"name": "startDate", "originalName": "start_date", "type": "date", "preserveValueOnDeletion": true, "historyValues": true},
        {"name": "notes", "type": "string", "optional": true}]},
      {"name": "Venue", "originalName": "Place", "attributes": [{"name": "title", "type": "string"}]}
    ]}
    """#

    /// Version 1 history: inserts, updates with values, deletes with tombstones.
    private func makeV1History() throws -> [String] {
        let c = try openFile(v1)
        let ctx = try c.makeContext()
        ctx.author = "v1"
        let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "start_date": "2025-06-01T00:00:00Z"}"#)
        let other = try ctx.insert(entity: "Trip", json: #"{"name": "Rome", "start_date": 0}"#)
        let place = try ctx.insert(entity: "Place", json: #"{"title": "Louvre"}"#)
        let scratch = try ctx.insert(entity: "Scratch", json: #"{"x": 1}"#)
        try ctx.save()
        try ctx.update(id: trip.description, patch: #"{"start_date": "2025-07-01T00:00:00Z", "notes": "later"}"#)
        try ctx.update(id: place.description, patch: #"{"title": "Orsay"}"#)
        try ctx.update(id: scratch.description, patch: #"{"x": 2}"#)
        try ctx.save()
        try ctx.delete(id: other.description)
        try ctx.delete(id: scratch.description)
        try ctx.save()
        return try tokens(ctx)
    }

    /// A migration's renames of the history's names, by the store's own function (the one its
    /// migration calls in the stage's transaction), on a version 1 store: the older history
    /// reads under version 2's names, and the entity version 2 drops keeps its name.
    func testTheStoreRenamesHistoryNamesForAMigration() throws {
        forEachHistorySetup {
            let before = try makeV1History()
            let mapping = try SchemaMapping.infer(from: try makeSchema(v1), to: try makeSchema(v2))
            let path = storePath()
            if onPostgres {
                let c = try PGConnection(uri: path)
                try c.execute(script: "BEGIN")
                try PostgresHistoryNames.rename(c, mapping)
                try c.execute(script: "COMMIT")
            } else {
                let c = try Connection(path: path, readOnly: false, create: false)
                try c.transaction { try SQLiteHistoryNames.rename(c, mapping) }
            }
            let ctx = try openFile(v1).makeContext()
            let all = try history(ctx)
            XCTAssertEqual(all.compactMap { $0["token"]?.stringValue }, before)
            XCTAssertEqual(lines(all[0]), ["insert Trip/1", "insert Trip/2", "insert Venue/1", "insert Scratch/1"])
            XCTAssertEqual(Set(lines(all[1])), [
                #"update Trip/1 [startDate,notes] old={"startDate":"2025-06-01T00:00:00Z"} new={"startDate":"2025-07-01T00:00:00Z"}"#,
                "update Venue/1 [title]",
                "update Scratch/1 [x]",
            ])
            let scratch = #"{"predicate": "$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Scratch\" }"}"#
            XCTAssertEqual(try tokens(ctx, scratch), before)
        }
    }

    func testLightweightRenamesApplyToOlderHistory() throws {
        forEachHistorySetup {
            if skipped(on: .postgres, "the PostgreSQL store does not migrate its tables yet (its changeStorage refuses)") { return }
            let before = try makeV1History()
            XCTAssertEqual(before.count, 3)
            let path = storePath()
            let transactions = try rowCount(path, "strata_history_transaction")
            let changes = try rowCount(path, "strata_history_change")

            let c = try openFile(v2)
            let ctx = try c.makeContext()
            XCTAssertEqual(try rowCount(path, "strata_history_transaction"), transactions)
            XCTAssertEqual(try rowCount(path, "strata_history_change"), changes)
            let all = try history(ctx)
            XCTAssertEqual(all.compactMap { $0["token"]?.stringValue }, before, "tokens survive")
            XCTAssertEqual(all.map { $0["author"]?.stringValue }, ["v1", "v1", "v1"])
            XCTAssertEqual(lines(all[0]), ["insert Trip/1", "insert Trip/2", "insert Venue/1", "insert Scratch/1"])
            XCTAssertEqual(Set(lines(all[1])), [
                #"update Trip/1 [startDate,notes] old={"startDate":"2025-06-01T00:00:00Z"} new={"startDate":"2025-07-01T00:00:00Z"}"#,
                "update Venue/1 [title]",
                "update Scratch/1 [x]",
            ])
            XCTAssertEqual(Set(lines(all[2])), [
                #"delete Trip/2 tombstone={"name":"Rome","startDate":"1970-01-01T00:00:00Z"}"#,
                #"delete Scratch/1 tombstone={"x":2}"#,
            ])
            // Predicates use the new names; the removed entity keeps its old one.
            let venue = #"{"predicate": "$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Venue\" }"}"#
            XCTAssertEqual(try tokens(ctx, venue), [before[0], before[1]])
            let place = #"{"predicate": "$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Place\" }"}"#
            XCTAssertEqual(try tokens(ctx, place), [])
            let scratch = #"{"predicate": "$0.changes.contains { $0.changedPersistentIdentifier.entityName == \"Scratch\" }"}"#
            XCTAssertEqual(try tokens(ctx, scratch), before)
            // Tokens from before the migration still read what follows, and new saves continue the sequence.
            try ctx.update(id: "Trip/1", patch: #"{"startDate": 0}"#)
            let prado = try ctx.insert(entity: "Venue", json: #"{"title": "Prado"}"#)
            try ctx.save()
            let after = try history(ctx, #"{"predicate": "$0.token > t", "bindings": {"t": "\#(before[2])"}}"#)
            XCTAssertEqual(after.count, 1)
            XCTAssertEqual(sequence(after[0]["token"]?.stringValue ?? ""), sequence(before[2]) + 1)
            XCTAssertEqual(Set(lines(after[0])), [
                #"update Trip/1 [startDate] old={"startDate":"2025-07-01T00:00:00Z"} new={"startDate":"1970-01-01T00:00:00Z"}"#,
                "insert \(prado)",
            ])
            // Reopened at version 2: the same.
            XCTAssertEqual(try history(try openFile(v2).makeContext()).count, 4)
        }
    }

    func testCustomStageHookSavesAreRecorded() throws {
        forEachHistorySetup {
            if skipped(on: .postgres, "the PostgreSQL store does not migrate its tables yet (its changeStorage refuses)") { return }
            let before = try makeV1History()
            let plan = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2)], "stages": [{"name": "s12", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}]}}"#
            let c = try open(config: plan) { c in
                try c.setStageHooks(StageHooks(willMigrate: { ctx in
                    ctx.name = "will"
                    try ctx.update(id: "Place/1", patch: #"{"title": "Before"}"#)
                    try ctx.save()
                }, didMigrate: { ctx in
                    ctx.name = "did"
                    try ctx.update(id: "Venue/1", patch: #"{"title": "After"}"#)
                    try ctx.save()
                }), forStage: "s12")
            }
            let ctx = try c.makeContext()
            let all = try history(ctx)
            XCTAssertEqual(all.count, 5)
            XCTAssertEqual(all.prefix(3).compactMap { $0["token"]?.stringValue }, before)
            XCTAssertEqual(all.map { $0["contextName"]?.stringValue }, [nil, nil, nil, "will", "did"])
            XCTAssertEqual(lines(all[3]), ["update Venue/1 [title]"], "written as Place, read under the new name")
            XCTAssertEqual(lines(all[4]), ["update Venue/1 [title]"])
            XCTAssertEqual(try objects(c, "Venue")["Venue/1"]?["title"], .string("After"))
        }
    }

    /// examples/trips: a version 1 store with history, opened with the version 4 plan.
    func testTripsPlanKeepsHistoryUnderTheNewNames() throws {
        forEachHistorySetup {
            if skipped(on: .postgres, "the PostgreSQL store does not migrate its tables yet (its changeStorage refuses)") { return }
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples/trips")
            let v1JSON = try String(contentsOf: root.appendingPathComponent("schema-v1.json"), encoding: .utf8)
            let planJSON = try String(contentsOf: root.appendingPathComponent("plan.json"), encoding: .utf8)
            let c1 = try openFile(v1JSON)
            let ctx1 = try c1.makeContext()
            let trip = try ctx1.insert(entity: "Trip", json: #"{"name": "Paris", "destination": "FR", "start_date": 0, "end_date": 86400, "bucketList": [{"title": "Louvre"}]}"#)
            try ctx1.save()
            try ctx1.update(id: trip.description, patch: #"{"start_date": 3600, "end_date": 90000}"#)
            try ctx1.save()
            let before = try tokens(ctx1)
            XCTAssertEqual(lines(try history(ctx1)[1]), ["update Trip/1 [start_date,end_date]"])

            let c4 = try open(config: #"{"migrationPlan": \#(planJSON)}"#)
            let ctx4 = try c4.makeContext()
            XCTAssertEqual(c4.schema.version, "4.0.0")
            let all = try history(ctx4)
            XCTAssertEqual(Array(all.prefix(2).compactMap { $0["token"]?.stringValue }), before)
            XCTAssertEqual(lines(all[0]), ["insert Trip/1", "insert BucketListItem/1"])
            XCTAssertEqual(lines(all[1]), ["update Trip/1 [startDate,endDate]"])
            let after = try history(ctx4, #"{"predicate": "$0.token > t", "bindings": {"t": "\#(before[1])"}}"#)
            XCTAssertTrue(after.allSatisfy { t in (t["changes"]?.array ?? []).allSatisfy { $0["attributes"]?.array?.contains(.string("start_date")) != true } },
                          "\(after)")
            // A delete now records version 4's preserved values.
            try ctx4.delete(id: trip.description)
            try ctx4.save()
            let last = try XCTUnwrap(history(ctx4).last)
            XCTAssertTrue(lines(last).contains(#"delete Trip/1 tombstone={"name":"Paris","startDate":"1970-01-01T01:00:00Z","endDate":"1970-01-02T01:00:00Z"}"#), "\(lines(last))")
        }
    }
}
