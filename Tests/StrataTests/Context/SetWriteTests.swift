import XCTest
@testable import Strata

/// `strata_update_where` and the counted `strata_delete_where`: counts, pending changes
/// until save, rollback, matched sets that include pending changes, delete rules, unique
/// constraints, validation, history, inheritance, and one statement per table at save.
final class SetWriteTests: StoreTestCase {
    /// Trips (a subentity whose own attribute moves the link slots), items (cascade),
    /// guides (nullify: a to-one held in the trip's row) and sponsors (deny).
    static let schema = #"""
        {"version": "1", "entities": [
          {"name": "Trip", "attributes": [
             {"name": "name", "type": "string", "historyValues": true},
             {"name": "destination", "type": "string", "optional": true},
             {"name": "cost", "type": "int", "default": 0},
             {"name": "code", "type": "string", "optional": true},
             {"name": "address", "type": "composite", "optional": true, "fields": [
                {"name": "city", "type": "string"},
                {"name": "country", "type": "string", "default": "FR"}]}],
           "relationships": [
             {"name": "items", "destination": "Item", "toMany": true, "deleteRule": "cascade", "inverse": "trip"},
             {"name": "guide", "destination": "Guide", "optional": true, "inverse": "trips"},
             {"name": "sponsor", "destination": "Sponsor", "optional": true, "inverse": "trips"}],
           "uniqueConstraints": [["code"]]},
          {"name": "BusinessTrip", "superentity": "Trip", "attributes": [{"name": "perdiem", "type": "double", "default": 0}]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]},
          {"name": "Guide", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "deleteRule": "nullify", "inverse": "guide"}]},
          {"name": "Sponsor", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "trips", "destination": "Trip", "toMany": true, "deleteRule": "deny", "inverse": "sponsor"}]}]}
        """#

    /// Ten saved trips: t0…t9, even ones to Paris, odd ones to Rome, cost i; t5…t9 business trips.
    @discardableResult
    func seed(_ ctx: ModelContext) throws -> [ObjectID] {
        var ids: [ObjectID] = []
        for i in 0..<10 {
            let kind = i >= 5 ? #""_entity": "BusinessTrip", "#: ""
            ids.append(try ctx.insert(entity: "Trip", json: #"{\#(kind)"name": "t\#(i)", "destination": "\#(i % 2 == 0 ? "Paris" : "Rome")", "cost": \#(i)}"#))
        }
        try ctx.save()
        return ids
    }

    func countWhere(_ ctx: ModelContext, _ entity: String, _ predicate: String, subentities: Bool = true) throws -> Int64 {
        try ctx.fetchCount(FetchDescriptor.decode(JSONValue.of(#"{"entity": "\#(entity)", "predicate": \#(predicate), "includeSubentities": \#(subentities)}"#),
                                                  schema: ctx.schema))
    }

    func names(_ ctx: ModelContext, _ entity: String, _ predicate: String) throws -> [String] {
        let d = try FetchDescriptor.decode(JSONValue.of(#"{"entity": "\#(entity)", "predicate": \#(predicate), "sortBy": [{"key": "name"}]}"#), schema: ctx.schema)
        return try XCTUnwrap(parse(ctx.fetch(d)).array).compactMap { $0["name"]?.stringValue }
    }

    // MARK: Updates

    func testUpdateWhereCountsIsPendingUntilSaveAndVisibleAtOnce() {
        forEachSetup(SetWriteTests.schema) { h in
            try seed(h.context)
            let n = try h.context.update(entity: "Trip", request: #"{"predicate": "$0.destination == \"Paris\"", "set": {"destination": "Lyon", "cost": 100}}"#)
            XCTAssertEqual(n, 5)
            XCTAssertTrue(h.context.hasChanges)
            // The context's reads see the change at once: fetch, count, cursors.
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.destination == \"Lyon\" && $0.cost == 100""#), 5)
            XCTAssertEqual(try names(h.context, "Trip", #""$0.destination == \"Lyon\"""#), ["t0", "t2", "t4", "t6", "t8"])
            let cursor = try h.context.cursor(FetchDescriptor.decode(JSONValue.of(#"{"entity": "Trip", "predicate": "$0.cost == 100"}"#), schema: h.context.schema))
            XCTAssertEqual(try parse(cursor.next(100).bytes).array?.count, 5)
            cursor.close()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.destination == \"Paris\"""#), 0)
            // Not saved yet: a read without pending changes, and another context, see none of it.
            var d = try FetchDescriptor.decode(JSONValue.of(#"{"entity": "Trip", "predicate": "$0.destination == \"Lyon\""}"#), schema: h.context.schema)
            d.includePendingChanges = false
            XCTAssertEqual(try h.context.fetchCount(d), 0)
            XCTAssertEqual(try countWhere(h.container.makeContext(), "Trip", #""$0.destination == \"Lyon\"""#), 0)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try names(h.context, "Trip", #""$0.destination == \"Lyon\" && $0.cost == 100""#), ["t0", "t2", "t4", "t6", "t8"])
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.destination == \"Rome\" && $0.cost < 100""#), 5)
            // No predicate: every object.
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"set": {"cost": 7}}"#), 10)
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": null, "set": {"cost": 8}}"#), 10)
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": false, "set": {"cost": 9}}"#), 0)
            try h.context.save()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.cost == 8""#), 10)
        }
    }

    func testRollbackUndoesSetWrites() {
        forEachSetup(SetWriteTests.schema) { h in
            try seed(h.context)
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"set": {"destination": null}}"#), 10)
            XCTAssertEqual(try h.context.delete(entity: "Trip", predicate: #""$0.cost >= 5""#), 5)
            XCTAssertEqual(try count(h.context, "Trip"), 5)
            h.context.rollback()
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try count(h.context, "Trip"), 10)
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.destination == nil""#), 0)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.destination != nil""#), 10)
        }
    }

    func testMatchedSetIncludesPendingChanges() {
        forEachSetup(SetWriteTests.schema) { h in
            let ids = try seed(h.context)
            let fresh = try h.context.insert(entity: "Trip", json: #"{"name": "new", "destination": "Paris"}"#)
            try h.context.update(id: ids[1].description, patch: #"{"destination": "Paris"}"#)  // now matches
            try h.context.update(id: ids[0].description, patch: #"{"destination": "Oslo"}"#)   // no longer matches
            try h.context.delete(id: ids[2].description)                                       // deleted: not matched
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": "$0.destination == \"Paris\"", "set": {"cost": 50}}"#), 5)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try names(h.context, "Trip", #""$0.cost == 50""#), ["new", "t1", "t4", "t6", "t8"])
            // Deleting: a pending insert that matches goes too, and is counted.
            _ = try h.context.insert(entity: "Trip", json: #"{"name": "newer", "destination": "Rome"}"#)
            XCTAssertEqual(try h.context.delete(entity: "Trip", predicate: #""$0.destination == \"Rome\"""#), 5)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.destination == \"Rome\"""#), 0)
            XCTAssertEqual(try count(h.context, "Trip"), 6, "10 + new - t2 - the four saved trips to Rome")
            _ = fresh
        }
    }

    func testInheritanceAndSlotsOfSubentities() {
        forEachSetup(SetWriteTests.schema) { h in
            let ids = try seed(h.context)
            let guide = try h.context.insert(entity: "Guide", json: #"{"name": "Ann"}"#)
            // includeSubentities false: Trip objects only.
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"includeSubentities": false, "set": {"cost": 1}}"#), 5)
            // A subentity's own attribute.
            XCTAssertEqual(try h.context.update(entity: "BusinessTrip", request: #"{"predicate": "$0.cost >= 7", "set": {"perdiem": 2.5}}"#), 3)
            // A link held in the row, whose slot is not the same in the subentity: every trip gets the guide.
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"set": {"guide": "\#(guide)", "address": {"city": "Nice"}}}"#), 10)
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": {"is": "BusinessTrip"}, "set": {"address": null}}"#), 5)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.cost == 1""#), 5)
            XCTAssertEqual(try countWhere(h.context, "BusinessTrip", #""$0.perdiem == 2.5""#), 3)
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.guide != nil""#), 10)
            XCTAssertEqual(try get(h.context, guide)["trips"]?.array?.count, 10, "the inverse sees every link")
            XCTAssertEqual(try get(h.context, ids[7])["guide"], .string(guide.description))
            XCTAssertEqual(try get(h.context, ids[7])["address"], .null)
            XCTAssertEqual(try get(h.context, ids[2])["address"], JSONValue.of(#"{"city": "Nice", "country": "FR"}"#))
            XCTAssertEqual(try get(h.context, ids[2])["cost"]?.numberText, "1")
            XCTAssertEqual(try get(h.context, ids[6])["cost"]?.numberText, "6")
        }
    }

    func testUniqueViolationIsReportedAtSaveAndOneObjectMaySetAKey() {
        forEachSetup(SetWriteTests.schema) { h in
            try seed(h.context)
            // One object may take a unique value.
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": "$0.name == \"t3\"", "set": {"code": "X"}}"#), 1)
            try h.context.save()
            // Two objects cannot: the save reports it, as for strata_update, and keeps the change.
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": "$0.cost < 2", "set": {"code": "Y"}}"#), 2)
            let e = assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(e?.attribute, "code")
            XCTAssertTrue(h.context.hasChanges)
            h.context.rollback()
            // Null values hold no key: any number of objects may take them.
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"set": {"code": null}}"#), 10)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.code == nil""#), 10)
        }
    }

    func testBadRequestsLeaveTheContextUnchanged() {
        forEachSetup(SetWriteTests.schema, [.inMemory]) { h in
            let ids = try seed(h.context)
            try h.context.update(id: ids[0].description, patch: #"{"cost": 42}"#)
            func refused(_ code: StrataError.Code, _ request: String, entity: String = "Trip", path: String?, file: StaticString = #filePath, line: UInt = #line) {
                let e = assertError(code, file: file, line: line) { try h.context.update(entity: entity, request: request) }
                if let path { XCTAssertEqual(e?.path, path, "for \(request): \(e?.message ?? "")", file: file, line: line) }
            }
            refused(.invalid, #"{"set": {"cost": 1}}"#, entity: "Nope", path: nil)
            refused(.invalid, #"{"set": {"nope": 1}}"#, path: "/set/nope")
            refused(.invalid, #"{"set": {"_id": "Trip/1"}}"#, path: "/set/_id")
            refused(.validation, #"{"set": {"cost": "x"}}"#, path: "/set/cost")
            refused(.validation, #"{"set": {"name": null}}"#, path: "/set/name")
            refused(.validation, #"{"set": {"address": {"country": "IT"}}}"#, path: "/set/address")
            refused(.invalid, #"{"set": {"items": []}}"#, path: "/set/items")
            refused(.invalid, #"{"set": {}}"#, path: "/set")
            refused(.invalid, #"{"set": 3}"#, path: "/set")
            refused(.invalid, #"{"predicate": true}"#, path: "/set")
            refused(.invalid, #"{"set": {"cost": 1}, "sortBy": []}"#, path: "/sortBy")
            refused(.invalid, #"{"set": {"cost": 1}, "set": {"cost": 2}}"#, path: "/set")
            refused(.invalid, #"{"predicate": {"==": [{"key": "nope"}, 1]}, "set": {"cost": 1}}"#, path: "/predicate/==/0/key")
            refused(.invalid, #"{"predicate": "$0.cost == x", "set": {"cost": 1}}"#, path: nil)
            refused(.invalid, #"[1]"#, path: "")
            refused(.invalid, #"{"set": {"cost": 1}"#, path: nil)
            refused(.notFound, #"{"set": {"guide": "Guide/99"}}"#, path: "/set/guide")
            // A nested insert made before a later failure is undone with it.
            refused(.validation, #"{"set": {"guide": {"name": "G"}, "cost": "x"}}"#, path: "/set/cost")
            XCTAssertEqual(try count(h.context, "Guide"), 0)
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.cost == 42""#), 1, "the pending update before stays, alone")
            try h.context.save()
            XCTAssertFalse(h.context.hasChanges)
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.cost == 42""#), 1)
        }
    }

    // MARK: Deletes

    func testDeleteWhereRunsDeleteRules() {
        forEachSetup(SetWriteTests.schema) { h in
            let guide = try h.context.insert(entity: "Guide", json: #"{"name": "Ann"}"#)
            let sponsor = try h.context.insert(entity: "Sponsor", json: #"{"name": "Acme"}"#)
            for i in 0..<6 {
                _ = try h.context.insert(entity: "Trip", json: #"{"name": "t\#(i)", "cost": \#(i), "guide": "\#(guide)", "items": [{"title": "a\#(i)"}, {"title": "b\#(i)"}]}"#)
            }
            let kept = try h.context.insert(entity: "Trip", json: #"{"name": "sponsored", "cost": 99, "sponsor": "\#(sponsor)"}"#)
            try h.context.save()
            // Cascade: the items of the deleted trips go too (not counted).
            XCTAssertEqual(try h.context.delete(entity: "Trip", predicate: #""$0.cost < 4""#), 4)
            XCTAssertEqual(try count(h.context, "Item"), 4, "the overlay shows the cascade at once")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Trip"), 3)
            XCTAssertEqual(try count(h.context, "Item"), 4)
            // Nullify: deleting the guide clears the trips' links.
            XCTAssertEqual(try h.context.delete(entity: "Guide", predicate: nil as String?), 1)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.guide == nil""#), 3)
            // Deny: the sponsor still holds a trip; the save refuses, and succeeds once the trip goes too.
            XCTAssertEqual(try h.context.delete(entity: "Sponsor", predicate: nil as String?), 1)
            assertError(.constraint) { try h.context.save() }
            XCTAssertEqual(try h.context.delete(entity: "Trip", predicate: #""$0.sponsor != nil""#), 1)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try count(h.context, "Sponsor"), 0)
            XCTAssertNil(try identifiers(h.context, "Trip").first { $0 == kept.description })
        }
    }

    // MARK: History and statements

    func testHistoryRecordsEachObject() {
        forEachSetup(SetWriteTests.schema, StoreSetup.allCases.filter { $0 != .inMemory }) { h in
            let ids = try seed(h.context)
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": "$0.cost < 3", "set": {"name": "same", "address": {"city": "Nice"}}}"#), 3)
            try h.context.save()
            XCTAssertEqual(try h.context.delete(entity: "Trip", predicate: #""$0.cost >= 8""#), 2)
            try h.context.save()
            let all = try XCTUnwrap(JSONValue.parse(h.context.fetchHistory("{}")).array)
            XCTAssertEqual(all.count, 3)
            let updates = try XCTUnwrap(all[1]["changes"]?.array)
            XCTAssertEqual(updates.count, 3)
            XCTAssertEqual(Set(updates.compactMap { $0["id"]?.stringValue }), Set(ids[0..<3].map(\.description)))
            for c in updates {
                XCTAssertEqual(c["kind"]?.stringValue, "update")
                XCTAssertEqual(Set(c["attributes"]?.array?.compactMap(\.stringValue) ?? []), ["name", "address"])
                XCTAssertEqual(c["new"]?["name"], .string("same"), "historyValues: the new value")
                XCTAssertNotNil(c["old"]?["name"]?.stringValue)
            }
            let deletes = try XCTUnwrap(all[2]["changes"]?.array)
            XCTAssertEqual(Set(deletes.map { "\($0["kind"]?.stringValue ?? "") \($0["id"]?.stringValue ?? "")" }),
                           ["delete \(ids[8])", "delete \(ids[9])"])
        }
    }

    func testOneStatementPerTableAtSave() {
        forEachSetup(SetWriteTests.schema) { h in
            for i in 0..<200 {
                _ = try h.context.insert(entity: "Trip", json: #"{\#(i % 3 == 0 ? #""_entity": "BusinessTrip", "# : "")"name": "t\#(i)", "cost": \#(i % 10), "items": [{"title": "i\#(i)"}]}"#)
            }
            try h.context.save()
            var statements: [String] = []
            let lock = NSLock()
            h.container.store.trace.set { sql in lock.lock(); statements.append(sql); lock.unlock() }
            defer { h.container.store.trace.set(nil) }
            XCTAssertEqual(try h.context.update(entity: "Trip", request: #"{"predicate": "$0.cost == 3", "set": {"destination": "Lyon", "cost": 30}}"#), 20)
            statements = []
            try h.context.save()
            let updates = statements.filter { $0.uppercased().hasPrefix("UPDATE") }
            XCTAssertEqual(updates.count, 1, "one UPDATE for 20 trips of two entities: \(updates)")
            XCTAssertEqual(try countWhere(h.context, "Trip", #""$0.cost == 30 && $0.destination == \"Lyon\"""#), 20)

            XCTAssertEqual(try h.context.delete(entity: "Trip", predicate: #""$0.cost == 30""#), 20)
            statements = []
            try h.context.save()
            let deletes = statements.filter { $0.uppercased().hasPrefix("DELETE") && ($0.contains(#""Trip""#) || $0.contains(#""Item""#)) }
            XCTAssertEqual(deletes.count, 2, "one DELETE of trips, one of their cascaded items: \(deletes)")
            XCTAssertEqual(try count(h.context, "Trip"), 180)
            XCTAssertEqual(try count(h.context, "Item"), 180)
        }
    }
}

extension ModelContext {
    /// `strata_delete_where` from text (nil: every object).
    func delete(entity: String, predicate: String?) throws -> Int {
        guard var p = predicate else { return try delete(entity: entity, predicateJSON: nil) }
        return try p.withUTF8 { try delete(entity: entity, predicateJSON: $0) }
    }
}
