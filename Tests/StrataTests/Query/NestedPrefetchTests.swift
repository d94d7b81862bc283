import XCTest
import Synchronization
@testable import Strata

/// `relationshipKeyPathsForPrefetching` with key paths of any depth: each object of a
/// prefetched relationship carries its own prefetched relationships, as a fetch of that
/// object with the rest of the path would give them; shared beginnings are read once.
final class NestedPrefetchTests: StoreTestCase {
    private func descriptor(_ c: ModelContext, _ json: String) throws -> FetchDescriptor {
        try FetchDescriptor.decode(try JSONValue.parse(json), schema: c.schema)
    }

    private func objects(_ c: ModelContext, _ json: String) throws -> [JSONValue] {
        guard let all = try parse(c.fetch(descriptor(c, json))).array else { throw StrataError(.internal, "a fetch gave no array") }
        return all
    }

    /// Two trips with bucket lists, one with an accommodation; an item without a trip.
    private func insertTrips(_ c: ModelContext) throws {
        _ = try c.insert(entity: "Trip", json: #"""
            {"name": "Paris", "startDate": 0, "endDate": 1, "livingAccommodation": {"address": "1 rue", "placeName": "Hotel"},
             "bucketList": [{"title": "Louvre"}, {"title": "Seine"}]}
            """#)
        _ = try c.insert(entity: "BusinessTrip", json: #"{"name": "Expo", "startDate": 2, "endDate": 3, "perdiem": 5, "bucketList": [{"title": "Booth"}]}"#)
        _ = try c.insert(entity: "BucketListItem", json: #"{"title": "Someday"}"#)
    }

    func testEachLevelCarriesItsOwnPrefetchedObjects() {
        forEachSetup { h in
            try insertTrips(h.context)
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                let label = saved ? "saved" : "pending"
                let items = try objects(h.context, #"""
                    {"entity": "BucketListItem", "sortBy": [{"key": "title"}],
                     "relationshipKeyPathsForPrefetching": ["trip.bucketList", "trip.livingAccommodation", "trip"]}
                    """#)
                XCTAssertEqual(items.map { $0["title"]?.stringValue }, ["Booth", "Louvre", "Seine", "Someday"], label)
                let louvreTrip = try XCTUnwrap(items[1]["trip"], label)
                XCTAssertEqual(louvreTrip["name"], .string("Paris"), label)
                XCTAssertEqual(louvreTrip["bucketList"]?.array?.compactMap { $0["title"]?.stringValue }.sorted(), ["Louvre", "Seine"], label)
                XCTAssertEqual(louvreTrip["livingAccommodation"]?["placeName"], .string("Hotel"), label)
                // The nested objects are the objects a fetch gives (their own relationships as identifiers).
                let seine = try XCTUnwrap(louvreTrip["bucketList"]?.array?.first { $0["title"] == .string("Seine") })
                XCTAssertEqual(seine, try get(h.context, XCTUnwrap(seine["_id"]?.stringValue)), label)
                let booth = try XCTUnwrap(items[0]["trip"], label)
                XCTAssertEqual(booth["_entity"], .string("BusinessTrip"), label)
                XCTAssertEqual(booth["livingAccommodation"], .null, label)
                XCTAssertEqual(booth["bucketList"]?.array?.count, 1, label)
                // A prefetched row's link back to its owner names the owner's own entity (a subentity here).
                let boothItem = try XCTUnwrap(booth["bucketList"]?.array?.first, label)
                XCTAssertEqual(boothItem["trip"], booth["_id"], label)
                XCTAssertEqual(boothItem, try get(h.context, XCTUnwrap(boothItem["_id"]?.stringValue)), label)
                XCTAssertEqual(items[3]["trip"], .null, label)

                // Back to the owner: a trip's items each with their trip, and three levels down.
                let trips = try objects(h.context, #"""
                    {"entity": "Trip", "sortBy": [{"key": "name"}],
                     "relationshipKeyPathsForPrefetching": ["bucketList.trip.livingAccommodation.trip"]}
                    """#)
                let paris = try XCTUnwrap(trips.first { $0["name"] == .string("Paris") })
                for item in paris["bucketList"]?.array ?? [] {
                    XCTAssertEqual(item["trip"]?["_id"], paris["_id"], label)
                    XCTAssertEqual(item["trip"]?["livingAccommodation"]?["trip"]?["_id"], paris["_id"], label)
                }
                XCTAssertEqual(paris["bucketList"]?.array?.count, 2, label)
            }
        }
    }

    func testCursorsAndPreparedFetchesWriteTheSameObjects() throws {
        forEachSetup { h in
            try insertTrips(h.context)
            try h.context.save()
            try insertTrips(h.context)  // pending upserts of the same trips, and a second "Someday"
            let json = #"{"entity": "Trip", "sortBy": [{"key": "name"}], "relationshipKeyPathsForPrefetching": ["bucketList.trip", "livingAccommodation.trip.bucketList"]}"#
            let whole = try parse(h.context.fetch(descriptor(h.context, json)))
            var j = json
            let prepared = try j.withUTF8 { try h.context.prepare($0) }
            XCTAssertEqual(try parse(prepared.fetch(bindings: nil)), whole)
            let cursor = try h.context.cursor(descriptor(h.context, json))
            var batches: [JSONValue] = []
            while true {
                let batch = try XCTUnwrap(parse(cursor.next(1).bytes).array)
                if batch.isEmpty { break }
                batches += batch
            }
            XCTAssertEqual(JSONValue.array(batches), whole)
        }
    }

    /// More owners than one batch, visited in the reverse of their keys' order, with nested and
    /// to-one relationships: every owner gets exactly its own objects, and a store that reads
    /// batches (``QueryDialect/ownerBatch(_:parameter:)``) runs a bounded number of statements,
    /// not one per owner.
    func testPrefetchOverManyOwnersReadsBatches() {
        forEachSetup { h in
            let n = 2_500
            for i in 0..<n {
                let items = (0..<(i % 4)).map { #"{"title": "\#(i)-\#($0)"}"# }.joined(separator: ",")
                let stay = i % 3 == 0 ? #", "livingAccommodation": {"address": "a\#(i)", "placeName": "p\#(i)"}"# : ""
                _ = try h.context.insert(entity: "Trip", json: #"{"name": "t\#(10_000 + i)", "startDate": \#(i), "endDate": \#(i + 1), "bucketList": [\#(items)]\#(stay)}"#)
            }
            try h.context.save()
            let statements = Mutex<[String]>([])
            h.container.store.trace.set { sql in statements.withLock { $0.append(sql) } }
            defer { h.container.store.trace.set(nil) }
            let trips = try objects(h.context, #"""
                {"entity": "Trip", "sortBy": [{"key": "name", "order": "reverse"}],
                 "relationshipKeyPathsForPrefetching": ["bucketList.trip", "livingAccommodation"]}
                """#)
            let traced = statements.withLock { $0 }
            XCTAssertEqual(trips.count, n)
            for (k, trip) in trips.enumerated() {
                let i = n - 1 - k
                XCTAssertEqual(trip["name"], .string("t\(10_000 + i)"))
                let items = trip["bucketList"]?.array ?? []
                XCTAssertEqual(items.compactMap { $0["title"]?.stringValue }.sorted(), (0..<(i % 4)).map { "\(i)-\($0)" }, "trip \(i)")
                for item in items { XCTAssertEqual(item["trip"]?["_id"], trip["_id"], "trip \(i)") }
                if i % 3 == 0 {
                    XCTAssertEqual(trip["livingAccommodation"]?["placeName"], .string("p\(i)"), "trip \(i)")
                } else {
                    XCTAssertEqual(trip["livingAccommodation"], .null, "trip \(i)")
                }
            }
            // A cursor's batches, across more rows than one batch of owners, joined are the fetch's objects.
            let cursor = try h.context.cursor(descriptor(h.context, #"{"entity": "Trip", "sortBy": [{"key": "name", "order": "reverse"}], "relationshipKeyPathsForPrefetching": ["bucketList.trip", "livingAccommodation"]}"#))
            var batches: [JSONValue] = []
            while true {
                let batch = try XCTUnwrap(parse(cursor.next(700).bytes).array)
                if batch.isEmpty { break }
                XCTAssertLessThanOrEqual(batch.count, 700)
                batches += batch
            }
            XCTAssertEqual(batches, trips)
            let selects = traced.filter { $0.uppercased().hasPrefix("SELECT") }
            if h.container.store.queryDialect.ownerBatch("o", parameter: "?1") != nil {
                // The trips, then per batch of owners one statement per relationship at each depth.
                XCTAssertLessThanOrEqual(selects.count, 1 + 3 * ((n + ObjectWriter.ownerBatch - 1) / ObjectWriter.ownerBatch), "\(selects.count) statements")
            } else {
                XCTAssertGreaterThan(selects.count, n, "one statement per owner and relationship")
            }
        }
    }

    func testKeyPathsThatCannotBePrefetchedAreRefusedByName() throws {
        let c = try openInMemory().makeContext()
        func error(_ paths: String) -> StrataError? {
            do { _ = try descriptor(c, #"{"entity": "Trip", "relationshipKeyPathsForPrefetching": "# + paths + "}"); return nil } catch { return error as? StrataError }
        }
        XCTAssertEqual(error(#"["bucketList.title"]"#)?.message, "'title' in 'bucketList.title' is not a relationship of 'BucketListItem'")
        XCTAssertEqual(error(#"["name"]"#)?.message, "'name' is not a relationship of 'Trip'")
        XCTAssertEqual(error(#"["bucketList", "bucketList..trip"]"#)?.path, "/relationshipKeyPathsForPrefetching/1")
        let deep = Array(repeating: "bucketList.trip", count: 5).joined(separator: ".")
        XCTAssertTrue(error(#"[""# + deep + #""]"#)?.message.contains("at most 8") == true)
        XCTAssertNil(error(#"["bucketList.trip.bucketList.trip"]"#))
    }
}
