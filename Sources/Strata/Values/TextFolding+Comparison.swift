// Finder-order comparison (`standardCompare`, behind the `strata_standard`
// SQLite collation of localizedStandard sorts): an allocation-free pass for
// ASCII text, and for other text a level-by-level walk over the collation
// elements of its NFC form, using the fold tables of TextFolding+Tables.swift.

// NFD and NFC through the standard library's SPI: see TextFolding.swift.
@_spi(_Unicode) import Swift
import Glibc

extension TextFolding {
    /// Finder order, like Foundation's `localizedStandardCompare` without
    /// locale tailoring. Returns -1, 0 or 1. Levels, each consulted only when
    /// all earlier ones tie:
    /// 1. primary: the case- and diacritic-folded text, where runs of ASCII
    ///    (and fullwidth) digits compare by numeric value ("Trip 2" <
    ///    "Trip 10", "01" ties "1"), and classes sort whitespace/controls <
    ///    punctuation/symbols < numbers < everything else. Letters go by code
    ///    point (Latin < Greek < Cyrillic < … < CJK), except that the Latin
    ///    letters without a canonical decomposition sort as they are spelled
    ///    (`sortSpelling`): æ as ae, œ as oe, ĳ as ij, þ as th, ð as d, ı as i,
    ///    ŋ as n, ĸ as k, ŀ as l, ǆ ǉ ǌ ǳ as dz lj nj dz, ȷ as j (ß and ſ fold
    ///    to ss and s, ø ł đ ħ … to their base letter), so "Ærø" sorts beside
    ///    "Aarhus" as in Foundation, not after "z"; ASCII punctuation and
    ///    symbols in the root collation's order (see `asciiPunctuationOrder`),
    ///    then other punctuation and symbols by code point;
    /// 2. diacritics, left to right: unaccented first ("a" < "á", "l" < "ł",
    ///    "ae" < "æ" < "ǽ", "d" < "ð" < "đ");
    /// 3. case, left to right: lowercase first ("a" < "A"; "ab" < "aB" < "Ab");
    ///    fullwidth after narrow, and case-fold variants (ß, ς, ſ) after both;
    /// 4. leading zeros: fewer first ("1" < "01" < "001");
    /// 5. code-point order of the NFC text (`String <`).
    /// So 0 means canonically equivalent (`String ==`), e.g. "é" (U+00E9) and
    /// "e\u{301}"; Foundation instead orders those two apart.
    /// Example order: a, A, á, Á, ä, b, trip 2, Trip 2, Trip 02, Trip 10,
    /// zebra, Zürich, Zz.
    static func standardCompare(_ a: String, _ b: String) -> Int {
        var x = a, y = b
        return x.withUTF8 { pa in y.withUTF8 { pb in standardCompare(utf8: pa, pb) } }
    }

    /// ``standardCompare(_:_:)`` over UTF-8 buffers (for a SQLite collation);
    /// invalid UTF-8 compares as if repaired with U+FFFD.
    static func standardCompare(utf8 a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        if isASCII(a) && isASCII(b) { return asciiCompare(a, b) }
        if bytesEqual(a, b) { return 0 }
        let readyA = isQuickNFC(a), readyB = isQuickNFC(b)
        if readyA && readyB { return collate(a, b) }
        let na = readyA ? [] : nfcBytes(String(decoding: a, as: UTF8.self))
        let nb = readyB ? [] : nfcBytes(String(decoding: b, as: UTF8.self))
        return na.withUnsafeBufferPointer { pna in
            nb.withUnsafeBufferPointer { pnb in collate(readyA ? a : pna, readyB ? b : pnb) }
        }
    }

    // MARK: - Comparison
    //
    // The comparison keys are computed from the NFC form of the text, so
    // canonically equivalent texts get equal keys. Each scalar x of the NFC
    // text: a combining mark that diacritic folding removes (Mn) joins the
    // diacritic group of the element before it (or the leading group);
    // anything else yields the scalars of T(x) (case + diacritic folding,
    // from the tables) as primary elements, except that runs of ASCII and
    // fullwidth digits form one number element. The last element of x gets,
    // as its diacritic group, the stroke overlay of x (ł ø …) and the marks
    // removed from x's own decomposition; every element of x gets x's case
    // entry (upper, fullwidth, case variant).

    /// Primary-level class of an ASCII byte: 0 whitespace/controls,
    /// 1 punctuation/symbols, 2 digits (numbers), 3 letters. Non-ASCII scalars
    /// have class 0 (separators, controls, format), 1 (punctuation, symbols)
    /// or 3 (everything else).
    @inline(__always) static func asciiRank(_ b: UInt8) -> UInt32 {
        switch b {
        case 0x00...0x20, 0x7F: return 0
        case 0x30...0x39: return 2
        case 0x41...0x5A, 0x61...0x7A: return 3
        default: return 1
        }
    }

    /// Primary weight of a non-digit ASCII byte (letters case-folded).
    @inline(__always) static func asciiWeight(_ b: UInt8) -> UInt32 {
        asciiWeights[Int(b & 0x7F)]
    }

    /// ASCII punctuation and symbols in the order of the Unicode root
    /// collation (DUCET/CLDR), as Finder sorts them.
    static let asciiPunctuationOrder = Array("_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".utf8)

    /// Primary weights of the ASCII bytes: class in bits 24–25; letters by
    /// lowercase code point; punctuation and symbols by their root-collation
    /// position (0–31, so before all non-ASCII punctuation and symbols, which
    /// go by code point); whitespace and controls by code point.
    static let asciiWeights: UnsafePointer<UInt32> = {
        let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 128)
        for b in 0..<128 {
            let byte = UInt8(b)
            var value = UInt32(byte.asciiLowercased)
            if asciiRank(byte) == 1, let k = asciiPunctuationOrder.firstIndex(of: byte) { value = UInt32(k) }
            w[b] = asciiRank(byte) << 24 | value
        }
        return UnsafePointer(w)
    }()

    /// The ASCII letters a Latin letter without a canonical decomposition
    /// sorts as at the primary level (after case folding, so lowercase only),
    /// as an offset and length in ``sortSpellings``; nil for any other scalar.
    /// Where the root collation expands a letter (æ œ ĳ and the dz digraphs) this
    /// is its expansion; where it gives a letter a weight of its own just after
    /// another (ð ı ŋ ĸ) or after z (þ), the letter sorts as that other letter
    /// (th for þ, as in English and Icelandic transliteration) and is told
    /// apart at the diacritic level. Ranges keep the test cheap: these are the
    /// only non-ASCII outputs of case and diacritic folding in U+00E6–U+0237.
    @inline(__always) static func sortSpelling(_ v: UInt32) -> (offset: Int, count: Int)? {
        guard v &- 0xE6 <= 0x237 - 0xE6 else { return nil }
        switch v {
        case 0xE6: return (0, 2)            // æ ae
        case 0x153: return (2, 2)           // œ oe
        case 0x133: return (4, 2)           // ĳ ij
        case 0x237: return (5, 1)           // ȷ j
        case 0xFE: return (6, 2)            // þ th
        case 0xF0: return (8, 1)            // ð d
        case 0x1C6, 0x1F3: return (8, 2)    // ǆ ǳ dz
        case 0x131: return (10, 1)          // ı i
        case 0x138: return (11, 1)          // ĸ k
        case 0x14B: return (12, 1)          // ŋ n
        case 0x1CC: return (12, 2)          // ǌ nj
        case 0x140: return (14, 1)          // ŀ l
        case 0x1C9: return (14, 2)          // ǉ lj
        default: return nil
        }
    }

    /// The letters of ``sortSpelling(_:)``, overlapping.
    static let sortSpellings: UnsafePointer<UInt8> = {
        let text = Array("aeoeijthdziknjlj".utf8)
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: text.count)
        p.initialize(from: text, count: text.count)
        return UnsafePointer(p)
    }()

    /// Primary weight of a folded scalar that is not part of a number.
    @inline(__always) static func weight(_ v: UInt32) -> UInt32 {
        if v < 0x80 {
            // A digit here is not part of a number (T gave it to another scalar).
            return isDigit(UInt8(v)) ? 3 << 24 | v : asciiWeight(UInt8(v))
        }
        return (ScalarData.info(v) >> ScalarData.rankShift & 3) << 24 | v
    }

    /// Weight of any number element at the primary level (numbers then
    /// compare by value).
    static let numberWeight: UInt32 = 2 << 24

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { (b &- 0x30) < 10 }

    /// The comparison for ASCII-only text: the same levels as ``collate(_:_:)``
    /// (ASCII has no diacritics), in one pass without allocation.
    static func asciiCompare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let na = a.count, nb = b.count
        let weights = asciiWeights   // (read once: a static is behind a once-check per access)
        // Identical leading bytes decide nothing (same weights, same case, same digits),
        // except that a number is compared whole: start at the number the prefix ends in.
        var k = 0
        let m = min(na, nb)
        if m > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
            while k + 8 <= m && ra.loadUnaligned(fromByteOffset: k, as: UInt64.self) == rb.loadUnaligned(fromByteOffset: k, as: UInt64.self) {
                k += 8
            }
            while k < m && pa[k] == pb[k] { k += 1 }
            while k > 0 && isDigit(pa[k - 1]) { k -= 1 }
        }
        var i = k, j = k
        var tertiary = 0, zeros = 0
        while i < na && j < nb {
            let ca = a[i], cb = b[j]
            let da = isDigit(ca), db = isDigit(cb)
            if da && db {
                var za = 0, zb = 0
                while i < na && a[i] == 0x30 { za += 1; i += 1 }
                while j < nb && b[j] == 0x30 { zb += 1; j += 1 }
                var ea = i, eb = j
                while ea < na && isDigit(a[ea]) { ea += 1 }
                while eb < nb && isDigit(b[eb]) { eb += 1 }
                if ea - i != eb - j { return ea - i < eb - j ? -1 : 1 }
                while i < ea {
                    if a[i] != b[j] { return a[i] < b[j] ? -1 : 1 }
                    i += 1; j += 1
                }
                if zeros == 0 && za != zb { zeros = za < zb ? -1 : 1 }
                continue
            }
            let wa = da ? numberWeight : weights[Int(ca & 0x7F)]
            let wb = db ? numberWeight : weights[Int(cb & 0x7F)]
            if wa != wb { return wa < wb ? -1 : 1 }
            if tertiary == 0 {
                let ua = (ca &- 0x41) < 26, ub = (cb &- 0x41) < 26
                if ua != ub { tertiary = ua ? 1 : -1 }
            }
            i += 1; j += 1
        }
        if i < na { return 1 }
        if j < nb { return -1 }
        if tertiary != 0 { return tertiary }
        if zeros != 0 { return zeros }
        return byteOrder(a, b)
    }

    /// Lexicographic byte order (= code-point order for UTF-8).
    @inline(__always) static func byteOrder(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let m = min(a.count, b.count)
        if m > 0 {
            let r = memcmp(a.baseAddress!, b.baseAddress!, m)
            if r != 0 { return r < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether `p` is valid UTF-8 already in NFC as far as the tables can
    /// tell cheaply (no combining marks, jamo or scalars that NFC replaces).
    static func isQuickNFC(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = p.count
        while i < n {
            let b = p[i]
            if b < 0x80 { i += 1; continue }
            let (v, len) = decode(p, i)
            if len == 0 { return false }
            i += len
            if v < 0x300 { continue }
            if v >= 0x20000 {
                if isHighIdentity(v) { continue }
                return false
            }
            if ScalarData.info(v) & (ScalarData.sensitive | ScalarData.notNFC) != 0 { return false }
        }
        return true
    }

    /// NFC of `s` as UTF-8.
    static func nfcBytes(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for x in s._nfc { appendUTF8(x.value, &out) }
        return out
    }

    /// The NFC scalars of `s`.
    static func nfcScalars(_ s: String) -> [Unicode.Scalar] { Array(s._nfc) }

    /// One element at the primary level, with what the later levels need.
    struct CollationElement {
        /// Primary weight (``numberWeight`` for numbers).
        var weight: UInt32 = 0
        /// Numbers: count of significant digits, leading zeros, and the byte
        /// range of the significant digits.
        var digitCount = 0, zeros = 0, digitsStart = 0, digitsEnd = 0
        /// Case level entry: 2 upper, 1 fullwidth, 4 case variant (ß ς ſ).
        var tertiary: UInt32 = 0
        /// Diacritic group: stroke overlay (or 0), the removed marks of the
        /// scalar's decomposition (table), and the byte range of standalone
        /// removable marks that follow it.
        var stroke: UInt32 = 0
        var marks: UnsafePointer<UInt32>? = nil
        var markCount = 0
        var followStart = 0, followEnd = 0
    }

    /// Walks the collation elements of NFC UTF-8 text.
    struct CollationCursor {
        let p: UnsafeBufferPointer<UInt8>
        var i = 0
        /// Leading standalone removable marks (before any element).
        var leadStart = 0, leadEnd = 0
        /// Outputs of the current scalar not yet returned (UTF-8 in a pool).
        var pending: UnsafePointer<UInt8>? = nil
        var pendingCount = 0
        /// The current scalar's group and case entry, given to its last output.
        var last = CollationElement()
        /// Letters of a sort spelling not yet returned, and the element the
        /// last of them becomes (the spelled letter's group and case entry).
        var spelled: UnsafePointer<UInt8>? = nil
        var spelledCount = 0
        var spelledLast = CollationElement()

        init(_ p: UnsafeBufferPointer<UInt8>) {
            self.p = p
            leadEnd = skipMarks(from: 0)
            i = leadEnd
        }

        /// The end of the run of removable marks starting at byte `k`.
        @inline(__always) func skipMarks(from k: Int) -> Int {
            var k = k
            while k < p.count && p[k] >= 0xCC {
                let (v, len) = TextFolding.decode(p, k)
                if len == 0 || ScalarData.info(v) & ScalarData.strippable == 0 { break }
                k += len
            }
            return k
        }

        /// The digit value of the scalar at `k` (ASCII or fullwidth), or nil.
        @inline(__always) func digit(at k: Int) -> (Int, Int)? {
            let b = p[k]
            if TextFolding.isDigit(b) { return (Int(b - 0x30), 1) }
            if b == 0xEF && k + 2 < p.count && p[k + 1] == 0xBC && (p[k + 2] &- 0x90) < 10 {
                return (Int(p[k + 2] - 0x90), 3)
            }
            return nil
        }

        mutating func next() -> CollationElement? {
            if spelledCount > 0 { return popSpelled() }
            if pendingCount > 0 { return popPending() }
            guard i < p.count else { return nil }
            if let (d, len) = digit(at: i) { return number(first: d, len) }
            let b = p[i]
            if b < 0x80 {
                i += 1
                let upper = (b &- 0x41) < 26
                var e = CollationElement(weight: TextFolding.asciiWeight(b), tertiary: upper ? 2 : 0)
                if i < p.count && p[i] >= 0xCC {
                    e.followStart = i
                    i = skipMarks(from: i)
                    e.followEnd = i
                }
                return e
            }
            let (v, len) = TextFolding.decode(p, i)
            i += len
            var e = CollationElement()
            var output = v
            if let plane = FoldPlane.plane(for: v) {
                let info = plane.info(v)
                if info & ScalarData.upper != 0 { e.tertiary |= 2 }
                if info & ScalarData.wide != 0 { e.tertiary |= 1 }
                if info & ScalarData.caseVariant != 0 { e.tertiary |= 4 }
                switch info >> ScalarData.strokeShift & 3 {
                case 1: e.stroke = 0x335
                case 2: e.stroke = 0x338
                default: break
                }
                let mc = Int(info >> ScalarData.markCountShift & 0xF)
                if mc > 0 {
                    e.marks = UnsafePointer(plane.marks + Int(info >> ScalarData.markOffsetShift))
                    e.markCount = mc
                }
                let entry = plane.entry(v, 3)
                if entry & FoldPlane.identityBit == 0 {
                    let cnt = Int(entry & 0x3F)
                    pending = UnsafePointer(plane.pool + Int(entry >> 6 & 0xFF_FFFF))
                    pendingCount = cnt
                    output = 0
                }
            }
            if i < p.count && p[i] >= 0xCC {
                e.followStart = i
                i = skipMarks(from: i)
                e.followEnd = i
            }
            if output != 0 {
                if output >= 0xE6, let s = TextFolding.sortSpelling(output) { return spell(s, e, output) }
                e.weight = TextFolding.weight(output)
                return e
            }
            last = e
            if pendingCount == 0 {
                // The scalar folds to nothing (cannot happen for NFC text
                // outside marks, which are skipped); continue with the next.
                return next()
            }
            return popPending()
        }

        /// The next output of the current scalar; the last one carries the
        /// scalar's diacritic group.
        @inline(__always) mutating func popPending() -> CollationElement {
            let q = pending.unsafelyUnwrapped
            var v = UInt32(q[0]), len = 1
            if v >= 0x80 {
                (v, len) = TextFolding.decode(UnsafeBufferPointer(start: q, count: pendingCount), 0)
            }
            pending = q + len
            pendingCount -= len
            var e = last
            if pendingCount > 0 {
                e.stroke = 0; e.marks = nil; e.markCount = 0; e.followStart = 0; e.followEnd = 0
            }
            if v >= 0xE6, let s = TextFolding.sortSpelling(v) { return spell(s, e, v) }
            e.weight = TextFolding.weight(v)
            return e
        }

        /// The first element of `letter`'s sort spelling; `e` is the element
        /// the letter would have been. The last letter of the spelling takes
        /// `e`'s group, led by `letter` itself, so the letter sorts just after
        /// its spelling at the diacritic level ("ae" < "æ" < "ǽ").
        mutating func spell(_ s: (offset: Int, count: Int), _ e: CollationElement, _ letter: UInt32) -> CollationElement {
            var last = e
            if last.stroke == 0 { last.stroke = letter }
            spelled = TextFolding.sortSpellings + s.offset
            spelledCount = s.count
            spelledLast = last
            return popSpelled()
        }

        /// The next letter of a sort spelling.
        @inline(__always) mutating func popSpelled() -> CollationElement {
            let q = spelled.unsafelyUnwrapped
            spelled = q + 1
            spelledCount -= 1
            var e = spelledLast
            e.weight = TextFolding.asciiWeight(q[0])
            if spelledCount > 0 {
                e.stroke = 0; e.marks = nil; e.markCount = 0; e.followStart = 0; e.followEnd = 0
            }
            return e
        }

        /// A run of digits, starting with digit `d` (`len` bytes) at `i`. A
        /// removable mark after a digit ends the run and forms its group.
        mutating func number(first d: Int, _ len: Int) -> CollationElement {
            var e = CollationElement(weight: TextFolding.numberWeight)
            var d = d, len = len
            while true {
                if len == 3 { e.tertiary = 1 }
                if e.digitCount == 0 && d == 0 {
                    e.zeros += 1
                } else {
                    if e.digitCount == 0 { e.digitsStart = i }
                    e.digitCount += 1
                }
                i += len
                e.digitsEnd = i
                if i < p.count && p[i] >= 0xCC {
                    let end = skipMarks(from: i)
                    if end > i {
                        e.followStart = i; e.followEnd = end
                        i = end
                        return e
                    }
                }
                guard i < p.count, let (nd, nlen) = digit(at: i) else { return e }
                d = nd; len = nlen
            }
        }

        /// The digits of a number element's significant part, in order.
        @inline(__always) func digitValue(at k: inout Int) -> Int {
            let (d, len) = digit(at: k).unsafelyUnwrapped
            k += len
            return d
        }

        /// The scalar of the removable mark at byte `k` (advancing `k`).
        @inline(__always) func mark(at k: inout Int) -> UInt32 {
            let (v, len) = TextFolding.decode(p, k)
            k += len
            return v
        }
    }

    /// Compares diacritic groups: stroke, table marks, then following marks;
    /// a group that is a prefix of the other sorts first.
    static func compareGroups(_ x: CollationElement, _ ca: CollationCursor,
                              _ y: CollationElement, _ cb: CollationCursor) -> Int {
        var sx = GroupTokens(x), sy = GroupTokens(y)
        while true {
            let tx = sx.next(ca), ty = sy.next(cb)
            if tx != ty { return tx < ty ? -1 : 1 }
            if tx == 0 { return 0 }
        }
    }

    /// The tokens of one diacritic group (0 at the end).
    struct GroupTokens {
        var stroke: UInt32
        var marks: UnsafePointer<UInt32>?
        var markCount: Int
        var k: Int
        let end: Int
        init(_ e: CollationElement) {
            stroke = e.stroke; marks = e.marks; markCount = e.markCount; k = e.followStart; end = e.followEnd
        }
        init(leadStart: Int, leadEnd: Int) {
            stroke = 0; marks = nil; markCount = 0; k = leadStart; end = leadEnd
        }
        @inline(__always) mutating func next(_ c: CollationCursor) -> UInt32 {
            if stroke != 0 { defer { stroke = 0 }; return stroke }
            if markCount > 0 {
                let m = marks.unsafelyUnwrapped
                marks = m + 1; markCount -= 1
                return m[0]
            }
            if k < end { return c.mark(at: &k) }
            return 0
        }
    }

    /// The comparison of NFC UTF-8 texts, level by level in one pass.
    static func collate(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        var ca = CollationCursor(a), cb = CollationCursor(b)
        var secondary = 0, tertiary = 0, zeros = 0
        if ca.leadEnd > 0 || cb.leadEnd > 0 {
            var sx = GroupTokens(leadStart: ca.leadStart, leadEnd: ca.leadEnd)
            var sy = GroupTokens(leadStart: cb.leadStart, leadEnd: cb.leadEnd)
            while true {
                let tx = sx.next(ca), ty = sy.next(cb)
                if tx != ty { secondary = tx < ty ? -1 : 1; break }
                if tx == 0 { break }
            }
        }
        while true {
            guard let x = ca.next() else {
                if cb.next() != nil { return -1 }
                break
            }
            guard let y = cb.next() else { return 1 }
            if x.weight != y.weight { return x.weight < y.weight ? -1 : 1 }
            if x.weight == numberWeight {
                if x.digitCount != y.digitCount { return x.digitCount < y.digitCount ? -1 : 1 }
                var kx = x.digitsStart, ky = y.digitsStart
                for _ in 0..<x.digitCount {
                    let dx = ca.digitValue(at: &kx), dy = cb.digitValue(at: &ky)
                    if dx != dy { return dx < dy ? -1 : 1 }
                }
                if zeros == 0 && x.zeros != y.zeros { zeros = x.zeros < y.zeros ? -1 : 1 }
            }
            if secondary == 0 { secondary = compareGroups(x, ca, y, cb) }
            if tertiary == 0 && x.tertiary != y.tertiary { tertiary = x.tertiary < y.tertiary ? -1 : 1 }
        }
        if secondary != 0 { return secondary }
        if tertiary != 0 { return tertiary }
        if zeros != 0 { return zeros }
        return byteOrder(a, b)
    }
}
