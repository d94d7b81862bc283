import Foundation
import XCTest
@testable import Strata

/// "Errors never contain the values the caller bound": a refused value — an enum
/// non-member in a predicate (literal, binding, or a prepared fetch's binding at
/// run time), a bound identifier, an insert's or update's control keys — is
/// described by the attribute, the JSON path and what is allowed, never echoed.
final class BoundValueErrorTests: StoreTestCase {
    private static let secret = "S3CR3T-4111-1111"

    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// The error `body` throws, whose JSON (message, path, every field) must not hold the secret.
    @discardableResult
    private func refusal(_ what: String, file: StaticString = #filePath, line: UInt = #line,
                         _ body: () throws -> Void) -> StrataError? {
        do {
            try body()
            XCTFail("\(what): no error", file: file, line: line)
            return nil
        } catch let e as StrataError {
            XCTAssertFalse(e.json.contains(Self.secret), "\(what): the error holds the bound value: \(e.json)", file: file, line: line)
            return e
        } catch {
            XCTFail("\(what): \(error)", file: file, line: line)
            return nil
        }
    }

    func testEnumNonMemberIsNotEchoed() throws {
        let container = try openInMemory(Fixtures.sampleTrips)
        let c = try container.makeContext()
        let s = JSONValue.string(Self.secret).text
        let forms = [
            ("binding", #"{"entity": "PersonalTrip", "predicate": "$0.reason == r", "bindings": {"r": \#(s)}}"#),
            ("literal", #"{"entity": "PersonalTrip", "predicate": {"==": [{"key": "reason"}, \#(s)]}}"#),
            ("in", #"{"entity": "PersonalTrip", "predicate": "rs.contains($0.reason)", "bindings": {"rs": ["family", \#(s)]}}"#),
        ]
        for (name, json) in forms {
            let e = refusal(name) { _ = try c.fetch(try Query.descriptor(json, c.schema)) }
            XCTAssertEqual(e?.code, .invalid, name)
            XCTAssertTrue(e?.message.contains("PersonalTrip.reason") == true, "\(name): names the attribute: \(e?.message ?? "")")
            XCTAssertTrue(e?.message.contains("family") == true, "\(name): lists the members: \(e?.message ?? "")")
        }
        // A prepared fetch checks its bindings when it runs.
        let p = try bytes(#"{"entity": "PersonalTrip", "predicate": "$0.reason == r", "bindings": {"r": "family"}}"#)
            .withUnsafeBufferPointer { try c.prepare($0) }
        let e = refusal("prepared") {
            _ = try bytes(#"{"r": \#(s)}"#).withUnsafeBufferPointer { try p.fetch(bindings: $0) }
        }
        XCTAssertTrue(e?.message.contains("PersonalTrip.reason") == true, e?.message ?? "")
    }

    func testBoundIdentifierIsNotEchoed() throws {
        let container = try openInMemory(Fixtures.sampleTrips)
        let c = try container.makeContext()
        let s = JSONValue.string(Self.secret + "/1").text
        refusal("identifier binding") {
            _ = try c.fetch(try Query.descriptor(#"{"entity": "BucketListItem", "predicate": "$0.trip == t", "bindings": {"t": \#(s)}}"#, c.schema))
        }
    }

    func testInsertAndUpdateControlValuesAreNotEchoed() throws {
        let container = try openInMemory(Fixtures.sampleTrips)
        let c = try container.makeContext()
        let s = JSONValue.string(Self.secret).text
        let trip = #""name": "T", "startDate": "2026-01-01", "endDate": "2026-01-02""#
        refusal("_onConflict") { _ = try c.insert(entity: "Trip", json: #"{\#(trip), "_onConflict": \#(s)}"#) }
        refusal("_entity") { _ = try c.insert(entity: "Trip", json: #"{\#(trip), "_entity": \#(s)}"#) }
        refusal("_id") { _ = try c.insert(entity: "Trip", json: #"{\#(trip), "_id": \#(s)}"#) }
        refusal("link") {
            _ = try c.insert(entity: "BucketListItem", json: #"{"title": "x", "trip": \#(s)}"#)
        }
        refusal("link to an unknown entity") {
            _ = try c.insert(entity: "BucketListItem", json: #"{"title": "x", "trip": "\#(Self.secret)/1"}"#)
        }
        let id = try c.insert(entity: "Trip", json: "{\(trip)}")
        refusal("update _id") { try c.update(id: id.description, patch: #"{"_id": \#(s)}"#) }
        refusal("update _entity") { try c.update(id: id.description, patch: #"{"_entity": \#(s)}"#) }
        refusal("update a string of a date") { try c.update(id: id.description, patch: #"{"startDate": \#(s)}"#) }
        refusal("update an enum") {
            let p = try c.insert(entity: "PersonalTrip", json: "{\(trip)}")
            try c.update(id: p.description, patch: #"{"reason": \#(s)}"#)
        }
    }
}
