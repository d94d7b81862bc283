import XCTest
@testable import Strata

/// `"sectionBy"`: a fetch's objects in sections `[{"section": key, "objects": [...]}]`,
/// contiguous and in sort order, nil keys in `""`, paging over objects, through prepared
/// fetches and cursors, on every store setup.
final class SectionTests: StoreTestCase {
    private func descriptor(_ c: ModelContext, _ json: String) throws -> FetchDescriptor {
        try FetchDescriptor.decode(try JSONValue.parse(json), schema: c.schema)
    }

    /// The sections of a sectioned result: each key as JSON text, with the values of `field` of its objects.
    private func sections(_ value: JSONValue, _ field: String = "name", file: StaticString = #filePath, line: UInt = #line) throws -> [(String, [String])] {
        try XCTUnwrap(value.array, "not an array: \(value.text)", file: file, line: line).map { s in
            guard case .object(let members) = s, members.map(\.0) == ["section", "objects"], let key = s["section"], let objects = s["objects"]?.array else {
                throw StrataError(.internal, "not a section: \(s.text)")
            }
            // Scalars spelled out: String's == would take "é" and "e\u{301}" for one key.
            let text = key.text.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
            return (text, objects.map { $0[field]?.stringValue ?? "?" })
        }
    }

    private func fetchSections(_ c: ModelContext, _ json: String, _ field: String = "name",
                               file: StaticString = #filePath, line: UInt = #line) throws -> [(String, [String])] {
        try sections(parse(c.fetch(descriptor(c, json))), field, file: file, line: line)
    }

    private func assertSections(_ actual: [(String, [String])], _ expected: [(String, [String])], _ label: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.map(\.0), expected.map(\.0), "keys, \(label)", file: file, line: line)
        XCTAssertEqual(actual.map(\.1), expected.map(\.1), "objects, \(label)", file: file, line: line)
    }

    /// Trips whose destinations tie under localizedStandard ("Paris", "paris") with names that
    /// would interleave them, an empty and two nil destinations, a subentity of each kind.
    private func insertTrips(_ c: ModelContext) throws {
        let trips: [(String, String, String?)] = [
            ("Trip", "A1", "Paris"), ("Trip", "B1", "paris"), ("BusinessTrip", "C1", "Paris"), ("PersonalTrip", "D1", "paris"),
            ("Trip", "E1", "Rome"), ("Trip", "F1", nil), ("PersonalTrip", "G1", ""), ("Trip", "H1", "Athens"), ("BusinessTrip", "I1", nil),
        ]
        for (i, (entity, name, destination)) in trips.enumerated() {
            let dest = destination.map { #", "destination": "\#($0)""# } ?? ""
            let reason = entity == "PersonalTrip" ? #", "reason": "\#(i % 2 == 0 ? "family" : "wellness")""# : ""
            _ = try c.insert(entity: entity, json: #"""
                {"name": "\#(name)", "startDate": \#(i * 86_400), "endDate": \#(i * 86_400 + 3_600)\#(dest)\#(reason),
                 "bucketList": [{"title": "\#(name)-x"}], "livingAccommodation": {"address": "\#(i) Street", "placeName": "P\#(name)"}}
                """#)
        }
        _ = try c.insert(entity: "BucketListItem", json: #"{"title": "lonely"}"#)
    }

    private static let forward: [(String, [String])] = [
        (#""""#, ["F1", "I1", "G1"]), (#""Athens""#, ["H1"]), (#""paris""#, ["B1", "D1"]), (#""Paris""#, ["A1", "C1"]), (#""Rome""#, ["E1"]),
    ]

    func testSectionsFollowTheKeyThenTheSortWithTiesContiguousAndNilInTheEmptySection() {
        forEachSetup { h in
            try insertTrips(h.context)
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                let label = saved ? "saved" : "pending"
                assertSections(try fetchSections(h.context, #"{"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "name"}]}"#),
                               Self.forward, label)
                // The first sort key on the same key path gives the sections' direction: nil last in reverse.
                let reverse = try fetchSections(h.context, #"""
                    {"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "destination", "order": "reverse"}, {"key": "name", "order": "reverse"}]}
                    """#)
                assertSections(reverse, [(#""Rome""#, ["E1"]), (#""Paris""#, ["C1", "A1"]), (#""paris""#, ["D1", "B1"]), (#""Athens""#, ["H1"]),
                                         (#""""#, ["G1", "I1", "F1"])], label)
                // A binary comparator orders by code points: "Paris" < "Rome" < "paris".
                let binary = try fetchSections(h.context, #"""
                    {"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "destination", "comparator": "binary"}, {"key": "name"}]}
                    """#)
                XCTAssertEqual(binary.map(\.0), [#""""#, #""Athens""#, #""Paris""#, #""Rome""#, #""paris""#], label)
                // Objects are written as a plain fetch writes them.
                let plain = try XCTUnwrap(parse(h.context.fetch(descriptor(h.context, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#))).array)
                let sectioned = try XCTUnwrap(parse(h.context.fetch(descriptor(h.context, #"{"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "name"}]}"#))).array)
                let objects = sectioned.flatMap { $0["objects"]?.array ?? [] }
                XCTAssertEqual(objects.count, plain.count, label)
                for o in objects { XCTAssertEqual(o, plain.first { $0["_id"] == o["_id"] }, label) }
                // Counts ignore sections.
                XCTAssertEqual(try h.context.fetchCount(descriptor(h.context, #"{"entity": "Trip", "sectionBy": "destination"}"#)), 9, label)
            }
        }
    }

    func testAToOneHopIntegersAndDatesKeySections() {
        forEachSetup { h in
            try insertTrips(h.context)
            try h.context.save()
            let items = try fetchSections(h.context, #"{"entity": "BucketListItem", "sectionBy": "trip.destination", "sortBy": [{"key": "title"}]}"#, "title")
            assertSections(items, [(#""""#, ["F1-x", "I1-x", "lonely", "G1-x"]), (#""Athens""#, ["H1-x"]), (#""paris""#, ["B1-x", "D1-x"]),
                                   (#""Paris""#, ["A1-x", "C1-x"]), (#""Rome""#, ["E1-x"])], "hop")
            let dates = try fetchSections(h.context, #"{"entity": "Trip", "sectionBy": "startDate", "fetchLimit": 2, "sortBy": [{"key": "name"}]}"#)
            assertSections(dates, [(#""1970-01-01T00:00:00Z""#, ["A1"]), (#""1970-01-02T00:00:00Z""#, ["B1"])], "dates")
            // A subentity's attribute from the parent: nil (section "") for the other entities.
            let reasons = try fetchSections(h.context, #"{"entity": "Trip", "sectionBy": "reason", "sortBy": [{"key": "name"}]}"#)
            assertSections(reasons, [(#""""#, ["A1", "B1", "C1", "E1", "F1", "H1", "I1"]), (#""family""#, ["G1"]), (#""wellness""#, ["D1"])], "subentity")
        }
    }

    func testIntegerKeysAreNumbers() {
        let schema = Fixtures.schema(attributes: #"{"name": "n", "type": "string"}, {"name": "level", "type": "int", "optional": true}"#)
        forEachSetup(schema) { h in
            for (n, level) in [("a", "2"), ("b", "null"), ("c", "-1"), ("d", "2")] {
                _ = try h.context.insert(entity: "Thing", json: #"{"n": "\#(n)", "level": \#(level)}"#)
            }
            let ints = try fetchSections(h.context, #"{"entity": "Thing", "sectionBy": "level", "sortBy": [{"key": "n"}]}"#, "n")
            assertSections(ints, [(#""""#, ["b"]), ("-1", ["c"]), ("2", ["a", "d"])], "ints")
        }
    }

    func testKeysTheCollationTiesStayContiguousAndApart() {
        forEachSetup { h in
            // "Café" composed and decomposed: equal under localizedStandard, two keys, names that would interleave them.
            for (i, (name, city)) in [("K1", #"Caf\u00e9"#), ("L1", #"Cafe\u0301"#), ("M1", #"Caf\u00e9"#), ("N1", #"Cafe\u0301"#), ("O1", "Cafe")].enumerated() {
                _ = try h.context.insert(entity: "Trip", json: #"{"name": "\#(name)", "destination": "\#(city)", "startDate": \#(i), "endDate": 9}"#)
            }
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                let sections = try fetchSections(h.context, #"{"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "name"}]}"#)
                assertSections(sections, [(#""Cafe""#, ["O1"]), (#""Cafe\u{301}""#, ["L1", "N1"]), (#""Caf\u{e9}""#, ["K1", "M1"])], "saved: \(saved)")
            }
        }
    }

    func testPagingCountsObjectsAcrossSectionsAndAnEmptyResultIsAnEmptyArray() {
        forEachSetup { h in
            try insertTrips(h.context)
            let paged = try fetchSections(h.context, #"{"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "name"}], "fetchOffset": 2, "fetchLimit": 4}"#)
            assertSections(paged, [(#""""#, ["G1"]), (#""Athens""#, ["H1"]), (#""paris""#, ["B1", "D1"])], "paged")
            let none = try h.context.fetch(descriptor(h.context, #"{"entity": "Trip", "sectionBy": "destination", "predicate": "$0.name == \"nobody\""}"#))
            XCTAssertEqual(String(decoding: none, as: UTF8.self), "[]")
            let limitZero = try h.context.fetch(descriptor(h.context, #"{"entity": "Trip", "sectionBy": "destination", "fetchLimit": 0}"#))
            XCTAssertEqual(String(decoding: limitZero, as: UTF8.self), "[]")
        }
    }

    func testPendingChangesAndInheritanceSectionAsTheyFetch() {
        forEachSetup { h in
            try insertTrips(h.context)
            try h.context.save()
            try h.reopen()
            let c = h.context
            let all = try XCTUnwrap(parse(c.fetch(descriptor(c, #"{"entity": "Trip", "sortBy": [{"key": "name"}]}"#))).array)
            func id(_ name: String) throws -> String { try XCTUnwrap(all.first { $0["name"] == .string(name) }?["_id"]?.stringValue) }
            _ = try c.insert(entity: "Trip", json: #"{"name": "J1", "destination": "Athens", "startDate": 1, "endDate": 2}"#)
            try c.update(id: id("E1"), patch: #"{"destination": "Paris"}"#)
            try c.delete(id: id("A1"))
            let json = #"{"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "name"}]}"#
            assertSections(try fetchSections(c, json), [(#""""#, ["F1", "I1", "G1"]), (#""Athens""#, ["H1", "J1"]), (#""paris""#, ["B1", "D1"]),
                                                        (#""Paris""#, ["C1", "E1"])], "pending")
            let saved = json.replacingOccurrences(of: "\"sectionBy\"", with: "\"includePendingChanges\": false, \"sectionBy\"")
            assertSections(try fetchSections(c, saved), Self.forward, "without pending changes")
            let own = json.replacingOccurrences(of: "\"sectionBy\"", with: "\"includeSubentities\": false, \"sectionBy\"")
            assertSections(try fetchSections(c, own), [(#""""#, ["F1"]), (#""Athens""#, ["H1", "J1"]), (#""paris""#, ["B1"]), (#""Paris""#, ["E1"])],
                           "without subentities")
            let business = try fetchSections(c, #"{"entity": "BusinessTrip", "sectionBy": "destination", "sortBy": [{"key": "name"}]}"#)
            assertSections(business, [(#""""#, ["I1"]), (#""Paris""#, ["C1"])], "a subentity")
        }
    }

    func testPreparedFetchesWithVariablesAndCursorBatchesSection() {
        forEachSetup { h in
            try insertTrips(h.context)
            try h.context.save()
            try insertTrips(h.context)  // pending: the same trips again (upserts) and a second "lonely"
            let c = h.context
            var json = #"{"entity": "Trip", "sectionBy": "destination", "predicate": "$0.name != skip", "sortBy": [{"key": "name"}]}"#
            let prepared = try json.withUTF8 { try c.prepare($0) }
            XCTAssertTrue(prepared.isCompiled)
            let run = try sections(parse(bytes(#"{"skip": "C1"}"#).withUnsafeBufferPointer { try prepared.fetch(bindings: $0) }))
            assertSections(run, [(#""""#, ["F1", "I1", "G1"]), (#""Athens""#, ["H1"]), (#""paris""#, ["B1", "D1"]), (#""Paris""#, ["A1"]), (#""Rome""#, ["E1"])],
                           "prepared")
            XCTAssertEqual(try bytes(#"{"skip": "C1"}"#).withUnsafeBufferPointer { try prepared.fetchCount(bindings: $0) }, 8)
            let refused = assertError(.invalid) { try prepared.fetchIdentifiers(bindings: nil) }
            XCTAssertEqual(refused?.path, "/sectionBy")

            // Batches of 2 objects: a section split by a batch starts the next one again, with its key.
            let plain = #"{"entity": "Trip", "sectionBy": "destination", "sortBy": [{"key": "name"}]}"#
            let cursor = try c.cursor(descriptor(c, plain))
            var batches: [[(String, [String])]] = []
            while true {
                let batch = try sections(parse(cursor.next(2).bytes))
                if batch.isEmpty { break }
                XCTAssertLessThanOrEqual(batch.reduce(0) { $0 + $1.1.count }, 2)
                batches.append(batch)
            }
            XCTAssertEqual(batches.count, 5, "\(h.setup)")
            XCTAssertEqual(batches.first?.map(\.0), [#""""#], "\(h.setup)")
            XCTAssertEqual(batches.dropFirst().first?.map(\.0), [#""""#, #""Athens""#], "\(h.setup): the nil section continues")
            // Merging consecutive equal keys gives the fetch.
            var merged: [(String, [String])] = []
            for s in batches.joined() {
                if merged.last?.0 == s.0 { merged[merged.count - 1].1 += s.1 } else { merged.append(s) }
            }
            assertSections(merged, Self.forward, "cursor \(h.setup)")
        }
    }

    func testPropertiesToFetchAndPrefetchingWorkInsideSections() {
        forEachSetup { h in
            try insertTrips(h.context)
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                let c = h.context
                let result = try XCTUnwrap(parse(c.fetch(descriptor(c, #"""
                    {"entity": "Trip", "sectionBy": "destination", "propertiesToFetch": ["name"], "predicate": "$0.name == \"E1\"",
                     "relationshipKeyPathsForPrefetching": ["livingAccommodation", "bucketList.trip"]}
                    """#))).array)
                XCTAssertEqual(result.count, 1)
                XCTAssertEqual(result[0]["section"], .string("Rome"))
                let trip = try XCTUnwrap(result[0]["objects"]?.array?.first)
                guard case .object(let members) = trip else { return XCTFail("not an object") }
                XCTAssertEqual(Set(members.map(\.0)), ["_id", "_entity", "name", "bucketList", "livingAccommodation"])
                XCTAssertEqual(trip["livingAccommodation"]?["placeName"], .string("PE1"))
                XCTAssertEqual(trip["bucketList"]?.array?.first?["trip"]?["_id"], trip["_id"])
            }
        }
    }

    func testRefusalsNameSectionBy() {
        let schema = Fixtures.schema(attributes: #"""
            {"name": "n", "type": "string"}, {"name": "notes", "type": "json", "optional": true},
            {"name": "place", "type": "composite", "optional": true, "fields": [{"name": "city", "type": "string"}]},
            {"name": "photo", "type": "data", "optional": true, "externalStorage": true},
            {"name": "score", "type": "double", "default": 0}, {"name": "price", "type": "decimal", "optional": true},
            {"name": "done", "type": "bool", "default": false}
            """#, relationships: #"{"name": "parent", "destination": "Thing", "optional": true}, {"name": "kids", "destination": "Thing", "toMany": true}"#)
        forEachSetup(schema, [.inMemory]) { h in
            for key in [#""nope""#, #""parent""#, #""kids""#, #""kids.n""#, #""notes""#, #""place""#, #""photo""#, #""score""#, #""price""#,
                        #""done""#, "5", #"["n"]"#, #""parent.nope""#] {
                let e = assertError(.invalid) { try descriptor(h.context, #"{"entity": "Thing", "sectionBy": \#(key)}"#) }
                XCTAssertEqual(e?.path, "/sectionBy", key)
            }
            // A composite's field and a hop are keys.
            _ = try h.context.insert(entity: "Thing", json: #"{"n": "a", "place": {"city": "Oslo"}, "parent": {"n": "p"}}"#)
            let fields = try fetchSections(h.context, #"{"entity": "Thing", "sectionBy": "place.city", "sortBy": [{"key": "n"}]}"#, "n")
            assertSections(fields, [(#""""#, ["p"]), (#""Oslo""#, ["a"])], "composite field")
            let hop = try fetchSections(h.context, #"{"entity": "Thing", "sectionBy": "parent.n", "sortBy": [{"key": "n"}]}"#, "n")
            assertSections(hop, [(#""""#, ["p"]), (#""p""#, ["a"])], "hop")
            let e = assertError(.invalid) { try h.context.fetchIdentifiers(descriptor(h.context, #"{"entity": "Thing", "sectionBy": "n"}"#)) }
            XCTAssertEqual(e?.path, "/sectionBy")
        }
    }

    func testADamagedSectionKeyIsCorrupt() throws {
        let container = try openFile()
        let c = try container.makeContext()
        try insertTrips(c)
        try c.save()
        let tamper = try Connection(path: storePath(), readOnly: false, create: false)
        try tamper.execute(#"UPDATE "Trip" SET "destination" = CAST(X'FF' AS TEXT) WHERE "name" = 'E1'"#)
        let fresh = try container.makeContext()
        let e = assertError(.corrupt) { try fresh.fetch(descriptor(fresh, #"{"entity": "Trip", "sectionBy": "destination", "propertiesToFetch": ["name"]}"#)) }
        XCTAssertEqual(e?.attribute, "destination")
        try tamper.execute(#"UPDATE "Trip" SET "destination" = X'FF' WHERE "name" = 'E1'"#)
        assertError(.corrupt) { try fresh.fetch(descriptor(fresh, #"{"entity": "BucketListItem", "sectionBy": "trip.destination"}"#)) }
    }

    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
}
