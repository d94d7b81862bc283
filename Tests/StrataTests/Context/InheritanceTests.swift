import XCTest
@testable import Strata

/// Single-table inheritance: subentities share their root's table with an
/// `_entity` discriminator; identifiers carry the concrete entity.
final class InheritanceTests: StoreTestCase {
    func trip(_ name: String, _ extra: String = "") -> String {
        #"{"name": "\#(name)", "startDate": 0, "endDate": 86400\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    func testSubentityRowsLiveInTheRootTable() throws {
        let h = try harness(.file)
        let t = try h.context.insert(entity: "Trip", json: trip("Plain"))
        let p = try h.context.insert(entity: "PersonalTrip", json: trip("Home", #""reason": "family""#))
        let b = try h.context.insert(entity: "BusinessTrip", json: trip("Work", #""perdiem": 80"#))
        try h.context.save()
        let rows = try self.rows(storePath("file"), "SELECT _pk, _entity, name, reason, perdiem FROM Trip ORDER BY _pk")
        XCTAssertEqual(rows, [
            [.int(t.pk), .text("Trip"), .text("Plain"), .null, .null],
            [.int(p.pk), .text("PersonalTrip"), .text("Home"), .text("family"), .null],
            [.int(b.pk), .text("BusinessTrip"), .text("Work"), .null, .double(80)],
        ])
    }

    func testIdentifiersCarryTheConcreteEntity() {
        forEachSetup { h in
            let p = try h.context.insert(entity: "Trip", json: trip("Home", #""_entity": "PersonalTrip", "reason": "wellness""#))
            XCTAssertEqual(p.entity.name, "PersonalTrip")
            XCTAssertTrue(p.description.hasPrefix("PersonalTrip/"))
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, p.description)
            XCTAssertEqual(v["_id"], .string(p.description))
            XCTAssertEqual(v["_entity"], .string("PersonalTrip"))
            XCTAssertEqual(v["reason"], .string("wellness"))
            XCTAssertEqual(try identifiers(h.context, "Trip"), [p.description])
            // Only its own identifier names it: the root's name is an error naming the right one,
            // a sibling's name finds nothing.
            let e = assertError(.invalid) { try h.context.get(id: "Trip/\(p.pk)") }
            XCTAssertTrue(e?.message.contains("it is \(p.description)") == true, e?.message ?? "")
            assertError(.notFound) { try h.context.get(id: "BusinessTrip/\(p.pk)") }
        }
    }

    func testFetchingTheRootReturnsEveryObjectWithItsOwnAttributes() {
        forEachSetup { h in
            _ = try h.context.insert(entity: "Trip", json: trip("Plain"))
            _ = try h.context.insert(entity: "PersonalTrip", json: trip("Home"))
            _ = try h.context.insert(entity: "BusinessTrip", json: trip("Work", #""perdiem": 80.5"#))
            try h.context.save()
            try h.reopen()
            let all = try fetch(h.context, "Trip")
            XCTAssertEqual(all.count, 3)
            let plain = try XCTUnwrap(all.first { $0["_entity"] == .string("Trip") })
            let personal = try XCTUnwrap(all.first { $0["_entity"] == .string("PersonalTrip") })
            let business = try XCTUnwrap(all.first { $0["_entity"] == .string("BusinessTrip") })
            XCTAssertNil(plain["reason"])
            XCTAssertNil(plain["perdiem"])
            XCTAssertEqual(personal["reason"], .string("unknown"), "the subentity's default")
            XCTAssertNil(personal["perdiem"])
            XCTAssertEqual(business["perdiem"]?.numberText.flatMap(Double.init), 80.5)
            XCTAssertNil(business["reason"])
            for o in all {
                XCTAssertNotNil(o["name"])
                XCTAssertEqual(o["bucketList"], .array([]), "inherited relationships appear on every object")
                XCTAssertEqual(o["livingAccommodation"], .null)
            }
        }
    }

    func testSubentityAttributesBelongToTheSubentity() throws {
        let context = try openInMemory().makeContext()
        let e = assertError(.invalid) { try context.insert(entity: "Trip", json: trip("x", #""reason": "family""#)) }
        XCTAssertEqual(e?.path, "/reason")
        assertError(.validation) { try context.insert(entity: "PersonalTrip", json: trip("x", #""reason": "holiday""#)) }
        assertError(.invalid) { try context.insert(entity: "Trip", json: trip("x", #""_entity": "BucketListItem""#)) }
        assertError(.invalid) { try context.insert(entity: "PersonalTrip", json: trip("x", #""_entity": "BusinessTrip""#)) }
        assertError(.invalid) { try context.insert(entity: "PersonalTrip", json: trip("x", #""_entity": "Trip""#)) }
        XCTAssertFalse(context.hasChanges)
    }

    /// The concrete entity is read without a scan when `_entity` is the object's first key and its
    /// value a string without escapes; any other spelling is found by the scan, to the same entity
    /// and the same errors.
    func testTheEntityNamedFirstIsTheEntityNamedAnywhere() throws {
        let context = try openInMemory().makeContext()
        let named: [(json: String, entity: String)] = [
            (#"{"_entity": "PersonalTrip", "name": "a", "startDate": 0, "endDate": 1}"#, "PersonalTrip"),
            (#"{ "_entity" : "BusinessTrip" , "name": "b", "startDate": 0, "endDate": 1}"#, "BusinessTrip"),
            (#"{"name": "c", "_entity": "PersonalTrip", "startDate": 0, "endDate": 1}"#, "PersonalTrip"),
            (#"{"_entity": "Personal\u0054rip", "name": "d", "startDate": 0, "endDate": 1}"#, "PersonalTrip"),
            (#"{"\u005fentity": "BusinessTrip", "name": "e", "startDate": 0, "endDate": 1}"#, "BusinessTrip"),
            (#"{"_entityX": 1, "name": "f", "startDate": 0, "endDate": 1}"#, ""),
            (#"{"_entit": "BusinessTrip", "name": "g", "startDate": 0, "endDate": 1}"#, ""),
            (#"{"_entity": "Trip", "name": "h", "startDate": 0, "endDate": 1}"#, "Trip"),
        ]
        for (json, entity) in named {
            if entity.isEmpty {
                XCTAssertEqual(assertError(.invalid) { try context.insert(entity: "Trip", json: json) }?.code, .invalid, json)
            } else {
                XCTAssertEqual(try context.insert(entity: "Trip", json: json).entity.name, entity, json)
            }
        }
        // A name outside the hierarchy fails alike wherever it stands and however it is spelled.
        let wrong = [#"{"_entity": "BucketListItem", "name": "x"}"#, #"{"name": "x", "_entity": "BucketListItem"}"#,
                     #"{"_entity": "Bucket\u004cistItem", "name": "x"}"#]
        let errors = wrong.map { json in assertError(.invalid) { try context.insert(entity: "Trip", json: json) } }
        for e in errors {
            XCTAssertEqual(e?.message, errors[0]?.message)
            XCTAssertEqual(e?.path, "/_entity")
        }
        // A first `_entity` that is no string: the first string `_entity` names it, then the decode refuses the first.
        let e = assertError(.invalid) { try context.insert(entity: "Trip", json: #"{"_entity": 3, "_entity": "PersonalTrip", "name": "x"}"#) }
        XCTAssertEqual(e?.path, "/_entity")
    }

    func testALeadingStringMemberIsReadOnlyWhenItIsPlain() {
        let cases: [(String, String?)] = [
            (#"{"_entity":"A"}"#, "A"), (#" { "_entity" : "A b" , "x": 1}"#, "A b"), (#"{"_entity": ""}"#, ""),
            (#"{"_entity": "A\u0042"}"#, nil), (#"{"_entity": 1}"#, nil), (#"{"x": 1, "_entity": "A"}"#, nil),
            (#"{"_entit": "A"}"#, nil), (#"{"_entityy": "A"}"#, nil), (#"{"\u005fentity": "A"}"#, nil),
            (#"["_entity", "A"]"#, nil), (#"{"_entity" "A"}"#, nil), (#"{"_entity": "A"#, nil), (#"{"_entity"#, nil), ("", nil),
        ]
        for (json, want) in cases {
            var bytes = Array(json.utf8)
            bytes.withUnsafeMutableBufferPointer { buf in
                let r = JSONReader(UnsafeBufferPointer(buf))
                XCTAssertEqual(r.leadingString(member: "_entity"), want, json)
                XCTAssertEqual(r.position, 0)
            }
        }
    }

    func testTheRootIdentifierOfASubentityObjectIsRejected() {
        forEachSetup { h in
            let p = try h.context.insert(entity: "PersonalTrip", json: trip("Home"))
            try h.context.save()
            let calls: [() throws -> Void] = [{ try h.context.update(id: "Trip/\(p.pk)", patch: #"{"name": "x"}"#) },
                                              { try h.context.delete(id: "Trip/\(p.pk)") },
                                              { _ = try h.context.get(id: "Trip/\(p.pk)") }]
            for call in calls {
                let e = assertError(.invalid) { try call() }
                XCTAssertTrue(e?.message.contains(p.description) == true, e?.message ?? "")
            }
            XCTAssertFalse(h.context.hasChanges)
            try h.context.update(id: p.description, patch: #"{"reason": "reunion", "name": "Home again"}"#)
            try h.context.save()
            try h.reopen()
            let v = try get(h.context, p)
            XCTAssertEqual(v["reason"], .string("reunion"))
            XCTAssertEqual(v["name"], .string("Home again"))
        }
    }

    func testRelationshipsToTheRootLinkSubentities() {
        forEachSetup { h in
            let p = try h.context.insert(entity: "PersonalTrip", json: trip("Home", #""bucketList": [{"title": "Garden"}]"#))
            let b = try h.context.insert(entity: "BusinessTrip", json: trip("Work"))
            let item = try h.context.insert(entity: "BucketListItem", json: #"{"title": "Meeting", "trip": "\#(b)"}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try get(h.context, item)["trip"], .string(b.description))
            let garden = try XCTUnwrap(get(h.context, p)["bucketList"]?.array?.first?.stringValue)
            XCTAssertEqual(try get(h.context, garden)["trip"], .string(p.description))
            XCTAssertEqual(try get(h.context, b)["bucketList"], .array([.string(item.description)]))
            // Linking with the root's name is an error naming the concrete object; its own identifier works.
            let e = assertError(.invalid) { try h.context.update(id: item.description, patch: #"{"trip": "Trip/\#(p.pk)"}"#) }
            XCTAssertEqual(e?.path, "/trip")
            XCTAssertTrue(e?.message.contains(p.description) == true, e?.message ?? "")
            XCTAssertFalse(h.context.hasChanges)
            try h.context.update(id: item.description, patch: #"{"trip": "\#(p)"}"#)
            try h.context.save()
            XCTAssertEqual(try get(h.context, item)["trip"], .string(p.description))
        }
    }

    func testKeysAreUniqueAcrossTheHierarchy() throws {
        let context = try openInMemory().makeContext()
        var seen: Set<Int64> = []
        for i in 0..<30 {
            let entity = ["Trip", "PersonalTrip", "BusinessTrip"][i % 3]
            let id = try context.insert(entity: entity, json: trip("t\(i)"))
            XCTAssertTrue(seen.insert(id.pk).inserted)
        }
        try context.save()
        XCTAssertEqual(try count(context, "Trip"), 30)
        XCTAssertEqual(try count(context, "PersonalTrip"), 10)
        XCTAssertEqual(try count(context, "Trip", subentities: false), 10)
    }

    func testThreeLevels() {
        let schema = #"""
            {"version": "1", "entities": [
              {"name": "Animal", "attributes": [{"name": "name", "type": "string"}]},
              {"name": "Dog", "superentity": "Animal", "attributes": [{"name": "breed", "type": "string", "optional": true}]},
              {"name": "Puppy", "superentity": "Dog", "attributes": [{"name": "weeks", "type": "int", "default": 8}]},
              {"name": "Cat", "superentity": "Animal"}]}
            """#
        forEachSetup(schema) { h in
            let a = try h.context.insert(entity: "Animal", json: #"{"name": "generic"}"#)
            let d = try h.context.insert(entity: "Dog", json: #"{"name": "Rex", "breed": "collie"}"#)
            let p = try h.context.insert(entity: "Puppy", json: #"{"name": "Bit", "breed": "pug"}"#)
            let c = try h.context.insert(entity: "Cat", json: #"{"name": "Tom"}"#)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try identifiers(h.context, "Animal"), [a, d, p, c].map(\.description))
            XCTAssertEqual(try identifiers(h.context, "Dog"), [d, p].map(\.description))
            XCTAssertEqual(try identifiers(h.context, "Dog", subentities: false), [d.description])
            XCTAssertEqual(try identifiers(h.context, "Puppy"), [p.description])
            XCTAssertEqual(try count(h.context, "Cat"), 1)
            assertError(.invalid) { try h.context.get(id: "Animal/\(p.pk)") }
            assertError(.invalid) { try h.context.get(id: "Dog/\(p.pk)") }
            let puppy = try get(h.context, p.description)
            XCTAssertEqual(puppy["breed"], .string("pug"))
            XCTAssertEqual(puppy["weeks"]?.numberText, "8")
            XCTAssertEqual(try fetch(h.context, "Dog").map { $0["_entity"] }, [.string("Dog"), .string("Puppy")])
        }
    }
}
