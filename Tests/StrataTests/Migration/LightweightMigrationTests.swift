import XCTest
@testable import Strata

/// One test per inference rule: a store at version A with data, opened at version B,
/// every value where it belongs and every identifier unchanged.
final class LightweightMigrationTests: MigrationTestCase {
    static let tripV1 = #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}, {"name": "end_date", "type": "date", "optional": true}]}"#

    func testRenameAttributesThroughOriginalNameInPlace() throws {
        let ids = try makeStore(schema("1.0.0", Self.tripV1), [("Trip", #"{"name": "Paris", "start_date": "2026-01-01T00:00:00Z", "end_date": 100}"#),
                                                               ("Trip", #"{"name": "Rome"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "startDate", "type": "date", "optional": true, "originalName": "start_date"}, {"name": "endDate", "type": "date", "optional": true, "originalName": "end_date"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), Set(ids))
        XCTAssertEqual(value(all, ids[0], "startDate"), .string("2026-01-01T00:00:00Z"))
        XCTAssertEqual(value(all, ids[0], "endDate"), .string("1970-01-01T00:01:40Z"))
        XCTAssertEqual(value(all, ids[1], "name"), .string("Rome"))
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "endDate", "name", "startDate"])
        try assertFreshKey(c, "Trip", #"{"name": "Oslo"}"#, past: ids)
    }

    // MARK: Entities and attributes

    func testAddAndRemoveEntity() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Note", "attributes": [{"name": "text", "type": "string"}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Note", #"{"text": "gone"}"#), ("Trip", #"{"name": "Rome"}"#),
                                     ("Note", #"{"text": "gone too"}"#), ("Trip", #"{"name": "Oslo"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let trips = try objects(c, "Trip")
        XCTAssertEqual(Set(trips.keys), [ids[0], ids[2], ids[4]])
        XCTAssertEqual(trips.mapValues { $0["name"]?.stringValue }, [ids[0]: "Paris", ids[2]: "Rome", ids[4]: "Oslo"])
        let tables = try tableNames(storePath())
        XCTAssertTrue(tables.contains("Tag"))
        XCTAssertFalse(tables.contains("Note"))
        XCTAssertFalse(try hasKeySequence("Note"))
        XCTAssertEqual(try count(c.makeContext(), "Tag"), 0)
        try assertFreshKey(c, "Trip", #"{"name": "Lima"}"#, past: [ids[0], ids[2], ids[4]])
        let tag = try assertFreshKey(c, "Tag", #"{"label": "new"}"#, past: [])
        XCTAssertEqual(tag, "Tag/1")
    }

    func testAddAndRemoveAttribute() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "notes", "type": "string", "optional": true}, {"name": "budget", "type": "double", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "notes": "n1", "budget": 12.5}"#), ("Trip", #"{"name": "Rome", "budget": 7.25}"#),
                                     ("Trip", #"{"name": "Oslo", "notes": "n3"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}, {"name": "rating", "type": "int", "optional": true}, {"name": "visited", "type": "bool", "default": false}]}"#)
        final class Events: @unchecked Sendable { var lines: [String] = [] }
        let events = Events()
        let c = try open(config: #"{"schema": \#(v2)}"#) { $0.progress = { events.lines.append($0) } }
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "budget", "name", "rating", "visited"])
        // SQLite rebuilds a table that loses a column; PostgreSQL drops it in place.
        XCTAssertEqual(events.lines.contains { $0.contains(#""step":"copyRows""#) }, onSQLite, "\(events.lines)")
        XCTAssertEqual(events.lines.contains { $0.contains(#""step":"removeAttribute","entity":"Trip""#) }, !onSQLite, "\(events.lines)")
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), Set(ids))
        XCTAssertEqual(value(all, ids[0], "budget")?.numberText, "12.5")
        XCTAssertEqual(value(all, ids[1], "budget")?.numberText, "7.25")
        XCTAssertEqual(value(all, ids[2], "budget") ?? .null, .null)
        for id in ids {
            XCTAssertNil(value(all, id, "notes"))
            XCTAssertEqual(value(all, id, "rating") ?? .null, .null)
            XCTAssertEqual(value(all, id, "visited"), .bool(false))
        }
        XCTAssertEqual(value(all, ids[2], "name"), .string("Oslo"))
        let id = try assertFreshKey(c, "Trip", #"{"name": "Lima", "rating": 4, "visited": true}"#, past: ids)
        XCTAssertEqual(try get(c.makeContext(), id)["rating"]?.numberText, "4")
    }

    func testRequiredBecomesOptional() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "city", "type": "string"}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "city": "Paris"}"#), ("Trip", #"{"name": "Alps", "city": "Chamonix"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "city", "type": "string", "optional": true}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(all.mapValues { $0["city"]?.stringValue }, [ids[0]: "Paris", ids[1]: "Chamonix"])
        // The new version's rule applies: an object without a city saves.
        let id = try assertFreshKey(c, "Trip", #"{"name": "Sea"}"#, past: ids)
        XCTAssertEqual(try get(c.makeContext(), id)["city"] ?? .null, .null)
    }

    func testOptionalBecomesRequiredWithADefault() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "notes", "type": "string", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "notes": "kept"}"#), ("Trip", #"{"name": "Rome"}"#), ("Trip", #"{"name": "Oslo", "notes": null}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "notes", "type": "string", "default": "none"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(all.mapValues { $0["notes"]?.stringValue }, [ids[0]: "kept", ids[1]: "none", ids[2]: "none"])
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip" WHERE "notes" IS NULL"#), .int(0))
        try assertFreshKey(c, "Trip", #"{"name": "Lima"}"#, past: ids)
    }

    func testDefaultsOfEveryKindFillTheRowsWithoutAValue() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start", "type": "date", "optional": true}, {"name": "days", "type": "int", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "start": 0, "days": 2}"#), ("Trip", #"{"name": "Rome"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start", "type": "date", "default": "2026-01-01T00:00:00Z"},
             {"name": "days", "type": "int", "default": 7}, {"name": "rate", "type": "double", "default": 1.5},
             {"name": "code", "type": "uuid", "default": "9A3E0F10-0000-4000-8000-000000000001"}, {"name": "cost", "type": "decimal", "default": "12.50"},
             {"name": "site", "type": "url", "default": "https://example.com"}, {"name": "blob", "type": "data", "default": "AQID"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(value(all, ids[0], "start"), .string("1970-01-01T00:00:00Z"))
        XCTAssertEqual(value(all, ids[0], "days")?.numberText, "2")
        XCTAssertEqual(value(all, ids[1], "start"), .string("2026-01-01T00:00:00Z"))
        XCTAssertEqual(value(all, ids[1], "days")?.numberText, "7")
        // Every value reads back as an object saved with the new version would.
        let fresh = try assertFreshKey(c, "Trip", #"{"name": "Oslo"}"#, past: ids)
        let saved = try get(c.makeContext(), fresh)
        for key in ["start", "days", "rate", "code", "cost", "site", "blob"] {
            XCTAssertEqual(value(all, ids[1], key), saved[key], key)
            XCTAssertEqual(value(all, ids[0], key == "start" || key == "days" ? "name" : key), key == "start" || key == "days" ? .string("Paris") : saved[key], key)
        }
        if onSQLite {  // stored as an object saved with the new version (PostgreSQL's columns are typed)
            let stored = try rows(storePath(), "SELECT typeof(start), typeof(days), typeof(rate), typeof(code), typeof(cost), typeof(site), typeof(blob) FROM Trip ORDER BY _pk")
            XCTAssertEqual(stored[1], stored[2])
        }
    }

    func testOptionalBecomesRequiredWithoutADefaultOverNullsFails() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "notes", "type": "string", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "notes": "kept"}"#), ("Trip", #"{"name": "Rome"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "notes", "type": "string"}]}"#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "notes")
        XCTAssertTrue(e?.message.contains("entity 'Trip': attribute 'notes' is required in version 2.0.0 and has no default, but \(ids[1]) has no value; "
                                          + "give the attribute a default, make it optional, or set the values in a custom stage") == true, e?.message ?? "")
        // The store is still the version-1 store it was.
        let c = try openFile(v1)
        XCTAssertEqual(c.schema.version, "1.0.0")
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["notes"]?.stringValue }, [ids[0]: "kept", ids[1]: nil])
        // Once every object has a value, the same change is inferred.
        let context = try c.makeContext()
        try context.update(id: ids[1], patch: #"{"notes": "set"}"#)
        _ = try context.save()
        let migrated = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try objects(migrated, "Trip").mapValues { $0["notes"]?.stringValue }, [ids[0]: "kept", ids[1]: "set"])
    }

    func testAddedRequiredAttributeWithoutADefaultNeedsEmptyEntities() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "city", "type": "string"}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}, {"name": "color", "type": "string"}]}"#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "city")
        XCTAssertTrue(e?.message.contains("entity 'Trip': attribute 'city' is required in version 2.0.0 and has no default, but \(ids[0]) has no value") == true,
                      e?.message ?? "")
        // Without trips, the same change (and Tag's, over no tags) is inferred.
        let context = try openFile(v1).makeContext()
        for id in ids { try context.delete(id: id) }
        _ = try context.save()
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try count(c.makeContext(), "Trip"), 0)
        try assertFreshKey(c, "Trip", #"{"name": "Oslo", "city": "Oslo"}"#, past: ids)
    }

    func testRenameEntityKeepsKeysAndLinks() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Voyage", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "leader", "destination": "Person", "inverse": "voyages"}]},
            {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "voyages", "destination": "Voyage", "toMany": true, "inverse": "leader"}]}
            """#)
        let ids = try makeStore(v1, [("Person", #"{"name": "Ann"}"#), ("Person", #"{"name": "Bob"}"#)]
                                + (1...5).map { ("Voyage", #"{"name": "V\#($0)", "leader": "Person/\#($0 % 2 + 1)"}"#) })
        XCTAssertEqual(Array(ids[2...]), (1...5).map { "Voyage/\($0)" })
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "originalName": "Voyage", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "leader", "destination": "Person", "inverse": "trips"}]},
            {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "trips", "originalName": "voyages", "destination": "Trip", "toMany": true, "inverse": "leader"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let trips = try objects(c, "Trip")
        XCTAssertEqual(Set(trips.keys), Set((1...5).map { "Trip/\($0)" }))
        for n in 1...5 {
            XCTAssertEqual(trips["Trip/\(n)"]?["name"], .string("V\(n)"))
            XCTAssertEqual(trips["Trip/\(n)"]?["leader"], .string("Person/\(n % 2 + 1)"))
            XCTAssertEqual(trips["Trip/\(n)"]?["_entity"], .string("Trip"))
        }
        let people = try objects(c, "Person")
        XCTAssertEqual(people["Person/1"]?["trips"], .array([.string("Trip/2"), .string("Trip/4")]))
        XCTAssertEqual(people["Person/2"]?["trips"], .array([.string("Trip/1"), .string("Trip/3"), .string("Trip/5")]))
        let tables = try tableNames(storePath())
        XCTAssertTrue(tables.contains("Trip"))
        XCTAssertFalse(tables.contains("Voyage"))
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip" WHERE "_entity" <> 'Trip'"#), .int(0))
        let fresh = try assertFreshKey(c, "Trip", #"{"name": "V6", "leader": "Person/1"}"#, past: Array(trips.keys))
        XCTAssertEqual(self.ids(try get(c.makeContext(), "Person/1")["trips"]), ["Trip/2", "Trip/4", fresh])
    }

    func testAnEntityNameReusedAfterARename() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#)])
        let voyage = #"{"name": "Voyage", "originalName": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}]}"#
        let newTrip = #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}, {"name": "days", "type": "int", "optional": true}]}"#
        // In one version: Trip's objects become Voyages, and a new Trip starts empty.
        let both = schema("2.0.0", voyage + ", " + newTrip)
        var c = try open(config: #"{"schema": \#(both)}"#)
        XCTAssertEqual(try objects(c, "Voyage").mapValues { $0["name"]?.stringValue }, ["Voyage/1": "Paris", "Voyage/2": "Rome"])
        XCTAssertEqual(try count(c.makeContext(), "Trip"), 0)
        try assertFreshKey(c, "Trip", #"{"name": "Oslo", "days": 3}"#, past: [])
        try assertFreshKey(c, "Voyage", #"{"name": "Lima"}"#, past: ids.map { $0.replacingOccurrences(of: "Trip", with: "Voyage") })
        // In two versions: renamed first, the name taken again next.
        let path = storePath("two")
        try makeStore(v1, [("Trip", #"{"name": "Paris"}"#)], path: path)
        _ = try open(config: #"{"schema": \#(schema("2.0.0", voyage))}"#, path: path)
        c = try open(config: #"{"schema": \#(schema("3.0.0", voyage + ", " + newTrip))}"#, path: path)
        XCTAssertEqual(try objects(c, "Voyage").mapValues { $0["name"]?.stringValue }, ["Voyage/1": "Paris"])
        try assertFreshKey(c, "Trip", #"{"name": "Oslo", "days": 3}"#, past: [])
    }

    func testAnEntityNameReusedAfterARenameWithSetsOfPairs() throws {
        let tag = #"{"name": "Tag", "attributes": [{"name": "label", "type": "string"}]}"#
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]}, \#(tag)"#)
        try makeStore(v1, [("Tag", #"{"label": "x"}"#), ("Tag", #"{"label": "y"}"#), ("Trip", #"{"name": "Paris", "tags": ["Tag/1", "Tag/2"]}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Voyage", "originalName": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]},
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]},
            \#(tag)
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try objects(c, "Voyage").mapValues { self.ids($0["tags"]) }, ["Voyage/1": ["Tag/1", "Tag/2"]])
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip_tags""#), .int(0))
        let trip = try assertFreshKey(c, "Trip", #"{"name": "Oslo", "tags": ["Tag/2"]}"#, past: [])
        XCTAssertEqual(self.ids(try get(c.makeContext(), trip)["tags"]), ["Tag/2"])
        XCTAssertEqual(try indexNames("Voyage_tags"), [StoreLayout.indexName("Voyage_tags", "index", ["_target", "_source"])])
        XCTAssertEqual(try indexNames("Trip_tags"), [StoreLayout.indexName("Trip_tags", "index", ["_target", "_source"])])
    }

    func testTwoEntitiesSwapNames() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}], "relationships": [{"name": "stops", "destination": "Stop", "toMany": true, "inverse": "trip"}]},
            {"name": "Stop", "attributes": [{"name": "place", "type": "string", "index": true}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "stops"}]}
            """#)
        try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#),
                           ("Stop", #"{"place": "a", "trip": "Trip/2"}"#), ("Stop", #"{"place": "b", "trip": "Trip/2"}"#), ("Stop", #"{"place": "c"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Stop", "originalName": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}], "relationships": [{"name": "stops", "destination": "Trip", "toMany": true, "inverse": "trip"}]},
            {"name": "Trip", "originalName": "Stop", "attributes": [{"name": "place", "type": "string", "index": true}], "relationships": [{"name": "trip", "destination": "Stop", "inverse": "stops"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try objects(c, "Stop").mapValues { $0["name"]?.stringValue }, ["Stop/1": "Paris", "Stop/2": "Rome"])
        XCTAssertEqual(try objects(c, "Stop").mapValues { self.ids($0["stops"]) }, ["Stop/1": [], "Stop/2": ["Trip/1", "Trip/2"]])
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["trip"]?.stringValue }, ["Trip/1": "Stop/2", "Trip/2": "Stop/2", "Trip/3": nil])
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["place"]?.stringValue }, ["Trip/1": "a", "Trip/2": "b", "Trip/3": "c"])
        // The indexes stay with their columns (kept in place, under their old names; on PostgreSQL,
        // renamed with their tables).
        XCTAssertEqual(try indexColumns("Stop"), [["name"]])
        XCTAssertEqual(try indexColumns("Trip"), [["place"], ["trip"]])
        if !onSQLite {
            XCTAssertEqual(try indexNames("Stop"), [StoreLayout.indexName("Stop", "index", ["name"])])
            XCTAssertEqual(try indexNames("Trip"), [StoreLayout.indexName("Trip", "index", ["place"]), StoreLayout.indexName("Trip", "fk", ["trip"])])
        }
        try assertFreshKey(c, "Trip", #"{"place": "d", "trip": "Stop/1"}"#, past: ["Trip/1", "Trip/2", "Trip/3"])
        try assertFreshKey(c, "Stop", #"{"name": "Oslo"}"#, past: ["Stop/1", "Stop/2"])
    }

    func testOriginalNameNamesThePropertyInAnEarlierVersionOfThePlan() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}]}"#)
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "startDate", "type": "date", "optional": true, "originalName": "start_date"}]}"#)
        let v3 = schema("3.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "beginDate", "type": "date", "optional": true, "originalName": "start_date"}]}"#)
        let plan = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2), \#(v3)], "stages": [{"name": "v1toV2", "kind": "lightweight", "from": "1.0.0", "to": "2.0.0"}, {"name": "v2toV3", "kind": "lightweight", "from": "2.0.0", "to": "3.0.0"}]}}"#
        let objectsV1 = [("Trip", #"{"name": "Paris", "start_date": "2026-01-01T00:00:00Z"}"#), ("Trip", #"{"name": "Rome"}"#),
                         ("Trip", #"{"name": "Oslo", "start_date": 86400}"#)]
        let objectsV2 = objectsV1.map { ($0.0, $0.1.replacingOccurrences(of: "start_date", with: "startDate")) }
        for (start, schemaJSON, objs) in [("v1", v1, objectsV1), ("v2", v2, objectsV2), ("v1 without the plan", v1, objectsV1)] {
            let path = storePath(start.replacingOccurrences(of: " ", with: "-"))
            let ids = try makeStore(schemaJSON, objs, path: path)
            let config = start.hasSuffix("plan") ? #"{"schema": \#(v3)}"# : plan
            let c = try open(config: config, path: path)
            XCTAssertEqual(c.schema.version, "3.0.0", start)
            let all = try objects(c, "Trip")
            XCTAssertEqual(Set(all.keys), Set(ids), start)
            XCTAssertEqual(value(all, ids[0], "beginDate"), .string("2026-01-01T00:00:00Z"), start)
            XCTAssertEqual(value(all, ids[1], "beginDate") ?? .null, .null, start)
            XCTAssertEqual(value(all, ids[2], "beginDate"), .string("1970-01-02T00:00:00Z"), start)
            XCTAssertEqual(value(all, ids[2], "name"), .string("Oslo"), start)
            XCTAssertEqual(try columnNames(path, table: "Trip").sorted(), ["_entity", "_pk", "beginDate", "name"], start)
            try assertFreshKey(c, "Trip", #"{"name": "Lima"}"#, past: ids)
        }
    }

    func testANameReusedAfterARenameAcrossAPlan() throws {
        // Version 2 renames title to name and adds a new title; version 3 keeps the declarations.
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "title", "type": "string"}]}"#)
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "originalName": "title"}, {"name": "title", "type": "string", "optional": true}]}"#)
        let v3 = schema("3.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "originalName": "title"}, {"name": "title", "type": "string", "optional": true}, {"name": "rating", "type": "int", "optional": true}]}"#)
        let plan = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2), \#(v3)], "stages": [{"name": "v1toV2", "kind": "lightweight", "from": "1.0.0", "to": "2.0.0"}, {"name": "v2toV3", "kind": "lightweight", "from": "2.0.0", "to": "3.0.0"}]}}"#
        let fromV1 = try makeStore(v1, [("Trip", #"{"title": "Paris"}"#), ("Trip", #"{"title": "Rome"}"#)], path: storePath("v1"))
        let fromV2 = try makeStore(v2, [("Trip", #"{"name": "Paris", "title": "t1"}"#), ("Trip", #"{"name": "Rome"}"#)], path: storePath("v2"))
        for (path, ids, titles) in [(storePath("v1"), fromV1, [String?.none, nil]), (storePath("v2"), fromV2, ["t1", nil])] {
            let c = try open(config: plan, path: path)
            let all = try objects(c, "Trip")
            XCTAssertEqual(all.mapValues { $0["name"]?.stringValue }, [ids[0]: "Paris", ids[1]: "Rome"], path)
            XCTAssertEqual(all.mapValues { $0["title"]?.stringValue }, [ids[0]: titles[0], ids[1]: titles[1]], path)
        }
    }

    func testHashModifierForcesAStageWithoutChangingStorage() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "budget": 1.5}"#), ("Trip", #"{"name": "Rome"}"#)])
        let before = try rows(storePath(), #"SELECT * FROM "Trip" ORDER BY "_pk""#)
        let columns = try columnNames(storePath(), table: "Trip")
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "hashModifier": "v2"}, {"name": "budget", "type": "double", "optional": true}]}"#)
        XCTAssertNotEqual(try makeSchema(v1).versionHash, try makeSchema(v2).versionHash)
        final class Events: @unchecked Sendable { var lines: [String] = [] }
        let events = Events()
        let c = try open(config: #"{"schema": \#(v2)}"#) { $0.progress = { events.lines.append($0) } }
        XCTAssertTrue(events.lines.contains { $0.contains(#""step":"commit""#) }, "\(events.lines)")
        XCTAssertEqual(try storedVersion(), "2.0.0")
        XCTAssertEqual(try storedMetadata("versionHash"), c.schema.versionHash)
        XCTAssertEqual(try rows(storePath(), #"SELECT * FROM "Trip" ORDER BY "_pk""#), before)
        XCTAssertEqual(try columnNames(storePath(), table: "Trip"), columns)
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["name"]?.stringValue }, [ids[0]: "Paris", ids[1]: "Rome"])
        try assertFreshKey(c, "Trip", #"{"name": "Oslo"}"#, past: ids)
    }

    func testARebuiltTableIsCopiedInKeyBatchesWithGapsInTheKeys() throws {
        let tag = #"{"name": "Tag", "attributes": [{"name": "label", "type": "string"}]}"#
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "old", "type": "string", "optional": true}], "#
                        + #""relationships": [{"name": "tags", "destination": "Tag", "toMany": true}]}, \#(tag)"#)
        try makeStore(v1, [("Trip", #"{"name": "n1", "old": "x"}"#)])
        // More rows than two batches, keys with a gap wider than a batch.
        try execute(storePath(), "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < 120000) "
                    + #"INSERT INTO "Trip" ("_pk", "_entity", "name", "old") SELECT i, 'Trip', 'n' || i, 'x' FROM n"#)
        try execute(storePath(), #"INSERT INTO "Trip" ("_pk", "_entity", "name") VALUES (500000, 'Trip', 'far')"#)
        try setNextKey("Trip", 500001)
        let sum = try scalar(storePath(), #"SELECT sum("_pk") FROM "Trip""#)
        // A change that rebuilds the table: on SQLite, a column goes; PostgreSQL drops a column in place,
        // and rebuilds when links move into the rows (a to-many kept in pairs becomes a to-one).
        let link = onSQLite ? #"{"name": "tags", "destination": "Tag", "toMany": true}"# : #"{"name": "tag", "originalName": "tags", "destination": "Tag", "optional": true}"#
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [\#(link)]}, \#(tag)"#)
        let table = "Trip"
        final class Events: @unchecked Sendable { var lines: [String] = [] }
        let events = Events()
        let c = try open(config: #"{"schema": \#(v2)}"#) { $0.progress = { events.lines.append($0) } }
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "\#(table)""#), .int(120_001))
        XCTAssertEqual(try scalar(storePath(), #"SELECT sum("_pk") FROM "\#(table)""#), sum)
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "\#(table)" WHERE "name" <> 'n' || "_pk" AND "_pk" <> 500000"#), .int(0))
        let copies = events.lines.filter { $0.contains(#""step":"copy""#) && $0.contains(#""done""#) }
        XCTAssertGreaterThanOrEqual(copies.count, 4, "\(copies)")
        XCTAssertTrue(copies.last?.contains(#""done":120001,"total":120001"#) == true, "\(copies)")
        XCTAssertEqual(try get(c.makeContext(), "Trip/500000")["name"], .string("far"))
        try assertFreshKey(c, "Trip", #"{"name": "next"}"#, past: ["Trip/500000"])
    }

    // MARK: Indexes and constraints

    func testAddAndRemoveIndexes() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}, {"name": "city", "type": "string"}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "city": "Paris"}"#), ("Trip", #"{"name": "Alps", "city": "Chamonix"}"#)])
        XCTAssertEqual(try indexNames("Trip"), [StoreLayout.indexName("Trip", "index", ["name"])])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "city", "type": "string", "index": true}], "indexes": [["name", "city"]]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try indexNames("Trip"), [StoreLayout.indexName("Trip", "index", ["city"]), StoreLayout.indexName("Trip", "index", ["name", "city"])])
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["city"]?.stringValue }, [ids[0]: "Paris", ids[1]: "Chamonix"])
        try assertFreshKey(c, "Trip", #"{"name": "Oslo", "city": "Oslo"}"#, past: ids)
    }

    func testAddUniqueAndCompoundUniqueConstraintsTheDataAllows() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "code", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "code": "A", "start_date": 0}"#),
                                     ("Trip", #"{"name": "Paris", "code": "B", "start_date": 86400}"#),
                                     ("Trip", #"{"name": "Rome", "code": "C", "start_date": 0}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "code", "type": "string", "unique": true}, {"name": "start_date", "type": "date", "optional": true}], "uniqueConstraints": [["name", "start_date"]]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try indexNames("Trip"), [StoreLayout.indexName("Trip", "unique", ["code"]), StoreLayout.indexName("Trip", "unique", ["name", "start_date"])])
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["code"]?.stringValue }, [ids[0]: "A", ids[1]: "B", ids[2]: "C"])
        // Both constraints hold from now on.
        let context = try c.makeContext()
        assertError(.constraint) { try context.insert(entity: "Trip", json: #"{"name": "Oslo", "code": "A", "_onConflict": "error"}"#) }
        assertError(.constraint) { try context.insert(entity: "Trip", json: #"{"name": "Rome", "code": "D", "start_date": 0, "_onConflict": "error"}"#) }
        context.rollback()
        try assertFreshKey(c, "Trip", #"{"name": "Rome", "code": "D", "start_date": 86400}"#, past: ids)
    }

    func testUniqueConstraintOverDuplicatesFailsNamingOneDuplicate() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Paris", "start_date": 0}"#), ("Trip", #"{"name": "Rome", "start_date": 0}"#),
                                     ("Trip", #"{"name": "Paris", "start_date": 0}"#)])
        let before = try rows(storePath(), #"SELECT * FROM "Trip" ORDER BY "_pk""#)
        let unique = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "unique": true}, {"name": "start_date", "type": "date", "optional": true}]}"#)
        var e = openError(config: #"{"schema": \#(unique)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "name")
        XCTAssertTrue(e?.message.contains(#"entity 'Trip': cannot adopt unique attribute 'name': 2 objects share name = "Paris" (\#(ids[0]), \#(ids[2])); "#
                                          + "remove the duplicates before the storage change — a deduplicate operation or a hook in the stage's willMigrate — "
                                          + #"or set "onDuplicates": "keepFirst" or "keepLast" on the stage"#) == true, e?.message ?? "")
        let compound = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "start_date", "type": "date", "optional": true}], "uniqueConstraints": [["name", "start_date"]]}"#)
        e = openError(config: #"{"schema": \#(compound)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertTrue(e?.message.contains(#"entity 'Trip': cannot adopt unique constraint (name, start_date): 2 objects share name = "Paris", start_date = "#)
                      == true, e?.message ?? "")
        XCTAssertTrue(e?.message.contains(#"(\#(ids[0]), \#(ids[2])); remove the duplicates"#) == true, e?.message ?? "")
        XCTAssertTrue(e?.message.contains("onDuplicates") == true, e?.message ?? "")
        // Left as it was.
        XCTAssertEqual(try rows(storePath(), #"SELECT * FROM "Trip" ORDER BY "_pk""#), before)
        XCTAssertEqual(try openFile(v1).schema.version, "1.0.0")
    }

    func testTypeChangeCannotBeInferred() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}]}"#)
        try makeStore(v1, [("Trip", #"{"name": "Paris", "budget": 1.5}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "string", "optional": true}]}"#)
        var e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "budget")
        XCTAssertEqual(e?.message, "entity 'Trip': attribute 'budget' changes type from double to string between versions 1.0.0 and 2.0.0; a type change "
                       + "cannot be inferred: add an attribute of the new type and fill it in a custom stage's didMigrate")
        let renamed = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "cost", "type": "int", "optional": true, "originalName": "budget"}]}"#)
        e = openError(config: #"{"schema": \#(renamed)}"#)
        XCTAssertEqual(e?.attribute, "cost")
        XCTAssertTrue(e?.message.hasPrefix("entity 'Trip': attribute 'cost' (from 'budget') changes type from double to int") == true, e?.message ?? "")
        XCTAssertEqual(try objects(openFile(v1), "Trip").count, 1)
    }

    // MARK: External storage

    static let externalV1 = #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "photo", "type": "data", "optional": true, "externalStorage": true}]}"#

    /// A store with one photo in a file and one small enough for the row.
    func makePhotoStore() throws -> (ids: [String], big: String, small: String) {
        let big = Data((0..<140_000).map { UInt8($0 % 251) }).base64EncodedString()
        let small = Data([1, 2, 3]).base64EncodedString()
        let ids = try makeStore(schema("1.0.0", Self.externalV1), [("Trip", #"{"name": "Big", "photo": "\#(big)"}"#),
                                                                   ("Trip", #"{"name": "Small", "photo": "\#(small)"}"#),
                                                                   ("Trip", #"{"name": "None"}"#)])
        if onSQLite {  // PostgreSQL keeps every value in its row
            XCTAssertEqual(filesIn(storePath() + ".strata").count, 1)
            XCTAssertEqual(try scalar(storePath(), "SELECT typeof(photo) FROM Trip WHERE name = 'Big'"), .text("text"))
        }
        return (ids, big, small)
    }

    func testRenamedExternalStorageAttributeKeepsItsFile() throws {
        let (ids, big, small) = try makePhotoStore()
        let files = filesIn(storePath() + ".strata")
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "picture", "type": "data", "optional": true, "externalStorage": true, "originalName": "photo"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(filesIn(storePath() + ".strata"), files)  // none on PostgreSQL
        let all = try objects(c, "Trip")
        XCTAssertEqual(value(all, ids[0], "picture"), .string(big))
        XCTAssertEqual(value(all, ids[1], "picture"), .string(small))
        XCTAssertEqual(value(all, ids[2], "picture") ?? .null, .null)
        try assertFreshKey(c, "Trip", #"{"name": "New"}"#, past: ids)
    }

    func testExternalStorageTurnedOffBringsTheBytesBackIntoTheRow() throws {
        let (ids, big, small) = try makePhotoStore()
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "photo", "type": "data", "optional": true}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        if onSQLite {
            XCTAssertEqual(try scalar(storePath(), "SELECT typeof(photo) FROM Trip WHERE name = 'Big'"), .text("blob"))
        }
        XCTAssertEqual(try scalar(storePath(), #"SELECT length("photo") FROM "Trip" WHERE "name" = 'Big'"#)?.int, 140_000)
        let all = try objects(c, "Trip")
        XCTAssertEqual(value(all, ids[0], "photo"), .string(big))
        XCTAssertEqual(value(all, ids[1], "photo"), .string(small))
        XCTAssertEqual(value(all, ids[2], "photo") ?? .null, .null)
        // No row names the file any more: it goes.
        XCTAssertEqual(filesIn(storePath() + ".strata"), [])
        try assertFreshKey(c, "Trip", #"{"name": "New"}"#, past: ids)
    }

    func testExternalStorageTurnedOnKeepsTheBytesInTheRowsAndStoresNewOnesInFiles() throws {
        let big = Data((0..<140_000).map { UInt8($0 % 249) }).base64EncodedString()
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "photo", "type": "data", "optional": true}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"name": "Big", "photo": "\#(big)"}"#), ("Trip", #"{"name": "None"}"#)])
        let c = try open(config: #"{"schema": \#(schema("2.0.0", Self.externalV1))}"#)
        XCTAssertEqual(value(try objects(c, "Trip"), ids[0], "photo"), .string(big))
        XCTAssertEqual(filesIn(storePath() + ".strata"), [])
        let context = try c.makeContext()
        try context.update(id: ids[1], patch: #"{"photo": "\#(big)"}"#)
        _ = try context.save()
        XCTAssertEqual(filesIn(storePath() + ".strata").count, onSQLite ? 1 : 0)
        XCTAssertEqual(value(try objects(c, "Trip"), ids[1], "photo"), .string(big))
    }

    func testRemovedExternalStorageAttributeLosesItsFiles() throws {
        let (ids, _, _) = try makePhotoStore()
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "name"])
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["name"]?.stringValue }, [ids[0]: "Big", ids[1]: "Small", ids[2]: "None"])
        XCTAssertEqual(filesIn(storePath() + ".strata"), [])
    }

    func testSwappedAttributeNamesKeepTheirValues() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "first", "type": "string"}, {"name": "second", "type": "string"}], "indexes": [["first"]]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"first": "a1", "second": "b1"}"#), ("Trip", #"{"first": "a2", "second": "b2"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "second", "type": "string", "originalName": "first"}, {"name": "first", "type": "string", "originalName": "second"}], "indexes": [["second"]]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(all.mapValues { $0["second"]?.stringValue }, [ids[0]: "a1", ids[1]: "a2"])
        XCTAssertEqual(all.mapValues { $0["first"]?.stringValue }, [ids[0]: "b1", ids[1]: "b2"])
        // The index follows its values.
        XCTAssertEqual(try storeIndexes("Trip").map(\.columns), [["second"]])
        try assertFreshKey(c, "Trip", #"{"first": "x", "second": "y"}"#, past: ids)
    }

    func testEntityRenamedTwiceAcrossAPlan() throws {
        let v1 = schema("1.0.0", #"{"name": "Voyage", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "voyages"}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "voyages", "destination": "Voyage", "toMany": true, "inverse": "tags"}]}"#)
        let v2 = schema("2.0.0", #"{"name": "Trip", "originalName": "Voyage", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "trips"}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "trips", "originalName": "voyages", "destination": "Trip", "toMany": true, "inverse": "tags"}]}"#)
        let v3 = schema("3.0.0", #"{"name": "Journey", "originalName": "Voyage", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "journeys"}]}, {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "journeys", "originalName": "voyages", "destination": "Journey", "toMany": true, "inverse": "tags"}]}"#)
        let made = try makeStore(v1, [("Tag", #"{"label": "sea"}"#), ("Tag", #"{"label": "sun"}"#),
                                      ("Voyage", #"{"name": "A", "tags": ["Tag/1"]}"#), ("Voyage", #"{"name": "B", "tags": ["Tag/1", "Tag/2"]}"#),
                                      ("Voyage", #"{"name": "C"}"#)])
        XCTAssertEqual(Array(made[2...]), ["Voyage/1", "Voyage/2", "Voyage/3"])
        let plan = #"{"migrationPlan": {"schemas": [\#(v1), \#(v2), \#(v3)], "stages": [{"name": "v1toV2", "kind": "lightweight", "from": "1.0.0", "to": "2.0.0"}, {"name": "v2toV3", "kind": "lightweight", "from": "2.0.0", "to": "3.0.0"}]}}"#
        let c = try open(config: plan)
        let journeys = try objects(c, "Journey")
        XCTAssertEqual(journeys.mapValues { $0["name"]?.stringValue }, ["Journey/1": "A", "Journey/2": "B", "Journey/3": "C"])
        XCTAssertEqual(journeys.mapValues { self.ids($0["tags"]) }, ["Journey/1": ["Tag/1"], "Journey/2": ["Tag/1", "Tag/2"], "Journey/3": []])
        XCTAssertEqual(try objects(c, "Tag").mapValues { self.ids($0["journeys"]) }, ["Tag/1": ["Journey/1", "Journey/2"], "Tag/2": ["Journey/2"]])
        let tables = try tableNames(storePath())
        XCTAssertTrue(tables.contains("Journey") && !tables.contains("Voyage") && !tables.contains("Trip"), "\(tables)")
        try assertFreshKey(c, "Journey", #"{"name": "D", "tags": ["Tag/2"]}"#, past: Array(journeys.keys))
    }
}

extension MigrationTestCase {
    /// The columns of each index of `table` made by CREATE INDEX.
    func indexColumns(_ table: String) throws -> Set<[String]> {
        Set(try storeIndexes(table).map(\.columns))
    }

    /// The indexes of `table` made by CREATE INDEX.
    func indexNames(_ table: String) throws -> Set<String> {
        Set(try storeIndexes(table).map(\.name))
    }

    /// The identifiers of a to-many value.
    func ids(_ value: JSONValue?) -> [String] { value?.array?.compactMap(\.stringValue) ?? [] }

    /// The key of an identifier (`Trip/4` → 4).
    func key(_ id: String) -> Int64 { Int64(id.split(separator: "/").last ?? "") ?? -1 }

    /// Inserts an object after a migration: its key is past every key of `old` (objects of its table).
    @discardableResult
    func assertFreshKey(_ c: ModelContainer, _ entity: String, _ json: String, past old: [String],
                        file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let context = try c.makeContext()
        let id = try context.insert(entity: entity, json: json).description
        _ = try context.save()
        XCTAssertFalse(old.contains(id), "\(id) reused", file: file, line: line)
        XCTAssertGreaterThan(key(id), old.map(key).max() ?? 0, "\(id) is not past the old keys", file: file, line: line)
        XCTAssertNotNil(try get(c.makeContext(), id)["_id"], file: file, line: line)
        return id
    }
}
