import XCTest
@testable import Strata

/// Case- and diacritic-insensitive matching in SQL (strata_contains,
/// strata_has_prefix, strata_has_suffix, strata_compare, strata_lsc and the
/// strata_standard collation) gives exactly ``Evaluation``'s answers, on a
/// corpus of tricky ASCII and non-ASCII text, NUL characters inside text and
/// invalid UTF-8 written by another program.
final class FoldedMatchTests: StoreTestCase {
    /// Haystacks and needles.
    static let corpus: [String] = [
        "", " ", "a", "A", "ab", "abc", "ABC", "aBc", "Paris", "PARIS", "pa", "trip 10", "zebra", "Zebra",
        "a\u{0}b", "A\u{0}B", "\u{0}", "x\u{0}é", "a\u{301}\u{0}",
        "é", "e\u{301}", "É", "E\u{301}", "e", "E", "\u{301}", "café", "CAFE\u{301}", "cafe\u{301}s", "cafés",
        "Straße", "STRASSE", "strasse", "ß", "ẞ", "ss", "SS",
        "ı", "I", "i", "İ", "i\u{307}", "istanbul", "İSTANBUL", "Işık", "ISIK",
        "ﬁle", "FILE", "fi", "σ", "ς", "Σ", "Ǆ", "ǅ", "ǆ", "DŽ",
        "Ångström", "ångström", "A\u{30A}ngstro\u{308}m", "\u{212B}", "\u{2126}", "Ω",
        "Zürich", "zurich", "ZURICH", "zür", "ＡＢＣ", "ａｂｃ",
        "が", "か\u{3099}", "か", "ᾳ", "ΑΙ", "α", "Ⅻ", "ⅻ", "😀", "❤️", "❤", "łódź", "LODZ",
        "한국", "\u{1100}\u{1161}", "가", "\u{10400}", "\u{10428}",
        // Longer than a word (ASCII is folded eight bytes at a time), the letters' neighbours @ [ ` {.
        "@[`{AZaz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ@[`{ 0123456789", "abcdefghijklmnopqrstuvwxyz", "Z@", "Z[",
        "ABCDEFGHIJKLMNOé", "PARISPARIS\u{301}x", "abcdefghE\u{301}", "The Quick Brown Fox\u{0}Jumps Over",
        // What invalid UTF-8 reads as.
        "\u{FFFD}", "a\u{FFFD}", "\u{FFFD}(",
    ]

    /// Texts no Swift string holds: invalid UTF-8 stored in a TEXT column.
    static let invalid: [[UInt8]] = [
        [0xFF], [0x61, 0xC3], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0x41, 0x80, 0x42], [0xC0, 0xAF], [0x50, 0x41, 0xFE, 0x52],
    ]

    /// Without options too: string tests without options use the same functions.
    static let optionSets: [StringOptions] = [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]

    /// A table `s(id, v)` of the corpus, the invalid texts and a NULL; returns each row's value as read back.
    private func corpusTable() throws -> (Connection, [Int64: SQLValue]) {
        let c = try Connection(path: ":memory:", readOnly: false, create: true)
        try c.execute(script: "CREATE TABLE s (id INTEGER PRIMARY KEY, v TEXT)")
        for s in Self.corpus { try c.execute("INSERT INTO s (v) VALUES (?1)", [.text(s)]) }
        for b in Self.invalid {
            let hex = b.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            try c.execute(script: "INSERT INTO s (v) VALUES (CAST(x'\(hex)' AS TEXT))")
        }
        try c.execute("INSERT INTO s (v) VALUES (NULL)")
        var rows: [Int64: SQLValue] = [:]
        try c.statement("SELECT id, v FROM s").query { st in
            rows[st.int64(0)] = st.columnType(1) == SQLITE_NULL_TYPE ? .null : .text(st.text(1))
        }
        XCTAssertEqual(rows.count, Self.corpus.count + Self.invalid.count + 1)
        return (c, rows)
    }

    private func ids(_ c: Connection, _ sql: String, _ args: [SQLValue]) throws -> Set<Int64> {
        var out = Set<Int64>()
        try c.statement(sql).query(args) { out.insert($0.int64(0)) }
        return out
    }

    /// The SQL the compiler emits for `v <op> needle` (the needle folded once, as a constant,
    /// or per row by strata_fold), and its negation, select the rows ``Evaluation`` selects.
    func testStringTestsAgreeWithEvaluation() throws {
        let (c, rows) = try corpusTable()
        let dialect = SQLiteDialect()
        var checked = 0
        for needle in Self.corpus {
            for options in Self.optionSets {
                for op in [StringOperator.contains, .hasPrefix, .hasSuffix] {
                    let expected = Set(rows.filter { Evaluation.stringTest(op, $0.value, .text(needle), options: options) }.keys)
                    let constant = dialect.foldedTest(op, "v", "?1", options: options.rawValue)
                    let folded = Evaluation.fold(needle, options)
                    let perRow = dialect.foldedTest(op, "v", dialect.fold("?1", options: options.rawValue), options: options.rawValue)
                    let what = "\(op) \(needle.unicodeScalars.map { String($0.value, radix: 16) }) options \(options.rawValue)"
                    XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE \(constant)", [.text(folded)]), expected, what)
                    XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE \(perRow)", [.text(needle)]), expected, what + " (folded per row)")
                    XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE NOT \(constant)", [.text(folded)]), Set(rows.keys).subtracting(expected), "NOT " + what)
                    checked += 1
                }
            }
            // localizedStandardContains: the needle folded with both options.
            let expected = Set(rows.filter { Evaluation.stringTest(.localizedStandardContains, $0.value, .text(needle), options: []) }.keys)
            let lsc = dialect.localizedStandardContains("v", "?1")
            let folded = Evaluation.fold(needle, [.caseInsensitive, .diacriticInsensitive])
            XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE \(lsc)", [.text(folded)]), expected, "lsc \(needle.debugDescription)")
            XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE NOT \(lsc)", [.text(folded)]), Set(rows.keys).subtracting(expected))
        }
        // A nil needle: every test is false, and its negation true.
        for op in [StringOperator.contains, .hasPrefix, .hasSuffix] {
            let sql = dialect.foldedTest(op, "v", dialect.fold("?1", options: 1), options: 1)
            XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE \(sql)", [.null]), [])
            XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE NOT \(sql)", [.null]), Set(rows.keys))
        }
        XCTAssertEqual(checked, Self.corpus.count * 12)
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=` with options, between every two rows (the right-hand
    /// side folded per row by strata_fold while the left is folded into the scratch buffer),
    /// nil included.
    func testComparisonsAgreeWithEvaluation() throws {
        let (c, rows) = try corpusTable()
        let dialect = SQLiteDialect()
        for options in Self.optionSets {
            for op in ComparisonOperator.allCases {
                let sql = dialect.foldedCompare(op, "a.v", dialect.fold("b.v", options: options.rawValue), options: options.rawValue)
                var got = Set<[Int64]>()
                try c.statement("SELECT a.id, b.id FROM s a, s b WHERE \(sql)").query { got.insert([$0.int64(0), $0.int64(1)]) }
                var expected = Set<[Int64]>()
                for (i, x) in rows { for (j, y) in rows where Evaluation.compare(op, x, y, domain: .attribute(.string), options: options) { expected.insert([i, j]) } }
                XCTAssertEqual(got.count, expected.count, "\(op) options \(options.rawValue)")
                for miss in expected.symmetricDifference(got).prefix(5) {
                    XCTFail("\(op) options \(options.rawValue): \(rows[miss[0]].map(String.init(describing:)) ?? "") vs \(rows[miss[1]].map(String.init(describing:)) ?? "") SQL says \(got.contains(miss))")
                }
                // A constant right-hand side, folded when compiled.
                for needle in ["abc", "STRASSE", "e\u{301}", "zurich", ""] {
                    let constant = dialect.foldedCompare(op, "v", "?1", options: options.rawValue)
                    let want = Set(rows.filter { Evaluation.compare(op, $0.value, .text(needle), domain: .attribute(.string), options: options) }.keys)
                    XCTAssertEqual(try ids(c, "SELECT id FROM s WHERE \(constant)", [.text(Evaluation.fold(needle, options))]), want, "\(op) \(needle)")
                }
            }
        }
    }

    /// strata_fold gives Evaluation's folding, invalid UTF-8 folded as if repaired.
    func testFoldMatchesEvaluation() throws {
        let (c, rows) = try corpusTable()
        for options in Self.optionSets {
            try c.statement("SELECT id, strata_fold(v, \(options.rawValue)) FROM s").query { st in
                let id = st.int64(0)
                guard case .text(let v) = rows[id] ?? .null else {
                    XCTAssertEqual(st.columnType(1), SQLITE_NULL_TYPE)
                    return
                }
                XCTAssertEqual(Array(st.text(1).utf8), Array(Evaluation.fold(v, options).utf8), v.debugDescription)
            }
        }
    }

    /// The strata_standard collation orders the corpus (invalid UTF-8 and NUL characters
    /// included) as ``TextFolding/standardCompare(_:_:)`` orders what the rows read as.
    func testStandardCollationAgreesWithStandardCompare() throws {
        let (c, rows) = try corpusTable()
        var got: [Int64] = []
        try c.statement("SELECT id FROM s WHERE v IS NOT NULL ORDER BY v COLLATE strata_standard, id").query { got.append($0.int64(0)) }
        let texts = rows.compactMap { id, v -> (Int64, String)? in if case .text(let s) = v { return (id, s) } else { return nil } }
        let expected = texts.sorted { a, b in
            let o = TextFolding.standardCompare(a.1, b.1)
            return o != 0 ? o < 0 : a.0 < b.0
        }.map(\.0)
        XCTAssertEqual(got, expected)
    }

    /// Through a store: fetches with folded string tests, comparisons and
    /// localizedStandardContains (also negated) select what the evaluator selects, and a
    /// localizedStandard sort orders as ``TextFolding/standardCompare(_:_:)``.
    func testFetchesAgreeWithTheEvaluator() throws {
        let container = try openInMemory(QuerySchemas.trips)
        let context = try container.makeContext()
        let names = Self.corpus
        for (i, name) in names.enumerated() {
            let start = Pools.iso(Pools.epoch + Int64(i) * 86_400)
            _ = try context.insert(entity: "Trip", json: #"{"name": \#(JSONValue.string(name).text), "destination": "", "startDate": "\#(start)", "endDate": "\#(start)"}"#)
        }
        try context.save()
        let graph = try ObjectGraph(context: context)
        var predicates: [String] = []
        for needle in ["a", "A", "e", "É", "ss", "i", "İ", "zur", "ＡＢ", "\u{0}", "❤", "ﬁ", "STRASSE"] {
            let n = JSONValue.string(needle).text
            for options in ["c", "d", "cd"] {
                for op in ["contains", "hasPrefix", "hasSuffix", "==", "!=", "<", ">="] {
                    predicates.append(#"{"\#(op)": [{"key": "name"}, \#(n)], "options": "\#(options)"}"#)
                }
                predicates.append(#"{"not": {"contains": [{"key": "name"}, \#(n)], "options": "\#(options)"}}"#)
                predicates.append(#"{"contains": [\#(n), {"key": "name"}], "options": "\#(options)"}"#)
            }
            for op in ["contains", "hasPrefix", "hasSuffix"] {
                predicates.append(#"{"\#(op)": [{"key": "name"}, \#(n)]}"#)
                predicates.append(#"{"not": {"\#(op)": [{"key": "name"}, \#(n)]}}"#)
            }
            predicates.append(#"{"localizedStandardContains": [{"key": "name"}, \#(n)]}"#)
            predicates.append(#"{"not": {"localizedStandardContains": [{"key": "name"}, \#(n)]}}"#)
        }
        predicates.append(#"{"==": [{"key": "name"}, {"key": "destination"}], "options": "cd"}"#)
        predicates.append(#"{"localizedStandardContains": [{"key": "name"}, {"key": "destination"}]}"#)
        for p in predicates {
            let d = try Query.descriptor(#"{"entity": "Trip", "predicate": \#(p)}"#, context.schema)
            XCTAssertEqual(Set(try Query.identifiers(context, d)), graph.evaluate(d), p)
        }
        let sorted = try Query.objects(context, Query.descriptor(#"{"entity": "Trip", "sortBy": [{"key": "name", "comparator": "localizedStandard"}]}"#, context.schema))
            .map { $0["name"]?.stringValue ?? "?" }
        let expected = names.enumerated().sorted { a, b in
            let c = TextFolding.standardCompare(a.element, b.element)
            return c != 0 ? c < 0 : a.offset < b.offset
        }.map(\.element)
        XCTAssertEqual(sorted, expected)
    }
}

private let SQLITE_NULL_TYPE: Int32 = 5

/// The ASCII pass of the localizedStandard comparison skips the bytes two texts share
/// (backing up to the start of a number): it still agrees with the general collation.
final class StandardCompareTests: XCTestCase {
    func testASCIIComparisonWithSharedPrefixesAgreesWithTheGeneralCollation() {
        let alphabet = Array("aAzZ09 0-_.1".utf8)
        var state: UInt64 = 0x5EED
        func next() -> Int { state = state &* 6364136223846793005 &+ 1442695040888963407; return Int(state >> 33) }
        let tails: [[UInt8]] = (0..<120).map { _ in (0..<(next() % 6)).map { _ in alphabet[next() % alphabet.count] } }
        let prefixes = ["", "Trip 1", "Trip 10", "x00", "x0", "ab 12 cd", "Paris trip 1234", "0", "AAAAAAAAaaaaaaaa"].map { Array($0.utf8) }
        for p in prefixes {
            for ta in tails {
                for tb in tails.prefix(60) {
                    let a = p + ta, b = p + tb
                    a.withUnsafeBufferPointer { pa in
                        b.withUnsafeBufferPointer { pb in
                            XCTAssertEqual(TextFolding.asciiCompare(pa, pb), TextFolding.collate(pa, pb),
                                           "\(String(decoding: a, as: UTF8.self).debugDescription) vs \(String(decoding: b, as: UTF8.self).debugDescription)")
                        }
                    }
                }
            }
        }
    }
}
