import Foundation
import XCTest
@testable import Strata

/// FetchDescriptor (docs/predicates.md §4): sort, limit and offset,
/// propertiesToFetch, prefetching, subentities, pending changes, index use
/// and delete(matching:).
final class FetchDescriptorTests: StoreTestCase {
    private func trip(_ name: String, day: Int = 0, _ extra: String = "") -> String {
        let start = Pools.iso(Pools.epoch + Int64(day) * 86_400)
        let end = Pools.iso(Pools.epoch + Int64(day + 3) * 86_400)
        return #"{"name": \#(JSONValue.string(name).text), "destination": "", "startDate": "\#(start)", "endDate": "\#(end)"\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    private func d(_ context: ModelContext, _ json: String) throws -> FetchDescriptor {
        try Query.descriptor(json, context.schema)
    }

    private func names(_ context: ModelContext, _ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        try Query.objects(context, d(context, json)).map { $0["name"]?.stringValue ?? "?" }
    }

    /// A store with named trips inserted in order; returns the container, context and ids by name.
    private func store(_ trips: [String]) throws -> (ModelContainer, ModelContext, [ObjectID]) {
        let container = try openInMemory(QuerySchemas.trips)
        let context = try container.makeContext()
        var ids: [ObjectID] = []
        for t in trips { ids.append(try context.insert(entity: "Trip", json: t)) }
        try context.save()
        return (container, context, ids)
    }

    // MARK: sortBy

    func testSortLocalizedStandardByDefaultAndBinaryOnRequest() throws {
        let (_, c, _) = try store(["Trip 10", "Trip 2", "trip 3", "Trip 1", "Zürich", "apple", "Apple", "zebra"].map { trip($0) })
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#),
                       ["apple", "Apple", "Trip 1", "Trip 2", "trip 3", "Trip 10", "zebra", "Zürich"],
                       "Finder order: case-insensitive, numbers by value, ties by insertion order")
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "name", "comparator": "binary"}]}"#),
                       ["Apple", "Trip 1", "Trip 10", "Trip 2", "Zürich", "apple", "trip 3", "zebra"])
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "name", "order": "reverse", "comparator": "binary"}]}"#),
                       ["zebra", "trip 3", "apple", "Zürich", "Trip 2", "Trip 10", "Trip 1", "Apple"])
        // "Trip 2" < "Trip 10" also as a reverse sort.
        let reversed = try names(c, #"{"entity": "Trip", "sortBy": [{"key": "name", "order": "reverse"}]}"#)
        XCTAssertLessThan(try XCTUnwrap(reversed.firstIndex(of: "Trip 10")), try XCTUnwrap(reversed.firstIndex(of: "Trip 2")))
    }

    func testSortSeveralKeysNilsFirstAndKeyPathsThroughToOne() throws {
        let (_, c, _) = try store([
            trip("a", day: 3, #""rating": 2, "flag": true, "livingAccommodation": {"placeName": "Ritz", "address": ""}"#),
            trip("b", day: 1, #""rating": null, "flag": false"#),
            trip("c", day: 2, #""rating": 2, "flag": false, "livingAccommodation": {"placeName": "Hotel 10", "address": ""}"#),
            trip("d", day: 0, #""rating": 1, "flag": true, "livingAccommodation": {"placeName": "Hotel 9", "address": ""}"#),
            trip("e", day: 5, #""rating": null, "flag": true"#),
        ])
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "rating"}]}"#), ["b", "e", "d", "a", "c"], "nil first, then ties by insertion order")
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "rating", "order": "reverse"}]}"#), ["a", "c", "d", "b", "e"], "nil last in reverse")
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "rating", "order": "reverse"}, {"key": "startDate", "order": "reverse"}]}"#),
                       ["a", "c", "d", "e", "b"])
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "flag"}, {"key": "startDate"}]}"#), ["b", "c", "d", "a", "e"])
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "livingAccommodation.placeName"}]}"#), ["b", "e", "d", "c", "a"],
                       "through a to-one: no accommodation (nil) first, then Hotel 9 < Hotel 10 < Ritz")
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "livingAccommodation.placeName", "comparator": "binary", "order": "reverse"}]}"#),
                       ["a", "d", "c", "b", "e"])
        // The same order with a predicate and through the identifiers call.
        let desc = try d(c, #"{"entity": "Trip", "predicate": {"!=": [{"key": "name"}, "a"]}, "sortBy": [{"key": "startDate", "order": "reverse"}]}"#)
        let ids = try Query.identifiers(c, desc)
        XCTAssertEqual(try Query.objects(c, desc).compactMap { $0["_id"]?.stringValue }, ids)
        XCTAssertEqual(try Query.objects(c, desc).map { $0["name"]?.stringValue ?? "" }, ["e", "c", "b", "d"])
    }

    func testSortDecimalsByValueAndDatesByInstant() throws {
        let (_, c, _) = try store([
            trip("ten", day: 2, #""budget": "10""#), trip("nine-five", day: 1, #""budget": "9.5""#),
            trip("minus", day: 0, #""budget": "-3.25""#), trip("none", day: 4), trip("ten-again", day: 3, #""budget": "10.00""#),
        ])
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "budget"}]}"#), ["none", "minus", "nine-five", "ten", "ten-again"])
        XCTAssertEqual(try names(c, #"{"entity": "Trip", "sortBy": [{"key": "startDate", "order": "reverse"}]}"#),
                       ["none", "ten-again", "ten", "nine-five", "minus"])
    }

    // MARK: fetchLimit / fetchOffset

    func testLimitAndOffsetWithCountAndIdentifiers() throws {
        let (_, c, ids) = try store((0..<7).map { trip("T\($0)", day: $0) })
        func check(_ extra: String, _ expected: [Int], file: StaticString = #filePath, line: UInt = #line) throws {
            let desc = try d(c, #"{"entity": "Trip", "sortBy": [{"key": "startDate", "order": "reverse"}]\#(extra)}"#)
            XCTAssertEqual(try Query.objects(c, desc).map { $0["name"]?.stringValue ?? "" }, expected.map { "T\($0)" }, extra, file: file, line: line)
            XCTAssertEqual(try Query.identifiers(c, desc), expected.map { ids[$0].description }, extra, file: file, line: line)
            XCTAssertEqual(try c.fetchCount(desc), Int64(expected.count), "count honours limit and offset: \(extra)", file: file, line: line)
        }
        try check("", [6, 5, 4, 3, 2, 1, 0])
        try check(#", "fetchLimit": 2"#, [6, 5])
        try check(#", "fetchLimit": 2, "fetchOffset": 3"#, [3, 2])
        try check(#", "fetchOffset": 5"#, [1, 0])
        try check(#", "fetchOffset": 7"#, [])
        try check(#", "fetchLimit": 100, "fetchOffset": 6"#, [0])
        try check(#", "fetchLimit": 0"#, [])
        // With a predicate and subentities.
        let desc = try d(c, #"{"entity": "Trip", "predicate": {">=": [{"key": "startDate"}, "2024-01-03T00:00:00Z"]}, "sortBy": [{"key": "startDate"}], "fetchLimit": 3, "fetchOffset": 1}"#)
        XCTAssertEqual(try Query.objects(c, desc).map { $0["name"]?.stringValue ?? "" }, ["T3", "T4", "T5"])
        XCTAssertEqual(try c.fetchCount(desc), 3)
    }

    // MARK: propertiesToFetch

    func testPropertiesToFetchReadsOnlyThoseColumns() throws {
        let (_, c, _) = try store([
            trip("plain", day: 0, #""rating": 3, "bucketList": [{"title": "x"}]"#),
            #"{"_entity": "PersonalTrip", "reason": "family", "name": "p", "destination": "d", "startDate": 0, "endDate": 0}"#,
        ])
        let desc = try d(c, #"{"entity": "Trip", "propertiesToFetch": ["name", "startDate"]}"#)
        for o in try Query.objects(c, desc) {
            XCTAssertEqual(Set(o.keys), ["_id", "_entity", "name", "startDate"], o.text)
        }
        let sql = try Query.explain(c, desc).sql
        XCTAssertTrue(sql.contains(#"t."name""#) && sql.contains(#"t."startDate""#), sql)
        for other in ["destination", "endDate", "rating", "score", "budget", "code", "website", "photo", "flag", "notes", "reason", "perdiem"] {
            XCTAssertFalse(sql.contains("\"\(other)\""), "\(other) is not read: \(sql)")
        }
        let selectList = try XCTUnwrap(sql.components(separatedBy: " FROM ").first)
        XCTAssertEqual(selectList, #"SELECT t._pk, t._entity, t."name", t."startDate""#)

        // A subentity's attribute and a relationship.
        let sub = try d(c, #"{"entity": "Trip", "propertiesToFetch": ["reason", "bucketList"], "sortBy": [{"key": "name"}]}"#)
        let objects = try Query.objects(c, sub)
        XCTAssertEqual(objects.map { Set($0.keys) }, [["_id", "_entity", "reason", "bucketList"], ["_id", "_entity", "bucketList"]],
                       "the PersonalTrip has the inherited bucketList too")
        XCTAssertEqual(objects[0]["reason"], .string("family"))
        XCTAssertEqual(objects[1]["bucketList"]?.array?.count, 1)
        // The columns, then the relationship's identifiers read in the same query.
        XCTAssertTrue(try Query.explain(c, sub).sql.hasPrefix(#"SELECT t._pk, t._entity, t."reason", (SELECT group_concat("#))
    }

    // MARK: Prefetching

    func testPrefetchingReturnsObjectsInlineWithOneQueryPerRelationship() throws {
        // SampleTrips: Trip has two relationships, bucketList and livingAccommodation.
        let container = try openInMemory(Fixtures.sampleTrips)
        let c = try container.makeContext()
        var batch: [String] = []
        for i in 0..<10_000 {
            var extra = #""bucketList": [{"title": "b\#(i)"}\#(i % 3 == 0 ? #", {"title": "c\#(i)"}"# : "")]"#
            if i % 2 == 0 { extra += #", "livingAccommodation": {"placeName": "P\#(i)", "address": "A"}"# }
            batch.append(trip("T\(i)", day: i % 300, extra))
        }
        _ = try c.insertMany(entity: "Trip", json: "[" + batch.joined(separator: ",") + "]")
        try c.save()

        var statements: [String] = []
        let lock = NSLock()
        container.store.trace.set { sql in lock.lock(); statements.append(sql); lock.unlock() }
        defer { container.store.trace.set(nil) }

        let all = try d(c, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["bucketList", "livingAccommodation"]}"#)
        statements.removeAll()
        let objects = try Query.objects(c, all)
        XCTAssertEqual(objects.count, 10_000)
        // One query for the trips and one per prefetched relationship, run (and traced) once per trip.
        XCTAssertEqual(statements.count, 1 + 2 * 10_000, statements.prefix(4).joined(separator: "\n"))
        XCTAssertEqual(Set(statements).count, 3, "three statements:\n" + Set(statements).joined(separator: "\n"))

        let first = objects[0]
        XCTAssertEqual(first["name"], .string("T0"))
        let items = try XCTUnwrap(first["bucketList"]?.array)
        XCTAssertEqual(items.map { $0["title"]?.stringValue }, ["b0", "c0"], "full objects, not identifiers")
        XCTAssertEqual(items.first?["trip"], first["_id"])
        XCTAssertEqual(items.first?["_entity"], .string("BucketListItem"))
        XCTAssertEqual(first["livingAccommodation"]?["placeName"], .string("P0"))
        XCTAssertEqual(objects[1]["livingAccommodation"], .null)
        XCTAssertEqual(objects[1]["bucketList"]?.array?.count, 1)
        XCTAssertEqual(objects[9_999]["bucketList"]?.array?.first?["title"], .string("b9999"))

        // One relationship prefetched, the other not read: two queries; the owners come from the predicate.
        let one = try d(c, #"{"entity": "Trip", "propertiesToFetch": ["name", "bucketList"], "relationshipKeyPathsForPrefetching": ["bucketList"], "predicate": {"hasPrefix": [{"key": "name"}, "T99"]}}"#)
        statements.removeAll()
        let some = try Query.objects(c, one)
        XCTAssertEqual(some.count, 111)
        XCTAssertEqual(statements.count, 1 + 111, statements.prefix(4).joined(separator: "\n"))
        XCTAssertEqual(Set(statements).count, 2, Set(statements).joined(separator: "\n"))
        XCTAssertEqual(Set(some[0].keys), ["_id", "_entity", "name", "bucketList"])
        XCTAssertEqual(some[0]["bucketList"]?.array?.first?["title"], .string("b99"))

        // With fetchLimit and sort: prefetched objects only for the fetched page.
        let page = try d(c, #"{"entity": "Trip", "sortBy": [{"key": "name", "order": "reverse"}], "fetchLimit": 2, "relationshipKeyPathsForPrefetching": ["livingAccommodation", "bucketList"]}"#)
        statements.removeAll()
        let top = try Query.objects(c, page)
        XCTAssertEqual(statements.count, 1 + 2 * 2)
        XCTAssertEqual(top.map { $0["name"]?.stringValue }, ["T9999", "T9998"])
        XCTAssertEqual(top[1]["livingAccommodation"]?["placeName"], .string("P9998"))

        // Without prefetching, identifiers: read by the objects query itself (one pass), none per object.
        statements.removeAll()
        let plain = try Query.objects(c, d(c, #"{"entity": "Trip", "fetchLimit": 5000}"#))
        XCTAssertEqual(plain.count, 5000)
        XCTAssertEqual(statements.count, 1, statements.joined(separator: "\n"))
        XCTAssertNotNil(plain[0]["bucketList"]?.array?.first?.stringValue)
    }

    func testObjectTextKeepsItsMemberOrder() throws {
        // Members: _id, _entity, stored attributes and to-one links in declaration order, transient
        // values, then prefetched relationships in the order asked for, then the other relationships read after the row.
        let container = try openInMemory(Fixtures.sampleTrips)
        let c = try container.makeContext()
        let t = try c.insert(entity: "PersonalTrip", json: trip("P", #""reason": "family", "livingAccommodation": {"placeName": "H", "address": "A"}, "bucketList": [{"title": "x"}, {"title": "y", "isInPlan": true}]"#))
        _ = try c.insert(entity: "Trip", json: trip("Q", day: 1))
        try c.save()
        let pk = t.pk
        let text = { (json: String) in String(decoding: try c.fetch(self.d(c, json)), as: UTF8.self) }
        let dates = #""startDate":"2024-01-01T00:00:00Z","endDate":"2024-01-04T00:00:00Z""#
        let datesQ = #""startDate":"2024-01-02T00:00:00Z","endDate":"2024-01-05T00:00:00Z""#
        let p = #"{"_id":"PersonalTrip/\#(pk)","_entity":"PersonalTrip","name":"P","destination":"",\#(dates),"photo":null,"reason":"family","tripViews":0"#
        let q = #"{"_id":"Trip/\#(pk + 1)","_entity":"Trip","name":"Q","destination":"",\#(datesQ),"photo":null,"tripViews":0"#
        let items = try Query.objects(c, d(c, #"{"entity": "BucketListItem", "sortBy": [{"key": "title"}]}"#)).compactMap { $0["_id"]?.stringValue }
        let accommodation = try XCTUnwrap(Query.objects(c, d(c, #"{"entity": "LivingAccommodation"}"#)).first?["_id"]?.stringValue)
        let itemX = #"{"_id":"\#(items[0])","_entity":"BucketListItem","title":"x","details":"","hasReservation":false,"isInPlan":false,"trip":"PersonalTrip/\#(pk)"}"#
        let itemY = #"{"_id":"\#(items[1])","_entity":"BucketListItem","title":"y","details":"","hasReservation":false,"isInPlan":true,"trip":"PersonalTrip/\#(pk)"}"#
        let place = #"{"_id":"\#(accommodation)","_entity":"LivingAccommodation","address":"A","placeName":"H","trip":"PersonalTrip/\#(pk)"}"#

        XCTAssertEqual(try text(#"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#),
                       "[" + p + #","bucketList":["\#(items[0])","\#(items[1])"],"livingAccommodation":"\#(accommodation)"},"#
                           + q + #","bucketList":[],"livingAccommodation":null}]"#)
        XCTAssertEqual(try text(#"{"entity": "Trip", "sortBy": [{"key": "name"}], "relationshipKeyPathsForPrefetching": ["livingAccommodation", "bucketList"]}"#),
                       "[" + p + #","livingAccommodation":\#(place),"bucketList":[\#(itemX),\#(itemY)]},"#
                           + q + #","livingAccommodation":null,"bucketList":[]}]"#)
        XCTAssertEqual(try text(#"{"entity": "Trip", "sortBy": [{"key": "name"}], "propertiesToFetch": ["name", "reason"], "relationshipKeyPathsForPrefetching": ["livingAccommodation"]}"#),
                       #"[{"_id":"PersonalTrip/\#(pk)","_entity":"PersonalTrip","name":"P","reason":"family","livingAccommodation":\#(place)},"#
                           + #"{"_id":"Trip/\#(pk + 1)","_entity":"Trip","name":"Q","livingAccommodation":null}]"#)
        XCTAssertEqual(String(decoding: try c.get(id: t.description), as: UTF8.self),
                       p + #","bucketList":["\#(items[0])","\#(items[1])"],"livingAccommodation":"\#(accommodation)"}"#)
    }

    func testPrefetchedObjectsCarryTheirOwnRelationships() throws {
        let container = try openInMemory(QuerySchemas.trips)
        let c = try container.makeContext()
        let t1 = try c.insert(entity: "Trip", json: trip("one"))
        let t2 = try c.insert(entity: "Trip", json: trip("two"))
        _ = try c.insert(entity: "Tag", json: #"{"name": "both", "trips": ["\#(t1)", "\#(t2)"]}"#)
        try c.save()
        var statements: [String] = []
        container.store.trace.set { statements.append($0) }
        defer { container.store.trace.set(nil) }
        let objects = try Query.objects(c, d(c, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["tags"], "sortBy": [{"key": "name"}]}"#))
        // Trips with their bucketList and livingAccommodation identifiers (1), tags prefetched with their
        // own trips as identifiers (1 statement, run for each of the 2 trips).
        XCTAssertEqual(statements.count, 1 + 2, statements.joined(separator: "\n"))
        let tag = try XCTUnwrap(objects[0]["tags"]?.array?.first)
        XCTAssertEqual(tag["name"], .string("both"))
        XCTAssertEqual(Set(tag["trips"]?.array?.compactMap(\.stringValue) ?? []), [t1.description, t2.description])
        XCTAssertEqual(objects[1]["tags"]?.array?.first?["name"], .string("both"))
    }

    // MARK: Subentities

    static let deepSchema = """
    {"version": "1", "entities": [
      {"name": "Trip", "attributes": [{"name": "name", "type": "string"}]},
      {"name": "PersonalTrip", "superentity": "Trip", "attributes": [{"name": "reason", "type": "string", "optional": true}]},
      {"name": "FamilyTrip", "superentity": "PersonalTrip", "attributes": [{"name": "kids", "type": "int", "default": 0}]},
      {"name": "BusinessTrip", "superentity": "Trip"}
    ]}
    """

    func testIncludeSubentitiesDeepAndShallow() throws {
        let container = try openInMemory(Self.deepSchema)
        let c = try container.makeContext()
        for (e, n) in [("Trip", "t"), ("PersonalTrip", "p"), ("FamilyTrip", "f"), ("BusinessTrip", "b"), ("FamilyTrip", "f2")] {
            _ = try c.insert(entity: e, json: #"{"name": "\#(n)"}"#)
        }
        try c.save()
        func fetched(_ entity: String, _ sub: Bool, _ predicate: String = "null") throws -> [String] {
            let desc = try d(c, #"{"entity": "\#(entity)", "includeSubentities": \#(sub), "predicate": \#(predicate), "sortBy": [{"key": "name"}]}"#)
            let names = try Query.objects(c, desc).map { $0["name"]?.stringValue ?? "" }
            XCTAssertEqual(try c.fetchCount(desc), Int64(names.count))
            XCTAssertEqual(try Query.identifiers(c, desc).count, names.count)
            return names
        }
        XCTAssertEqual(try fetched("Trip", true), ["b", "f", "f2", "p", "t"])
        XCTAssertEqual(try fetched("Trip", false), ["t"])
        XCTAssertEqual(try fetched("PersonalTrip", true), ["f", "f2", "p"], "grandchildren included")
        XCTAssertEqual(try fetched("PersonalTrip", false), ["p"])
        XCTAssertEqual(try fetched("FamilyTrip", true), ["f", "f2"])
        XCTAssertEqual(try fetched("FamilyTrip", false), ["f", "f2"])
        XCTAssertEqual(try fetched("BusinessTrip", false), ["b"])
        XCTAssertEqual(try fetched("Trip", true, #"{"is": "PersonalTrip"}"#), ["f", "f2", "p"])
        XCTAssertEqual(try fetched("Trip", false, #"{"is": "PersonalTrip"}"#), [])
        XCTAssertEqual(try fetched("Trip", true, #"{"not": {"is": "PersonalTrip"}}"#), ["b", "t"])
        let objects = try Query.objects(c, d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#))
        XCTAssertEqual(objects.map { $0["_entity"]?.stringValue ?? "" }, ["BusinessTrip", "FamilyTrip", "FamilyTrip", "PersonalTrip", "Trip"])
        XCTAssertEqual(objects[1]["kids"]?.numberText, "0", "each object carries its own entity's attributes")
        XCTAssertNil(objects[4]["reason"])
    }

    // MARK: Pending changes

    func testIncludePendingChanges() throws {
        let (container, _, ids) = try store([trip("A", day: 0), trip("B", day: 1), trip("C", day: 2, #""bucketList": [{"title": "x"}]"#)])
        let c = try container.makeContext()
        let inserted = try c.insert(entity: "Trip", json: trip("D", day: 3))
        try c.update(id: ids[1].description, patch: #"{"name": "B2"}"#)
        try c.delete(id: ids[2].description)
        func check(_ pending: Bool, _ expected: [String], file: StaticString = #filePath, line: UInt = #line) throws {
            let desc = try d(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "includePendingChanges": \#(pending)}"#)
            XCTAssertEqual(try Query.objects(c, desc).map { $0["name"]?.stringValue ?? "" }, expected, file: file, line: line)
            XCTAssertEqual(try c.fetchCount(desc), Int64(expected.count), file: file, line: line)
            XCTAssertEqual(try Query.identifiers(c, desc).count, expected.count, file: file, line: line)
        }
        try check(true, ["A", "B2", "D"])
        try check(false, ["A", "B", "C"])
        // Predicates see the pending values, or not.
        let b2 = #"{"entity": "Trip", "predicate": {"==": [{"key": "name"}, "B2"]}, "includePendingChanges": %@}"#
        XCTAssertEqual(try Query.identifiers(c, d(c, b2.replacingOccurrences(of: "%@", with: "true"))), [ids[1].description])
        XCTAssertEqual(try Query.identifiers(c, d(c, b2.replacingOccurrences(of: "%@", with: "false"))), [])
        // A deleted trip's cascade is pending too: its bucket item is gone from pending reads.
        let items = #"{"entity": "BucketListItem", "includePendingChanges": %@}"#
        XCTAssertEqual(try c.fetchCount(d(c, items.replacingOccurrences(of: "%@", with: "true"))), 0)
        XCTAssertEqual(try c.fetchCount(d(c, items.replacingOccurrences(of: "%@", with: "false"))), 1)
        // Another context sees only what is saved; after the save, everyone sees the changes.
        let other = try container.makeContext()
        XCTAssertEqual(try Query.objects(other, d(other, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#)).map { $0["name"]?.stringValue ?? "" }, ["A", "B", "C"])
        try c.save()
        XCTAssertEqual(try Query.objects(other, d(other, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "includePendingChanges": false}"#)).map { $0["name"]?.stringValue ?? "" }, ["A", "B2", "D"])
        XCTAssertEqual(try get(other, inserted)["name"], .string("D"))
    }

    // MARK: Index use

    func testWidgetQueryUsesTheEndDateIndex() throws {
        let (_, c, ids) = try store((0..<50).map { trip("T\($0)", day: $0 * 2) })
        // The widget: the next trip that has not ended.
        let now = Pools.iso(Pools.epoch + 40 * 86_400)
        let desc = try d(c, #"{"entity": "Trip", "predicate": {">=": [{"key": "endDate"}, {"var": "now"}]}, "bindings": {"now": "\#(now)"}, "sortBy": [{"key": "endDate"}], "fetchLimit": 1}"#)
        XCTAssertEqual(try Query.identifiers(c, desc), [ids[19].description], "T19 ends on day 41")
        let (sql, plan) = try Query.explain(c, desc)
        XCTAssertTrue(plan.contains { $0.contains("USING INDEX") && $0.contains("endDate") }, "plan: \(plan)\nsql: \(sql)")
        XCTAssertFalse(plan.contains { $0.contains("USE TEMP B-TREE") }, "the index gives the order: \(plan)")
        XCTAssertFalse(sql.contains(now), "values are bound, never in SQL text")
        // As #Predicate text.
        let text = try d(c, #"{"entity": "Trip", "predicate": "$0.endDate >= now", "bindings": {"now": "\#(now)"}, "sortBy": [{"key": "endDate"}], "fetchLimit": 1}"#)
        XCTAssertEqual(try Query.identifiers(c, text), [ids[19].description])
        XCTAssertTrue(try Query.explain(c, text).plan.contains { $0.contains("USING INDEX") })
    }

    // MARK: delete(matching:)

    func testDeleteMatchingHonoursDeleteRulesAndSubentities() throws {
        let container = try openInMemory(QuerySchemas.trips)
        let c = try container.makeContext()
        let tag = try c.insert(entity: "Tag", json: #"{"name": "t"}"#)
        let plain = try c.insert(entity: "Trip", json: trip("old", day: 0, #""bucketList": [{"title": "a"}, {"title": "b"}], "livingAccommodation": {"placeName": "p", "address": ""}, "tags": ["\#(tag)"]"#))
        let personal = try c.insert(entity: "Trip", json: #"{"_entity": "PersonalTrip", "name": "old", "destination": "", "startDate": 0, "endDate": 0, "bucketList": [{"title": "c"}], "tags": ["\#(tag)"]}"#)
        let keep = try c.insert(entity: "Trip", json: trip("new", day: 9, #""bucketList": [{"title": "d"}], "tags": ["\#(tag)"]"#))
        try c.save()

        let shallow = try d(c, #"{"entity": "Trip", "predicate": {"==": [{"key": "name"}, "old"]}, "includeSubentities": false}"#)
        XCTAssertEqual(try c.delete(matching: shallow), 1)
        try c.save()
        XCTAssertEqual(try identifiers(c, "Trip").sorted(), [personal.description, keep.description].sorted())
        XCTAssertEqual(try count(c, "BucketListItem"), 2, "cascade: the deleted trip's items went with it")
        XCTAssertEqual(try count(c, "LivingAccommodation"), 0, "cascade")
        XCTAssertEqual(try get(c, tag)["trips"]?.array?.compactMap(\.stringValue).sorted(), [personal.description, keep.description].sorted(),
                       "nullify: the tag stays, without the deleted trip")
        assertError(.notFound) { try c.get(id: plain.description) }

        // Deep (the default): the PersonalTrip matches; the count is of matched objects.
        let deep = try d(c, #"{"entity": "Trip", "predicate": "$0.name == \"old\""}"#)
        XCTAssertEqual(try c.delete(matching: deep), 1)
        XCTAssertEqual(try count(c, "BucketListItem"), 1, "pending reads show the cascade before the save")
        try c.save()
        XCTAssertEqual(try identifiers(c, "Trip"), [keep.description])
        XCTAssertEqual(try count(c, "BucketListItem"), 1)
        XCTAssertEqual(try count(c, "Tag"), 1)

        // Nothing matches: nothing changes.
        XCTAssertEqual(try c.delete(matching: d(c, #"{"entity": "Trip", "predicate": {"==": [{"key": "name"}, "nope"]}}"#)), 0)
        XCTAssertFalse(c.hasChanges)
    }

    func testDeleteMatchingRefusedByDeny() throws {
        let schema = """
        {"version": "1", "entities": [
          {"name": "Owner", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "pets", "destination": "Pet", "toMany": true, "deleteRule": "deny", "inverse": "owner"}]},
          {"name": "Pet", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "owner", "destination": "Owner", "optional": true, "inverse": "pets"}]}
        ]}
        """
        let c = try openInMemory(schema).makeContext()
        _ = try c.insert(entity: "Owner", json: #"{"name": "with", "pets": [{"name": "rex"}]}"#)
        _ = try c.insert(entity: "Owner", json: #"{"name": "without"}"#)
        try c.save()
        XCTAssertEqual(try c.delete(matching: d(c, #"{"entity": "Owner"}"#)), 2)
        assertError(.constraint) { try c.save() }
        c.rollback()
        XCTAssertEqual(try c.delete(matching: d(c, #"{"entity": "Owner", "predicate": {"isEmpty": {"key": "pets"}}}"#)), 1)
        try c.save()
        XCTAssertEqual(try count(c, "Owner"), 1)
        XCTAssertEqual(try count(c, "Pet"), 1)
    }
}
