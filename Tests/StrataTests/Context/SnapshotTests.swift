import Foundation
import XCTest
@testable import Strata

/// Every read call (get, fetch, count, identifiers, explain, prefetching)
/// sees one committed snapshot plus its context's own pending changes, even
/// when it runs several statements while another context saves.
final class SnapshotTests: StoreTestCase {
    /// A trip always has three bucket-list items and an accommodation: every
    /// committed state has that shape, so every read must show it.
    func newTrip(_ i: Int) -> String {
        #"""
        {"name": "Trip \#(i)", "startDate": \#(i), "endDate": \#(i + 1),
         "bucketList": [{"title": "a\#(i)"}, {"title": "b\#(i)"}, {"title": "c\#(i)"}],
         "livingAccommodation": {"address": "Street \#(i)", "placeName": "Place \#(i)"}}
        """#
    }

    func checkTrips(_ trips: [JSONValue], prefetched: Bool) -> String? {
        for t in trips {
            guard let items = t["bucketList"]?.array, items.count == 3 else { return "a trip with a bucket list of \(t["bucketList"]?.array?.count ?? -1): \(t)" }
            guard let home = t["livingAccommodation"], !home.isNull else { return "a trip without its accommodation: \(t)" }
            if prefetched, home["address"] == nil { return "accommodation not prefetched: \(t)" }
        }
        return nil
    }

    func testReadsNeverSeeHalfASave() throws {
        let container = try openFile(path: storePath())
        let writer = try container.makeContext()
        var current = try writer.insert(entity: "Trip", json: newTrip(0))
        try writer.save()
        let trip = try XCTUnwrap(container.schema.entity(named: "Trip"))
        let bucketRel = try XCTUnwrap(trip.relationshipByName["bucketList"])
        let homeRel = try XCTUnwrap(trip.relationshipByName["livingAccommodation"])
        let problems = try readWhileWriting(container, readers: 3, minimum: 20, read: { reader, r, i in
            var d = FetchDescriptor(entity: trip)
            if r == 1 { d.prefetch = [bucketRel, homeRel] }
            let trips = try JSONValue.parse(String(decoding: reader.fetch(d), as: UTF8.self)).array ?? []
            if trips.count != 1 { return "\(trips.count) trips (each save replaces one trip with one)" }
            if let problem = self.checkTrips(trips, prefetched: r == 1) { return problem }
            // A pending change in the reader's own context is part of what it sees.
            if r == 2 {
                let id = try reader.insert(entity: "Trip", json: self.newTrip(1_000_000 + i))
                defer { reader.rollback() }
                let all = try JSONValue.parse(String(decoding: reader.fetch(d), as: UTF8.self)).array ?? []
                if all.count != 2 || self.checkTrips(all, prefetched: false) != nil { return "pending: \(all)" }
                let one = try JSONValue.parse(String(decoding: reader.get(id: id.description), as: UTF8.self))
                if one["bucketList"]?.array?.count != 3 { return "pending get: \(one)" }
            }
            return nil
        }, writing: {
            for i in 1...150 {
                let next = try writer.insert(entity: "Trip", json: newTrip(i))
                try writer.delete(id: current.description)   // cascades to its items and accommodation
                try writer.save()
                current = next
            }
        })
        XCTAssertEqual(problems.first, nil)
        XCTAssertEqual(try count(writer, "BucketListItem"), 3)
    }
}
