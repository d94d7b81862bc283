import Foundation
import XCTest
@testable import Strata

/// examples/trips: SampleTrips' version 1 store carried through the plan to version 4
/// (two custom stages that de-duplicate trips, a rename with a unique constraint, then
/// subentities), and two processes opening the old store at once.
final class SampleTripsMigrationTests: MigrationTestCase {
    private func text(_ name: String) throws -> String {
        let trips = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples/trips")
        return try String(contentsOf: trips.appendingPathComponent(name), encoding: .utf8)
    }

    /// The plan of examples/trips, its custom stages de-duplicating trips (as the C example's
    /// hooks do): by name keeping the first and merging its relationships, then by name and dates.
    private func plan() throws -> String {
        let plan = try text("plan.json")
            .replacingOccurrences(of: #"{"name": "migrateV1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}"#,
                                  with: #"{"name": "migrateV1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "willMigrate": [{"op": "deduplicate", "entity": "Trip", "by": ["name"], "keep": "first", "mergeRelationships": true}]}"#)
            .replacingOccurrences(of: #"{"name": "migrateV2toV3", "kind": "custom", "from": "2.0.0", "to": "3.0.0"}"#,
                                  with: #"{"name": "migrateV2toV3", "kind": "custom", "from": "2.0.0", "to": "3.0.0", "willMigrate": [{"op": "deduplicate", "entity": "Trip", "by": ["name", "start_date", "end_date"]}]}"#)
        XCTAssertEqual(plan.components(separatedBy: #""op": "deduplicate""#).count, 3, "the plan's stages changed")
        return #"{"migrationPlan": \#(plan)}"#
    }

    /// A version 1 store: Paris twice (each with items, the second with a flat), Rome, Oslo.
    @discardableResult
    private func makeV1Store() throws -> [String] {
        try makeStore(try text("schema-v1.json"), [
            ("Trip", #"{"name": "Paris", "destination": "FR", "start_date": 86400, "end_date": 172800, "bucketList": [{"title": "Louvre"}, {"title": "Orsay", "isInPlan": true}]}"#),
            ("Trip", #"{"name": "Rome", "destination": "IT", "start_date": 0, "end_date": 86400, "bucketList": [{"title": "Forum"}], "livingAccommodation": {"address": "Via 1", "placeName": "Albergo"}}"#),
            ("Trip", #"{"name": "Paris", "destination": "FR", "start_date": 259200, "end_date": 345600, "bucketList": [{"title": "Seine"}], "livingAccommodation": {"address": "Rue 2", "placeName": "Flat"}}"#),
            ("Trip", #"{"name": "Oslo", "destination": "NO", "start_date": 0, "end_date": 86400}"#),
        ])
    }

    func testTheSampleTripsPlanCarriesAVersionOneStoreToVersionFour() throws {
        let made = try makeV1Store()
        XCTAssertEqual(made, ["Trip/1", "Trip/2", "Trip/3", "Trip/4"])
        final class Events: @unchecked Sendable { var lines: [String] = [] }
        let events = Events()
        let c = try open(config: try plan()) { $0.progress = { events.lines.append($0) } }
        XCTAssertEqual(c.schema.version, "4.0.0")
        XCTAssertEqual(try storedVersion(), "4.0.0")
        for stage in ["migrateV1toV2", "migrateV2toV3", "migrateV3toV4"] {
            XCTAssertTrue(events.lines.contains(#"{"stage":"\#(stage)","step":"commit"}"#), "\(stage): \(events.lines)")
        }

        // The second Paris is gone; its items and its flat moved to the first, identifiers unchanged.
        let trips = try objects(c, "Trip")
        XCTAssertEqual(Set(trips.keys), ["Trip/1", "Trip/2", "Trip/4"])
        XCTAssertEqual(trips["Trip/1"]?["startDate"], .string("1970-01-02T00:00:00Z"))
        XCTAssertEqual(trips["Trip/1"]?["endDate"], .string("1970-01-03T00:00:00Z"))
        XCTAssertNil(trips["Trip/1"]?["start_date"])
        XCTAssertEqual(trips["Trip/1"]?["livingAccommodation"], .string("LivingAccommodation/2"))
        XCTAssertEqual(ids(trips["Trip/1"]?["bucketList"]), ["BucketListItem/1", "BucketListItem/2", "BucketListItem/4"])
        XCTAssertEqual(trips["Trip/2"]?["livingAccommodation"], .string("LivingAccommodation/1"))
        XCTAssertEqual(trips.mapValues { $0["_entity"]?.stringValue }, ["Trip/1": "Trip", "Trip/2": "Trip", "Trip/4": "Trip"])
        let items = try objects(c, "BucketListItem")
        XCTAssertEqual(items.mapValues { $0["trip"]?.stringValue }, ["BucketListItem/1": "Trip/1", "BucketListItem/2": "Trip/1",
                                                                     "BucketListItem/3": "Trip/2", "BucketListItem/4": "Trip/1"])
        XCTAssertEqual(items["BucketListItem/2"]?["isInPlan"], .bool(true))
        XCTAssertEqual(items["BucketListItem/1"]?["details"], .string(""))

        // Version 4's storage: the layout's indexes, the subentities' columns.
        XCTAssertEqual(try indexNames("Trip"), Set(StoreLayout(c.schema).table(named: "Trip")?.indexes.map(\.name) ?? []))
        let columns = Set(try columnNames(storePath(), table: "Trip"))
        XCTAssertTrue(columns.isSuperset(of: ["_pk", "_entity", "name", "destination", "startDate", "endDate", "perdiem", "reason"]), "\(columns)")
        XCTAssertFalse(columns.contains("start_date"), "\(columns)")

        // Keys continue past every old key, and the unique constraint (name, startDate, endDate) holds.
        let business = try assertFreshKey(c, "BusinessTrip", #"{"name": "Expo", "destination": "DE", "startDate": 0, "endDate": 1, "perdiem": 80}"#,
                                          past: made)
        XCTAssertEqual(try get(c.makeContext(), business)["perdiem"]?.numberText, "80.0")
        let context = try c.makeContext()
        assertError(.constraint) {
            try context.insert(entity: "PersonalTrip", json: #"{"name": "Rome", "destination": "IT", "startDate": 0, "endDate": 86400, "reason": "family", "_onConflict": "error"}"#)
        }
        try assertFreshKey(c, "BucketListItem", #"{"title": "Fjord", "trip": "Trip/4"}"#, past: Array(items.keys))
    }

    /// Two processes (here threads, each with its own container and connection) open the version 1
    /// store at once with the plan: the stages run once, and the second opens the migrated store.
    func testTwoOpensAtOnceMigrateOnceAndBothOpenTheResult() throws {
        try makeV1Store()
        final class Runs: @unchecked Sendable {
            private let lock = NSLock()
            private(set) var stages: [String] = []
            private(set) var failures: [String] = []
            var versions: [String] = []
            func ran(_ s: String) { lock.lock(); stages.append(s); lock.unlock() }
            func failed(_ s: String) { lock.lock(); failures.append(s); lock.unlock() }
            func opened(_ v: String) { lock.lock(); versions.append(v); lock.unlock() }
        }
        let runs = Runs()
        let config = try plan()
        let path = storePath()
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for t in 0..<2 {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                start.wait()
                do {
                    var c = try StoreConfiguration.decode(config)
                    for stage in ["migrateV1toV2", "migrateV2toV3"] {
                        try c.setStageHooks(StageHooks(willMigrate: { _ in
                            runs.ran(stage)
                            usleep(200_000)  // the other open comes meanwhile
                        }), forStage: stage)
                    }
                    let container = try ModelContainer(path: path, configuration: c)
                    runs.opened(container.schema.version)
                    var d = FetchDescriptor(entity: try XCTUnwrap(container.schema.entity(named: "Trip")))
                    d.includeSubentities = true
                    if try container.makeContext().fetchCount(d) != 3 { runs.failed("thread \(t): not 3 trips") }
                } catch {
                    runs.failed("thread \(t): \(error)")
                }
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        start.signal()
        start.signal()
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "the opens did not finish")
        XCTAssertEqual(runs.failures, [])
        XCTAssertEqual(runs.stages, ["migrateV1toV2", "migrateV2toV3"], "each stage ran once")
        XCTAssertEqual(runs.versions, ["4.0.0", "4.0.0"])
        XCTAssertEqual(try storedVersion(), "4.0.0")
        XCTAssertEqual(Set(try objects(try openFile(try text("schema-v4.json")), "Trip").keys), ["Trip/1", "Trip/2", "Trip/4"])
    }
}
