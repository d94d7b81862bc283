import XCTest
@testable import Strata

/// Composite attributes (SwiftData's Codable structs, Core Data's composite attributes):
/// declared once, written and read as one JSON object, each field a key path of its own
/// in predicates, sort descriptors, fetched properties, unique constraints and indexes.
final class CompositeAttributeTests: StoreTestCase {
    static let schema = #"""
        {"version": "1", "entities": [
          {"name": "Trip", "attributes": [
             {"name": "name", "type": "string"},
             {"name": "address", "type": "composite", "optional": true, "fields": [
                {"name": "city", "type": "string"},
                {"name": "zip", "type": "string", "optional": true},
                {"name": "country", "type": "string", "default": "FR"}]},
             {"name": "budget", "type": "composite", "fields": [
                {"name": "amount", "type": "double", "default": 0},
                {"name": "nights", "type": "int", "default": 1}]}],
           "relationships": [{"name": "stays", "destination": "Stay", "toMany": true, "inverse": "trip"}],
           "indexes": [["address.city"]],
           "uniqueConstraints": [["name", "address.zip"]]},
          {"name": "Stay", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "trip", "destination": "Trip"}]}]}
        """#

    private func caught(_ body: () throws -> Any) -> StrataError? {
        do { _ = try body(); return nil } catch { return error as? StrataError }
    }

    private func fetch(_ c: ModelContext, _ descriptor: String) throws -> [JSONValue] {
        let d = try FetchDescriptor.decode(try JSONValue.parse(descriptor), schema: c.schema)
        guard let all = try parse(c.fetch(d)).array else { throw StrataError(.internal, "a fetch gave no array") }
        return all
    }

    private func names(_ c: ModelContext, _ descriptor: String) throws -> [String] {
        try fetch(c, descriptor).map { $0["name"]?.stringValue ?? "?" }
    }

    private func insertSample(_ c: ModelContext) throws {
        _ = try c.insertMany(entity: "Trip", json: #"""
            [{"name": "Paris", "address": {"city": "Paris", "zip": "75001"}, "budget": {"amount": 900.5, "nights": 3}},
             {"name": "Lyon", "address": {"city": "Lyon", "country": "FR"}, "budget": {"amount": 200}},
             {"name": "Rome", "address": {"city": "Rome", "zip": "00100", "country": "IT"}},
             {"name": "Nowhere", "address": null, "budget": {"amount": 10, "nights": 9}}]
            """#)
    }

    func testAValueIsWrittenAndReadAsOneObjectWithDefaultsAndNil() {
        forEachSetup(Self.schema) { h in
            try insertSample(h.context)
            func check(_ label: String) throws {
                let byName = Dictionary(uniqueKeysWithValues: try fetch(h.context, #"{"entity": "Trip"}"#).map { ($0["name"]!.stringValue!, $0) })
                XCTAssertEqual(byName["Paris"]?["address"], try JSONValue.parse(#"{"city": "Paris", "zip": "75001", "country": "FR"}"#), label)
                XCTAssertEqual(byName["Lyon"]?["address"], try JSONValue.parse(#"{"city": "Lyon", "zip": null, "country": "FR"}"#), label)
                XCTAssertEqual(byName["Nowhere"]?["address"], .null, label)
                // A required composite left out takes its fields' defaults.
                XCTAssertEqual(byName["Rome"]?["budget"], try JSONValue.parse(#"{"amount": 0.0, "nights": 1}"#), label)
                XCTAssertEqual(byName["Lyon"]?["budget"], try JSONValue.parse(#"{"amount": 200.0, "nights": 1}"#), label)
            }
            try check("pending")
            try h.context.save()
            try h.reopen()
            try check("saved")
        }
    }

    func testAnUpdateReplacesTheWholeCompositeAndNilClearsIt() {
        forEachSetup(Self.schema) { h in
            try insertSample(h.context)
            try h.context.save()
            let paris = try XCTUnwrap(self.identifiers(h.context, "Trip").first)
            try h.context.update(id: paris, patch: #"{"address": {"city": "Marseille"}}"#)
            XCTAssertEqual(try get(h.context, paris)["address"], try JSONValue.parse(#"{"city": "Marseille", "zip": null, "country": "FR"}"#))
            // A change of fields is a change of the composite, as history and observers report it.
            let changes = try h.context.save()
            XCTAssertEqual(changes.changes.first { $0.id.description == paris }?.attributes, ["address"])
            try h.context.update(id: paris, patch: #"{"address": null}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, paris)["address"], .null)
            // A nil composite has nil fields: a predicate on a field does not see an old value.
            XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "$0.address?.city == nil", "sortBy": [{"key": "name"}]}"#), ["Nowhere", "Paris"])
        }
    }

    func testFieldsAreKeyPathsInPredicatesSortsAndFetchedProperties() {
        forEachSetup(Self.schema) { h in
            try insertSample(h.context)
            for pending in [true, false] {
                if !pending { try h.context.save() }
                let label = pending ? "pending" : "saved"
                XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "$0.address?.country == \"FR\"", "sortBy": [{"key": "address.city", "order": "reverse"}]}"#),
                               ["Paris", "Lyon"], label)
                XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": {"==": [{"key": "address"}, null]}}"#), ["Nowhere"], label)
                XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "$0.budget.amount * 2 > 1000"}"#), ["Paris"], label)
                // A forced unwrap of a nil composite fails: the object is not selected, even under `!`.
                XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "!($0.address!.city == \"Paris\")", "sortBy": [{"key": "name"}]}"#),
                               ["Lyon", "Rome"], label)
                XCTAssertEqual(try names(h.context, #"{"entity": "Stay", "predicate": "$0.trip?.address?.city == \"Rome\""}"#), [], label)
                // Fetched properties: a field alone is the composite with that field.
                let some = try fetch(h.context, #"{"entity": "Trip", "predicate": "$0.name == \"Paris\"", "propertiesToFetch": ["name", "address.zip", "budget"]}"#)
                XCTAssertEqual(some.first?["address"], try JSONValue.parse(#"{"zip": "75001"}"#), label)
                XCTAssertEqual(some.first?["budget"], try JSONValue.parse(#"{"amount": 900.5, "nights": 3}"#), label)
                let nilOne = try fetch(h.context, #"{"entity": "Trip", "predicate": "$0.name == \"Nowhere\"", "propertiesToFetch": ["address.city"]}"#)
                XCTAssertEqual(nilOne.first?["address"], .null, label)
            }
        }
    }

    func testUniqueConstraintsAndIndexesOverFields() throws {
        forEachSetup(Self.schema) { h in
            try insertSample(h.context)
            try h.context.save()
            // (name, address.zip) is unique: the same pair is an upsert, not a second object.
            _ = try h.context.insert(entity: "Trip", json: #"{"name": "Paris", "address": {"city": "Paris again", "zip": "75001"}}"#)
            try h.context.save()
            XCTAssertEqual(try self.count(h.context, "Trip"), 4)
            XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "$0.address?.city == \"Paris again\""}"#), ["Paris"])
        }
        let container = try openFile(Self.schema)
        _ = container
        let indexes = try rows(storePath(), "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Trip'").compactMap(\.first?.text)
        XCTAssertTrue(indexes.contains("Trip.index(address.city)"), "\(indexes)")
        XCTAssertTrue(indexes.contains("Trip.unique(name,address.zip)"), "\(indexes)")
    }

    func testADamagedCompositeColumnIsCorruptAndANilOneHidesItsFields() throws {
        let container = try openFile(Self.schema)
        let c = try container.makeContext()
        try insertSample(c)
        try c.save()
        let paris = try XCTUnwrap(identifiers(c, "Trip").first)
        func tamper(_ sql: String) throws { try Connection(path: storePath(), readOnly: false, create: false).execute(sql, []) }
        func outcome() -> String {
            do {
                let all = try fetch(c, #"{"entity": "Trip", "predicate": "$0.name == \"Paris\""}"#)
                return all.first?["address"]?.text ?? "?"
            } catch let e as StrataError { return "\(e.code) \(e.attribute ?? "")" } catch { return "\(error)" }
        }
        for damage in ["2", "0", "'yes'", "x'01'", "1.5"] {
            try tamper("UPDATE Trip SET address = \(damage) WHERE name = 'Paris'")
            XCTAssertEqual(outcome(), "corrupt address", damage)
            XCTAssertEqual(caught { try c.get(id: paris) }?.code, .corrupt, damage)
        }
        try tamper(#"UPDATE Trip SET address = 1, "address.city" = x'01' WHERE name = 'Paris'"#)
        XCTAssertEqual(outcome(), "corrupt address.city")
        // Nil: its fields, whatever they hold, are not written.
        try tamper(#"UPDATE Trip SET address = NULL, "address.city" = 'Paris' WHERE name = 'Paris'"#)
        XCTAssertEqual(outcome(), "null")
    }

    /// Fields of every type, a composite of a subentity (its column in the root's table, nil for
    /// the other entities' rows), and pending duplicates of a unique field.
    static let kinds = #"""
        {"version": "1", "entities": [
          {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
          {"name": "BusinessTrip", "superentity": "Trip", "attributes": [
             {"name": "expense", "type": "composite", "optional": true, "fields": [
                {"name": "code", "type": "string", "unique": true},
                {"name": "amount", "type": "decimal", "optional": true},
                {"name": "rate", "type": "double", "optional": true},
                {"name": "count", "type": "int", "enum": [1, 2, 3], "default": 1},
                {"name": "paid", "type": "bool", "default": false},
                {"name": "on", "type": "date", "optional": true},
                {"name": "ref", "type": "uuid", "optional": true},
                {"name": "link", "type": "url", "optional": true},
                {"name": "scan", "type": "data", "optional": true},
                {"name": "extra", "type": "json", "optional": true}]}]}]}
        """#

    func testFieldsOfEveryTypeOnASubentity() {
        forEachSetup(Self.kinds) { h in
            _ = try h.context.insert(entity: "Trip", json: #"{"name": "plain"}"#)
            let b = try h.context.insert(entity: "BusinessTrip", json: #"""
                {"name": "work", "expense": {"code": "X1", "amount": "12.50", "rate": 0.5, "count": 2, "paid": true,
                 "on": "2026-01-02T03:04:05Z", "ref": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "link": "https://example.com/a",
                 "scan": "AAEC", "extra": {"k": [1, null]}}}
                """#)
            // A second insert of the same code, pending: the unique field makes it an upsert.
            let again = try h.context.insert(entity: "BusinessTrip", json: #"{"name": "work again", "expense": {"code": "X1"}}"#)
            XCTAssertEqual(again, b)
            let want = try JSONValue.parse(#"""
                {"code": "X1", "amount": null, "rate": null, "count": 1, "paid": false, "on": null, "ref": null, "link": null, "scan": null, "extra": null}
                """#)
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                XCTAssertEqual(try get(h.context, b.description)["expense"], want, "saved: \(saved)")
                let trips = try fetch(h.context, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#)
                XCTAssertEqual(trips.map { $0["expense"] == nil }, [true, false], "saved: \(saved)")
                // A subentity's field on a Trip fetch: nil for the other trips.
                XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "$0.expense?.code == nil"}"#), ["plain"])
                XCTAssertEqual(try names(h.context, #"{"entity": "Trip", "predicate": "($0 as? BusinessTrip)?.expense?.count == 1"}"#), ["work again"])
            }
            try h.context.update(id: b.description, patch: #"""
                {"expense": {"code": "X2", "amount": "1e3", "on": 0, "ref": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "scan": "AQID", "extra": [true]}}
                """#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, b.description)["expense"], try JSONValue.parse(#"""
                {"code": "X2", "amount": "1000", "rate": null, "count": 1, "paid": false, "on": "1970-01-01T00:00:00Z",
                 "ref": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "link": null, "scan": "AQID", "extra": [true]}
                """#))
            XCTAssertEqual(try names(h.context, #"{"entity": "BusinessTrip", "predicate": "$0.expense?.amount == \"1000.0\" && $0.expense?.scan != nil"}"#), ["work again"])
            XCTAssertEqual(caught { try h.context.update(id: b.description, patch: #"{"expense": {"code": "X3", "count": 4}}"#) }?.path, "/expense/count")
            XCTAssertEqual(caught { try fetch(h.context, #"{"entity": "Trip", "propertiesToFetch": ["expense.town"]}"#) }?.path, "/propertiesToFetch/0")
        }
    }

    func testBadValuesNameTheField() throws {
        let c = try openInMemory(Self.schema).makeContext()
        func error(_ json: String) -> StrataError? { caught { try c.insert(entity: "Trip", json: json) } }
        var e = error(#"{"name": "x", "address": {"zip": "1"}}"#)
        XCTAssertEqual(e?.code, .validation)
        XCTAssertEqual(e?.attribute, "address.city")
        XCTAssertEqual(e?.path, "/address")
        e = error(#"{"name": "x", "address": {"city": null}}"#)
        XCTAssertEqual(e?.path, "/address/city")
        e = error(#"{"name": "x", "address": {"city": "a", "town": "b"}}"#)
        XCTAssertEqual(e?.code, .invalid)
        XCTAssertEqual(e?.path, "/address/town")
        XCTAssertTrue(e?.message.contains("no field 'town'") == true, e?.message ?? "")
        e = error(#"{"name": "x", "address": {"city": "a", "city": "b"}}"#)
        XCTAssertEqual(e?.code, .invalid)
        XCTAssertEqual(e?.attribute, "address.city")
        XCTAssertEqual(e?.path, "/address/city")
        e = error(#"{"name": "x", "address": {"city": 5}}"#)
        XCTAssertEqual(e?.code, .validation)
        XCTAssertEqual(e?.attribute, "address.city")
        e = error(#"{"name": "x", "address": "Paris"}"#)
        XCTAssertEqual(e?.code, .validation)
        XCTAssertEqual(e?.path, "/address")
        e = error(#"{"name": "x", "budget": null}"#)
        XCTAssertEqual(e?.code, .validation)
        e = error(#"{"name": "x", "address.city": "Paris"}"#)
        XCTAssertEqual(e?.code, .invalid)
        XCTAssertFalse(c.hasChanges)
    }

    func testQueriesThatCannotWorkAreRefusedByName() throws {
        let c = try openInMemory(Self.schema).makeContext()
        func error(_ descriptor: String) -> String {
            do { _ = try fetch(c, descriptor); return "no error" } catch let e as StrataError { return e.message } catch { return "\(error)" }
        }
        let mismatch = error(#"{"entity": "Trip", "predicate": "$0.address == \"x\""}"#)
        XCTAssertTrue(mismatch.contains("compares only with nil"), mismatch)
        XCTAssertTrue(error(#"{"entity": "Trip", "predicate": "$0.address == $0.budget"}"#).contains("compares only with nil"))
        let town = error(#"{"entity": "Trip", "predicate": "$0.address.town == \"x\""}"#)
        XCTAssertTrue(town.contains("has no field 'town'"), town)
        XCTAssertTrue(error(#"{"entity": "Trip", "predicate": "$0.address.city.x == \"x\""}"#).contains("has no members"))
        XCTAssertTrue(error(#"{"entity": "Trip", "sortBy": [{"key": "address"}]}"#).contains("sort by its fields"))
    }

    func testSchemaRefusalsNameTheProblem() {
        func error(_ attribute: String, indexes: String = "[]") -> StrataError? {
            caught { _ = try SchemaDecoder.decode(#"{"version": "1", "entities": [{"name": "A", "attributes": ["# + attribute + #"], "indexes": "# + indexes + "}]}") }
        }
        let city = #"{"name": "city", "type": "string"}"#
        XCTAssertEqual(error(#"{"name": "c", "type": "composite"}"#)?.path, "/entities/0/attributes/0/fields")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "fields": []}"#)?.path, "/entities/0/attributes/0/fields")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "unique": true, "fields": [\#(city)]}"#)?.path, "/entities/0/attributes/0/unique")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "fields": [\#(city), {"name": "City", "type": "string"}]}"#)?.path,
                       "/entities/0/attributes/0/fields/1/name")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "fields": [{"name": "in", "type": "composite", "fields": [\#(city)]}]}"#)?.path,
                       "/entities/0/attributes/0/fields/0")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "fields": [{"name": "x", "type": "string", "transient": true, "default": "a"}]}"#)?.path,
                       "/entities/0/attributes/0/fields/0/transient")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "fields": [\#(city)]}"#, indexes: #"[["c"]]"#)?.path, "/entities/0/indexes/0/0")
        XCTAssertEqual(error(#"{"name": "c", "type": "composite", "fields": [\#(city)]}"#, indexes: #"[["c.town"]]"#)?.path, "/entities/0/indexes/0/0")
        XCTAssertNil(error(#"{"name": "c", "type": "composite", "fields": [\#(city)]}"#, indexes: #"[["c.city"]]"#))
    }
}
