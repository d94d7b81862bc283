import XCTest
@testable import Strata

/// Inference rules for relationships and hierarchies: a store at version A with data,
/// opened at version B, every link and value where it belongs, identifiers unchanged.
final class LightweightRelationshipMigrationTests: MigrationTestCase {
    static let person = #"{"name": "Person", "attributes": [{"name": "name", "type": "string"}]}"#

    // MARK: Relationships

    func testAddRemoveAndRenameRelationships() throws {
        let v1 = schema("1.0.0", #"""
            \#(Self.person),
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [
                {"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"},
                {"name": "guide", "destination": "Person"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
            """#)
        let made = try makeStore(v1, [("Person", #"{"name": "Ann"}"#), ("Person", #"{"name": "Bob"}"#),
                                      ("Trip", #"{"name": "Paris", "guide": "Person/1"}"#), ("Trip", #"{"name": "Rome", "guide": "Person/2"}"#),
                                      ("Item", #"{"title": "a", "trip": "Trip/1"}"#), ("Item", #"{"title": "b", "trip": "Trip/2"}"#),
                                      ("Item", #"{"title": "c", "trip": "Trip/1"}"#), ("Item", #"{"title": "d"}"#)])
        XCTAssertEqual(made[2], "Trip/1")
        let v2 = schema("2.0.0", #"""
            \#(Self.person),
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [
                {"name": "entries", "originalName": "items", "destination": "Item", "toMany": true, "inverse": "journey"},
                {"name": "companions", "destination": "Person", "toMany": true}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "journey", "originalName": "trip", "destination": "Trip", "inverse": "entries"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "name"])
        XCTAssertEqual(try columnNames(storePath(), table: "Item").sorted(), ["_entity", "_pk", "journey", "title"])
        XCTAssertTrue(try tableNames(storePath()).contains("Trip_companions"))
        let trips = try objects(c, "Trip")
        XCTAssertEqual(ids(trips["Trip/1"]?["entries"]), ["Item/1", "Item/3"])
        XCTAssertEqual(ids(trips["Trip/2"]?["entries"]), ["Item/2"])
        XCTAssertEqual(ids(trips["Trip/1"]?["companions"]), [])
        XCTAssertNil(trips["Trip/1"]?["guide"])
        let items = try objects(c, "Item")
        XCTAssertEqual(items.mapValues { $0["journey"]?.stringValue }, ["Item/1": "Trip/1", "Item/2": "Trip/2", "Item/3": "Trip/1", "Item/4": nil])
        XCTAssertEqual(items.mapValues { $0["title"]?.stringValue }, ["Item/1": "a", "Item/2": "b", "Item/3": "c", "Item/4": "d"])
        // The added relationship holds links from now on.
        let context = try c.makeContext()
        try context.update(id: "Trip/2", patch: #"{"companions": ["Person/1", "Person/2"]}"#)
        _ = try context.save()
        XCTAssertEqual(ids(try get(c.makeContext(), "Trip/2")["companions"]), ["Person/1", "Person/2"])
        let e = try assertFreshKey(c, "Item", #"{"title": "e", "journey": "Trip/2"}"#, past: Array(items.keys))
        XCTAssertEqual(ids(try get(c.makeContext(), "Trip/2")["entries"]), ["Item/2", e])
    }

    func testToOneBecomesToManyAndBack() throws {
        let v1 = schema("1.0.0", #"""
            \#(Self.person),
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guide", "destination": "Person"}]}
            """#)
        try makeStore(v1, [("Person", #"{"name": "Ann"}"#), ("Person", #"{"name": "Bob"}"#), ("Person", #"{"name": "Cy"}"#),
                           ("Trip", #"{"name": "Paris", "guide": "Person/2"}"#), ("Trip", #"{"name": "Rome", "guide": "Person/3"}"#),
                           ("Trip", #"{"name": "Oslo"}"#)])
        let v2 = schema("2.0.0", #"""
            \#(Self.person),
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guides", "originalName": "guide", "destination": "Person", "toMany": true}]}
            """#)
        var lima = ""
        do {
            let c = try open(config: #"{"schema": \#(v2)}"#)
            let trips = try objects(c, "Trip")
            XCTAssertEqual(trips.mapValues { ids($0["guides"]) }, ["Trip/1": ["Person/2"], "Trip/2": ["Person/3"], "Trip/3": []])
            XCTAssertEqual(trips.mapValues { $0["name"]?.stringValue }, ["Trip/1": "Paris", "Trip/2": "Rome", "Trip/3": "Oslo"])
            XCTAssertFalse(try columnNames(storePath(), table: "Trip").contains("guide"))
            let context = try c.makeContext()
            try context.update(id: "Trip/1", patch: #"{"guides": ["Person/3", "Person/2", "Person/1"]}"#)
            _ = try context.save()
            lima = try assertFreshKey(c, "Trip", #"{"name": "Lima", "guides": ["Person/1"]}"#, past: Array(trips.keys))
        }
        // Back to a to-one: one link of each set is kept (the smallest key).
        let v3 = schema("3.0.0", #"""
            \#(Self.person),
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guide", "originalName": "guides", "destination": "Person"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v3)}"#)
        let trips = try objects(c, "Trip")
        XCTAssertEqual(trips.mapValues { $0["guide"]?.stringValue }, ["Trip/1": "Person/1", "Trip/2": "Person/3", "Trip/3": nil, lima: "Person/1"])
        XCTAssertFalse(try tableNames(storePath()).contains("Trip_guides"))
        try assertFreshKey(c, "Trip", #"{"name": "Quito", "guide": "Person/2"}"#, past: Array(trips.keys))
    }

    func testOneToManyBecomesManyToManyAndBack() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
            """#)
        try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#),
                           ("Item", #"{"title": "a", "trip": "Trip/1"}"#), ("Item", #"{"title": "b", "trip": "Trip/2"}"#),
                           ("Item", #"{"title": "c", "trip": "Trip/1"}"#), ("Item", #"{"title": "d"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trips"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trips", "originalName": "trip", "destination": "Trip", "toMany": true, "inverse": "items"}]}
            """#)
        var e = ""
        do {
            let c = try open(config: #"{"schema": \#(v2)}"#)
            let trips = try objects(c, "Trip"), items = try objects(c, "Item")
            XCTAssertEqual(trips.mapValues { ids($0["items"]) }, ["Trip/1": ["Item/1", "Item/3"], "Trip/2": ["Item/2"]])
            XCTAssertEqual(items.mapValues { ids($0["trips"]) }, ["Item/1": ["Trip/1"], "Item/2": ["Trip/2"], "Item/3": ["Trip/1"], "Item/4": []])
            XCTAssertFalse(try columnNames(storePath(), table: "Item").contains("trip"))
            // Now an item may be in two trips.
            let context = try c.makeContext()
            try context.update(id: "Item/1", patch: #"{"trips": ["Trip/1", "Trip/2"]}"#)
            _ = try context.save()
            XCTAssertEqual(ids(try get(c.makeContext(), "Trip/2")["items"]), ["Item/1", "Item/2"])
            e = try assertFreshKey(c, "Item", #"{"title": "e", "trips": ["Trip/2"]}"#, past: Array(items.keys))
        }
        // Back to one-to-many: each item keeps one trip (the smallest key).
        let v3 = schema("3.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "originalName": "trips", "destination": "Trip", "inverse": "items"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v3)}"#)
        let trips = try objects(c, "Trip"), items = try objects(c, "Item")
        XCTAssertEqual(items.mapValues { $0["trip"]?.stringValue }, ["Item/1": "Trip/1", "Item/2": "Trip/2", "Item/3": "Trip/1", "Item/4": nil, e: "Trip/2"])
        XCTAssertEqual(trips.mapValues { ids($0["items"]) }, ["Trip/1": ["Item/1", "Item/3"], "Trip/2": ["Item/2", e]])
        try assertFreshKey(c, "Item", #"{"title": "f", "trip": "Trip/1"}"#, past: Array(items.keys))
    }

    func testDeleteRuleChangeKeepsStorageAndTheNewRuleApplies() throws {
        func version(_ v: String, _ rule: String) -> String {
            schema(v, #"""
                {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip", "deleteRule": "\#(rule)"}]},
                {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
                """#)
        }
        try makeStore(version("1.0.0", "nullify"), [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#),
                                                    ("Item", #"{"title": "a", "trip": "Trip/1"}"#), ("Item", #"{"title": "b", "trip": "Trip/2"}"#),
                                                    ("Item", #"{"title": "c", "trip": "Trip/1"}"#)])
        let before = try schemaObjects()
        let itemRows = try rows(storePath(), #"SELECT * FROM "Item" ORDER BY "_pk""#)
        let c = try open(config: #"{"schema": \#(version("2.0.0", "cascade"))}"#)
        XCTAssertEqual(try schemaObjects(), before)
        XCTAssertEqual(try rows(storePath(), #"SELECT * FROM "Item" ORDER BY "_pk""#), itemRows)
        let context = try c.makeContext()
        try context.delete(id: "Trip/1")
        _ = try context.save()
        XCTAssertEqual(Set(try objects(c, "Item").keys), ["Item/2"])
        XCTAssertEqual(Set(try objects(c, "Trip").keys), ["Trip/2"])
    }

    // MARK: Hierarchies

    static let tripWithItems = #"""
        {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
        """#

    func testAddParentEntity() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            \#(Self.tripWithItems)
            """#)
        let made = try makeStore(v1, [("Trip", #"{"name": "Paris", "budget": 2.5}"#), ("Trip", #"{"name": "Rome"}"#), ("Trip", #"{"name": "Oslo"}"#),
                                      ("Item", #"{"title": "a", "trip": "Trip/3"}"#), ("Item", #"{"title": "b", "trip": "Trip/1"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Journey", "attributes": [{"name": "title", "type": "string", "optional": true}]},
            {"name": "Trip", "superentity": "Journey", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            \#(Self.tripWithItems)
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let tables = try tableNames(storePath())
        XCTAssertTrue(tables.contains("Journey"))
        XCTAssertFalse(tables.contains("Trip"))
        let trips = try objects(c, "Trip")
        XCTAssertEqual(Set(trips.keys), Set(made[0...2]))
        XCTAssertEqual(trips.mapValues { $0["name"]?.stringValue }, ["Trip/1": "Paris", "Trip/2": "Rome", "Trip/3": "Oslo"])
        XCTAssertEqual(trips["Trip/1"]?["budget"]?.numberText, "2.5")
        XCTAssertEqual(trips.mapValues { ids($0["items"]) }, ["Trip/1": ["Item/2"], "Trip/2": [], "Trip/3": ["Item/1"]])
        XCTAssertEqual(try objects(c, "Item").mapValues { $0["trip"]?.stringValue }, ["Item/1": "Trip/3", "Item/2": "Trip/1"])
        XCTAssertEqual(Set(try objects(c, "Journey").keys), Set(made[0...2]))
        let journey = try assertFreshKey(c, "Journey", #"{"title": "j"}"#, past: Array(made[0...2]))
        try assertFreshKey(c, "Trip", #"{"name": "Lima"}"#, past: Array(made[0...2]) + [journey])
    }

    func testAddChildEntity() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            \#(Self.tripWithItems)
            """#)
        let made = try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#), ("Item", #"{"title": "a", "trip": "Trip/2"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
            \#(Self.tripWithItems)
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let trips = try objects(c, "Trip")
        XCTAssertEqual(trips.mapValues { $0["_entity"]?.stringValue }, ["Trip/1": "Trip", "Trip/2": "Trip"])
        XCTAssertEqual(trips.mapValues { ids($0["items"]) }, ["Trip/1": [], "Trip/2": ["Item/1"]])
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "name", "perdiem"])
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip" WHERE "perdiem" IS NOT NULL"#), .int(0))
        XCTAssertEqual(try count(c.makeContext(), "BusinessTrip"), 0)
        let business = try assertFreshKey(c, "BusinessTrip", #"{"name": "Expo", "perdiem": 80.5, "items": ["Item/1"]}"#, past: Array(made[0...1]))
        XCTAssertEqual(try objects(c, "Trip").count, 3)
        XCTAssertEqual(try get(c.makeContext(), "Item/1")["trip"], .string(business))
    }

    static let tripHierarchyV1 = #"""
        {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}]},
        {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "optional": true}]},
        {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "optional": true}]}
        """#

    func makeHierarchyStore() throws -> [String] {
        let made = try makeStore(schema("1.0.0", Self.tripHierarchyV1), [
            ("Trip", #"{"name": "Plain", "budget": 1.5}"#),
            ("BusinessTrip", #"{"name": "Expo", "budget": 2.5, "perdiem": 50.5}"#),
            ("PersonalTrip", #"{"name": "Home", "budget": 3.5, "reason": "family"}"#),
            ("BusinessTrip", #"{"name": "Fair", "perdiem": 60.5}"#),
            ("PersonalTrip", #"{"name": "Beach", "reason": "rest"}"#)])
        XCTAssertEqual(made, ["Trip/1", "BusinessTrip/2", "PersonalTrip/3", "BusinessTrip/4", "PersonalTrip/5"])
        return made
    }

    func testMoveAttributesUpAndDownAHierarchy() throws {
        let made = try makeHierarchyStore()
        // reason moves up to Trip, budget down to BusinessTrip.
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "reason", "type": "string", "optional": true}]},
            {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "optional": true}, {"name": "budget", "type": "double", "optional": true}]},
            {"name": "PersonalTrip", "superentity": "Trip"}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), Set(made))
        XCTAssertEqual(all.mapValues { $0["_entity"]?.stringValue }, ["Trip/1": "Trip", "BusinessTrip/2": "BusinessTrip", "PersonalTrip/3": "PersonalTrip",
                                                                      "BusinessTrip/4": "BusinessTrip", "PersonalTrip/5": "PersonalTrip"])
        XCTAssertEqual(all.mapValues { $0["name"]?.stringValue }, ["Trip/1": "Plain", "BusinessTrip/2": "Expo", "PersonalTrip/3": "Home",
                                                                   "BusinessTrip/4": "Fair", "PersonalTrip/5": "Beach"])
        XCTAssertEqual(all.mapValues { $0["reason"]?.stringValue }, ["Trip/1": nil, "BusinessTrip/2": nil, "PersonalTrip/3": "family",
                                                                     "BusinessTrip/4": nil, "PersonalTrip/5": "rest"])
        XCTAssertEqual(all.mapValues { $0["budget"]?.numberText }, ["Trip/1": nil, "BusinessTrip/2": "2.5", "PersonalTrip/3": nil,
                                                                    "BusinessTrip/4": nil, "PersonalTrip/5": nil])
        XCTAssertEqual(all.mapValues { $0["perdiem"]?.numberText }, ["Trip/1": nil, "BusinessTrip/2": "50.5", "PersonalTrip/3": nil,
                                                                     "BusinessTrip/4": "60.5", "PersonalTrip/5": nil])
        // Cleared in the rows of entities that no longer have it.
        XCTAssertEqual(try rows(storePath(), #"SELECT "_pk" FROM "Trip" WHERE "budget" IS NOT NULL ORDER BY "_pk""#), [[.int(2)]])
        try assertFreshKey(c, "PersonalTrip", #"{"name": "Lake", "reason": "fish"}"#, past: made)
    }

    func testMoveEntityOutOfAHierarchy() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "optional": true}], "relationships": [{"name": "expenses", "destination": "Expense", "toMany": true, "inverse": "trip"}]},
            {"name": "Expense", "attributes": [{"name": "amount", "type": "double"}], "relationships": [{"name": "trip", "destination": "BusinessTrip", "inverse": "expenses"}]}
            """#)
        let made = try makeStore(v1, [("Trip", #"{"name": "Plain"}"#), ("BusinessTrip", #"{"name": "Expo", "perdiem": 50.5}"#),
                                      ("Trip", #"{"name": "Other"}"#), ("BusinessTrip", #"{"name": "Fair"}"#),
                                      ("Expense", #"{"amount": 10.5, "trip": "BusinessTrip/2"}"#), ("Expense", #"{"amount": 20.5, "trip": "BusinessTrip/4"}"#),
                                      ("Expense", #"{"amount": 30.5, "trip": "BusinessTrip/2"}"#)])
        XCTAssertEqual(made[0...3], ["Trip/1", "BusinessTrip/2", "Trip/3", "BusinessTrip/4"])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "BusinessTrip", "attributes": [{"name": "name", "type": "string"}, {"name": "perdiem", "type": "double", "optional": true}], "relationships": [{"name": "expenses", "destination": "Expense", "toMany": true, "inverse": "trip"}]},
            {"name": "Expense", "attributes": [{"name": "amount", "type": "double"}], "relationships": [{"name": "trip", "destination": "BusinessTrip", "inverse": "expenses"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try rows(storePath(), #"SELECT "_pk", "_entity", "name" FROM "Trip" ORDER BY "_pk""#), [[.int(1), .text("Trip"), .text("Plain")], [.int(3), .text("Trip"), .text("Other")]])
        XCTAssertEqual(try rows(storePath(), #"SELECT "_pk", "name", "perdiem" FROM "BusinessTrip" ORDER BY "_pk""#),
                       [[.int(2), .text("Expo"), .double(50.5)], [.int(4), .text("Fair"), .null]])
        let business = try objects(c, "BusinessTrip")
        XCTAssertEqual(business.mapValues { $0["name"]?.stringValue }, ["BusinessTrip/2": "Expo", "BusinessTrip/4": "Fair"])
        XCTAssertEqual(business.mapValues { ids($0["expenses"]) }, ["BusinessTrip/2": ["Expense/1", "Expense/3"], "BusinessTrip/4": ["Expense/2"]])
        XCTAssertEqual(try objects(c, "Expense").mapValues { $0["trip"]?.stringValue }, ["Expense/1": "BusinessTrip/2", "Expense/2": "BusinessTrip/4", "Expense/3": "BusinessTrip/2"])
        XCTAssertEqual(Set(try objects(c, "Trip").keys), ["Trip/1", "Trip/3"])
        try assertFreshKey(c, "BusinessTrip", #"{"name": "Congress"}"#, past: ["BusinessTrip/2", "BusinessTrip/4"])
        try assertFreshKey(c, "Trip", #"{"name": "Walk"}"#, past: ["Trip/1", "Trip/3"])
    }

    func testMergingTwoHierarchiesCannotBeInferred() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Voyage", "attributes": [{"name": "name", "type": "string"}]}"#)
        try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Voyage", #"{"name": "Sea"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}, {"name": "Voyage", "superentity": "Trip"}"#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.message, "entity 'Trip' of version 2.0.0 brings together the objects of two hierarchies of version 1.0.0: 'Trip' (from the "
                       + "hierarchy of 'Trip') and 'Voyage' (from the hierarchy of 'Voyage'); merging hierarchies cannot be inferred (their objects' "
                       + "keys may collide): write a custom stage that copies one hierarchy's objects into the other")
        XCTAssertEqual(try objects(openFile(v1), "Voyage").count, 1)
    }

    func testToManyWithoutInverseGainsAnInverse() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}]}
            """#)
        try makeStore(v1, [("Item", #"{"title": "a"}"#), ("Item", #"{"title": "b"}"#), ("Item", #"{"title": "c"}"#),
                           ("Trip", #"{"name": "Paris", "items": ["Item/1", "Item/3"]}"#), ("Trip", #"{"name": "Rome", "items": ["Item/2"]}"#)])
        XCTAssertTrue(try tableNames(storePath()).contains("Trip_items"))
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertFalse(try tableNames(storePath()).contains("Trip_items"))
        XCTAssertEqual(try objects(c, "Trip").mapValues { ids($0["items"]) }, ["Trip/1": ["Item/1", "Item/3"], "Trip/2": ["Item/2"]])
        XCTAssertEqual(try objects(c, "Item").mapValues { $0["trip"]?.stringValue }, ["Item/1": "Trip/1", "Item/2": "Trip/2", "Item/3": "Trip/1"])
    }

    func testOneToOneWhoseLinkChangesSidesWithAnEntityRename() throws {
        // Passport.owner holds the link ("Passport" sorts before "Person"); renamed Visa, Person.passport holds it.
        let v1 = schema("1.0.0", #"""
            {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "passport", "destination": "Passport", "inverse": "owner"}]},
            {"name": "Passport", "attributes": [{"name": "number", "type": "string"}], "relationships": [{"name": "owner", "destination": "Person", "inverse": "passport"}]}
            """#)
        try makeStore(v1, [("Person", #"{"name": "Ann"}"#), ("Person", #"{"name": "Bob"}"#), ("Person", #"{"name": "Cy"}"#),
                           ("Passport", #"{"number": "P1", "owner": "Person/2"}"#), ("Passport", #"{"number": "P2", "owner": "Person/3"}"#),
                           ("Passport", #"{"number": "P3"}"#)])
        XCTAssertTrue(try columnNames(storePath(), table: "Passport").contains("owner"))
        let v2 = schema("2.0.0", #"""
            {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "passport", "destination": "Visa", "inverse": "owner"}]},
            {"name": "Visa", "originalName": "Passport", "attributes": [{"name": "number", "type": "string"}], "relationships": [{"name": "owner", "destination": "Person", "inverse": "passport"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertTrue(try columnNames(storePath(), table: "Person").contains("passport"))
        XCTAssertFalse(try columnNames(storePath(), table: "Visa").contains("owner"))
        XCTAssertEqual(try objects(c, "Person").mapValues { $0["passport"]?.stringValue }, ["Person/1": nil, "Person/2": "Visa/1", "Person/3": "Visa/2"])
        XCTAssertEqual(try objects(c, "Visa").mapValues { $0["owner"]?.stringValue }, ["Visa/1": "Person/2", "Visa/2": "Person/3", "Visa/3": nil])
        XCTAssertEqual(try objects(c, "Visa").mapValues { $0["number"]?.stringValue }, ["Visa/1": "P1", "Visa/2": "P2", "Visa/3": "P3"])
    }

    func testRemoveASubentityDeletesItsObjectsAndTheLinksToThem() throws {
        let v1 = schema("1.0.0", #"""
            \#(Self.tripHierarchyV1),
            {"name": "Note", "attributes": [{"name": "text", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip"}, {"name": "trips", "destination": "Trip", "toMany": true}]}
            """#)
        try makeStore(v1, [("Trip", #"{"name": "Plain"}"#), ("BusinessTrip", #"{"name": "Expo", "perdiem": 5.5}"#), ("PersonalTrip", #"{"name": "Home"}"#),
                           ("Note", #"{"text": "n1", "trip": "BusinessTrip/2", "trips": ["Trip/1", "BusinessTrip/2", "PersonalTrip/3"]}"#),
                           ("Note", #"{"text": "n2", "trip": "PersonalTrip/3", "trips": ["BusinessTrip/2"]}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}]},
            {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "optional": true}]},
            {"name": "Note", "attributes": [{"name": "text", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip"}, {"name": "trips", "destination": "Trip", "toMany": true}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(Set(try objects(c, "Trip").keys), ["Trip/1", "PersonalTrip/3"])
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip" WHERE "_entity" = 'BusinessTrip'"#), .int(0))
        let notes = try objects(c, "Note")
        XCTAssertEqual(notes.mapValues { $0["trip"]?.stringValue }, ["Note/1": nil, "Note/2": "PersonalTrip/3"])
        XCTAssertEqual(notes.mapValues { ids($0["trips"]) }, ["Note/1": ["Trip/1", "PersonalTrip/3"], "Note/2": []])
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Note_trips""#), .int(2))
        try assertFreshKey(c, "PersonalTrip", #"{"name": "Lake"}"#, past: ["Trip/1", "BusinessTrip/2", "PersonalTrip/3"])
    }

    func testRenameASubentity() throws {
        let made = try makeHierarchyStore()
        let v2 = schema("2.0.0", Self.tripHierarchyV1.replacingOccurrences(of: #"{"name": "BusinessTrip", "#, with: #"{"name": "WorkTrip", "originalName": "BusinessTrip", "#))
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), Set(made.map { $0.replacingOccurrences(of: "BusinessTrip", with: "WorkTrip") }))
        XCTAssertEqual(all["WorkTrip/2"]?["perdiem"]?.numberText, "50.5")
        XCTAssertEqual(all["WorkTrip/4"]?["_entity"], .string("WorkTrip"))
        XCTAssertEqual(all["PersonalTrip/3"]?["reason"], .string("family"))
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip" WHERE "_entity" = 'BusinessTrip'"#), .int(0))
        try assertFreshKey(c, "WorkTrip", #"{"name": "New"}"#, past: made)
    }

    func testOneToManyBecomesOneToOneKeepingOneLinkPerObject() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
            """#)
        try makeStore(v1, [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#), ("Trip", #"{"name": "Oslo"}"#),
                           ("Item", #"{"title": "a", "trip": "Trip/1"}"#), ("Item", #"{"title": "b", "trip": "Trip/2"}"#),
                           ("Item", #"{"title": "c", "trip": "Trip/1"}"#), ("Item", #"{"title": "d"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "item", "originalName": "items", "destination": "Item", "inverse": "trip"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "item"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        // Each trip keeps one item (the smallest key); the other item lets go.
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["item"]?.stringValue }, ["Trip/1": "Item/1", "Trip/2": "Item/2", "Trip/3": nil])
        XCTAssertEqual(try objects(c, "Item").mapValues { $0["trip"]?.stringValue }, ["Item/1": "Trip/1", "Item/2": "Trip/2", "Item/3": nil, "Item/4": nil])
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM (SELECT "trip" FROM "Item" WHERE "trip" IS NOT NULL GROUP BY "trip" HAVING count(*) > 1) AS shared"#), .int(0))
    }

    func testRenamedEntityWhoseTableIsRebuilt() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Voyage", "attributes": [{"name": "name", "type": "string"}, {"name": "old", "type": "string", "optional": true}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "voyage"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "voyage", "destination": "Voyage", "inverse": "items"}]}
            """#)
        try makeStore(v1, [("Voyage", #"{"name": "A", "old": "x"}"#), ("Voyage", #"{"name": "B"}"#), ("Voyage", #"{"name": "C"}"#),
                           ("Item", #"{"title": "a", "voyage": "Voyage/3"}"#), ("Item", #"{"title": "b", "voyage": "Voyage/1"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "originalName": "Voyage", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "originalName": "voyage", "destination": "Trip", "inverse": "items"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try columnNames(storePath(), table: "Trip").sorted(), ["_entity", "_pk", "name"])
        XCTAssertFalse(try tableNames(storePath()).contains("Voyage"))
        let trips = try objects(c, "Trip")
        XCTAssertEqual(trips.mapValues { $0["name"]?.stringValue }, ["Trip/1": "A", "Trip/2": "B", "Trip/3": "C"])
        XCTAssertEqual(trips.mapValues { ids($0["items"]) }, ["Trip/1": ["Item/2"], "Trip/2": [], "Trip/3": ["Item/1"]])
        try assertFreshKey(c, "Trip", #"{"name": "D"}"#, past: Array(trips.keys))
    }

    func testIntermediateEntityAndARenamedChildInOneStep() throws {
        let made = try makeHierarchyStore()
        // Work is inserted between Trip and BusinessTrip, renamed Assignment; PersonalTrip gets a required attribute with a default.
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "double", "optional": true}]},
            {"name": "Work", "superentity": "Trip", "attributes": [{"name": "client", "type": "string", "optional": true}]},
            {"name": "Assignment", "originalName": "BusinessTrip", "superentity": "Work", "attributes": [{"name": "perdiem", "type": "double", "optional": true}]},
            {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "optional": true}, {"name": "nights", "type": "int", "default": 1}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(Set(all.keys), ["Trip/1", "Assignment/2", "PersonalTrip/3", "Assignment/4", "PersonalTrip/5"])
        XCTAssertEqual(all["Assignment/2"]?["perdiem"]?.numberText, "50.5")
        XCTAssertEqual(all["Assignment/2"]?["budget"]?.numberText, "2.5")
        XCTAssertEqual(all["PersonalTrip/3"]?["nights"]?.numberText, "1")
        XCTAssertEqual(all["PersonalTrip/5"]?["reason"], .string("rest"))
        XCTAssertEqual(try scalar(storePath(), #"SELECT count(*) FROM "Trip" WHERE "nights" IS NOT NULL"#), .int(2))
        XCTAssertEqual(Set(try objects(c, "Work").keys), ["Assignment/2", "Assignment/4"])
        let work = try assertFreshKey(c, "Work", #"{"name": "Audit", "client": "ACME"}"#, past: made)
        XCTAssertEqual(try get(c.makeContext(), work)["client"], .string("ACME"))
    }

    func testEntityLeavingAHierarchyKeepsItsManyToManyLinks() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "BusinessTrip", "superentity": "Trip", "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "trips"}]},
            {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "trips", "destination": "BusinessTrip", "toMany": true, "inverse": "tags"}]}
            """#)
        try makeStore(v1, [("Tag", #"{"label": "x"}"#), ("Tag", #"{"label": "y"}"#), ("Trip", #"{"name": "Plain"}"#),
                           ("BusinessTrip", #"{"name": "Expo", "tags": ["Tag/1", "Tag/2"]}"#), ("BusinessTrip", #"{"name": "Fair", "tags": ["Tag/2"]}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "BusinessTrip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "trips"}]},
            {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "trips", "destination": "BusinessTrip", "toMany": true, "inverse": "tags"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try objects(c, "BusinessTrip").mapValues { ids($0["tags"]) }, ["BusinessTrip/2": ["Tag/1", "Tag/2"], "BusinessTrip/3": ["Tag/2"]])
        XCTAssertEqual(try objects(c, "Tag").mapValues { ids($0["trips"]) }, ["Tag/1": ["BusinessTrip/2"], "Tag/2": ["BusinessTrip/2", "BusinessTrip/3"]])
        XCTAssertEqual(try objects(c, "BusinessTrip").mapValues { $0["name"]?.stringValue }, ["BusinessTrip/2": "Expo", "BusinessTrip/3": "Fair"])
        try assertFreshKey(c, "BusinessTrip", #"{"name": "New", "tags": ["Tag/1"]}"#, past: ["Trip/1", "BusinessTrip/2", "BusinessTrip/3"])
    }

    func testUniqueConstraintAdoptedInARebuiltHierarchyTable() throws {
        let made = try makeHierarchyStore()
        // budget goes, name becomes unique: the table is rebuilt and the constraint created over the copied rows.
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string", "unique": true}]},
            {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "optional": true}]},
            {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "optional": true}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertFalse(try columnNames(storePath(), table: "Trip").contains("budget"))
        XCTAssertEqual(Set(try objects(c, "Trip").keys), Set(made))
        let context = try c.makeContext()
        assertError(.constraint) { try context.insert(entity: "PersonalTrip", json: #"{"name": "Expo", "_onConflict": "error"}"#) }
    }

    func testRelationshipNarrowedToASubentityKeepsTheLinksThatStillFit() throws {
        let v1 = schema("1.0.0", #"""
            \#(Self.tripHierarchyV1),
            {"name": "Expense", "attributes": [{"name": "amount", "type": "double"}], "relationships": [{"name": "trip", "destination": "Trip"}]}
            """#)
        try makeStore(v1, [("Trip", #"{"name": "Plain"}"#), ("BusinessTrip", #"{"name": "Expo"}"#), ("PersonalTrip", #"{"name": "Home"}"#),
                           ("Expense", #"{"amount": 1.5, "trip": "Trip/1"}"#), ("Expense", #"{"amount": 2.5, "trip": "BusinessTrip/2"}"#),
                           ("Expense", #"{"amount": 3.5, "trip": "PersonalTrip/3"}"#)])
        let v2 = schema("2.0.0", #"""
            \#(Self.tripHierarchyV1),
            {"name": "Expense", "attributes": [{"name": "amount", "type": "double"}], "relationships": [{"name": "trip", "destination": "BusinessTrip"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try objects(c, "Expense").mapValues { $0["trip"]?.stringValue }, ["Expense/1": nil, "Expense/2": "BusinessTrip/2", "Expense/3": nil])
        XCTAssertEqual(try objects(c, "Expense").mapValues { $0["amount"]?.numberText }, ["Expense/1": "1.5", "Expense/2": "2.5", "Expense/3": "3.5"])
    }

    func testRelationshipToAnUnrelatedEntityCannotBeInferred() throws {
        let v1 = schema("1.0.0", #"\#(Self.person), {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guide", "destination": "Person"}]}, {"name": "Place", "attributes": [{"name": "name", "type": "string"}]}"#)
        try makeStore(v1, [("Person", #"{"name": "Ann"}"#), ("Trip", #"{"name": "Paris", "guide": "Person/1"}"#)])
        let v2 = schema("2.0.0", #"\#(Self.person), {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guide", "destination": "Place"}]}, {"name": "Place", "attributes": [{"name": "name", "type": "string"}]}"#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Trip")
        XCTAssertEqual(e?.attribute, "guide")
        XCTAssertEqual(e?.message, "entity 'Trip': relationship 'guide' changes destination from 'Person' to 'Place' between versions 1.0.0 and 2.0.0, "
                       + "and 'Place' does not come from 'Person'; this cannot be inferred: add a relationship and fill it in a custom stage")
    }

    static let oneToMany = #"""
        {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip"}]},
        {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip", "inverse": "items"}]}
        """#
    static let oneToManyObjects = [("Trip", #"{"name": "Paris"}"#), ("Trip", #"{"name": "Rome"}"#),
                                   ("Item", #"{"title": "a", "trip": "Trip/1"}"#), ("Item", #"{"title": "b", "trip": "Trip/2"}"#),
                                   ("Item", #"{"title": "c", "trip": "Trip/1"}"#), ("Item", #"{"title": "d"}"#)]

    func testRemovingOneSideOfARelationshipKeepsTheOthersLinks() throws {
        // Item.trip goes: Trip.items, now without an inverse, keeps its links (in a set of pairs).
        try makeStore(schema("1.0.0", Self.oneToMany), Self.oneToManyObjects, path: storePath("a"))
        let withoutTrip = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "items", "destination": "Item", "toMany": true}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}]}
            """#)
        var c = try open(config: #"{"schema": \#(withoutTrip)}"#, path: storePath("a"))
        XCTAssertEqual(try objects(c, "Trip").mapValues { ids($0["items"]) }, ["Trip/1": ["Item/1", "Item/3"], "Trip/2": ["Item/2"]])
        XCTAssertFalse(try columnNames(storePath("a"), table: "Item").contains("trip"))
        // Trip.items goes: Item.trip, now without an inverse, keeps its links (in its row).
        try makeStore(schema("1.0.0", Self.oneToMany), Self.oneToManyObjects, path: storePath("b"))
        let withoutItems = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "Item", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "trip", "destination": "Trip"}]}
            """#)
        c = try open(config: #"{"schema": \#(withoutItems)}"#, path: storePath("b"))
        XCTAssertEqual(try objects(c, "Item").mapValues { $0["trip"]?.stringValue }, ["Item/1": "Trip/1", "Item/2": "Trip/2", "Item/3": "Trip/1", "Item/4": nil])
    }

    func testRemovingAnEntityDropsItsManyToManyLinks() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "trips"}]},
            {"name": "Tag", "attributes": [{"name": "label", "type": "string"}], "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "inverse": "tags"}]}
            """#)
        try makeStore(v1, [("Tag", #"{"label": "x"}"#), ("Trip", #"{"name": "Paris", "tags": ["Tag/1"]}"#), ("Trip", #"{"name": "Rome"}"#)])
        let pairs = try XCTUnwrap(try tableNames(storePath()).first { $0.hasSuffix("_tags") || $0.hasSuffix("_trips") })
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let tables = try tableNames(storePath())
        XCTAssertFalse(tables.contains("Tag"))
        XCTAssertFalse(tables.contains(pairs))
        XCTAssertEqual(try objects(c, "Trip").mapValues { $0["name"]?.stringValue }, ["Trip/1": "Paris", "Trip/2": "Rome"])
    }

    func testEntityWithoutOwnColumnsLeavesAHierarchyWhoseTableStaysInPlace() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}]},
            {"name": "BusinessTrip", "superentity": "Trip"},
            {"name": "Expense", "attributes": [{"name": "amount", "type": "double"}], "relationships": [{"name": "trip", "destination": "Trip"}]}
            """#)
        try makeStore(v1, [("Trip", #"{"name": "Plain"}"#), ("BusinessTrip", #"{"name": "Expo"}"#), ("BusinessTrip", #"{"name": "Fair"}"#),
                           ("Expense", #"{"amount": 1.5, "trip": "BusinessTrip/2"}"#), ("Expense", #"{"amount": 2.5, "trip": "Trip/1"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Trip", "attributes": [{"name": "name", "type": "string", "index": true}]},
            {"name": "BusinessTrip", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "Expense", "attributes": [{"name": "amount", "type": "double"}], "relationships": [{"name": "trip", "destination": "Trip"}, {"name": "business", "destination": "BusinessTrip"}]}
            """#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(try rows(storePath(), #"SELECT "_pk", "_entity", "name" FROM "Trip""#), [[.int(1), .text("Trip"), .text("Plain")]])
        XCTAssertEqual(try objects(c, "BusinessTrip").mapValues { $0["name"]?.stringValue }, ["BusinessTrip/2": "Expo", "BusinessTrip/3": "Fair"])
        // A link to an object that left the destination's hierarchy is cleared.
        XCTAssertEqual(try objects(c, "Expense").mapValues { $0["trip"]?.stringValue }, ["Expense/1": nil, "Expense/2": "Trip/1"])
        XCTAssertEqual(try indexNames("Trip"), [StoreLayout.indexName("Trip", "index", ["name"])])
        try assertFreshKey(c, "BusinessTrip", #"{"name": "New"}"#, past: ["Trip/1", "BusinessTrip/2", "BusinessTrip/3"])
        try assertFreshKey(c, "Trip", #"{"name": "Walk"}"#, past: ["Trip/1", "BusinessTrip/2", "BusinessTrip/3"])
    }

    func testARenameAndANewAttributeTakingTheOldNameInOneVersion() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "title", "type": "string"}]}"#)
        let ids = try makeStore(v1, [("Trip", #"{"title": "Paris"}"#)])
        // "title" becomes "name", and a new optional "title" appears: the rename wins, the new one starts empty.
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string", "originalName": "title"}, {"name": "title", "type": "string", "optional": true}]}"#)
        let c = try open(config: #"{"schema": \#(v2)}"#)
        let all = try objects(c, "Trip")
        XCTAssertEqual(value(all, ids[0], "name"), .string("Paris"))
        XCTAssertEqual(value(all, ids[0], "title"), JSONValue.null)
    }

    func testTwoPropertiesFromOneOriginCannotBeInferred() throws {
        let v1 = schema("1.0.0", #"{"name": "Trip", "attributes": [{"name": "name", "type": "string"}]}"#)
        try makeStore(v1, [("Trip", #"{"name": "Paris"}"#)])
        let v2 = schema("2.0.0", #"{"name": "Trip", "attributes": [{"name": "title", "type": "string", "originalName": "name"}, {"name": "label", "type": "string", "originalName": "name"}]}"#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.attribute, "label")
        XCTAssertEqual(e?.message, "entity 'Trip': attributes 'title' and 'label' both come from attribute 'name' of 'Trip' in version 1.0.0 (check originalName)")
    }

    func testTwoSetsOfLinksMadeInversesCannotBeInferred() throws {
        let v1 = schema("1.0.0", #"""
            {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "favorites", "destination": "Trip", "toMany": true}, {"name": "visited", "destination": "Trip", "toMany": true}]},
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guide", "destination": "Person"}]}
            """#)
        try makeStore(v1, [("Person", #"{"name": "Ann"}"#), ("Trip", #"{"name": "Paris", "guide": "Person/1"}"#)])
        let v2 = schema("2.0.0", #"""
            {"name": "Person", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "favorites", "destination": "Trip", "toMany": true, "inverse": "guide"}, {"name": "visited", "destination": "Trip", "toMany": true}]},
            {"name": "Trip", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "guide", "destination": "Person", "inverse": "favorites"}]}
            """#)
        let e = openError(config: #"{"schema": \#(v2)}"#)
        XCTAssertEqual(e?.code, .migration)
        XCTAssertEqual(e?.entity, "Person")
        XCTAssertEqual(e?.message, "entity 'Person': relationships 'favorites' and 'Trip.guide' become inverses of each other, but in version 1.0.0 "
                       + "'Person.favorites' and 'Trip.guide' hold separate links; joining two sets of links cannot be inferred")
    }
}
