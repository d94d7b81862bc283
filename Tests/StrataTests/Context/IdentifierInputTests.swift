import XCTest
@testable import Strata

/// Identifiers in input are canonical ("ConcreteEntity/key", no leading zeros),
/// `_id` on insert must name the object the insert ends up with, and an object
/// nested in a relationship cannot contradict its link to the owner.
final class IdentifierInputTests: StoreTestCase {
    func trip(_ name: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": 86400\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    // MARK: Canonical identifiers

    func testNonCanonicalIdentifiersAreRejectedEverywhere() {
        forEachSetup { h in
            let t = try h.context.insert(entity: "Trip", json: trip("Plain"))
            let p = try h.context.insert(entity: "PersonalTrip", json: trip("Home"))
            let item = try h.context.insert(entity: "BucketListItem", json: #"{"title": "a"}"#)
            try h.context.save()
            let variants = ["Trip/0\(t.pk)", "Trip/00\(t.pk)", "Trip/+\(t.pk)", "Trip/ \(t.pk)", "Trip/\(t.pk) ", "Trip/-\(t.pk)",
                            "Trip/\(t.pk).0", "Trip/0", "Trip/١"]
            for text in variants {
                let g = assertError(.invalid) { try h.context.get(id: text) }
                XCTAssertTrue(g?.message.contains("leading zeros") == true, "\(text): \(g?.message ?? "")")
                assertError(.invalid) { try h.context.update(id: text, patch: #"{"name": "x"}"#) }
                assertError(.invalid) { try h.context.delete(id: text) }
                var w = JSONWriter()
                w.beginObject(); w.key("trip"); w.string(text); w.endObject()
                let l = assertError(.invalid) { try h.context.update(id: item.description, patch: w.string) }
                XCTAssertEqual(l?.path, "/trip", text)
                XCTAssertEqual(l?.attribute, "trip", text)
                let n = assertError(.invalid) {
                    try h.context.insert(entity: "BucketListItem", json: #"{"title": "b", "trip": \#(JSONValue.string(text).text)}"#)
                }
                XCTAssertEqual(n?.path, "/trip", text)
            }
            // The root's name for a subentity object: invalid, naming the object's identifier.
            for (call, path) in [({ _ = try h.context.get(id: "Trip/\(p.pk)") }, nil),
                                 ({ try h.context.update(id: item.description, patch: #"{"trip": "Trip/\#(p.pk)"}"#) }, "/trip"),
                                 ({ try h.context.delete(id: "Trip/\(p.pk)") }, nil),
                                 ({ _ = try h.context.insert(entity: "BucketListItem", json: #"{"title": "c", "trip": "Trip/\#(p.pk)"}"#) }, "/trip")]
                as [(() throws -> Void, String?)] {
                let e = assertError(.invalid) { try call() }
                if let path = path {
                    XCTAssertEqual(e?.path, path)
                    XCTAssertTrue(e?.message.contains("it is \(p.description)") == true, e?.message ?? "")
                }
            }
            XCTAssertFalse(h.context.hasChanges)
            // Canonical identifiers work.
            XCTAssertEqual(try get(h.context, "Trip/\(t.pk)")["name"], .string("Plain"))
            try h.context.update(id: item.description, patch: #"{"trip": "\#(p)"}"#)
            try h.context.save()
            XCTAssertEqual(try get(h.context, item)["trip"], .string(p.description))
        }
    }

    func testAKeyThatNamesNoObjectIsNotFound() {
        forEachSetup(Fixtures.sampleTrips, [.inMemory]) { h in
            assertError(.notFound) { try h.context.get(id: "Trip/1") }
            assertError(.notFound) { try h.context.get(id: "PersonalTrip/9223372036854775807") }
            assertError(.invalid) { try h.context.get(id: "Trip/9223372036854775808") }
        }
    }

    // MARK: _id on insert

    func testIdOnInsertMustNameTheObjectTheInsertEndsWith() {
        forEachSetup { h in
            let a = try h.context.insert(entity: "Trip", json: trip("A"))
            let b = try h.context.insert(entity: "Trip", json: trip("B"))
            try h.context.save()
            // A new object: '_id' cannot name it (identifiers are assigned), and naming another is an error.
            for id in [a.description, "Trip/999"] {
                let e = assertError(.invalid) { try h.context.insert(entity: "Trip", json: trip("C", #""_id": "\#(id)""#)) }
                XCTAssertEqual(e?.path, "/_id")
                XCTAssertEqual(e?.entity, "Trip")
            }
            // An upsert (or ignore) onto an existing object: '_id' must be that object.
            for policy in ["upsert", "ignore"] {
                let e = assertError(.invalid) {
                    try h.context.insert(entity: "Trip", json: trip("A", #""_id": "\#(b)", "destination": "x", "_onConflict": "\#(policy)""#))
                }
                XCTAssertEqual(e?.path, "/_id", policy)
                XCTAssertTrue(e?.message.contains(a.description) == true, e?.message ?? "")
            }
            // Nested objects too.
            let n = assertError(.invalid) {
                try h.context.insert(entity: "Trip", json: trip("D", #""bucketList": [{"title": "t", "_id": "BucketListItem/1"}]"#))
            }
            XCTAssertEqual(n?.path, "/bucketList/0/_id")
            XCTAssertFalse(h.context.hasChanges)

            XCTAssertEqual(try h.context.insert(entity: "Trip", json: trip("A", #""_id": "\#(a)", "destination": "there""#)), a)
            XCTAssertEqual(try h.context.insert(entity: "Trip", json: trip("A", #""_id": "\#(a)", "_onConflict": "ignore""#)), a)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, a)["destination"], .string("there"))
            XCTAssertEqual(try count(h.context, "Trip"), 2)
            // An object read back goes in again as an upsert of itself.
            let read = try h.context.get(id: b.description)
            XCTAssertEqual(try h.context.insert(entity: "Trip", json: String(decoding: read, as: UTF8.self)), b)
            // A non-canonical or foreign '_id' is invalid.
            for id in ["Trip/0\(a.pk)", "PersonalTrip/\(a.pk)", "BucketListItem/\(a.pk)", "nonsense"] {
                let e = assertError(.invalid) { try h.context.insert(entity: "Trip", json: trip("A", #""_id": "\#(id)""#)) }
                XCTAssertEqual(e?.path, "/_id", id)
            }
        }
    }

    func testIdOnUpdateMustBeTheCanonicalIdentifier() {
        forEachSetup(Fixtures.sampleTrips, [.inMemory]) { h in
            let p = try h.context.insert(entity: "PersonalTrip", json: trip("Home"))
            for id in ["Trip/\(p.pk)", "PersonalTrip/0\(p.pk)"] {
                let e = assertError(.invalid) { try h.context.update(id: p.description, patch: #"{"_id": "\#(id)", "name": "x"}"#) }
                XCTAssertEqual(e?.path, "/_id", id)
            }
            try h.context.update(id: p.description, patch: #"{"_id": "\#(p)", "name": "x"}"#)
            XCTAssertEqual(try get(h.context, p)["name"], .string("x"))
        }
    }

    // MARK: Nested objects and their inverse

    func testANestedObjectCannotContradictItsOwner() {
        forEachSetup { h in
            let one = try h.context.insert(entity: "Trip", json: trip("One"))
            let two = try h.context.insert(entity: "Trip", json: trip("Two"))
            try h.context.save()
            let contradicting = [
                (#"{"bucketList": [{"title": "x", "trip": "\#(two)"}]}"#, "/bucketList/0/trip"),
                (#"{"bucketList": [{"title": "ok"}, {"title": "x", "trip": null}]}"#, "/bucketList/1/trip"),
                (#"{"bucketList": [{"title": "x", "trip": {"name": "Three", "startDate": 0, "endDate": 1}}]}"#, "/bucketList/0/trip"),
            ]
            for (patch, path) in contradicting {
                let e = assertError(.invalid) { try h.context.update(id: one.description, patch: patch) }
                XCTAssertEqual(e?.path, path, patch)
                XCTAssertEqual(e?.entity, "BucketListItem", patch)
                XCTAssertEqual(e?.attribute, "trip", patch)
            }
            let inserted = assertError(.invalid) {
                try h.context.insert(entity: "Trip", json: self.trip("Four", #""bucketList": [{"title": "x", "trip": "\#(two)"}]"#))
            }
            XCTAssertEqual(inserted?.path, "/bucketList/0/trip")
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try count(h.context, "Trip"), 2)

            // Agreeing is fine.
            try h.context.update(id: one.description, patch: #"{"bucketList": [{"title": "same", "trip": "\#(one)"}]}"#)
            try h.context.save()
            try h.reopen()
            let items = try fetch(h.context, "BucketListItem")
            XCTAssertEqual(items.map { $0["title"] }, [.string("same")])
            XCTAssertEqual(items.first?["trip"], .string(one.description))
            XCTAssertEqual(try get(h.context, two)["bucketList"], .array([]))
        }
    }
}
