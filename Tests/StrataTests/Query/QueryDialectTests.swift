import XCTest
@testable import Strata

/// The predicate compiler spells SQL only through the dialect it is given
/// (identifiers, parameters, functions, collations, list binding).
final class QueryDialectTests: StoreTestCase {
    /// A dialect with a spelling unlike SQLite's in every member.
    struct OtherDialect: QueryDialect {
        func quote(_ identifier: String) -> String { "[" + identifier + "]" }
        func parameter(_ n: Int) -> String { "$\(n)" }
        func boolean(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
        func truth(_ expression: String) -> String { "(\(expression) <> 0)" }
        func collatedOperand(_ expression: String, _ collation: Collation) -> String { expression }
        var checksInPaging: Bool { true }
        func ownerBatch(_ owner: String, parameter: String) -> String? { nil }
        var readsPrefetchedOnce: Bool { false }
        var joinsLinkedEntities: Bool { false }
        var writesPaging: Bool { false }
        func sortTerm(_ expression: String, descending: Bool) -> String { expression + (descending ? " DESC" : " ASC") }
        func inJSONArray(_ expression: String, parameter: String) -> String { "\(expression) = ANY(list(\(parameter)))" }
        func collate(_ expression: String, _ collation: Collation) -> String { "\(expression) COLLATED(\(collation))" }
        func decimalExtreme(_ f: AggregateFunction, _ value: String) -> String { "DEC_\(f.rawValue)(\(value))" }
        func mean(sum: String, count: String, integer: Bool) -> String { "MEAN(\(sum), \(count))" }
        func fold(_ expression: String, options: Int) -> String { "FOLD\(options)(\(expression))" }
        func localizedStandardContains(_ text: String, _ needle: String) -> String { "LSC(\(text), \(needle))" }
        func foldedCompare(_ op: ComparisonOperator, _ text: String, _ folded: String, options: Int) -> String {
            "FOLDCMP\(options)(\(text) \(op.rawValue) \(folded))"
        }
        func foldedTest(_ op: StringOperator, _ text: String, _ folded: String, options: Int) -> String {
            "FOLDTEST\(options)(\(op.rawValue), \(text), \(folded))"
        }
        func length(_ expression: String) -> String { "LEN(\(expression))" }
        func searchIndex(_ attribute: Attribute) -> String { "SEARCH_OF_\(attribute.name)" }
        func matches(key: String, text: String, index: String, query: String) -> String { "MATCHES(\(key), \(text), \(quote(index)), \(query))" }
        func coalesce(_ terms: [String]) -> String { "FIRST(" + terms.joined(separator: "; ") + ")" }
        func isSame(_ a: String, _ b: String) -> String { "\(a) IS NOT DISTINCT FROM \(b)" }
        func isNotSame(_ a: String, _ b: String) -> String { "\(a) IS DISTINCT FROM \(b)" }
        func limit(_ limit: String?, offset: String?) -> String { " PAGE(\(limit ?? "ALL"), \(offset ?? "0"))" }
        func nameLiteral(_ name: String) -> String { "N<\(name)>" }
        func storedAs(_ column: String, _ stored: StoredClass, entity: String, attribute: String, key: String) -> String {
            "STORED_\(stored)(\(column), \(entity), \(attribute), \(key))"
        }
        func unknownEntity(table: String, _ entities: [String], root: String) -> String {
            "UNKNOWN(\(quote(table)): \(entities.joined(separator: "|")))"
        }
        func limit(_ limit: String?, offset: String?, check: String?) -> String {
            check.map { " CHECKED(\($0))" + self.limit(limit, offset: offset) } ?? self.limit(limit, offset: offset)
        }
        func checkedOnce(_ check: String) -> String { "ONCE(\(check))" }
        var keyColumn: String { "KEY" }
        var entityColumn: String { "ENTITY" }
        func concatenate(_ terms: [String]) -> String { "CONCAT(" + terms.joined(separator: "; ") + ")" }
        func joinedText(_ column: String) -> String { "JOINED(\(column))" }
        func select(_ list: String, from source: String, where condition: String?, orderBy order: String?, paging: String) -> String {
            "SELECT \(list) FROM \(source)" + (condition.map { " WHERE \($0)" } ?? "") + (order.map { " ORDER BY \($0)" } ?? "") + paging
        }
        func count(from source: String, where condition: String?) -> String { "COUNT_ROWS(" + select("*", from: source, where: condition, orderBy: nil, paging: "") + ")" }
        func count(of query: String) -> String { "COUNT_ROWS(\(query))" }
        func entity(of table: String, alias: String, key: String) -> String { "ENTITY_OF(\(quote(table)) \(alias), \(key))" }
        // The same layout rules as SQLite's: the test is about spelling.
        func table(_ entity: Entity) -> String { entity.root.name }
        func column(_ slot: StoredColumn) -> String { slot.name }
        func pairTable(_ rel: Relationship) -> (table: String, ownerColumn: String, targetColumn: String) { StoreLayout.pairTable(rel) }
    }

    func testThePredicateCompilerSpellsThroughItsDialect() throws {
        let schema = try makeSchema(QuerySchemas.trips)
        let names = (0..<20).map { "\"n\($0)\"" }.joined(separator: ", ")
        let text = #"$0.name.contains("a") && $0.destination.hasPrefix("b") && $0.destination.hasSuffix("c")"#
            + #" && $0.budget == 3 && ($0.rating ?? 0) > 2 && !$0.name.isEmpty && $0.name.count > 1"#
            + #" && $0.name.localizedStandardContains("q") && [\#(names)].contains($0.name)"#
            + #" && $0.bucketList.contains { $0.title.hasPrefix("x") } && $0.livingAccommodation?.placeName != nil"#
        let json = #"{"entity": "Trip", "predicate": \#(JSONValue.string(text).text)}"#
        let d = try Query.descriptor(json, schema)
        var c = PredicateCompiler(root: d.entity, dialect: OtherDialect())
        let sql = c.predicate(try XCTUnwrap(d.predicate)) + " " + c.rootJoins.joined(separator: " ")
        for spelling in ["FOLDTEST0(contains, t.[name], $9)", "FOLDTEST0(hasPrefix, t.[destination], $2)", "FOLDTEST0(hasSuffix, t.[destination], $3)",
                         "t.[budget] COLLATED(decimal) IS NOT DISTINCT FROM $4", "FIRST(t.[rating]; $5) > $6",
                         "FIRST(t.[name]; '') = ''", "LEN(t.[name]) > $7", "LSC(t.[name], $8)",
                         "t.[name] = ANY(list($1))", "FOLDTEST0(hasPrefix, s1.[title], $10)", "JOIN [LivingAccommodation] p", ".[placeName] IS DISTINCT FROM NULL",
                         "STORED_text(s1.[title], N<BucketListItem>, N<title>, s1.KEY)"] {
            XCTAssertTrue(sql.contains(spelling), "\(spelling) in \(sql)")
        }
        for sqlite in ["?", "\"", "strata_", "json_each", "COLLATE ", "instr", "coalesce", "substr", " IS NOT NULL"] {
            XCTAssertFalse(sql.contains(sqlite), "\(sqlite) in \(sql)")
        }
    }

    func testTheFetchCompilerSpellsThroughItsDialect() throws {
        let schema = try makeSchema(QuerySchemas.trips)
        let json = #"{"entity": "PersonalTrip", "predicate": "$0.name == \"a\"", "sortBy": [{"key": "budget"}, {"key": "name", "comparator": "localizedStandard"}], "fetchOffset": 5}"#
        let q = CompiledFetch(try Query.descriptor(json, schema), dialect: OtherDialect())
        XCTAssertEqual(q.keysSQL, "SELECT t.KEY FROM [Trip] t WHERE t.ENTITY IN ($1)"
                       + " AND (STORED_text(t.[name], N<Trip>, N<name>, t.KEY) AND STORED_text(t.[budget], N<Trip>, N<budget>, t.KEY))"
                       + " AND (t.[name] IS NOT DISTINCT FROM $2)"
                       + " ORDER BY t.[budget] COLLATED(decimal) ASC, t.[name] COLLATED(standard) ASC, t.KEY ASC PAGE(ALL, $3)")
        XCTAssertEqual(q.args, [.text("PersonalTrip"), .text("a"), .int(5)])
        // Every entity of a hierarchy: a row naming none is damage.
        let all = CompiledFetch(try Query.descriptor(#"{"entity": "Trip"}"#, schema), dialect: OtherDialect())
        // Without paging, a condition of no table (a LIMIT would change how SQLite sorts); with it, in the paging.
        XCTAssertEqual(all.keysSQL, "SELECT t.KEY FROM [Trip] t WHERE ONCE(UNKNOWN([Trip]: Trip|BusinessTrip|PersonalTrip)) ORDER BY t.KEY ASC PAGE(ALL, 0)")
        let paged = CompiledFetch(try Query.descriptor(#"{"entity": "Trip", "fetchLimit": 2}"#, schema), dialect: OtherDialect())
        XCTAssertEqual(paged.keysSQL, "SELECT t.KEY FROM [Trip] t ORDER BY t.KEY ASC CHECKED(UNKNOWN([Trip]: Trip|BusinessTrip|PersonalTrip)) PAGE($1, 0)")
    }

    /// The objects, count and identifiers queries, prefetching and identifier subqueries included,
    /// name the layout's columns and borrow statements only through the dialect.
    func testTheObjectQueriesSpellThroughTheDialect() throws {
        let schema = try makeSchema(QuerySchemas.trips)
        for json in [#"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["bucketList"], "includeRelationshipIdentifiers": true}"#,
                     #"{"entity": "BucketListItem", "fetchLimit": 3}"#, #"{"entity": "LivingAccommodation"}"#] {
            let q = CompiledFetch(try Query.descriptor(json, schema), dialect: OtherDialect())
            let o = q.objectQueries
            let all = ([o.objectsSQL, q.countSQL, q.identifiersSQL] + o.prefetchedSQL).joined(separator: "\n")
            for sqlite in ["_pk", "_entity", "?", "\"", "group_concat", "||", "count(*)"] {
                XCTAssertFalse(all.contains(sqlite), "\(sqlite) in \(all)")
            }
            XCTAssertTrue(all.contains("t.KEY"), all)
        }
        let trips = CompiledFetch(try Query.descriptor(#"{"entity": "Trip", "relationshipKeyPathsForPrefetching": ["bucketList"]}"#, schema), dialect: OtherDialect())
        XCTAssertEqual(trips.objectQueries.prefetchedSQL.count, 1)
        XCTAssertTrue(trips.objectQueries.prefetchedSQL[0].contains("= $1"), trips.objectQueries.prefetchedSQL[0])
        XCTAssertTrue(trips.countSQL.hasPrefix("COUNT_ROWS("), trips.countSQL)
    }

    /// A name literal is the text SQLite's `quote()` makes of the name, whatever it holds: every
    /// quote doubled, also one a combining mark follows, and text that is not ASCII kept as it is.
    func testNameLiteralsAreWhatSQLiteQuotes() throws {
        let c = try Connection(path: storePath(), readOnly: false, create: true)
        let names = ["Trip", "", "'", "''", "a'b", "O'Brien's", "a'\u{301}b", "'\u{301}", "Zürich", "日本'語", "e\u{301}'", "\u{1F600}'x"]
        for name in names {
            let literal = SQLiteDialect().nameLiteral(name)
            var quoted: SQLValue?
            try c.statement(HashedSQL("SELECT quote(?1)")).query([.text(name)]) { s in quoted = s.value(at: 0) }
            XCTAssertEqual(quoted, .text(literal), name)
            var read: SQLValue?
            try c.statement(HashedSQL("SELECT " + literal)).query { s in read = s.value(at: 0) }
            XCTAssertEqual(read, .text(name), name)
        }
    }
}
