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
            if h.container.store.queryDialect.readsPrefetchedOnce {
                // The trips, then one statement per relationship at each depth, however many owners.
                XCTAssertEqual(selects.count, 1 + 3, "\(selects.count) statements")
            } else if h.container.store.queryDialect.ownerBatch("o", parameter: "?1") != nil {
                // The trips, then per batch of owners one statement per relationship at each depth.
                XCTAssertLessThanOrEqual(selects.count, 1 + 3 * ((n + ObjectWriter.ownerBatch - 1) / ObjectWriter.ownerBatch), "\(selects.count) statements")
            } else {
                XCTAssertGreaterThan(selects.count, n, "one statement per owner and relationship")
            }
        }
    }

    /// Each prefetched object is the object its owner's identifiers name, as a fetch without
    /// prefetching gives them (`plain`: the same descriptor's objects, in the same order), checked
    /// through `get`; `nested` names each relationship's own prefetched relationship, whose
    /// objects are checked the same way against the identifiers `get` gives.
    /// A relationship's value as a list: a to-many's array, a to-one's value or nothing (null).
    private func values(_ v: JSONValue?, _ label: String) throws -> [JSONValue] {
        let v = try XCTUnwrap(v, label)
        return v.array ?? (v == .null ? [] : [v])
    }

    private func assertPrefetched(_ c: ModelContext, _ objects: [JSONValue], _ plain: [JSONValue], _ relationships: [String],
                                  nested: [String: String] = [:], _ label: String) throws {
        XCTAssertEqual(objects.map { $0["_id"] }, plain.map { $0["_id"] }, label)
        for (object, ids) in zip(objects, plain) {
            for r in relationships {
                let expected = try values(ids[r], label), got = try values(object[r], label)
                XCTAssertEqual(got.map { $0["_id"] }, expected, "\(label): \(r) of \(ids["_id"]?.stringValue ?? "?")")
                for item in got {
                    let saved = try get(c, XCTUnwrap(item["_id"]?.stringValue))
                    guard let link = nested[r], case .object(let fields) = saved, case .object(let written) = item else {
                        XCTAssertEqual(item, saved, label)
                        continue
                    }
                    // The nested relationship's objects are those `get` names; every other member is `get`'s.
                    let targets = try values(item[link], label)
                    XCTAssertEqual(targets.map { $0["_id"] }, try values(saved[link], label), "\(label): \(r).\(link)")
                    for t in targets { XCTAssertEqual(t, try get(c, XCTUnwrap(t["_id"]?.stringValue)), label) }
                    XCTAssertEqual(JSONValue.object(written.filter { $0.0 != link }), JSONValue.object(fields.filter { $0.0 != link }), label)
                }
            }
        }
    }

    /// A prefetch over owners chosen by a predicate with bindings, paged (`fetchLimit`,
    /// `fetchOffset`) and sorted, with pending changes (a new trip, items added to and deleted from
    /// saved trips, an item moved to another trip): each owner gets exactly the objects its
    /// identifiers name, saved or pending, at every depth, as a fetch without prefetching names them.
    func testPrefetchOfSelectedPagedOwnersWithPendingChanges() {
        forEachSetup { h in
            let c = h.context
            for i in 0..<40 {
                let items = (0..<(i % 3)).map { #"{"title": "\#(i)-\#($0)"}"# }.joined(separator: ",")
                let stay = i % 2 == 0 ? #", "livingAccommodation": {"address": "a\#(i)", "placeName": "p\#(i)"}"# : ""
                _ = try c.insert(entity: i % 4 == 1 ? "BusinessTrip" : "Trip",
                                 json: #"{"name": "t\#(100 + i)", "startDate": \#(i), "endDate": \#(i + 1), "bucketList": [\#(items)]\#(stay)}"#)
            }
            try c.save()
            let before = try objects(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}], "relationshipKeyPathsForPrefetching": ["bucketList"]}"#)
            // Pending: a new trip with items, an item added to a saved trip, one deleted, one moved.
            _ = try c.insert(entity: "Trip", json: #"{"name": "t111a", "startDate": 11.5, "endDate": 12, "bucketList": [{"title": "new"}]}"#)
            let t112 = try XCTUnwrap(before.first { $0["name"] == .string("t112") }?["_id"]?.stringValue)
            let item = try c.insert(entity: "BucketListItem", json: #"{"title": "added", "trip": "\#(t112)"}"#)
            let t114 = try XCTUnwrap(before.first { $0["name"] == .string("t114") })
            let moved = try XCTUnwrap(t114["bucketList"]?.array?.first?["_id"]?.stringValue)
            try c.update(id: moved, patch: #"{"trip": "\#(t112)"}"#)
            let t116 = try XCTUnwrap(before.first { $0["name"] == .string("t116") })
            try c.delete(id: XCTUnwrap(t116["bucketList"]?.array?.first?["_id"]?.stringValue))
            for pending in [true, false] {
                if !pending { try c.save() }
                let label = pending ? "pending" : "saved"
                for (where_, paging) in [(#""predicate": "$0.startDate >= from && $0.startDate < to", "bindings": {"from": 10, "to": 30}"#, #""fetchLimit": 6, "fetchOffset": 14"#),
                                         (#""predicate": "$0.startDate >= from", "bindings": {"from": 5}"#, #""fetchLimit": 50"#),
                                         (#""predicate": "$0.name != \"t120\"""#, #""fetchOffset": 30"#),
                                         (#""predicate": "$0.endDate > 3""#, #""fetchLimit": 3"#)] {
                    let base = #"{"entity": "Trip", \#(where_), \#(paging), "sortBy": [{"key": "name", "order": "reverse"}]"#
                    let plain = try objects(c, base + "}")
                    let prefetched = try objects(c, base + #", "relationshipKeyPathsForPrefetching": ["bucketList.trip", "livingAccommodation"]}"#)
                    XCTAssertFalse(plain.isEmpty, "\(label) \(base)")
                    try assertPrefetched(c, prefetched, plain, ["bucketList", "livingAccommodation"], nested: ["bucketList": "trip"], "\(label) \(base)")
                    if pending && base.contains("from\": 10") {
                        let names = prefetched.compactMap { $0["name"]?.stringValue }
                        XCTAssertTrue(names.contains("t112") && names.contains("t111a"), "\(names)")
                        let t112Items = prefetched.first { $0["name"] == .string("t112") }?["bucketList"]?.array?.compactMap { $0["_id"]?.stringValue } ?? []
                        XCTAssertTrue(t112Items.contains(item.description) && t112Items.contains(moved), "\(t112Items)")
                    }
                }
                // Every trip, and items of a subentity's owners only, unpaged.
                for base in [#"{"entity": "Trip""#, #"{"entity": "BusinessTrip", "sortBy": [{"key": "startDate"}]"#] {
                    let plain = try objects(c, base + "}")
                    let prefetched = try objects(c, base + #", "relationshipKeyPathsForPrefetching": ["bucketList.trip", "livingAccommodation"]}"#)
                    try assertPrefetched(c, prefetched, plain, ["bucketList", "livingAccommodation"], nested: ["bucketList": "trip"], "\(label) \(base)")
                }
            }
        }
    }

    /// Owners sorted by a full-text relevance (a value bound in the order only) and paged: each
    /// gets its own items, on every store.
    func testPrefetchOfOwnersSortedByRelevance() {
        forEachSetup(SearchTests.schema) { h in
            let c = h.context
            for (i, title) in ["old bridge", "old old bridge", "bridge", "new town", "old town bridge"].enumerated() {
                _ = try c.insert(entity: "Item", json: #"{"title": "\#(title)", "note": "\#(i)", "trip": {"name": "trip \#(i)", "items": [{"title": "extra \#(i)"}]}}"#)
            }
            for saved in [false, true] {
                if saved { try c.save() }
                for paging in ["", #", "fetchLimit": 2"#] {
                    let base = #"{"entity": "Item", "predicate": "$0.title.matches(q)", "bindings": {"q": "old bridge"}, "sortBy": [{"key": "$relevance", "order": "reverse"}, {"key": "note"}]\#(paging)"#
                    let plain = try objects(c, base + "}")
                    let prefetched = try objects(c, base + #", "relationshipKeyPathsForPrefetching": ["trip.items"]}"#)
                    XCTAssertEqual(plain.count, paging.isEmpty ? 3 : 2, base)
                    try assertPrefetched(c, prefetched, plain, ["trip"], nested: ["trip": "items"], "\(saved) \(base)")
                }
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
