import XCTest
@testable import Strata

/// History keeps a composite whole: its tombstone and its old and new values are the object
/// of its fields (null when it is nil), and a change of any field is a change of it.
final class CompositeHistoryTests: HistoryTestCase {
    static let schema = #"""
        {"version": "1", "entities": [{"name": "Trip", "attributes": [
           {"name": "name", "type": "string"},
           {"name": "address", "type": "composite", "optional": true, "preserveValueOnDeletion": true, "historyValues": true, "fields": [
              {"name": "city", "type": "string"}, {"name": "since", "type": "date", "optional": true}]},
           {"name": "budget", "type": "composite", "fields": [{"name": "amount", "type": "double", "default": 0}]}]}]}
        """#

    func testTombstonesAndValuesHoldTheWholeComposite() throws {
        forEachHistorySetup {
            let c = try openFile(Self.schema, path: storePath("composite"))
            let ctx = try c.makeContext()
            let trip = try ctx.insert(entity: "Trip", json: #"{"name": "Paris", "address": {"city": "Paris", "since": 0}}"#)
            try ctx.save()
            try ctx.update(id: trip.description, patch: #"{"address": {"city": "Lyon"}}"#)
            try ctx.save()
            try ctx.update(id: trip.description, patch: #"{"address": null, "budget": {"amount": 5}}"#)
            try ctx.save()
            // A composite that history does not keep the values of: its name only.
            try ctx.update(id: trip.description, patch: #"{"budget": {"amount": 6}}"#)
            try ctx.save()
            try ctx.update(id: trip.description, patch: #"{"address": {"city": "Nice"}}"#)
            try ctx.save()
            try ctx.delete(id: trip.description)
            try ctx.save()
            let all = try history(ctx)
            XCTAssertEqual(all.count, 6)
            XCTAssertEqual(lines(all[1]), [#"update Trip/1 [address] old={"address":{"city":"Paris","since":"1970-01-01T00:00:00Z"}} new={"address":{"city":"Lyon","since":null}}"#])
            XCTAssertEqual(lines(all[2]), [#"update Trip/1 [address,budget] old={"address":{"city":"Lyon","since":null}} new={"address":null}"#])
            XCTAssertEqual(lines(all[3]), ["update Trip/1 [budget]"])
            XCTAssertEqual(lines(all[4]), [#"update Trip/1 [address] old={"address":null} new={"address":{"city":"Nice","since":null}}"#])
            XCTAssertEqual(lines(all[5]), [#"delete Trip/1 tombstone={"address":{"city":"Nice","since":null}}"#])
        }
    }

    func testAFieldCannotKeepHistoryAlone() {
        for option in ["preserveValueOnDeletion", "historyValues"] {
            let json = #"{"version": "1", "entities": [{"name": "A", "attributes": [{"name": "c", "type": "composite", "fields": [{"name": "x", "type": "string", ""# + option + #"": true}]}]}]}"#
            do {
                _ = try SchemaDecoder.decode(json)
                XCTFail("\(option) on a field was accepted")
            } catch let e as StrataError {
                XCTAssertEqual(e.path, "/entities/0/attributes/0/fields/0/\(option)")
                XCTAssertTrue(e.message.contains("give it to the composite 'c'"), e.message)
            } catch { XCTFail("\(error)") }
        }
    }
}
