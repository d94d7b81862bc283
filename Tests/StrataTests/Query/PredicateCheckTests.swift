import XCTest
@testable import Strata

/// Checking (docs/predicates.md §3): bad predicates and descriptors are
/// `.invalid` before any SQL runs, with a message naming the problem and the
/// JSON path or the text position. Constant parts fold away.
final class PredicateCheckTests: StoreTestCase {
    struct Bad {
        let descriptor: String
        /// Fragments the message must contain.
        let message: [String]
        /// The error's JSON path.
        let path: String
        let line: UInt
        init(_ descriptor: String, _ message: [String], path: String, line: UInt = #line) {
            self.descriptor = descriptor
            self.message = message
            self.path = path
            self.line = line
        }
    }

    /// `{"or": [{"and": [{"or": [… a! …, x]}, x]}, x]}` of `depth` levels, each first part unwrapping.
    static func alternatingUnwraps(_ depth: Int) -> String {
        var s = #"{"==": [{"key": "livingAccommodation!.placeName"}, "x"]}"#
        for i in 0..<depth {
            s = #"{"\#(i % 2 == 0 ? "and" : "or")": [\#(s), {"!=": [{"key": "livingAccommodation!.address"}, "y\#(i)"]}, {"==": [{"key": "rating!"}, \#(i)]}]}"#
        }
        return s
    }

    /// A descriptor of Trip with a predicate and optional bindings.
    static func p(_ predicate: String, bindings: String = "{}") -> String {
        #"{"entity": "Trip", "predicate": \#(predicate), "bindings": \#(bindings)}"#
    }

    static let table: [Bad] = [
        // Key paths.
        Bad(p(#"{"and": [true, {"==": [{"key": "nope"}, 1]}]}"#), ["unknown key path 'nope'", "'Trip' has no attribute or relationship 'nope'"],
            path: "/predicate/and/1/==/0/key"),
        Bad(p(#"{"==": [{"key": "livingAccommodation.nope"}, "x"]}"#), ["unknown key path 'livingAccommodation.nope'", "'LivingAccommodation'"],
            path: "/predicate/==/0/key"),
        Bad(p(#"{"==": [{"key": "bucketList.title"}, "x"]}"#), ["goes through to-many 'bucketList'"], path: "/predicate/==/0/key"),
        Bad(p(#"{"==": [{"key": "name.count"}, 1]}"#), ["'name' in key path 'name.count' is an attribute"], path: "/predicate/==/0/key"),
        Bad(p(#"{"==": [{"key": "tripViews"}, 1]}"#), ["transient attribute 'Trip.tripViews'"], path: "/predicate/==/0/key"),
        Bad(p(#"{"==": [{"key": "name", "scope": 1}, "x"]}"#), ["no object in scope 1"], path: "/predicate/==/0/key"),
        // A subentity's attribute is nil for the other trips; a cast must reach a subentity.
        Bad(p(#"{"==": [{"key": "reason"}, "holiday"]}"#), ["not a value of enum attribute 'PersonalTrip.reason'", "family"], path: "/predicate/==/1"),
        Bad(p(#"{"==": [{"key": "as:Tag.name"}, "x"]}"#), ["'Trip' objects can never be 'Tag'"], path: "/predicate/==/0/key"),
        Bad(p(#"{"==": [{"key": "as:Nope.name"}, "x"]}"#), ["unknown entity 'Nope' in 'as?'"], path: "/predicate/==/0/key"),
        Bad(p(#"{"==": [{"key": "livingAccommodation.reason"}, "x"]}"#), ["'LivingAccommodation' has no attribute or relationship 'reason'"], path: "/predicate/==/0/key"),
        // Type mismatches.
        Bad(p(#"{"==": [{"key": "name"}, 5]}"#), ["type mismatch", "expected string", "number"], path: "/predicate/==/1"),
        Bad(p(#"{">": [{"key": "startDate"}, "tomorrow"]}"#), ["expected a date value", "ISO-8601"], path: "/predicate/>/1"),
        Bad(p(#"{"==": [{"key": "flag"}, 1]}"#), ["type mismatch", "expected bool"], path: "/predicate/==/1"),
        Bad(p(#"{"==": [{"key": "rating"}, "3"]}"#), ["type mismatch", "expected int"], path: "/predicate/==/1"),
        Bad(p(#"{"==": [{"key": "name"}, {"key": "rating"}]}"#), ["type mismatch: cannot compare string with int"], path: "/predicate"),
        Bad(p(#"{"==": [{"key": "code"}, "not-a-uuid"]}"#), ["expected a uuid value"], path: "/predicate/==/1"),
        Bad(p(#"{"==": [{"key": "code"}, {"date": "2026-01-01T00:00:00Z"}]}"#), ["expected uuid, found a date literal"], path: "/predicate/==/1"),
        Bad(p(#"{"==": [{"key": "livingAccommodation"}, "Trip/1"]}"#), ["the value is not an identifier of a LivingAccommodation"], path: "/predicate/==/1"),
        Bad(p(#"{"in": [{"key": "name"}, ["a", 1]]}"#), ["type mismatch", "expected string"], path: "/predicate/in/1"),
        Bad(p(#"{"value": {"key": "rating"}}"#), ["expected a condition, found a value of type int"], path: "/predicate/value/key"),
        Bad(p(#"{"==": [{"cond": [{"key": "flag"}, {"key": "name"}, {"key": "rating"}]}, "x"]}"#), ["type mismatch: the two branches are string and int"],
            path: "/predicate/==/0"),
        // Operators not valid for a type.
        Bad(p(#"{"<": [{"key": "flag"}, true]}"#), ["operator < is not valid for bool values"], path: "/predicate"),
        Bad(p(#"{">=": [{"key": "code"}, "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"]}"#), ["operator >= is not valid for uuid values"], path: "/predicate"),
        Bad(p(#"{"<": [{"key": "photo"}, "AAEC"]}"#), ["operator < is not valid for data values"], path: "/predicate"),
        Bad(p(#"{"==": [{"key": "notes"}, "x"]}"#), ["json attributes cannot be compared"], path: "/predicate"),
        Bad(p(#"{"contains": [{"key": "notes"}, "x"]}"#), ["'contains' applies to strings, not json"], path: "/predicate/contains/0/key"),
        Bad(p(#"{"in": [{"key": "notes"}, ["x"]]}"#), ["'in' is not valid for json values"], path: "/predicate"),
        Bad(p(#"{"isEmpty": {"key": "notes"}}"#), ["'isEmpty' applies to strings and to-many relationships, not json"], path: "/predicate"),
        Bad(p(#"{"contains": [{"key": "rating"}, "1"]}"#), ["'contains' applies to strings, not int"], path: "/predicate/contains/0/key"),
        Bad(p(#"{"hasPrefix": ["x", {"key": "startDate"}]}"#), ["'hasPrefix' applies to strings, not date"], path: "/predicate/hasPrefix/1/key"),
        Bad(p(#"{"isEmpty": {"key": "rating"}}"#), ["'isEmpty' applies to strings and to-many relationships, not int"], path: "/predicate"),
        Bad(p(#"{"==": [{"count": {"key": "rating"}}, 1]}"#), ["'count' applies to to-many relationships, strings and arrays, not int"],
            path: "/predicate/==/0"),
        Bad(p(#"{"<": [{"key": "rating"}, null]}"#), ["operator < is not valid with nil"], path: "/predicate"),
        Bad(p(#"{"==": [{"key": "bucketList"}, null]}"#), ["a to-many relationship is never nil; use isEmpty"], path: "/predicate"),
        Bad(p(#"{"any": [{"key": "livingAccommodation"}, true]}"#), ["'livingAccommodation' is not a to-many relationship"], path: "/predicate/any/0/key"),
        Bad(p(#"{"==": [{"key": "rating"}, 1], "options": "c"}"#), ["string options 'c'/'d' apply to string comparisons, not int"], path: "/predicate"),
        Bad(p(#"{"==": [{"key": "name"}, "x"], "options": "ci"}"#), ["'options' must be a string of the letters c", "and d"], path: "/predicate/options"),
        Bad(p(#"{"not": true, "options": "c"}"#), ["'options' applies to comparisons and string operators only"], path: "/predicate/options"),
        // Sums and averages take ints and doubles, over a to-many key path (or a filter of one).
        Bad(p(#"{"==": [{"@sum": [{"key": "tags"}, {"key": "trips"}]}, 1]}"#), ["'@sum' (text: reduce(0, +)) of [Trip] values is not supported"],
            path: "/predicate/==/0/@sum/1/key"),
        Bad(p(#"{">": [{"@sum": [{"key": "bucketList"}, {"key": "trip.startDate"}]}, 1]}"#), ["'@sum' (text: reduce(0, +)) of date values is not supported", "ints and doubles"],
            path: "/predicate/>/0/@sum/1/key"),
        Bad(p(#"{">": [{"@avg": [{"key": "bucketList"}, {"key": "title"}]}, 1]}"#), ["'@avg' (text: average()) of string values is not supported"],
            path: "/predicate/>/0/@avg/1/key"),
        Bad(p(#"{">": [{"@sum": [{"key": "bucketList"}, {"key": "trip.budget"}]}, 1]}"#), ["'@sum' (text: reduce(0, +)) of decimal values is not supported", "no arithmetic"],
            path: "/predicate/>/0/@sum/1/key"),
        Bad(p(#"{"value": {"@avg": [{"key": "bucketList"}, {"key": "isInPlan"}]}}"#), ["'@avg' (text: average()) of bool values is not supported"],
            path: "/predicate/value/@avg/1/key"),
        Bad(p(#"{"==": [{"@sum": [{"key": "bucketList"}, null]}, 0]}"#), ["'@sum' (text: reduce(0, +)) of nil values is not supported"],
            path: "/predicate/==/0/@sum/1"),
        Bad(p(#"{"==": [{"@sum": [{"key": "livingAccommodation"}, {"key": "placeName"}]}, 0]}"#),
            ["'livingAccommodation' is not a to-many relationship: 'map { }.reduce(0, +)' applies to to-many relationships"], path: "/predicate/==/0/@sum/0/key"),
        Bad(p(#"{"==": [{"@avg": [{"key": "bucketList"}]}, 0]}"#), ["'@avg' takes an array of 2 operands"], path: "/predicate/==/0/@avg"),
        Bad(p(#"{"==": [{"@sum": [{"key": "bucketList"}, {"key": "priority"}]}, "x"]}"#), ["type mismatch", "expected int"], path: "/predicate/==/1"),
        // Variables and entities.
        Bad(p(#"{"==": [{"key": "name"}, {"var": "serchText"}]}"#, bindings: #"{"searchText": "", "now": 0}"#),
            ["unknown variable 'serchText'", "bindings: now, searchText"], path: "/predicate/==/1/var"),
        Bad(p(#"{"in": [{"key": "name"}, {"var": "names"}]}"#, bindings: #"{"names": "x"}"#), ["variable 'names' must be bound to an array"],
            path: "/predicate/in/1/var"),
        Bad(p(#"{"is": "Nope"}"#), ["unknown entity 'Nope' in 'is'"], path: "/predicate"),
        Bad(p(#"{"is": "BucketListItem"}"#), ["'Trip' objects can never be 'BucketListItem'"], path: "/predicate"),
        Bad(#"{"entity": "PersonalTrip", "predicate": {"is": "BusinessTrip"}}"#, ["'PersonalTrip' objects can never be 'BusinessTrip'"], path: "/predicate"),
        // Enum attributes: a value outside the enum is a misspelling, not a filter that matches nothing.
        Bad(#"{"entity": "PersonalTrip", "predicate": {"==": [{"key": "reason"}, "reunoin"]}}"#,
            ["the value compared is not a value of enum attribute 'PersonalTrip.reason'", #"allowed: "family", "reunion", "wellness", "unknown""#],
            path: "/predicate/==/1"),
        Bad(#"{"entity": "PersonalTrip", "predicate": {"and": [true, {"!=": ["Family", {"key": "reason"}]}]}}"#,
            ["the value compared is not a value of enum attribute 'PersonalTrip.reason'"], path: "/predicate/and/1/!=/0"),
        Bad(#"{"entity": "PersonalTrip", "predicate": {"in": [{"key": "reason"}, ["family", null, "wellnes"]]}}"#,
            ["the value compared is not a value of enum attribute"], path: "/predicate/in/1"),
        Bad(#"{"entity": "PersonalTrip", "predicate": {"==": [{"key": "reason"}, {"var": "r"}]}, "bindings": {"r": "x"}}"#,
            ["the value bound to 'r' is not a value of enum attribute"], path: "/predicate/==/1/var"),
        // Malformed trees.
        Bad(p(#"{"like": [{"key": "name"}, "x"]}"#), ["unknown predicate operator 'like'"], path: "/predicate/like"),
        Bad(p(#"{"==": [{"key": "name"}]}"#), ["'==' takes an array of 2 operands"], path: "/predicate/=="),
        Bad(p(#"{"between": [{"key": "rating"}, 1]}"#), ["'between' takes an array of 3 operands"], path: "/predicate/between"),
        Bad(p(#"{"and": {"key": "flag"}}"#), ["'and' takes an array of predicates"], path: "/predicate/and"),
        Bad(p(#"{"==": [{"key": "name"}, "x"], "!=": [1, 2]}"#), ["exactly one operator key"], path: "/predicate/!="),
        Bad(p(#"{"==": [{"nope": 1}, "x"]}"#), ["unknown expression 'nope'"], path: "/predicate/==/0/nope"),
        Bad(p(#"{"==": [{"key": "name..x"}, "x"]}"#), ["malformed key path 'name..x'"], path: "/predicate/==/0/key"),
        Bad(p("42"), ["expected a predicate"], path: "/predicate"),
        // Descriptor keys.
        Bad(#"{"entity": "Trip", "sortby": []}"#, ["sortby"], path: "/sortby"),
        Bad(#"{"entity": "Nope"}"#, ["unknown entity 'Nope'"], path: "/entity"),
        Bad(#"{"predicate": true}"#, ["missing 'entity'"], path: "/entity"),
        Bad(#"{"entity": "Trip", "sortBy": [{"key": "nope"}]}"#, ["unknown key path 'nope'"], path: "/sortBy/0/key"),
        // Composition: the variable must hold a predicate of the object's entity, and not evaluate itself.
        Bad(p(#""f.evaluate($0)""#), ["unknown variable 'f'"], path: "/predicate"),
        Bad(p(#""f.evaluate($0)""#, bindings: #"{"f": "x"}"#), ["variable 'f' must be bound to {\"predicate\": …}"], path: "/predicate"),
        Bad(p(#""f.evaluate($0)""#, bindings: #"{"f": {"predicate": "$0.nope == 1"}}"#), ["in the predicate bound to 'f': unknown key path 'nope'"], path: "/bindings/f/predicate"),
        Bad(p(#"{"evaluate": "f"}"#, bindings: #"{"f": {"predicate": {"evaluate": "g"}}, "g": {"predicate": "f.evaluate($0)"}}"#),
            ["in the predicate bound to 'g': predicate 'f' evaluates itself (through f, g)"], path: "/bindings/g/predicate"),
        // Sort keys take no force unwrap.
        Bad(#"{"entity": "Trip", "sortBy": [{"key": "livingAccommodation!.placeName"}]}"#, ["'Trip' has no attribute or relationship 'livingAccommodation!'"], path: "/sortBy/0/key"),
        // Force unwraps under many alternating && and ||: the conditions they lower to would be too large.
        Bad(p(PredicateCheckTests.alternatingUnwraps(14)), ["predicate too complex", "force unwraps"], path: "/predicate/or/0/and/0/or/0/and/0/or/0/and/0/or/0"),
        Bad(#"{"entity": "Trip", "sortBy": [{"key": "name"}, {"key": "bucketList"}]}"#, ["cannot sort by 'bucketList'", "not an attribute"], path: "/sortBy/1/key"),
        Bad(#"{"entity": "Trip", "sortBy": [{"key": "notes"}]}"#, ["cannot sort by json attribute 'notes'"], path: "/sortBy/0/key"),
        Bad(#"{"entity": "Trip", "sortBy": [{"key": "name", "order": "descending"}]}"#, ["'order' must be \"forward\" or \"reverse\""], path: "/sortBy/0/order"),
        Bad(#"{"entity": "Trip", "sortBy": [{"key": "name", "comparator": "natural"}]}"#, ["'comparator' must be"], path: "/sortBy/0/comparator"),
        Bad(#"{"entity": "Trip", "fetchLimit": -1}"#, ["'fetchLimit' must not be negative"], path: "/fetchLimit"),
        Bad(#"{"entity": "Trip", "fetchOffset": -5}"#, ["'fetchOffset' must not be negative"], path: "/fetchOffset"),
        Bad(#"{"entity": "Trip", "propertiesToFetch": ["name", "nope"]}"#, ["'nope' is not a property of 'Trip'"], path: "/propertiesToFetch/1"),
        Bad(#"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["name"]}"#, ["'name' is not a relationship of 'Trip'"],
            path: "/relationshipKeyPathsForPrefetching/0"),
        Bad(#"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["bucketList.title"]}"#,
            ["'title' in 'bucketList.title' is not a relationship of 'BucketListItem'"], path: "/relationshipKeyPathsForPrefetching/0"),
        Bad(#"{"entity": "Trip", "bindings": [1]}"#, ["'bindings' must be an object"], path: "/bindings"),
    ]

    func testBadPredicatesAndDescriptorsNameTheProblemAndPath() throws {
        let schema = try makeSchema(QuerySchemas.trips)
        XCTAssertGreaterThanOrEqual(Self.table.count, 25)
        for bad in Self.table {
            let e = assertError(.invalid, line: bad.line) { try Query.descriptor(bad.descriptor, schema) }
            guard let e else { continue }
            for fragment in bad.message {
                XCTAssertTrue(e.message.contains(fragment), "message '\(e.message)' lacks '\(fragment)'", line: bad.line)
            }
            XCTAssertEqual(e.path, bad.path, "path of: \(e.message)", line: bad.line)
        }
    }

    /// Text predicates: the position (1-based characters) of the problem.
    static let textTable: [(text: String, message: [String], position: Int, line: UInt)] = [
        ("$0.name == ", ["unexpected end of predicate"], 12, #line),
        ("$0.name == 5", ["type mismatch", "expected string"], 12, #line),
        ("$0.nope == 5", ["unknown key path 'nope'"], 1, #line),
        ("$0.rating < true", ["type mismatch", "expected int"], 13, #line),
        ("$0.flag < true", ["operator < is not valid for bool values"], 9, #line),
        ("$0.name.contains(\"a\") && $0.rating.contains(\"1\")", ["'contains' applies to strings, not int"], 26, #line),
        ("$0.bucketList.contains { $0.title == missing }", ["unknown variable 'missing'"], 38, #line),
        ("$0.startDate > \"tomorrow\"", ["expected a date value"], 16, #line),
        ("$0 is Nope", ["unknown entity 'Nope'"], 4, #line),
        ("$0.name == \"x", ["unterminated string"], 12, #line),
        ("$0.name.foo(\"x\")", ["unknown method 'foo'"], 9, #line),
        ("$0.name == \"a\" &", ["position 16"], 16, #line),
        ("$0.bucketList.title == \"x\"", ["goes through to-many"], 1, #line),
        ("($0.name == \"a\"", ["position 16"], 16, #line),
        ("$0.bucketList.map { $0.title }.reduce(0, +) > 1", ["'@sum' (text: reduce(0, +)) of string values is not supported"], 21, #line),
        ("$0.bucketList.map { $0.priority }.reduce(1, +) > 1", ["wrong arguments to 'reduce'", "reduce(0, +)"], 42, #line),
        ("$0.bucketList.map { $0.priority }.reduce(0, *) > 1", ["wrong arguments to 'reduce'"], 45, #line),
        ("$0.bucketList.map { $0.priority }.reduce(0) { $0 + $1 } > 1", ["expected ','"], 43, #line),
        ("$0.bucketList.reduce(0, +) > 1", ["reduce(0, +) applies to the values of map { }"], 15, #line),
        ("$0.bucketList.map { $0.priority }.sum() > 1", ["method 'sum' is not supported", "reduce(0, +)"], 35, #line),
        ("$0.bucketList.map { $0.priority }.mean() > 1", ["method 'mean' is not supported", "average()"], 35, #line),
        ("$0.bucketList.map { $0.trip?.startDate }.average() != nil", ["'@avg' (text: average()) of date values is not supported"], 21, #line),
        ("$0.bucketList.average() == 1", ["average() applies to the values of map { }"], 15, #line),
    ]

    func testBadTextPredicatesNameThePosition() throws {
        let schema = try makeSchema(QuerySchemas.trips)
        for (text, fragments, position, line) in Self.textTable {
            let json = #"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text)}"#
            let e = assertError(.invalid, line: line) { try Query.descriptor(json, schema) }
            guard let e else { continue }
            for fragment in fragments {
                XCTAssertTrue(e.message.contains(fragment), "message '\(e.message)' lacks '\(fragment)'", line: line)
            }
            XCTAssertTrue(e.message.contains("position \(position)"), "message '\(e.message)' lacks position \(position)", line: line)
            XCTAssertEqual(e.path, "/predicate", line: line)
        }
    }

    func testEnumMembersAreCheckedAlsoInText() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        _ = try c.insert(entity: "PersonalTrip", json: #"{"name": "a", "destination": "", "startDate": 0, "endDate": 0, "reason": "family"}"#)
        _ = try c.insert(entity: "PersonalTrip", json: #"{"name": "b", "destination": "", "startDate": 0, "endDate": 0}"#)
        try c.save()
        func d(_ predicate: String) throws -> FetchDescriptor {
            try Query.descriptor(#"{"entity": "PersonalTrip", "predicate": \#(predicate)}"#, c.schema)
        }
        let e = assertError(.invalid) { try d(#""$0.reason == .famly""#) }
        XCTAssertTrue(e?.message.contains("the value compared is not a value of enum attribute 'PersonalTrip.reason'") == true, e?.message ?? "")
        XCTAssertFalse(e?.message.contains("famly") == true, "the value is not repeated: \(e?.message ?? "")")
        XCTAssertTrue(e?.message.contains("position 14") == true, e?.message ?? "")
        XCTAssertEqual(e?.path, "/predicate")
        // Members, nil and ordering stay valid.
        XCTAssertEqual(try Query.identifiers(c, d(#""$0.reason == .family""#)), ["PersonalTrip/1"])
        XCTAssertEqual(try Query.identifiers(c, d(#"{"!=": [{"key": "reason"}, "family"]}"#)), ["PersonalTrip/2"])
        XCTAssertEqual(try Query.identifiers(c, d(#"{"in": [{"key": "reason"}, ["unknown", null]]}"#)), ["PersonalTrip/2"])
        XCTAssertEqual(try Query.identifiers(c, d(#"{"==": [{"key": "reason"}, null]}"#)), [])
        XCTAssertEqual(try Query.identifiers(c, d(#"{"<": [{"key": "reason"}, "g"]}"#)), ["PersonalTrip/1"])
    }

    /// The column of an external-storage attribute holds a file name once the
    /// value moved to a file: its value cannot be compared or sorted (the
    /// answer would change with a save); nil tests are exact and stay valid.
    func testExternalStorageValuesCannotBeComparedOrSorted() throws {
        let schema = #"""
            {"version": "1", "entities": [{"name": "Photo", "attributes": [
              {"name": "caption", "type": "string", "optional": true},
              {"name": "image", "type": "data", "optional": true, "externalStorage": true}]}]}
            """#
        let c = try openFile(schema) { $0.externalStorageThreshold = 4 }.makeContext()
        func d(_ json: String) throws -> FetchDescriptor { try Query.descriptor(json, c.schema) }
        let bad: [(String, String, String)] = [
            (#"{"entity": "Photo", "predicate": {"==": [{"key": "image"}, "AAECAwQF"]}}"#, "/predicate/==/0/key", "'image' uses external storage"),
            (#"{"entity": "Photo", "predicate": {"not": {"!=": ["AAECAwQF", {"key": "image"}]}}}"#, "/predicate/not/!=/1/key", "cannot be compared"),
            (#"{"entity": "Photo", "predicate": {"==": [{"??": [{"key": "image"}, {"data": "AA=="}]}, {"data": "AA=="}]}}"#, "/predicate/==/0/??/0/key", "external storage"),
            (#"{"entity": "Photo", "predicate": {"==": [{"key": "image"}, {"key": "image"}]}}"#, "/predicate/==/0/key", "external storage"),
            (#"{"entity": "Photo", "sortBy": [{"key": "caption"}, {"key": "image"}]}"#, "/sortBy/1/key", "cannot sort by 'image': it uses external storage"),
        ]
        for (json, path, fragment) in bad {
            let e = assertError(.invalid) { try d(json) }
            XCTAssertEqual(e?.path, path, json)
            XCTAssertTrue(e?.message.contains(fragment) == true, e?.message ?? json)
        }
        let text = assertError(.invalid) { try d(#"{"entity": "Photo", "predicate": "$0.caption == nil || $0.image != nil && $0.image == $0.image"}"#) }
        XCTAssertTrue(text?.message.contains("'image' uses external storage") == true, text?.message ?? "")
        XCTAssertTrue(text?.message.contains("position 41") == true, text?.message ?? "")

        // Nil tests give the same answer before and after the value moves to a file.
        _ = try c.insert(entity: "Photo", json: #"{"caption": "big", "image": "AAECAwQFBgcICQ=="}"#)
        _ = try c.insert(entity: "Photo", json: #"{"caption": "none"}"#)
        let isNil = try d(#"{"entity": "Photo", "predicate": {"==": [{"key": "image"}, null]}}"#)
        let notNil = try d(#"{"entity": "Photo", "predicate": "$0.image != nil", "bindings": {}}"#)
        let nilVar = try d(#"{"entity": "Photo", "predicate": {"!=": [{"var": "none"}, {"key": "image"}]}, "bindings": {"none": null}}"#)
        for saved in [false, true] {
            XCTAssertEqual(try Query.identifiers(c, isNil), ["Photo/2"], "saved: \(saved)")
            XCTAssertEqual(try Query.identifiers(c, notNil), ["Photo/1"], "saved: \(saved)")
            XCTAssertEqual(try Query.identifiers(c, nilVar), ["Photo/1"], "saved: \(saved)")
            try c.save()
        }
    }

    // MARK: Constant folding

    static let search = "searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText) || $0.destination.localizedStandardContains(searchText)"

    func testEmptySearchTextFoldsToNoCondition() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        _ = try c.insert(entity: "Trip", json: #"{"name": "Zürich", "destination": "CH", "startDate": 0, "endDate": 0}"#)
        _ = try c.insert(entity: "Trip", json: #"{"name": "Paris", "destination": "FR", "startDate": 0, "endDate": 0}"#)
        try c.save()
        func descriptor(_ searchText: String, _ predicate: String = JSONValue.string(PredicateCheckTests.search).text) throws -> FetchDescriptor {
            try Query.descriptor(#"{"entity": "Trip", "predicate": \#(predicate), "bindings": {"searchText": \#(JSONValue.string(searchText).text)}, "sortBy": [{"key": "startDate"}]}"#, c.schema)
        }
        let empty = try descriptor("")
        let sql = try Query.explain(c, empty).sql
        // No condition of the fetch but Strata's checks of a damaged store (docs/JSON.md, "Damaged stores":
        // the rows' entity names, the sort key's storage class); the relationship-identifier subqueries
        // have their own WHERE.
        let guards = #"(typeof(t."startDate") = 'real' OR typeof(t."startDate") = 'integer' OR t."startDate" IS NULL OR strata_damaged('Trip', 'startDate', t._pk))"#
        // The entity check of the whole hierarchy comes first: a term of no table, evaluated once.
        // On SQLite, the search runs only when the connection has not found the rows clean at the file's version.
        func onlyChecks(_ sql: String) -> Bool {
            let search = #"(SELECT strata_damaged('Trip', '_entity', _pk) FROM "Trip" WHERE "#
            let once = #"(SELECT CASE WHEN strata_entities_known('BusinessTrip PersonalTrip Trip') THEN NULL ELSE strata_entities_checked('BusinessTrip PersonalTrip Trip', "#
            return (sql.contains(#"FROM "Trip" t WHERE ("# + search) && sql.contains(#" LIMIT 1) IS NULL) AND \#(guards) ORDER BY"#))
                || (sql.contains(#"FROM "Trip" t WHERE ("# + once + search) && sql.contains(#" LIMIT 1)) END) IS NULL) AND \#(guards) ORDER BY"#))
        }
        XCTAssertTrue(onlyChecks(sql), sql)
        XCTAssertFalse(sql.contains("strata_lsc"), sql)
        XCTAssertEqual(try Query.identifiers(c, empty).count, 2)
        XCTAssertEqual(try Query.json(c.explain(empty))["parameterCount"]?.numberText, "0")

        let zur = try descriptor("zur")
        let zsql = try Query.explain(c, zur).sql
        XCTAssertTrue(zsql.contains("WHERE") && zsql.contains(#"strata_lsc(t."name""#), zsql)
        XCTAssertFalse(zsql.contains("zur"), "bound, not in the SQL text")
        XCTAssertEqual(try Query.identifiers(c, zur), ["Trip/1"])

        // The JSON form folds the same way; so do and/or/not with constants.
        let json = #"{"cond": [{"isEmpty": {"var": "searchText"}}, true, {"or": [{"localizedStandardContains": [{"key": "name"}, {"var": "searchText"}]}, {"localizedStandardContains": [{"key": "destination"}, {"var": "searchText"}]}]}]}"#
        XCTAssertTrue(onlyChecks(try Query.explain(c, descriptor("", json)).sql))
        let folded = #"{"and": [true, {"not": false}, {"or": [false, {"==": [{"var": "searchText"}, ""]}]}, {"any": [{"key": "bucketList"}, true]}]}"#
        let fsql = try Query.explain(c, descriptor("", folded)).sql
        XCTAssertTrue(fsql.contains("\(guards) AND NOT NOT EXISTS") || fsql.contains("\(guards) AND NOT (NOT EXISTS"), "only the bucket list test is left: \(fsql)")
        XCTAssertFalse(fsql.contains("strata_lsc"))
        let falseSQL = try Query.explain(c, descriptor("x", folded)).sql
        XCTAssertTrue(falseSQL.contains("\(guards) AND 0 ORDER BY"), "a false predicate: \(falseSQL)")
    }

    /// Key paths are checked in every branch, also in those that constant
    /// folding drops: a typo in the search part fails while searchText is empty.
    func testKeyPathsAreCheckedInFoldedBranches() throws {
        let schema = try makeSchema(QuerySchemas.trips)
        let typo = assertError(.invalid) {
            try Query.descriptor(#"{"entity": "Trip", "predicate": "searchText.isEmpty ? true : $0.nmae.localizedStandardContains(searchText)", "bindings": {"searchText": ""}}"#, schema)
        }
        XCTAssertTrue(typo?.message.contains("unknown key path 'nmae'") == true, typo?.message ?? "")
        XCTAssertTrue(typo?.message.contains("position 29") == true, typo?.message ?? "")
        let dropped = assertError(.invalid) {
            try Query.descriptor(#"{"entity": "Trip", "predicate": {"and": [false, {"any": [{"key": "bucketList"}, {"key": "nope"}]}]}}"#, schema)
        }
        XCTAssertEqual(dropped?.path, "/predicate/and/1/any/1/key")
        // Optional filters whose variable is bound to null keep working: only types depend on values.
        XCTAssertNoThrow(try Query.descriptor(#"{"entity": "Trip", "predicate": "v == nil || $0.rating > v", "bindings": {"v": null}}"#, schema))
    }

    /// Constant parts fold with the semantics rows are evaluated with: a
    /// comparison of two bound variables gives what the same comparison of
    /// two attributes holding those values gives, through SQL and the evaluator.
    func testFoldedConstantsAgreeWithRowEvaluation() throws {
        let c = try openInMemory(QuerySchemas.trips).makeContext()
        let strings = ["Zürich", "zurich", "Zu\u{308}rich", "ZÜRICH", "straße", "STRASSE", "", "a\u{0}b", "Trip 2", "Trip 10", "ß", "ｚｕｒｉｃｈ", "İ", "i\u{307}"]
        // By index: Swift strings compare canonically ("Zürich" == "Zu\u{308}rich"), the predicates by scalars.
        var ids: [[ObjectID]] = []
        for a in strings {
            ids.append([])
            for b in strings {
                ids[ids.count - 1].append(try c.insert(entity: "Trip", json: JSONValue.object([
                    ("name", .string(a)), ("destination", .string(b)), ("startDate", .number("0")), ("endDate", .number("0")),
                ]).text))
            }
        }
        let big = try c.insert(entity: "Trip", json: #"{"name": "big", "destination": "", "startDate": 0, "endDate": 0, "rating": 9007199254740993, "score": 9007199254740992}"#)
        try c.save()
        let graph = try ObjectGraph(context: c)
        var checked = 0
        func agree(_ rowPredicate: JSONValue, _ constPredicate: JSONValue, bindings: JSONValue, on id: ObjectID, _ what: String) throws {
            let row = try FetchDescriptor.decode(.object([("entity", .string("Trip")), ("predicate", rowPredicate)]), schema: c.schema)
            let const = try FetchDescriptor.decode(.object([("entity", .string("Trip")), ("predicate", constPredicate), ("bindings", bindings)]), schema: c.schema)
            guard let folded = const.predicate?.constantValue else { return XCTFail("\(what) did not fold") }
            let sql = try Query.identifiers(c, row).contains(id.description)
            let evaluated = graph.evaluate(row).contains(id.description)
            XCTAssertEqual(sql, evaluated, "SQL vs evaluator: \(what)")
            XCTAssertEqual(folded, sql, "folded vs rows: \(what)")
            checked += 1
        }
        let name: JSONValue = .object([("key", .string("name"))]), destination: JSONValue = .object([("key", .string("destination"))])
        let a: JSONValue = .object([("var", .string("a"))]), b: JSONValue = .object([("var", .string("b"))])
        for (i, x) in strings.enumerated() {
            for (j, y) in strings.enumerated() {
                let id = ids[i][j]
                let bindings: JSONValue = .object([("a", .string(x)), ("b", .string(y))])
                for op in ["==", "!=", "<", ">=", "contains", "hasPrefix", "hasSuffix"] {
                    for options in ["", "c", "d", "cd"] {
                        func tree(_ l: JSONValue, _ r: JSONValue) -> JSONValue {
                            options.isEmpty ? .object([(op, .array([l, r]))]) : .object([(op, .array([l, r])), ("options", .string(options))])
                        }
                        try agree(tree(name, destination), tree(a, b), bindings: bindings, on: id, "\(x.debugDescription) \(op)/\(options) \(y.debugDescription)")
                    }
                }
                let lsc = { (l: JSONValue, r: JSONValue) -> JSONValue in .object([("localizedStandardContains", .array([l, r]))]) }
                try agree(lsc(name, destination), lsc(a, b), bindings: bindings, on: id, "\(x.debugDescription) lsc \(y.debugDescription)")
                let countEq = { (l: JSONValue, r: JSONValue) -> JSONValue in .object([("==", .array([.object([("count", l)]), .object([("count", r)])]))]) }
                try agree(countEq(name, destination), countEq(a, b), bindings: bindings, on: id, "count \(x.debugDescription) == count \(y.debugDescription)")
                let empty = { (l: JSONValue) -> JSONValue in .object([("isEmpty", l)]) }
                try agree(empty(name), empty(a), bindings: bindings, on: id, "\(x.debugDescription).isEmpty")
            }
        }
        // An int against a double, exactly.
        let rating: JSONValue = .object([("key", .string("rating"))]), score: JSONValue = .object([("key", .string("score"))])
        let numbers: JSONValue = .object([("a", .number("9007199254740993")), ("b", .number("9007199254740992.0"))])
        for op in ["==", "!=", "<", "<=", ">", ">="] {
            try agree(.object([(op, .array([rating, score]))]), .object([(op, .array([a, b]))]), bindings: numbers, on: big, "int \(op) double")
        }
        XCTAssertGreaterThan(checked, 5000)
    }
}
