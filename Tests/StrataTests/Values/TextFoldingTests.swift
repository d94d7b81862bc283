import XCTest
@testable import Strata

final class TextFoldingTests: XCTestCase {
    private func cd(_ s: String) -> String { TextFolding.fold(s, caseInsensitive: true, diacriticInsensitive: true) }
    private func c(_ s: String) -> String { TextFolding.fold(s, caseInsensitive: true, diacriticInsensitive: false) }
    private func d(_ s: String) -> String { TextFolding.fold(s, caseInsensitive: false, diacriticInsensitive: true) }

    /// Byte-exact equality (String == is canonical equivalence, too lenient here).
    private func assertBytes(_ got: String, _ want: String, _ msg: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(Array(got.utf8), Array(want.utf8), "\(got.debugDescription) ≠ \(want.debugDescription) \(msg)",
                       file: file, line: line)
    }

    private func foldUTF8(_ bytes: [UInt8], _ ci: Bool, _ di: Bool) -> [UInt8] {
        var out: [UInt8] = [0x7B]
        bytes.withUnsafeBufferPointer { TextFolding.fold(utf8: $0, caseInsensitive: ci, diacriticInsensitive: di, into: &out) }
        XCTAssertEqual(out.first, 0x7B, "appends to the buffer")
        return Array(out.dropFirst())
    }

    private func compareUTF8(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        return x.withUnsafeBufferPointer { px in y.withUnsafeBufferPointer { py in TextFolding.standardCompare(utf8: px, py) } }
    }

    // MARK: Folding tables

    func testLatin1() {
        let upper = Array("ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝ")
        let lower = Array("àáâãäåçèéêëìíîïñòóôõöøùúûüý")
        let base = Array("aaaaaaceeeeiiiinoooooouuuuy")
        XCTAssertEqual(upper.count, base.count)
        for k in 0..<upper.count {
            let u = String(upper[k]), l = String(lower[k]), b = String(base[k])
            assertBytes(cd(u), b); assertBytes(cd(l), b)
            assertBytes(c(u), l); assertBytes(c(l), l)
            assertBytes(d(u), b.uppercased()); assertBytes(d(l), b)
        }
        assertBytes(cd("ÿŸ"), "yy")
        // Not diacritics: ligatures and letters of their own stay (folded for case only).
        assertBytes(cd("ÆæÐðÞþ"), "ææððþþ")
        assertBytes(cd("ß"), "ss")
        assertBytes(d("ß"), "ß")
        assertBytes(cd("Zürich"), "zurich"); assertBytes(d("Zürich"), "Zurich"); assertBytes(c("Zürich"), "zürich")
        assertBytes(cd("Crème Brûlée à la Française"), "creme brulee a la francaise")
    }

    func testLatinExtendedA() {
        let pairs: [(String, String)] = [
            ("ĀāĂăĄą", "aaaaaa"), ("ĆćĈĉĊċČč", "cccccccc"), ("ĎďĐđ", "dddd"), ("ĒēĔĕĖėĘęĚě", "eeeeeeeeee"),
            ("ĜĝĞğĠġĢģ", "gggggggg"), ("ĤĥĦħ", "hhhh"), ("ĨĩĪīĬĭĮįİ", "iiiiiiiii"), ("Ĵĵ", "jj"), ("Ķķ", "kk"),
            ("ĹĺĻļĽľŁł", "llllllll"), ("ŃńŅņŇň", "nnnnnn"), ("ŌōŎŏŐő", "oooooo"), ("ŔŕŖŗŘř", "rrrrrr"),
            ("ŚśŜŝŞşŠš", "ssssssss"), ("ŢţŤťŦŧ", "tttttt"), ("ŨũŪūŬŭŮůŰűŲų", "uuuuuuuuuuuu"), ("Ŵŵ", "ww"),
            ("ŶŷŸ", "yyy"), ("ŹźŻżŽž", "zzzzzz"),
            // No canonical decomposition: case folding only (ſ folds to s; ŉ to ʼn).
            ("ĲĳĸĿŀŊŋŒœ", "ĳĳĸŀŀŋŋœœ"), ("ſ", "s"), ("ŉ", "ʼn"), ("ı", "ı"),
        ]
        for (s, want) in pairs { assertBytes(cd(s), want, s) }
        assertBytes(d("ŁódźĐĦŦØ"), "LodzDHTO")
        assertBytes(d("łđħŧøǿǾ"), "ldhtooO")
    }

    /// Every precomposed Latin, Greek and Cyrillic letter whose Unicode name
    /// is "<letter> WITH <diacritics>" folds (diacritic-insensitive) to the
    /// letter its name starts with when the diacritics are decomposable ones,
    /// and is left alone otherwise (hooks, bars, tails: separate letters).
    func testNamedDiacriticsAgainstScalarNames() {
        let ranges: [ClosedRange<UInt32>] = [0xC0...0x24F, 0x370...0x3FF, 0x400...0x4FF, 0x1E00...0x1FFF]
        var byName = [String: Unicode.Scalar]()
        for r in ranges + [0x41...0x7A] {
            for v in r { if let x = Unicode.Scalar(v), let n = x.properties.name { byName[n] = x } }
        }
        let decomposable: Set<String> = [
            "ACUTE", "GRAVE", "CIRCUMFLEX", "TILDE", "DIAERESIS", "RING ABOVE", "CEDILLA", "MACRON", "BREVE",
            "OGONEK", "DOT ABOVE", "DOT BELOW", "CARON", "DOUBLE ACUTE", "HORN", "HOOK ABOVE", "COMMA BELOW",
            "RING BELOW", "CIRCUMFLEX BELOW", "TILDE BELOW", "LINE BELOW", "DIAERESIS BELOW", "BREVE BELOW",
            "INVERTED BREVE", "DOUBLE GRAVE", "TONOS", "DIALYTIKA", "PSILI", "DASIA", "VARIA", "OXIA",
            "PERISPOMENI", "YPOGEGRAMMENI", "PROSGEGRAMMENI", "VRACHY", "DOUBLE GRAVE ACCENT",
        ]
        // Named like a letter with caron, but only a compatibility sequence (D + Ž).
        let compatibilityOnly: Set<UInt32> = [0x1C4, 0x1C5, 0x1C6]
        var checked = 0, unchanged = 0
        for r in ranges {
            for v in r {
                guard let x = Unicode.Scalar(v), let name = x.properties.name,
                      let w = name.range(of: " WITH ") else { continue }
                guard let base = byName[String(name[..<w.lowerBound])] else { continue }
                let marks = name[w.upperBound...].components(separatedBy: " AND ")
                let folded = d(String(x))
                let others = marks.filter { !decomposable.contains($0) }
                let stroked = others == ["STROKE"]
                    && byName[String(name[..<w.lowerBound]) + " WITH STROKE"].map { ScalarData.strokeLetters[$0.value] != nil } == true
                if (others.isEmpty || stroked) && !compatibilityOnly.contains(v) {
                    assertBytes(folded, String(base), name)
                    checked += 1
                } else {
                    assertBytes(folded, String(x), name)
                    unchanged += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 750)
        XCTAssertGreaterThan(unchanged, 50)
    }

    func testVietnamese() {
        assertBytes(cd("Việt Nam"), "viet nam")
        assertBytes(cd("Nguyễn Thị Minh Khai"), "nguyen thi minh khai")
        assertBytes(cd("Đà Nẵng, Huế, Hồ Chí Minh"), "da nang, hue, ho chi minh")
        assertBytes(c("Việt Nam"), "việt nam")
        assertBytes(d("Việt Nam"), "Viet Nam")
    }

    func testGreek() {
        assertBytes(cd("Ελληνικά"), "ελληνικα")
        assertBytes(cd("ΆΈΉΊΌΎΏ"), "αεηιουω")
        assertBytes(cd("ΐΰϊϋ"), "ιυιυ")
        assertBytes(c("ΣΊΣΥΦΟΣ"), "σίσυφοσ")
        assertBytes(c("ς"), "σ")
        assertBytes(cd("ᾳ ᾼ ᾅ"), "α α α")
        assertBytes(c("ᾳ"), "αι")          // full case folding
        assertBytes(d("ά"), "α")
        assertBytes(d("ς"), "ς")
        assertBytes(cd("\u{2126}"), "ω")   // OHM SIGN is canonically Ω
    }

    func testCyrillic() {
        // Canonical decomposition: й = и + breve, ё = е + diaeresis, ї = і + diaeresis.
        assertBytes(cd("Йошкар-Ола, Ёлка, Київ"), "иошкар-ола, елка, киів")
        assertBytes(c("МОСКВА"), "москва")
        assertBytes(d("Москва"), "Москва")
    }

    func testGermanSharpS() {
        assertBytes(c("Straße"), "strasse")
        assertBytes(c("STRASSE"), "strasse")
        assertBytes(c("ẞ"), "ss")
        assertBytes(cd("GROẞ"), "gross")
        assertBytes(d("Straße"), "Straße")
    }

    func testTurkishWithoutLocale() {
        assertBytes(c("I"), "i")
        assertBytes(c("ı"), "ı")
        assertBytes(c("İ"), "i\u{307}")
        assertBytes(cd("İstanbul"), "istanbul")
        assertBytes(cd("ı"), "ı")
        XCTAssertEqual(c("İı"), "İı".lowercased())
    }

    func testDecomposedInputFoldsLikePrecomposed() {
        let pairs: [(String, String)] = [
            ("\u{E9}", "e\u{301}"), ("Z\u{FC}rich", "Zu\u{308}rich"), ("Vi\u{1EC7}t", "Vie\u{323}\u{302}t"),
            ("Vi\u{1EC7}t", "Vie\u{302}\u{323}t"),   // marks out of canonical order
            ("\u{C5}", "A\u{30A}"), ("\u{C5}", "\u{212B}"), ("\u{F1}", "n\u{303}"), ("\u{1F85}", "\u{3B1}\u{314}\u{301}\u{345}"),
            ("\u{304C}", "\u{304B}\u{3099}"), ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}"),
        ]
        for (pre, dec) in pairs {
            XCTAssertEqual(pre, dec, "the pair is canonically equivalent")
            for (ci, di) in [(true, false), (false, true), (true, true)] {
                let a = TextFolding.fold(pre, caseInsensitive: ci, diacriticInsensitive: di)
                let b = TextFolding.fold(dec, caseInsensitive: ci, diacriticInsensitive: di)
                assertBytes(b, a, "\(pre.debugDescription) c:\(ci) d:\(di)")
            }
        }
        assertBytes(c("E\u{301}"), "\u{E9}")          // output is NFC
        assertBytes(cd("e\u{301}"), "e")
        assertBytes(d("x\u{301}\u{327}"), "x")
        assertBytes(c("x\u{345}\u{301}"), "x\u{301}\u{3B9}")   // NFD first: ypogegrammeni (ccc 240) after acute
    }

    func testEmojiAndCJKUnchanged() {
        let texts = ["👍🏽", "👨‍👩‍👧", "🇯🇵", "🙂 ok", "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", "中文字", "日本語 カタカナ ひらがな", "한국어", "が", "ภาษาไทย", "𠀋𡈽"]
        for s in texts {
            for (ci, di) in [(true, false), (false, true), (true, true)] {
                assertBytes(TextFolding.fold(s, caseInsensitive: ci, diacriticInsensitive: di), s, "c:\(ci) d:\(di)")
            }
        }
        // Variation selectors are nonspacing marks: removed with diacritics.
        assertBytes(d("❤️"), "❤")
        assertBytes(c("❤️"), "❤️")
        // Deseret (plane 1) has case.
        assertBytes(c("\u{10400}"), "\u{10428}")
    }

    func testFullwidth() {
        assertBytes(d("ＡＢＣ１２３！～ａ"), "ABC123!~a")
        assertBytes(cd("ＡＢＣ１２３！～"), "abc123!~")
        assertBytes(c("ＡＢＣ"), "ａｂｃ")
        assertBytes(cd("Ｚüｒｉｃｈ"), "zurich")
        assertBytes(cd("ｱ"), "ｱ")   // halfwidth katakana: outside U+FF01–U+FF5E
    }

    func testNoOptionsIsIdentity() {
        for s in ["", "Straße", "e\u{301}", "ＡＢＣ"] {
            assertBytes(TextFolding.fold(s, caseInsensitive: false, diacriticInsensitive: false), s)
            XCTAssertEqual(foldUTF8(Array(s.utf8), false, false), Array(s.utf8))
        }
    }

    func testInvalidUTF8IsRepaired() {
        let inputs: [[UInt8]] = [
            [0x41, 0xFF, 0x42], [0xC3], [0x5A, 0xC3, 0xBC, 0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
            [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x91], [0x80, 0xC3, 0x89],
        ]
        for bytes in inputs {
            let repaired = String(decoding: bytes, as: UTF8.self)
            for (ci, di) in [(false, false), (true, false), (false, true), (true, true)] {
                XCTAssertEqual(foldUTF8(bytes, ci, di),
                               Array(TextFolding.fold(repaired, caseInsensitive: ci, diacriticInsensitive: di).utf8), "\(bytes)")
            }
        }
        XCTAssertEqual(foldUTF8([0x41, 0xFF, 0xC3], true, true), Array("a\u{FFFD}\u{FFFD}".utf8))
        XCTAssertEqual(compareUTF8("a", "b"), -1)
        let bad: [UInt8] = [0x61, 0xFF]
        let r = bad.withUnsafeBufferPointer { p in
            Array("a\u{FFFD}".utf8).withUnsafeBufferPointer { q in TextFolding.standardCompare(utf8: p, q) }
        }
        XCTAssertEqual(r, 0)
    }

    /// Every scalar of planes 0 and 1: the tables hold T as computed
    /// directly, folding is idempotent, and the UTF-8 path agrees.
    func testTablesAgreeWithDirectComputationForEveryScalar() {
        var checked = 0
        for v in UInt32(0x80)..<0x20000 {
            guard let x = Unicode.Scalar(v), x.properties.generalCategory != .unassigned else { continue }
            if (0x4E00...0x9FFF).contains(v) || (0xAC00...0xD7A3).contains(v) || (0x3400...0x4DBF).contains(v)
                || (0xE000...0xF8FF).contains(v) { continue }
            let s = String(x)
            for mode in 1...3 {
                let direct = ScalarData.transform(x, mode: mode)
                var viaTable: [UInt8] = []
                TextFolding.appendMapped(x, mode: mode, into: &viaTable)
                var want: [UInt8] = []
                for y in direct { TextFolding.appendUTF8(y.value, &want) }
                if viaTable != want { XCTFail("U+\(String(v, radix: 16)) mode \(mode)"); return }
                let f = TextFolding.fold(s, caseInsensitive: mode & 1 != 0, diacriticInsensitive: mode & 2 != 0)
                let ff = TextFolding.fold(f, caseInsensitive: mode & 1 != 0, diacriticInsensitive: mode & 2 != 0)
                if Array(f.utf8) != Array(ff.utf8) { XCTFail("not idempotent: U+\(String(v, radix: 16)) mode \(mode)"); return }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 40_000)
    }

    func testCaseFoldingIsIdempotentForEveryScalar() {
        for v in UInt32(0)..<0x110000 {
            guard let x = Unicode.Scalar(v), x.properties.changesWhenCaseMapped || x.properties.changesWhenCaseFolded
            else { continue }
            let once = ScalarData.caseFold(x)
            let twice = once.flatMap(ScalarData.caseFold)
            XCTAssertEqual(once, twice, "U+\(String(v, radix: 16))")
            // Case-insensitive folding identifies a scalar with its upper- and
            // lowercase mappings (except dotless ı, which stays apart from I/i
            // as in String.lowercased()).
            guard v != 0x131 else { continue }
            let f = c(String(x))
            assertBytes(c(x.properties.uppercaseMapping), f, "U+\(String(v, radix: 16))")
            assertBytes(c(x.properties.lowercaseMapping), f, "U+\(String(v, radix: 16))")
        }
    }

    // MARK: localizedStandardContains

    func testLocalizedStandardContains() {
        XCTAssertTrue(TextFolding.localizedStandardContains("Zürich", "zur"))
        XCTAssertTrue(TextFolding.localizedStandardContains("Zürich", "ZÜR"))
        XCTAssertFalse(TextFolding.localizedStandardContains("Paris", ""))
        XCTAssertTrue(TextFolding.localizedStandardContains("straße", "STRASSE"))
        XCTAssertTrue(TextFolding.localizedStandardContains("STRASSE", "ß"))
        XCTAssertTrue(TextFolding.localizedStandardContains("Việt Nam", "viet"))
        XCTAssertTrue(TextFolding.localizedStandardContains("Ｚürich", "zur"))
        XCTAssertTrue(TextFolding.localizedStandardContains("Zu\u{308}rich", "zür"))
        XCTAssertTrue(TextFolding.localizedStandardContains("Łódź", "lodz"))
        XCTAssertTrue(TextFolding.localizedStandardContains("Trip to Paris", "to p"))
        XCTAssertTrue(TextFolding.localizedStandardContains("abc", "ABC"))
        XCTAssertFalse(TextFolding.localizedStandardContains("Paris", "\u{301}"))
        XCTAssertFalse(TextFolding.localizedStandardContains("Zurich", "zürichs"))
        XCTAssertFalse(TextFolding.localizedStandardContains("", "a"))
        XCTAssertFalse(TextFolding.localizedStandardContains("ab", "abc"))
        XCTAssertFalse(TextFolding.localizedStandardContains("か", "が"))
        XCTAssertFalse(TextFolding.localizedStandardContains("ıs", "is"))
    }

    // MARK: standardCompare

    /// The documented order.
    func testStandardCompareOrder() {
        let expected = ["a", "A", "á", "b", "Trip 2", "Trip 10", "zebra", "Zürich", "Zz"]
        checkOrder(expected)
        // Finder order as Foundation's localizedStandardCompare gives it (root locale),
        // except that canonically equivalent strings compare equal here.
        checkOrder(["1", "01", "001", "2", "10", "a", "A", "á", "Á", "ä", "a b", "a-b", "ab", "aB", "Ab", "b",
                    "e", "E", "é", "f", "l", "ł", "m", "o", "ø", "p", "ss", "SS", "ß", "st", "trip 2", "Trip 2",
                    "Trip 02", "Trip 10", "x 1", "x1", "x01", "x1.5", "x1.10", "zebra", "Zürich", "Zz", "α", "и", "中"])
        XCTAssertEqual(TextFolding.standardCompare("é", "e\u{301}"), 0)
        XCTAssertEqual(TextFolding.standardCompare("Trip 2", "Trip 2"), 0)
        XCTAssertEqual(TextFolding.standardCompare("", ""), 0)
        XCTAssertEqual(TextFolding.standardCompare("", "a"), -1)
        XCTAssertEqual(TextFolding.standardCompare("aá", "áa"), -1)
        XCTAssertEqual(TextFolding.standardCompare("2", "１０"), -1)
        XCTAssertEqual(TextFolding.standardCompare("１０", "10"), 1)
        XCTAssertEqual(TextFolding.standardCompare("trip 02", "Trip 2"), -1)   // case before leading zeros
        XCTAssertEqual(TextFolding.standardCompare("á1", "a01"), 1)            // diacritics before leading zeros
        XCTAssertEqual(TextFolding.standardCompare("a~b", "ab"), -1)           // punctuation before letters
        // Whitespace, then ASCII punctuation in root-collation order, then digits.
        checkOrder(["a\ta", "a a", "a_a", "a-a", "a,a", "a;a", "a:a", "a!a", "a?a", "a.a", "a'a", "a\"a", "a(a",
                    "a)a", "a[a", "a]a", "a{a", "a}a", "a@a", "a*a", "a/a", "a\\a", "a&a", "a#a", "a%a", "a`a",
                    "a^a", "a+a", "a<a", "a=a", "a>a", "a|a", "a~a", "a$a", "a–a", "a€a", "a0a", "aa"])
        XCTAssertEqual(TextFolding.standardCompare("1a", "a"), -1)             // numbers before letters
        XCTAssertEqual(TextFolding.standardCompare("99999999999999999999999", "100000000000000000000000"), -1)
        XCTAssertEqual(TextFolding.standardCompare("file0", "file00"), -1)
        XCTAssertEqual(TextFolding.standardCompare("ǅ", "Ǆ"), 1)               // tie broken by code point
    }

    /// Latin letters without a canonical decomposition sort beside the letters
    /// they are written as (æ as ae, þ as th, ð as d, ı as i …), just after
    /// that spelling, not after z: Foundation sorts "Ærø" beside "Aarhus".
    func testLettersWithoutDecompositionSortBesideTheirSpelling() {
        checkOrder(["Aalborg", "Aarhus", "ae", "AE", "æ", "Æ", "Ærø", "Afyon", "b"])
        checkOrder(["od", "oe", "œ", "Œ", "Œuvre", "of", "Oslo"])
        checkOrder(["ii", "ij", "ĳ", "Ĳ", "Ĳssel", "ik"])
        checkOrder(["c", "d", "ð", "Ð", "đ", "Đ", "dz", "ǆ", "Ǆ", "e"])
        checkOrder(["tg", "th", "þ", "Þ", "Þingvellir", "ti"])
        checkOrder(["h", "ħ", "Ħ", "i", "I", "ı", "Irmak", "Işık", "Izmir", "j"])
        checkOrder(["k", "ĸ", "ka", "l", "ł", "Ł", "lj", "ǉ", "lm", "Łódź", "m"])
        checkOrder(["n", "ŋ", "Ŋ", "na", "nj", "ǌ", "o", "ø", "Ø", "Ørsted", "p"])
        checkOrder(["ad", "ae", "æ", "ǽ", "Ǽ", "af"])
        // Every lowercase letter of Latin-1 and Latin Extended-A sorts before "zz"
        // (but ŉ, which case folds to ʼn: its apostrophe is a letter of its own).
        for v in UInt32(0xDF)...0x17F where v != 0x149 {
            guard let x = Unicode.Scalar(v), x.properties.isLowercase else { continue }
            XCTAssertEqual(TextFolding.standardCompare(String(x), "zz"), -1, "\(String(x)) U+\(String(v, radix: 16))")
        }
    }

    private func checkOrder(_ expected: [String], file: StaticString = #filePath, line: UInt = #line) {
        for i in expected.indices {
            for j in expected.indices {
                let want = i < j ? -1 : (i == j ? 0 : 1)
                XCTAssertEqual(TextFolding.standardCompare(expected[i], expected[j]), want,
                               "\(expected[i]) vs \(expected[j])", file: file, line: line)
                XCTAssertEqual(compareUTF8(expected[i], expected[j]), want, "utf8 \(expected[i]) vs \(expected[j])",
                               file: file, line: line)
            }
        }
        var rng = SplitMix(seed: 7)
        for _ in 0..<5 {
            let sorted = expected.shuffled(using: &rng).sorted { TextFolding.standardCompare($0, $1) < 0 }
            XCTAssertEqual(sorted, expected, file: file, line: line)
        }
    }

    // MARK: Random strings

    private static let alphabet: [String] = [
        "a", "b", "e", "o", "u", "z", "A", "E", "O", "Z", "á", "é", "ö", "ü", "Á", "Ö", "Ü", "e\u{301}", "o\u{308}",
        "U\u{308}", "ł", "Ł", "ß", "s", "S", "0", "1", "2", "9", "0", " ", "-", ".", "_", "~", "–", "\t", "Ｂ", "２", "ı", "İ", "\u{301}",
        "\u{323}", "ǅ", "Ǆ", "が", "か\u{3099}", "か", "ᾳ", "α", "Σ", "ς", "👍", "\u{FE0F}", "中", "\u{10400}",
        "\u{10428}", "ǰ", "ﬁ", "Ａ", "\u{212B}", "\u{E0101}", "\u{2F800}", "\u{E0067}", "🏴\u{E0067}\u{E0062}\u{E007F}",
        "æ", "Æ", "ǽ", "þ", "ð", "ŋ", "ǉ", "ŀ", "œ", "th", "d",
    ]

    /// A random string and a canonically equivalent spelling of it.
    private func randomString(_ rng: inout SplitMix) -> (String, String) {
        var s = "", alt = ""
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            let piece = Self.alphabet.randomElement(using: &rng)!
            s += piece
            switch piece {
            case "á": alt += "a\u{301}"
            case "e\u{301}": alt += "é"
            case "ü": alt += "u\u{308}"
            case "o\u{308}": alt += "ö"
            case "が": alt += "か\u{3099}"
            case "ᾳ": alt += "α\u{345}"
            case "\u{212B}": alt += "A\u{30A}"
            case "ǰ": alt += "j\u{30C}"
            default: alt += piece
            }
        }
        return (s, alt)
    }

    private func randomStrings(_ n: Int) -> [(String, String)] {
        var rng = SplitMix(seed: 2024)
        return (0..<n).map { _ in randomString(&rng) }
    }

    func testCompareIsATotalOrderOnRandomStrings() {
        let pairs = randomStrings(2000)
        let strings = pairs.map(\.0)
        // Canonically equivalent spellings compare equal, with either API.
        for (s, alt) in pairs {
            XCTAssertEqual(TextFolding.standardCompare(s, alt), 0, "\(s.debugDescription) vs \(alt.debugDescription)")
            XCTAssertEqual(compareUTF8(s, alt), 0, "\(s.debugDescription) vs \(alt.debugDescription)")
        }
        // Sorting then checking every pair proves antisymmetry and transitivity
        // (the sorted sequence is consistent with every pairwise answer).
        let sorted = strings.sorted { TextFolding.standardCompare($0, $1) < 0 }
        var bytes = sorted.map { Array($0.utf8) }
        var failures = 0
        for i in 0..<sorted.count {
            for j in i..<sorted.count {
                let r = TextFolding.standardCompare(sorted[i], sorted[j])
                let back = TextFolding.standardCompare(sorted[j], sorted[i])
                if r > 0 || r != -back || (r == 0) != (sorted[i] == sorted[j]) {
                    failures += 1
                    if failures < 10 {
                        XCTFail("\(sorted[i].debugDescription) vs \(sorted[j].debugDescription): \(r), \(back)")
                    }
                }
            }
        }
        XCTAssertEqual(failures, 0)
        // The UTF-8 variant agrees (on a sample of pairs, including every neighbor).
        var rng = SplitMix(seed: 99)
        for k in 0..<20_000 {
            let i = k < sorted.count - 1 ? k : Int.random(in: 0..<sorted.count, using: &rng)
            let j = k < sorted.count - 1 ? k + 1 : Int.random(in: 0..<sorted.count, using: &rng)
            let r = bytes[i].withUnsafeBufferPointer { p in
                bytes[j].withUnsafeBufferPointer { q in TextFolding.standardCompare(utf8: p, q) }
            }
            XCTAssertEqual(r, TextFolding.standardCompare(sorted[i], sorted[j]))
        }
        bytes.removeAll()
    }

    func testCompareMatchesReferenceImplementation() {
        let strings = randomStrings(2000).map(\.0) + ["x\u{301}1", "\u{301}a", "\u{301}", "1\u{301}2", "ａ", "Ａ", "ﬁ", "ŉ"]
        var rng = SplitMix(seed: 5)
        let keys = strings.map(ReferenceKey.init)
        for _ in 0..<40_000 {
            let i = Int.random(in: 0..<strings.count, using: &rng), j = Int.random(in: 0..<strings.count, using: &rng)
            let want = keys[i].compare(keys[j])
            let got = TextFolding.standardCompare(strings[i], strings[j])
            if got != want {
                XCTFail("\(strings[i].debugDescription) vs \(strings[j].debugDescription): \(got), reference \(want)")
                return
            }
        }
    }

    func testASCIIFastPathsEqualGeneralPaths() {
        var rng = SplitMix(seed: 11)
        let alphabet = Array("aAbBzZ09 0-_~.\t1".utf8)
        let strings: [[UInt8]] = (0..<600).map { _ in
            (0..<Int.random(in: 0...7, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
        }
        for a in strings {
            a.withUnsafeBufferPointer { pa in
                for (ci, di) in [(true, false), (false, true), (true, true)] {
                    let mode = TextFolding.modeIndex(ci, di)
                    var fast: [UInt8] = [], slow: [UInt8] = []
                    XCTAssertTrue(TextFolding.foldFast(pa, mode: mode, into: &fast))
                    TextFolding.foldSlow(String(decoding: a, as: UTF8.self), mode: mode, into: &slow)
                    XCTAssertEqual(fast, slow)
                }
            }
            for b in strings.prefix(150) {
                a.withUnsafeBufferPointer { pa in
                    b.withUnsafeBufferPointer { pb in
                        XCTAssertEqual(TextFolding.asciiCompare(pa, pb), TextFolding.collate(pa, pb),
                                       "\(String(decoding: a, as: UTF8.self).debugDescription) vs \(String(decoding: b, as: UTF8.self).debugDescription)")
                    }
                }
            }
        }
    }

    func testFoldPathsAgreeOnRandomStrings() {
        for (s, alt) in randomStrings(2000) {
            for (ci, di) in [(false, false), (true, false), (false, true), (true, true)] {
                let f = TextFolding.fold(s, caseInsensitive: ci, diacriticInsensitive: di)
                XCTAssertEqual(foldUTF8(Array(s.utf8), ci, di), Array(f.utf8), s.debugDescription)
                if ci || di {
                    // The definition NFC(T(NFD(s))) and canonical equivalence.
                    let mode = TextFolding.modeIndex(ci, di)
                    var slow: [UInt8] = []
                    TextFolding.foldSlow(s, mode: mode, into: &slow)
                    XCTAssertEqual(Array(f.utf8), slow, s.debugDescription)
                    let g = TextFolding.fold(alt, caseInsensitive: ci, diacriticInsensitive: di)
                    XCTAssertEqual(Array(f.utf8), Array(g.utf8), "\(s.debugDescription) vs \(alt.debugDescription)")
                    XCTAssertEqual(Array(f.utf8), Array(TextFolding.nfcBytes(f)), "output is NFC")
                }
            }
        }
    }

    // MARK: Speed

    func testSpeed() {
        let words = ["Trip to Paris", "Weekend in Rome", "BUSINESS Meeting", "zurich", "Family Visit 2024",
                     "Zürich Ausflug", "Crème brûlée", "São Paulo", "Łódź", "Việt Nam"].map { Array($0.utf8) }
        _ = TextFolding.fold("é", caseInsensitive: true, diacriticInsensitive: true)   // build the tables
        let n = 200_000
        var out: [UInt8] = []
        out.reserveCapacity(64)
        var total = 0
        let start = ContinuousClock.now
        for i in 0..<n {
            out.removeAll(keepingCapacity: true)
            words[i % words.count].withUnsafeBufferPointer {
                TextFolding.fold(utf8: $0, caseInsensitive: true, diacriticInsensitive: true, into: &out)
            }
            total &+= out.count
        }
        let foldTime = ContinuousClock.now - start
        var acc = 0
        let start2 = ContinuousClock.now
        for i in 0..<n {
            let a = words[i % words.count], b = words[(i / words.count + i) % words.count]
            acc &+= a.withUnsafeBufferPointer { p in b.withUnsafeBufferPointer { q in TextFolding.standardCompare(utf8: p, q) } }
        }
        let compareTime = ContinuousClock.now - start2
        print("TextFolding: \(n) folds \(foldTime), \(n) compares \(compareTime) (checksum \(total) \(acc))")
        // Generous bound: even unoptimized builds stay far below it.
        XCTAssertLessThan(foldTime, .seconds(10))
    }
}

/// A straightforward implementation of the documented comparison, for
/// checking the one-pass comparator: keys per level from the NFC scalars.
private struct ReferenceKey {
    var primary: [UInt32] = []
    var groups: [[UInt32]] = [[]]   // [0]: leading marks; then one per element
    var tertiary: [UInt32] = []
    var zeros: [Int] = []
    var nfc: [UInt32] = []

    init(_ s: String) {
        let scalars = TextFolding.nfcScalars(s)
        nfc = scalars.map(\.value)
        var digits: [UInt32]? = nil
        var numberTertiary: UInt32 = 0
        func flush() {
            guard let ds = digits else { return }
            let significant = Array(ds.drop { $0 == 0 })
            primary.append(2 << 24)
            primary.append(UInt32(significant.count))
            primary.append(contentsOf: significant)
            groups.append([])
            tertiary.append(numberTertiary)
            zeros.append(ds.count - significant.count)
            digits = nil
            numberTertiary = 0
        }
        for x in scalars {
            let v = x.value
            if x.properties.generalCategory == .nonspacingMark && v != 0x3099 && v != 0x309A {
                flush()
                groups[groups.count - 1].append(v)
                continue
            }
            if (0x30...0x39).contains(v) || (0xFF10...0xFF19).contains(v) {
                digits = (digits ?? []) + [v >= 0xFF10 ? v - 0xFF10 : v - 0x30]
                if v >= 0xFF10 { numberTertiary = 1 }
                continue
            }
            flush()
            let p = x.properties
            var tert: UInt32 = 0
            if p.changesWhenLowercased { tert |= 2 } else if p.changesWhenCaseFolded { tert |= 4 }
            if (0xFF01...0xFF5E).contains(v) { tert |= 1 }
            var group: [UInt32] = []
            if let (_, kind) = ScalarData.strokeLetters[v] { group.append(kind == 2 ? 0x338 : 0x335) }
            group += ScalarData.nfd([x]).filter(ScalarData.isStrippable).map(\.value)
            let outputs = TextFolding.fold(String(x), caseInsensitive: true, diacriticInsensitive: true).unicodeScalars
            for (k, y) in outputs.enumerated() {
                let ownGroup = k == outputs.count - 1 ? group : []
                if let spelling = Self.spellings[y] {
                    for (n, letter) in spelling.unicodeScalars.enumerated() {
                        primary.append(3 << 24 | letter.value)
                        groups.append(n == spelling.unicodeScalars.count - 1 ? [y.value] + ownGroup : [])
                        tertiary.append(tert)
                    }
                    continue
                }
                let rank = ScalarData.rankOf(y.properties.generalCategory)
                let punctuation = Array("_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".unicodeScalars)
                let value = y.value < 0x80 && rank == 1 ? UInt32(punctuation.firstIndex(of: y)!) : y.value
                primary.append(rank << 24 | value)
                groups.append(ownGroup)
                tertiary.append(tert)
            }
        }
        flush()
    }

    /// The documented sort spellings of Latin letters without a decomposition.
    static let spellings: [Unicode.Scalar: String] = [
        "æ": "ae", "œ": "oe", "ĳ": "ij", "þ": "th", "ð": "d", "ı": "i", "ŋ": "n", "ĸ": "k", "ŀ": "l",
        "ǆ": "dz", "ǳ": "dz", "ǉ": "lj", "ǌ": "nj", "ȷ": "j",
    ]

    private static func lexicographic<T: Comparable>(_ a: [T], _ b: [T]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    func compare(_ o: ReferenceKey) -> Int {
        var r = Self.lexicographic(primary, o.primary)
        if r != 0 { return r }
        for (g, h) in zip(groups, o.groups) {
            r = Self.lexicographic(g, h)
            if r != 0 { return r }
        }
        r = Self.lexicographic(tertiary, o.tertiary)
        if r != 0 { return r }
        r = Self.lexicographic(zeros, o.zeros)
        if r != 0 { return r }
        return Self.lexicographic(nfc, o.nfc)
    }
}

/// A small seeded generator, so failures reproduce.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
