import Foundation
import XCTest
@testable import Strata

/// Stage hooks that reach beyond their call: a prepared fetch made on the lent
/// context, an open of the store being migrated, and the author of their saves.
final class ReentrantHookTests: HistoryTestCase {
    /// On PostgreSQL too, but for the history of the hooks' saves.
    override class var runsOnPostgreSQL: Bool { true }

    private let v1 = #"{"version": "1.0.0", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}]}]}"#
    private let v2 = #"{"version": "2.0.0", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "rank", "type": "int", "default": 0}]}]}"#

    private var plan: String {
        #"{"migrationPlan": {"schemas": [\#(v1), \#(v2)], "stages": [{"name": "s12", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}]}, "author": "app"}"#
    }

    private func makeV1() throws {
        let c = try openFile(v1)
        let ctx = try c.makeContext()
        _ = try ctx.insert(entity: "Note", json: #"{"title": "a"}"#)
        try ctx.save()
    }

    /// Holds what a hook leaves behind.
    private final class Kept: @unchecked Sendable {
        var prepared: PreparedFetch?
        var context: ModelContext?
        var openError: StrataError?
        var openSeconds: Double = -1
    }

    func testAPreparedFetchMadeInAHookIsMisuseAfterIt() throws {
        try makeV1()
        let kept = Kept()
        let c = try open(config: plan) { c in
            try c.setStageHooks(StageHooks(willMigrate: { ctx in
                var d = Array(#"{"entity": "Note"}"#.utf8)
                kept.prepared = try d.withUnsafeMutableBufferPointer { try ctx.prepare(UnsafeBufferPointer($0)) }
                kept.context = ctx
                XCTAssertEqual(try kept.prepared?.fetchCount(bindings: nil), 1, "usable inside the hook")
            }), forStage: "s12")
        }
        XCTAssertEqual(c.schema.version, "2.0.0")
        let prepared = try XCTUnwrap(kept.prepared)
        assertError(.misuse) { try prepared.fetch(bindings: nil) }
        assertError(.misuse) { try prepared.fetchCount(bindings: nil) }
        assertError(.misuse) { try prepared.fetchIdentifiers(bindings: nil) }
        let ctx = try XCTUnwrap(kept.context)
        assertError(.misuse) { try ctx.fetch(FetchDescriptor(entity: XCTUnwrap(ctx.schema.entity(named: "Note")))) }
        assertError(.misuse) { try ctx.insert(entity: "Note", json: #"{"title": "late"}"#) }
        // The store and its first context are unharmed.
        XCTAssertEqual(try count(try c.makeContext(), "Note"), 1)
    }

    func testOpeningTheStoreBeingMigratedInsideAHookFailsAtOnce() throws {
        try makeV1()
        let kept = Kept()
        let path = storePath()
        let c = try open(config: plan) { c in
            try c.setStageHooks(StageHooks(didMigrate: { _ in
                let start = Date()
                do {
                    _ = try ModelContainer(path: path, configuration: StoreConfiguration.decode(#"{"schema": \#(self.v2)}"#))
                } catch let e as StrataError {
                    kept.openError = e
                }
                kept.openSeconds = Date().timeIntervalSince(start)
            }), forStage: "s12")
        }
        XCTAssertEqual(c.schema.version, "2.0.0")
        XCTAssertEqual(kept.openError?.code, .misuse, kept.openError?.message ?? "the open succeeded")
        XCTAssertTrue(kept.openError?.message.contains("being migrated") == true, kept.openError?.message ?? "")
        XCTAssertLessThan(kept.openSeconds, 1)
        // Once the migration is over, the store opens again.
        XCTAssertEqual(try count(try openFile(v2).makeContext(), "Note"), 1)
    }

    func testHookSavesCarryTheConfiguredAuthor() throws {
        guard onSQLite else { return }  // the PostgreSQL store keeps no history yet
        try makeV1()
        let c = try open(config: plan) { c in
            try c.setStageHooks(StageHooks(willMigrate: { ctx in
                try ctx.update(id: "Note/1", patch: #"{"title": "will"}"#)
                try ctx.save()
            }, didMigrate: { ctx in
                ctx.author = "hook"
                try ctx.update(id: "Note/1", patch: #"{"title": "did"}"#)
            }), forStage: "s12")
        }
        let all = try history(try c.makeContext())
        XCTAssertEqual(all.map { $0["author"]?.stringValue }, [nil, "app", "hook"], "\(all)")
        XCTAssertEqual(all.map { $0["contextName"]?.stringValue }, [nil, "s12", "s12"])
    }
}
