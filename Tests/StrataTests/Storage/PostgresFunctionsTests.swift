import Foundation
import XCTest
@testable import Strata

/// The PostgreSQL twins of the SQLite functions (``PostgresFunctions``) against Strata's own
/// Swift code (TextFolding, SQLFunctions' paths, DecimalText) on a real server: each test
/// installs the definitions in a fresh schema, sends a generated corpus in one COPY, and
/// compares every result. Runs only when `STRATA_TEST_POSTGRES` holds a libpq URI, e.g.
/// `postgresql://postgres@/strata?host=/tmp/pg` (psql must be on the machine); skipped otherwise.
final class PostgresFunctionsTests: XCTestCase {
    private var uri = ""
    private var schema = ""
    private var scratch: URL!

    override func setUpWithError() throws {
        guard let u = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES"], !u.isEmpty else {
            throw XCTSkip("set STRATA_TEST_POSTGRES to a PostgreSQL URI to run these tests")
        }
        uri = u
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pgf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        schema = "strata_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        _ = try psql("CREATE SCHEMA \(schema);\n", searchPath: false)
        _ = try psql(PostgresFunctions.definitions(schema: schema).map { $0 + ";\n" }.joined())
    }

    override func tearDownWithError() throws {
        if !schema.isEmpty { _ = try? psql("DROP SCHEMA \(schema) CASCADE;\n", searchPath: false) }
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
    }

    // MARK: - psql

    struct PSQLError: Error, CustomStringConvertible {
        let status: Int32
        let stderr: String
        var description: String { "psql exited \(status): \(stderr)" }
    }

    /// Runs `sql` (a script) with psql: unaligned, tuples only, stopping at the first error;
    /// the output lines. The script goes through a file and so does the output (no pipe to fill).
    private func psql(_ sql: String, searchPath: Bool = true) throws -> [String] {
        let id = UUID().uuidString
        let input = scratch.appendingPathComponent("\(id).sql"), output = scratch.appendingPathComponent("\(id).out")
        let errors = scratch.appendingPathComponent("\(id).err")
        let script = (searchPath ? "SET search_path = \(schema);\n" : "") + sql
        try script.write(to: input, atomically: false, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        p.arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", "-f", input.path, uri]
        p.standardOutput = try FileHandle(forWritingTo: output)
        p.standardError = try FileHandle(forWritingTo: errors)
        try p.run()
        p.waitUntilExit()
        let err = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        defer { for f in [input, output, errors] { try? FileManager.default.removeItem(at: f) } }
        guard p.terminationStatus == 0 else { throw PSQLError(status: p.terminationStatus, stderr: err) }
        let out = try String(contentsOf: output, encoding: .utf8)
        var lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    private static func hex(_ s: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in s.utf8 { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func unhex(_ h: Substring) -> [UInt8] {
        func v(_ c: UInt8) -> UInt8 { c >= 0x61 ? c - 0x61 + 10 : c - 0x30 }
        let u = Array(h.utf8)
        return stride(from: 0, to: u.count, by: 2).map { v(u[$0]) << 4 | v(u[$0 + 1]) }
    }

    /// `corpus(id, v)` and, when given, `needles(id, y)`: texts sent hex-encoded in one COPY
    /// each (nil is NULL), then `query`'s output lines.
    private func run(_ corpus: [String?], needles: [String?]? = nil, _ query: String) throws -> [String] {
        func copy(_ table: String, _ column: String, _ values: [String?]) -> String {
            var sql = "CREATE TEMP TABLE \(table)_hex (id integer, h text);\nCOPY \(table)_hex FROM STDIN;\n"
            for (i, s) in values.enumerated() { sql += "\(i)\t\(s.map(Self.hex) ?? "\\N")\n" }
            sql += "\\.\n"
            sql += "CREATE TEMP TABLE \(table) AS SELECT id, convert_from(decode(h, 'hex'), 'UTF8') AS \(column) FROM \(table)_hex;\n"
            return sql
        }
        var sql = copy("corpus", "v", corpus)
        if let needles { sql += copy("needles", "y", needles) }
        return try psql(sql + query)
    }

    // MARK: - Corpus

    static func scalarString(_ v: [UInt32]) -> String {
        var s = String()
        s.unicodeScalars.append(contentsOf: v.compactMap(Unicode.Scalar.init))
        return s
    }

    /// Pieces that matter to folding and Finder order: ASCII of every class, digits (ASCII,
    /// fullwidth, others), Latin with and without decompositions, stroke letters, spelled
    /// letters, combining marks of several classes (reordering), Greek final sigma and
    /// ypogegrammeni, İ ı ß ſ ﬁ, Cherokee, Hangul syllables and jamo, kana voicing marks,
    /// fullwidth forms, singletons (Ω Å), CJK compatibility ideographs, emoji with variation
    /// selectors, tags, spaces and controls.
    static let pieces: [String] = {
        var p: [String] = []
        for c in "aAbBeEiIoOsSzZ09 -_.,;!?'\"()@*/\\&#%`^+<=>|~$\t\n" { p.append(String(c)) }
        p += ["é", "É", "e\u{301}", "E\u{301}", "\u{301}", "\u{323}", "\u{302}", "\u{308}", "\u{327}", "\u{345}",
              "\u{334}", "\u{338}", "\u{5B0}", "\u{93C}", "\u{94D}", "\u{3099}", "\u{309A}", "\u{1AB0}", "\u{20D7}",
              "ä", "Ä", "a\u{308}", "å", "Å", "\u{212B}", "\u{2126}", "Ω", "ω", "ς", "σ", "Σ", "ᾳ", "ᾼ", "ΐ",
              "ß", "ẞ", "ſ", "ﬁ", "ﬆ", "İ", "ı", "i\u{307}", "I\u{307}", "ǅ", "Ǆ", "ǆ", "ǈ", "ŉ",
              "æ", "Æ", "ǽ", "œ", "Œ", "ĳ", "þ", "Þ", "ð", "Ð", "ŋ", "ĸ", "ŀ", "ȷ", "ǉ", "ǌ", "ǳ",
              "ł", "Ł", "ø", "Ø", "ǿ", "đ", "ħ", "ŧ", "ƀ", "ɨ", "ǥ", "ƶ", "ɉ", "ɍ", "ꝁ", "ᵽ", "Ᵽ",
              "ǖ", "Ǖ", "ṩ", "ậ", "ḝ", "ą", "Ą", "ñ", "Ñ", "ç", "ÿ", "Ÿ",
              "０", "１", "９", "Ａ", "ａ", "Ｚ", "！", "～", "①", "¹", "٣", "०", "𝟘",
              "가", "각", "갂", "힣", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{1112}", "\u{1175}", "\u{11C2}",
              "ｱ", "ア", "ガ", "カ", "\u{30AB}\u{3099}", "が", "か\u{3099}", "ﾊﾟ",
              "Ꭰ", "ꭰ", "Ᏸ", "ᏸ", "Ա", "ա", "և", "Ж", "ж", "й", "и\u{306}", "ё",
              "\u{F900}", "\u{2F800}", "\u{2FA1D}", "字", "𠀀", "\u{E000}",
              "❤", "❤\u{FE0F}", "\u{FE0E}", "\u{E0100}", "\u{E01EF}", "👍🏽", "\u{1F1EB}\u{1F1F7}", "\u{E0041}", "\u{E007F}",
              "\u{A0}", "\u{2003}", "\u{200B}", "\u{2028}", "\u{1}", "\u{7F}", "\u{85}", "€", "¢", "©", "«", "—", "…",
              "\u{0B47}", "\u{0B3E}", "\u{0B4B}", "\u{1B05}", "\u{1B35}", "\u{1B06}", "\u{0DD9}", "\u{0DCF}", "\u{0DCA}",
              "\u{0F71}", "\u{0F72}", "\u{0F73}", "\u{0344}", "\u{0958}", "\u{0915}\u{093C}",
              "\u{11099}", "\u{110BA}", "\u{1109A}", "\u{11131}", "\u{11127}", "\u{1112E}",
              "\u{16D63}", "\u{16D67}", "\u{16D68}", "\u{113C2}", "\u{113B8}", "\u{113C5}", "\u{0CC0}", "\u{0CBF}", "\u{0CD5}"]
        return p
    }()

    /// Every scalar of planes 0–1 alone and in contexts where it may combine or fold
    /// differently, the special scalars above, random texts of `pieces`, names and numbers,
    /// empty strings and NULLs.
    static func corpus(randomCount: Int = 60_000, everyScalar: Bool = true) -> [String?] {
        var out: [String?] = [nil, "", nil, " ", "a", "A"]
        if everyScalar {
            let specials = Array(0x2F800...0x2FA1F) + Array(0xE0000...0xE01EF)
            for v in Array(UInt32(1)..<0x20000) + specials.map(UInt32.init) {
                guard let x = Unicode.Scalar(v) else { continue }
                out.append(String(x))
                let interesting = x.properties.generalCategory != .unassigned
                    && (x.properties.canonicalCombiningClass.rawValue != 0 || x.properties.changesWhenCaseFolded
                        || ScalarData.nfd([x]) != [x] || ScalarData.info(v) & (ScalarData.sensitive | ScalarData.strippable) != 0
                        || TextFolding.fold(String(x), caseInsensitive: true, diacriticInsensitive: true) != String(x))
                if interesting || v % 97 == 0 {
                    out.append("A" + String(x) + "b")
                    out.append(String(x) + "\u{301}")
                    out.append("e" + String(x) + "\u{323}\u{302}")
                    out.append(String(x) + "\u{345}\u{301}x")
                    out.append("\u{1100}" + String(x))
                    out.append("가" + String(x) + "\u{11A8}")
                    out.append("1" + String(x) + "2")
                }
            }
        }
        var rng = SeededRNG(seed: 0x5EED)
        for _ in 0..<randomCount {
            let len = rng.below(9)
            var s = ""
            for _ in 0..<len { s += rng.pick(pieces) }
            out.append(s)
        }
        // Long texts (folded and keyed in pieces of their own), ASCII ones with digit runs.
        let ascii = pieces.filter { $0.utf8.allSatisfy { $0 < 0x80 } }
        for k in 0..<300 {
            var s = ""
            let count = 150 + rng.below(1_500)
            for _ in 0..<count { s += k % 3 == 0 ? rng.pick(ascii) : rng.pick(pieces) }
            out.append(s)
        }
        out += [String(repeating: "file 12 ", count: 3_000), String(repeating: "Zoë Ødegaard ", count: 500),
                String(repeating: "e\u{301}", count: 700), String(repeating: "0", count: 5_000) + "1"]
        // Names, numbers with leading zeros and long digit runs.
        let names = ["José García", "JOSÉ GARCIA", "jose garcia", "Müller", "Mueller", "MÜLLER", "Ærø", "Aarhus", "Ødegaard",
                     "Łukasz", "Straße", "STRASSE", "strasse", "Çağla", "İlker", "ilker", "Þór", "Thor", "Zoë", "Zoe",
                     "Trip 2", "Trip 10", "Trip 02", "trip 2", "Trip 002", "Trip 1.5", "Trip 1.10", "file9", "file10",
                     "file09", "file009", "file0", "file00", "file", "File", "FILE", "x1y2", "x01y2", "x1y02",
                     "１２", "12", "０１２", "00012", "12345678901234567890", "12345678901234567891", "9" + String(repeating: "0", count: 30),
                     "1" + String(repeating: "0", count: 30), "0" + String(repeating: "9", count: 29)]
        out += names
        return out
    }

    // MARK: - Tests

    /// The fold tables' outputs are fixed points: the fast path may replace one scalar after
    /// another over the whole text without refolding an earlier scalar's output.
    func testFoldOutputsFoldToThemselves() throws {
        for v in UInt32(0x80)..<0x20000 {
            guard let plane = FoldPlane.plane(for: v) else { continue }
            for mode in 1...3 {
                let e = plane.entry(v, mode)
                if e & FoldPlane.identityBit != 0 || e & FoldPlane.sensitiveBit != 0 { continue }
                let out = String(decoding: UnsafeBufferPointer(start: plane.pool + Int(e >> 6 & 0xFF_FFFF), count: Int(e & 0x3F)),
                                 as: UTF8.self)
                for y in out.unicodeScalars where y.value >= 0x80 {
                    guard let p = FoldPlane.plane(for: y.value) else { continue }
                    let f = p.entry(y.value, mode)
                    XCTAssertTrue(f & FoldPlane.identityBit != 0 && f & FoldPlane.sensitiveBit == 0,
                                  "U+\(String(v, radix: 16)) mode \(mode): output U+\(String(y.value, radix: 16)) folds again")
                }
            }
        }
    }

    // MARK: - The SQLite side

    /// `query` over the same `corpus` and `needles` in SQLite, on a connection with Strata's
    /// SQL functions (SQLFunctions): each row's columns joined with "|", NULL as "N".
    private func sqlite(_ corpus: [String?], needles: [String?]? = nil, _ query: String) throws -> [String] {
        let c = try Connection(path: ":memory:", readOnly: false, create: true)
        try c.execute(script: "CREATE TABLE corpus (id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE needles (id INTEGER PRIMARY KEY, y TEXT)",
                      reported: false)
        try c.transaction {
            let insert = try c.statement("INSERT INTO corpus VALUES (?1, ?2)")
            for (i, s) in corpus.enumerated() { try insert.execute([.int(Int64(i)), s.map { .text($0) } ?? .null]) }
            let insertNeedle = try c.statement("INSERT INTO needles VALUES (?1, ?2)")
            for (i, s) in (needles ?? []).enumerated() { try insertNeedle.execute([.int(Int64(i)), s.map { .text($0) } ?? .null]) }
        }
        var rows: [String] = []
        try c.statement(query).query { st in
            var cols: [String] = []
            for k in 0..<st.columnCount {
                switch st.value(at: k) {
                case .null: cols.append("N")
                case .int(let i): cols.append(String(i))
                case .text(let t): cols.append(t)
                case .double(let d): cols.append(String(d))
                case .blob(let b): cols.append(b.map { String($0) }.joined(separator: ","))
                }
            }
            rows.append(cols.joined(separator: "|"))
        }
        return rows
    }

    /// Asserts that PostgreSQL's and SQLite's rows are the same, naming the first that are not.
    private func assertSameRows(_ pg: [String], _ lite: [String], _ corpus: [String?], what: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(pg.count, lite.count, "\(what): row counts", file: file, line: line)
        var shown = 0, differing = 0
        for (p, l) in zip(pg, lite) where p != l {
            differing += 1
            if shown < 20 {
                shown += 1
                let id = Int(p.prefix(while: { $0 != "|" })) ?? -1
                let text = id >= 0 && id < corpus.count ? corpus[id].map(Self.describe) ?? "NULL" : "?"
                XCTFail("\(what): PostgreSQL \(p) ≠ SQLite \(l) for \(text)", file: file, line: line)
            }
        }
        XCTAssertEqual(differing, 0, "\(what): rows that differ", file: file, line: line)
    }

    static func describe(_ s: String) -> String {
        s.unicodeScalars.map { $0.value < 0x80 && $0.value > 0x20 ? String($0) : "U+" + String($0.value, radix: 16, uppercase: true) }
            .joined(separator: " ")
    }

    // MARK: - Folding and string tests

    func testFoldAndLength() throws {
        let corpus = Self.corpus()
        let pg = try run(corpus, """
            SELECT id || '|' || concat_ws('|', \((0...3).map { "coalesce(encode(convert_to(strata_fold(v, \($0)), 'UTF8'), 'hex'), 'N')" }
                .joined(separator: ", ")), coalesce(strata_length(v)::text, 'N'))
            FROM corpus ORDER BY id;
            """)
        let lite = try sqlite(corpus, """
            SELECT id, \((0...3).map { "CASE WHEN v IS NULL THEN 'N' ELSE lower(hex(strata_fold(v, \($0)))) END" }.joined(separator: ", ")),
                   strata_length(v)
            FROM corpus ORDER BY id
            """)
        assertSameRows(pg, lite, corpus, what: "strata_fold and strata_length")
        // Also by the Swift definition itself (TextFolding.fold), for a sample.
        for line in pg.prefix(5_000) {
            let f = line.split(separator: "|", omittingEmptySubsequences: false)
            guard let s = corpus[Int(f[0])!] else { continue }
            for mode in 0...3 {
                let want = TextFolding.fold(s, caseInsensitive: mode & 1 != 0, diacriticInsensitive: mode & 2 != 0)
                XCTAssertEqual(Self.unhex(f[1 + mode]), Array(want.utf8), Self.describe(s))
            }
        }
    }

    /// A needle per text: parts of its own folded form, all of it, more than it, other folded
    /// texts, empty, NULL (flags and codes follow the row number).
    static func needles(_ corpus: [String?]) -> [String?] {
        var rng = SeededRNG(seed: 0xC0FFEE)
        return corpus.enumerated().map { i, v -> String? in
            let mode = i & 3
            func fold(_ s: String) -> String { TextFolding.fold(s, caseInsensitive: mode & 1 != 0, diacriticInsensitive: mode & 2 != 0) }
            let r = rng.below(12)
            if r == 0 { return nil }
            if r == 1 { return "" }
            guard let v else { return fold(rng.pick(pieces)) }
            let f = Array(fold(v).unicodeScalars)
            switch r {
            case 2, 3, 4, 5:
                let a = rng.below(f.count + 1), b = a + rng.below(f.count - a + 1)
                return scalarString(f[a..<b].map(\.value))
            case 6, 7: return fold(v)
            case 8: return fold(v) + fold(rng.pick(pieces))
            case 9: return f.isEmpty ? "" : scalarString(f.dropLast().map(\.value)) + fold(rng.pick(pieces))
            default: return fold(rng.pick(pieces) + rng.pick(pieces))
            }
        }
    }

    func testStringTests() throws {
        var corpus = Self.corpus(randomCount: 80_000, everyScalar: false)
        // Every scalar of the first planes once, with a needle cut from its own fold.
        for v in UInt32(0x80)..<0x20000 where v % 3 == 0 { if let x = Unicode.Scalar(v) { corpus.append("x" + String(x) + "y") } }
        let needles = Self.needles(corpus)
        let tests = ["strata_contains(v, y, id % 4)", "strata_has_prefix(v, y, id % 4)", "strata_has_suffix(v, y, id % 4)",
                     "strata_compare(v, y, id % 24)", "strata_lsc(v, y)", "strata_contains(v, y, 0)", "strata_has_suffix(v, y, 3)"]
        let pg = try run(corpus, needles: needles, """
            SELECT id || '|' || concat_ws('|', \(tests.map { "(\($0))::int" }.joined(separator: ", ")))
            FROM corpus JOIN needles USING (id) ORDER BY id;
            """)
        let lite = try sqlite(corpus, needles: needles, "SELECT id, \(tests.joined(separator: ", ")) FROM corpus JOIN needles USING (id) ORDER BY id")
        assertSameRows(pg, lite, corpus, what: "strata_contains, strata_has_prefix, strata_has_suffix, strata_compare, strata_lsc")
    }

    /// NULLs on either side, every operator code (with codes past 23, negative and NULL, and
    /// flags past 3), two NULLs.
    func testNullsAndCodes() throws {
        let corpus: [String?] = [nil, "", "a", "A", "É", "e\u{301}", "ß", nil, "b", "", "ss", "é"]
        let needles: [String?] = [nil, nil, nil, "a", "e", "é", "ss", "", nil, "", "ss", "e"]
        var columns: [String] = []
        for code in [-9, -1, 0, 1, 2, 3, 4, 5, 7, 8, 11, 12, 15, 16, 19, 20, 23, 24, 27, 100] {
            columns.append("strata_compare(v, y, \(code))")
        }
        for flags in [-1, 0, 1, 2, 3, 4, 7] {
            columns += ["strata_contains(v, y, \(flags))", "strata_has_prefix(v, y, \(flags))", "strata_has_suffix(v, y, \(flags))"]
        }
        columns += ["strata_compare(v, y, NULL)", "strata_contains(v, y, NULL)", "strata_lsc(v, y)", "strata_lsc(y, v)"]
        let pg = try run(corpus, needles: needles, """
            SELECT id || '|' || concat_ws('|', \(columns.map { "(\($0))::int" }.joined(separator: ", ")),
                coalesce(encode(convert_to(strata_fold(v, NULL), 'UTF8'), 'hex'), 'N'),
                coalesce(encode(convert_to(strata_fold(v, -1), 'UTF8'), 'hex'), 'N'),
                coalesce(encode(convert_to(strata_fold(v, 6), 'UTF8'), 'hex'), 'N'))
            FROM corpus JOIN needles USING (id) ORDER BY id;
            """)
        let lite = try sqlite(corpus, needles: needles, """
            SELECT id, \(columns.joined(separator: ", ")),
                CASE WHEN v IS NULL THEN 'N' ELSE lower(hex(strata_fold(v, NULL))) END,
                CASE WHEN v IS NULL THEN 'N' ELSE lower(hex(strata_fold(v, -1))) END,
                CASE WHEN v IS NULL THEN 'N' ELSE lower(hex(strata_fold(v, 6))) END
            FROM corpus JOIN needles USING (id) ORDER BY id
            """)
        assertSameRows(pg, lite, corpus, what: "NULLs and codes")
    }

    // MARK: - Sort key

    /// The corpus sorted by `strata_standard_key` in PostgreSQL is the corpus sorted by the
    /// `strata_standard` collation in SQLite (ties by row number), and two neighbours have the
    /// same key exactly when standardCompare says 0.
    func testStandardKeyOrder() throws {
        var corpus = Self.corpus(randomCount: 120_000)
        // Texts that tie at one level or another: few pieces, short.
        var rng = SeededRNG(seed: 0xBEEF)
        let small = ["a", "A", "á", "Á", "a\u{301}", "ä", "æ", "Æ", "ae", "ǽ", "b", "ß", "ss", "SS", "ſ", "s", "ς", "σ", "Σ",
                     "0", "1", "01", "001", "０", "１", "9", "10", " ", "-", "_", ".", "\u{301}", "\u{323}", "\u{308}", "ł", "l",
                     "ø", "o", "ð", "d", "đ", "þ", "th", "ı", "i", "İ", "I", "ｱ", "ア", "가", "\u{1100}\u{1161}", "❤", "❤\u{FE0F}",
                     "\u{E0100}", "\u{E0041}", "\t", "x", "X", "ｘ", "Ｘ", "ǅ", "dž", "ŀ", "l·"]
        for _ in 0..<60_000 {
            var s = ""
            for _ in 0..<(1 + rng.below(4)) { s += rng.pick(small) }
            corpus.append(s)
        }
        let pg = try run(corpus, """
            SELECT id || '|' || encode(strata_standard_key(v), 'hex') FROM corpus WHERE v IS NOT NULL
            ORDER BY strata_standard_key(v), id;
            SELECT count(*) FROM corpus WHERE v IS NULL AND strata_standard_key(v) IS NULL;
            """)
        let lite = try sqlite(corpus, "SELECT id FROM corpus WHERE v IS NOT NULL ORDER BY v COLLATE strata_standard, id")
        let nulls = corpus.filter { $0 == nil }.count
        XCTAssertEqual(pg.last, String(nulls))
        let rows = pg.dropLast().map { $0.split(separator: "|").map(String.init) }
        assertSameRows(rows.map { $0[0] }, lite, corpus, what: "ORDER BY strata_standard_key")
        var mismatched = 0
        for (x, y) in zip(rows, rows.dropFirst()) {
            let a = corpus[Int(x[0])!]!, b = corpus[Int(y[0])!]!
            let c = TextFolding.standardCompare(a, b)
            if (x[1] == y[1]) != (c == 0) || c > 0 {
                mismatched += 1
                if mismatched < 20 { XCTFail("keys of \(Self.describe(a)) and \(Self.describe(b)): \(x[1]) \(y[1]), standardCompare \(c)") }
            }
        }
        XCTAssertEqual(mismatched, 0)
    }

    /// The key a statement spells out for a column (``PostgresFunctions/standardKey(column:)``:
    /// ASCII text without digits in the statement, the rest through the function) is the
    /// function's, byte for byte: random ASCII text of every character (capitals, punctuation,
    /// controls, DEL, digits) and the corpus, NULL included.
    func testStandardKeyInStatement() throws {
        var corpus = Self.corpus(randomCount: 20_000, everyScalar: false)
        var rng = SeededRNG(seed: 0x5EED)
        let letters = Array("abcXYZ q")
        for _ in 0..<30_000 {
            var s = ""
            for _ in 0..<rng.below(12) {
                let r = rng.below(4)
                s.append(r == 0 ? Character(Unicode.Scalar(UInt8(1 + rng.below(127)))) : rng.pick(letters))
            }
            corpus.append(s)
        }
        corpus += ["", "Hello, World!", "a1b", "DEL\u{7F}", "Tab\there", "ZZ", "zz", nil, "Café"]
        let key = PostgresFunctions.standardKey(column: "c.\"v\"")
        XCTAssertTrue(key.hasPrefix("CASE WHEN octet_length"))
        let out = try run(corpus, """
            SELECT count(*) FROM corpus c WHERE (\(key)) IS DISTINCT FROM strata_standard_key(c."v");
            SELECT count(*) FROM corpus c WHERE octet_length(c."v") = char_length(c."v") AND c."v" !~ '[0-9]';
            """)
        XCTAssertEqual(out.first, "0", "rows whose key differs from strata_standard_key's")
        XCTAssertGreaterThan(Int(out.last ?? "") ?? 0, 10_000, "rows that take the statement's path")
    }

    // MARK: - Decimals, damage, installation

    func testDecimalOrder() throws {
        let valid = ["0", "-0", "+0", "0.0", "1", "-1", "1.5", "1.50", "01.5", "-1.5", "12.50", "7.5", "007.50", "1e3", "1E+03",
                     "1000", "1000.000", "1e-5", "0.00001", "1e-05", "-2.5e-12", "1e30", "1e21", "999999999999999999999",
                     "1000000000000000000000", "123456789012345678901234567890.123456789", "123456789012345678901234567890.12345679",
                     "0.1", "0.10000000000000000001", "-0.1", "-0.10000000000000000001", "5", "5.0e0", "50e-1", "+5",
                     "3.14159", "3.1416", "-3.14159", "1e-300", "-1e-300", "1e300", "-1e300", "9.99e299", "1e1000", "1e-1000"]
        let invalid = ["", " 1", "1 ", ".5", "5.", "NaN", "inf", "Infinity", "0x1F", "1_000", "abc", "1e", "e5", "--1", "1.2.3"]
        let corpus: [String?] = valid + invalid + [nil]
        let pg = try run(corpus, """
            SELECT a.id || '|' || b.id || '|' || CASE WHEN strata_decimal(a.v) < strata_decimal(b.v) THEN -1
                                                       WHEN strata_decimal(a.v) = strata_decimal(b.v) THEN 0 ELSE 1 END
            FROM corpus a, corpus b WHERE a.v IS NOT NULL AND b.v IS NOT NULL ORDER BY a.id, b.id;
            SELECT count(*) FROM corpus WHERE v IS NULL AND strata_decimal(v) IS NULL;
            """)
        XCTAssertEqual(pg.last, "1")
        for row in pg.dropLast() {
            let f = row.split(separator: "|").map { Int($0)! }
            let a = corpus[f[0]]!, b = corpus[f[1]]!
            if f[0] >= valid.count && f[1] >= valid.count { continue }   // two invalid texts: both NaN
            XCTAssertEqual(f[2], DecimalText.compare(a, b), "\(a) vs \(b)")
        }
        // Past numeric's range: an error, never a wrong order.
        XCTAssertThrowsError(try psql("SELECT strata_decimal('1e200000');\n"))
        XCTAssertThrowsError(try psql("SELECT strata_decimal('1e-20000');\n"))
    }

    // MARK: - Sums

    /// `@sum` and `@avg` as the dialect spells them (``PostgresDialect/exactAggregate(_:integer:_:)``)
    /// over groups of a corpus (every magnitude of double, cancellation, ties, overflow; ints
    /// near the ends of bigint), against ``ExactSum``; the rows in two orders give the same sums.
    func testExactSumsAndAverages() throws {
        var rng = SeededRNG(seed: 2026)
        var groups: [[(Int64?, Double?)]] = []
        var copy = "CREATE TEMP TABLE s (g integer, i bigint, d double precision);\nCOPY s FROM STDIN;\n"
        for g in 0..<300 {
            var rows: [(Int64?, Double?)] = []
            for _ in 0..<rng.below(14) + 1 {
                let i: Int64? = rng.below(10) == 0 ? nil
                    : rng.below(5) == 0 ? [Int64.max, Int64.min, Int64.max - 1][rng.below(3)] : Int64(rng.below(2001) - 1000)
                var d: Double? = rng.below(10) == 0 ? nil : ExactSumTests.randomDouble(&rng)
                if rng.below(4) == 0, let x = rows.last?.1 { d = -x }   // cancellation
                rows.append((i, d))
                copy += "\(g)\t\(i.map(String.init) ?? "\\N")\t\(d.map { "\($0)" } ?? "\\N")\n"
            }
            groups.append(rows)
        }
        copy += "\\.\n"
        let dialect = PostgresDialect()
        let columns = [dialect.exactAggregate(.sum, integer: true, "i"), dialect.exactAggregate(.avg, integer: true, "i"),
                       dialect.exactAggregate(.sum, integer: false, "d"), dialect.exactAggregate(.avg, integer: false, "d")]
        let lines = try psql(copy + """
            SELECT g, \(columns.joined(separator: ", ")), strata_fsum(d ORDER BY d) IS NOT DISTINCT FROM strata_fsum(d ORDER BY d DESC)
            FROM s GROUP BY g ORDER BY g;
            SELECT -1, \(columns.joined(separator: ", ")), true FROM s WHERE false;
            SELECT -2, strata_int_total(sum(x)), strata_int_mean(sum(x), count(x)), strata_fsum(y), strata_float_mean(strata_fsum(y), count(y)), true
            FROM (VALUES (NULL::bigint, 'Infinity'::float8), (1::bigint, 1::float8)) v (x, y);
            SELECT -3, 0, strata_float_mean(CAST('4.9406564584124654e-324' AS double precision), 3), strata_float_mean(-1e-300::float8, 7), 0, true;
            """)
        func double(_ s: Substring) -> Double? { s.isEmpty ? nil : Double(s == "Infinity" ? "inf" : s == "-Infinity" ? "-inf" : String(s)) }
        func int(_ s: Substring) -> Int64? { s.isEmpty ? nil : Int64(s) }
        var failing = 0, nonZero = 0
        XCTAssertEqual(lines.count, groups.count + 3, "\(lines.suffix(4))")
        for (k, line) in lines.enumerated() {
            let f = line.split(separator: "|", omittingEmptySubsequences: false)
            guard f.count == 6, let g = Int(f[0]) else { XCTFail("row \(line)"); continue }
            var ints = ExactSum(), doubles = ExactSum()
            if g >= 0 {
                for (i, d) in groups[g] {
                    ints.add(i.map { .int($0) } ?? .null, integer: true)
                    doubles.add(d.map { .double($0) } ?? .null, integer: false)
                }
            } else if g == -2 {
                ints.add(Int64(1)); doubles.add(Double.infinity); doubles.add(1.0)
            }
            if g == -3 {
                XCTAssertEqual(double(f[2]), 0x1p-1074 / 3, "an average that underflows is 0, as IEEE gives it")
                XCTAssertEqual(double(f[3]), -1e-300 / 7)
                continue
            }
            XCTAssertEqual(int(f[1]), ints.intSum, "group \(g) int sum: \(g >= 0 ? groups[g] : [])")
            XCTAssertEqual(double(f[2]).map(\.bitPattern), ints.intAverage.map(\.bitPattern), "group \(g) int average")
            XCTAssertEqual(double(f[3]).map(\.bitPattern), doubles.doubleSum.map(\.bitPattern), "group \(g) double sum: \(g >= 0 ? groups[g] : [])")
            XCTAssertEqual(double(f[4]).map(\.bitPattern), doubles.doubleAverage.map(\.bitPattern), "group \(g) double average")
            XCTAssertEqual(f[5], "t", "group \(g): the order of the rows changed the sum")
            if ints.intSum == nil || doubles.doubleSum == nil { failing += 1 }
            if (doubles.doubleSum ?? 0) != 0 { nonZero += 1 }
            _ = k
        }
        XCTAssertGreaterThan(failing, 10)
        XCTAssertGreaterThan(nonZero, 100)
    }

    func testDamaged() throws {
        for (call, message, detail) in [("strata_damaged('Trip', 'name', 42)", "Trip/42", "name"),
                                        ("strata_damaged('Trip', '_entity', -7)", "Trip/-7", "_entity"),
                                        ("strata_damaged(NULL, NULL, NULL)", "/0", "")] {
            XCTAssertThrowsError(try psql("SELECT \(call);\n")) { error in
                let text = (error as? PSQLError)?.stderr ?? ""
                XCTAssertTrue(text.contains("ERROR:  SD001: \(message)\n"), text)
                XCTAssertTrue(text.contains("DETAIL:  \(detail)\n"), text)
            }
        }
        // Inside a query, once a row calls it.
        XCTAssertThrowsError(try psql("SELECT CASE WHEN g > 2 THEN strata_damaged('Item', 'title', g) END FROM generate_series(1, 5) g;\n")) { error in
            XCTAssertTrue(((error as? PSQLError)?.stderr ?? "").contains("SD001: Item/3"))
        }
    }

    /// Installing again replaces the functions; the folding and sort-key functions need
    /// nothing of the schema (an expression index may call them under any search_path).
    func testReinstallAndSearchPath() throws {
        let defs = PostgresFunctions.definitions(schema: schema)
        // Functions are replaced; the integer-real operators are made once (a DO block that checks).
        XCTAssertTrue(defs.allSatisfy { $0.hasPrefix("CREATE OR REPLACE FUNCTION strata_") || $0.hasPrefix("CREATE OR REPLACE AGGREGATE strata_")
                                        || $0.hasPrefix("DO $strata$") })
        _ = try psql(defs.map { $0 + ";\n" }.joined())
        _ = try psql(defs.map { $0 + ";\n" }.joined())
        let exact = try psql("SELECT CAST(9007199254740993 AS bigint) > CAST(9007199254740992 AS double precision), "
                             + "CAST(9007199254740992 AS double precision) = CAST(9007199254740993 AS bigint);\n")
        XCTAssertTrue(exact.contains { $0.contains("t|f") || $0.contains("t | f") }, "\(exact)")
        let lines = try psql("""
            SET search_path = pg_catalog;
            SELECT \(schema).strata_fold('ÉCOLE Straße', 3), encode(\(schema).strata_standard_key('é1'), 'hex');
            CREATE TEMP TABLE t (v text);
            INSERT INTO t VALUES ('b'), ('A'), ('á');
            CREATE INDEX ON t (\(schema).strata_standard_key(v));
            CREATE INDEX ON t (\(schema).strata_fold(v, 3));
            """, searchPath: false)
        XCTAssertEqual(lines.first?.split(separator: "|").first, "ecole strasse")
        XCTAssertTrue(PostgresFunctions.version >= 1)
        // The tables live in functions of their own: a statement naming strata_fold reads its
        // text (a new connection reads that of every schema holding one), not the tables.
        for name in ["strata_fold(", "strata_standard_key("] {
            let text = defs.first { $0.hasPrefix("CREATE OR REPLACE FUNCTION " + name) } ?? ""
            XCTAssertTrue(text.utf8.count > 1000 && text.utf8.count < 32_000, "\(name) \(text.utf8.count) bytes")
        }
    }
}

private extension SeededRNG {
    /// A number in `0..<n`: the corpora stay the same on every run (the generator is seeded).
    mutating func below(_ n: Int) -> Int { Int.random(in: 0..<n, using: &self) }
}
