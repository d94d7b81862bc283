// Canonical decomposition and composition (NFD, NFC) are not public API in
// Swift's standard library, but the library ships them as SPI (`_nfd`, `_nfc`,
// the normalizer that `String`'s own canonical-equivalence comparison and
// `_StringProcessing` use). They are used here only to build the lookup tables
// once and on the rare slow path (combining marks that must be recomposed).
// Using the standard library's own normalizer keeps folding consistent with
// `String ==` and with the Unicode version of the toolchain.
@_spi(_Unicode) import Swift
import Glibc

/// Unicode-correct text folding and Finder-order comparison for SQLite
/// functions and collations (SQLite's LIKE and lower() know only ASCII).
///
/// Folding (``fold(_:caseInsensitive:diacriticInsensitive:)``) is defined as
/// `NFC(T(NFD(s)))`, where `T` maps each scalar of the canonical decomposition:
/// - diacritic-insensitive: combining marks (general category Mn) are removed,
///   except the kana voiced sound marks U+3099/U+309A (が stays が, as in
///   Foundation); the Latin letters with stroke ł ø đ ħ ŧ ƀ ɨ ǥ ƶ ɉ ɍ ꝁ ᵽ (and
///   capitals) become their base letter; fullwidth ASCII U+FF01–U+FF5E becomes
///   ASCII. Variation selectors are Mn too, so "❤️" folds to "❤".
/// - case-insensitive: full case folding, computed per scalar as the
///   lowercase mapping, then upper-then-lower for scalars that still change
///   when case folded (ß → ss, ς → σ, ſ → s, ﬁ → fi, Cherokee). No locale:
///   I → i, İ → i̇ (i + U+0307; just i when also diacritic-insensitive), and
///   dotless ı stays ı, as in `String.lowercased()`.
/// With both, marks are removed before and after case folding, so "ᾳ" → "α".
/// The result is NFC, so canonically equivalent inputs fold to identical bytes.
/// With neither option the text is returned unchanged.
enum TextFolding {
    // MARK: - Public surface

    /// Folds text for comparison (see the type's documentation).
    static func fold(_ s: String, caseInsensitive: Bool, diacriticInsensitive: Bool) -> String {
        let mode = modeIndex(caseInsensitive, diacriticInsensitive)
        if mode == 0 { return s }
        var copy = s
        return copy.withUTF8 { p -> String in
            if asciiUnchanged(p, mode) { return s }
            var out: [UInt8] = []
            out.reserveCapacity(p.count)
            foldBytes(p, mode: mode, into: &out)
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Folds UTF-8 text, appending the folded UTF-8 to `out`. Equals
    /// `fold(String(decoding: utf8, as: UTF8.self), ...)`: invalid UTF-8 is
    /// folded as if repaired with U+FFFD.
    static func fold(utf8: UnsafeBufferPointer<UInt8>, caseInsensitive: Bool, diacriticInsensitive: Bool,
                     into out: inout [UInt8]) {
        let mode = modeIndex(caseInsensitive, diacriticInsensitive)
        if mode == 0 {
            if isValidUTF8(utf8) {
                out.append(contentsOf: utf8)
            } else {
                out.append(contentsOf: String(decoding: utf8, as: UTF8.self).utf8)
            }
            return
        }
        foldBytes(utf8, mode: mode, into: &out)
    }

    /// Foundation's `localizedStandardContains` without locale tailoring:
    /// case-, diacritic- and width-insensitive substring test. An empty needle
    /// (or one that folds to nothing, such as a lone combining mark) is not
    /// contained, as in Foundation.
    static func localizedStandardContains(_ haystack: String, _ needle: String) -> Bool {
        if needle.isEmpty { return false }
        var h = haystack, n = needle
        var fh: [UInt8] = [], fn: [UInt8] = []
        h.withUTF8 { fh.reserveCapacity($0.count); foldBytes($0, mode: 3, into: &fh) }
        n.withUTF8 { fn.reserveCapacity($0.count); foldBytes($0, mode: 3, into: &fn) }
        return containsBytes(fh, fn)
    }

    /// Finder order, like Foundation's `localizedStandardCompare` without
    /// locale tailoring. Returns -1, 0 or 1. Levels, each consulted only when
    /// all earlier ones tie:
    /// 1. primary: the case- and diacritic-folded text, where runs of ASCII
    ///    (and fullwidth) digits compare by numeric value ("Trip 2" <
    ///    "Trip 10", "01" ties "1"), and classes sort whitespace/controls <
    ///    punctuation/symbols < numbers < everything else. Letters go by code
    ///    point (Latin < Greek < Cyrillic < … < CJK); ASCII punctuation and
    ///    symbols in the root collation's order (see `asciiPunctuationOrder`),
    ///    then other punctuation and symbols by code point;
    /// 2. diacritics, left to right: unaccented first ("a" < "á", "l" < "ł");
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

    // MARK: - Modes

    /// 1: case-insensitive, 2: diacritic-insensitive, 3: both, 0: neither.
    @inline(__always) static func modeIndex(_ c: Bool, _ d: Bool) -> Int { (c ? 1 : 0) | (d ? 2 : 0) }

    // MARK: - UTF-8 helpers

    @inline(__always) static func isASCII(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        var acc: UInt8 = 0
        for b in p { acc |= b }
        return acc < 0x80
    }

    @inline(__always) static func bytesEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 { return true }
        return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    /// Whether folding ASCII-only text in `mode` would change nothing.
    @inline(__always) static func asciiUnchanged(_ p: UnsafeBufferPointer<UInt8>, _ mode: Int) -> Bool {
        if mode & 1 == 0 { return isASCII(p) }
        for b in p where b >= 0x80 || (b &- 0x41) < 26 { return false }
        return true
    }

    /// Decodes one scalar at `i` (`p[i] >= 0x80`): (value, length), or
    /// length 0 if the sequence is not well-formed UTF-8.
    @inline(__always) static func decode(_ p: UnsafeBufferPointer<UInt8>, _ i: Int) -> (UInt32, Int) {
        let n = p.count
        let b0 = UInt32(p[i])
        if b0 < 0xC2 { return (0, 0) }
        if b0 < 0xE0 {
            guard i + 1 < n else { return (0, 0) }
            let b1 = UInt32(p[i + 1])
            guard b1 & 0xC0 == 0x80 else { return (0, 0) }
            return ((b0 & 0x1F) << 6 | (b1 & 0x3F), 2)
        }
        if b0 < 0xF0 {
            guard i + 2 < n else { return (0, 0) }
            let b1 = UInt32(p[i + 1]), b2 = UInt32(p[i + 2])
            guard b1 & 0xC0 == 0x80, b2 & 0xC0 == 0x80 else { return (0, 0) }
            if b0 == 0xE0 && b1 < 0xA0 { return (0, 0) }    // overlong
            if b0 == 0xED && b1 >= 0xA0 { return (0, 0) }   // surrogate
            return ((b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F), 3)
        }
        if b0 < 0xF5 {
            guard i + 3 < n else { return (0, 0) }
            let b1 = UInt32(p[i + 1]), b2 = UInt32(p[i + 2]), b3 = UInt32(p[i + 3])
            guard b1 & 0xC0 == 0x80, b2 & 0xC0 == 0x80, b3 & 0xC0 == 0x80 else { return (0, 0) }
            if b0 == 0xF0 && b1 < 0x90 { return (0, 0) }    // overlong
            if b0 == 0xF4 && b1 >= 0x90 { return (0, 0) }   // > U+10FFFF
            return ((b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F), 4)
        }
        return (0, 0)
    }

    static func isValidUTF8(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while i < p.count {
            if p[i] < 0x80 { i += 1; continue }
            let (_, len) = decode(p, i)
            if len == 0 { return false }
            i += len
        }
        return true
    }

    @inline(__always) static func appendUTF8(_ v: UInt32, _ out: inout [UInt8]) {
        if v < 0x80 {
            out.append(UInt8(v))
        } else if v < 0x800 {
            out.append(UInt8(0xC0 | v >> 6)); out.append(UInt8(0x80 | v & 0x3F))
        } else if v < 0x10000 {
            out.append(UInt8(0xE0 | v >> 12)); out.append(UInt8(0x80 | v >> 6 & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        } else {
            out.append(UInt8(0xF0 | v >> 18)); out.append(UInt8(0x80 | v >> 12 & 0x3F))
            out.append(UInt8(0x80 | v >> 6 & 0x3F)); out.append(UInt8(0x80 | v & 0x3F))
        }
    }

    static func containsBytes(_ h: [UInt8], _ n: [UInt8]) -> Bool {
        if n.isEmpty || n.count > h.count { return false }
        return h.withUnsafeBufferPointer { hp in
            n.withUnsafeBufferPointer { np in
                let hb = hp.baseAddress!, nb = np.baseAddress!
                let last = hp.count - np.count
                var i = 0
                while i <= last {
                    guard let q = memchr(hb + i, Int32(np[0]), last - i + 1) else { return false }
                    let pos = hb.distance(to: q.assumingMemoryBound(to: UInt8.self))
                    if memcmp(hb + pos, nb, np.count) == 0 { return true }
                    i = pos + 1
                }
                return false
            }
        }
    }

    // MARK: - Folding

    /// Folds `p` in `mode` (1...3), appending NFC UTF-8 to `out`.
    static func foldBytes(_ p: UnsafeBufferPointer<UInt8>, mode: Int, into out: inout [UInt8]) {
        let start = out.count
        if !foldFast(p, mode: mode, into: &out) {
            out.removeSubrange(start...)
            foldSlow(String(decoding: p, as: UTF8.self), mode: mode, into: &out)
        }
    }

    /// Per-scalar table folding. Returns false (leaving partial output) when
    /// the text is not valid UTF-8, or when an output scalar could combine
    /// with what precedes it (a combining mark, a Hangul vowel/trailing jamo):
    /// then the slow path must normalize the whole text.
    static func foldFast(_ p: UnsafeBufferPointer<UInt8>, mode: Int, into out: inout [UInt8]) -> Bool {
        let n = p.count
        let lower = mode & 1 != 0
        var i = 0
        var runStart = 0   // bytes [runStart, i) are copied unchanged
        var bmp: FoldPlane? = nil
        while i < n {
            let b = p[i]
            if b < 0x80 {
                if lower && (b &- 0x41) < 26 {
                    if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
                    out.append(b | 0x20)
                    i += 1
                    runStart = i
                } else {
                    i += 1
                }
                continue
            }
            let (v, len) = decode(p, i)
            if len == 0 { return false }
            let plane: FoldPlane
            if v < 0x10000 {
                if bmp == nil { bmp = FoldPlane.bmp }
                plane = bmp.unsafelyUnwrapped
            } else if v < 0x20000 {
                plane = FoldPlane.plane1
            } else if isHighIdentity(v) {
                i += len
                continue
            } else {
                return false
            }
            let e = plane.entry(v, mode)
            if e & FoldPlane.sensitiveBit != 0 { return false }
            if e & FoldPlane.identityBit != 0 {
                i += len
                continue
            }
            if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
            let off = Int(e >> 6 & 0xFF_FFFF), cnt = Int(e & 0x3F)
            if cnt > 0 { out.append(contentsOf: UnsafeBufferPointer(start: plane.pool + off, count: cnt)) }
            i += len
            runStart = i
        }
        if runStart < n {
            if runStart == 0 {
                out.append(contentsOf: p)
            } else {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<n]))
            }
        }
        return true
    }

    /// The definition: NFC(T(NFD(s))).
    static func foldSlow(_ s: String, mode: Int, into out: inout [UInt8]) {
        var mapped: [UInt8] = []
        mapped.reserveCapacity(s.utf8.count + 8)
        for x in s._nfd { appendMapped(x, mode: mode, into: &mapped) }
        let t = String(decoding: mapped, as: UTF8.self)
        for y in t._nfc { appendUTF8(y.value, &out) }
    }

    /// Appends T(x) for one scalar (of a canonical decomposition) as UTF-8.
    @inline(__always) static func appendMapped(_ x: Unicode.Scalar, mode: Int, into out: inout [UInt8]) {
        let v = x.value
        if v < 0x80 {
            out.append(mode & 1 != 0 && (v &- 0x41) < 26 ? UInt8(v | 0x20) : UInt8(v))
            return
        }
        if let plane = FoldPlane.plane(for: v) {
            let e = plane.entry(v, mode)
            if e & FoldPlane.identityBit != 0 {
                appendUTF8(v, &out)
            } else {
                let cnt = Int(e & 0x3F)
                if cnt > 0 {
                    out.append(contentsOf: UnsafeBufferPointer(start: plane.pool + Int(e >> 6 & 0xFF_FFFF), count: cnt))
                }
            }
        } else if isHighIdentity(v) {
            appendUTF8(v, &out)
        } else {
            for y in ScalarData.transform(x, mode: mode) { appendUTF8(y.value, &out) }
        }
    }

    /// Scalars at or above U+20000 that fold to themselves in every mode and
    /// are in NFC: all but the CJK compatibility ideographs U+2F800–U+2FA1F
    /// (they decompose) and the variation selectors U+E0100–U+E01EF
    /// (removable marks), which are computed. Planes 2–3 hold CJK
    /// ideographs, plane 14 tags (format characters), 15–16 private use.
    @inline(__always) static func isHighIdentity(_ v: UInt32) -> Bool {
        (v < 0x2F800 || v >= 0x2FA20) && (v < 0xE0100 || v >= 0xE01F0)
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
            var value = UInt32((byte &- 0x41) < 26 ? byte | 0x20 : byte)
            if asciiRank(byte) == 1, let k = asciiPunctuationOrder.firstIndex(of: byte) { value = UInt32(k) }
            w[b] = asciiRank(byte) << 24 | value
        }
        return UnsafePointer(w)
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
        var i = 0, j = 0
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
            let wa = da ? numberWeight : asciiWeight(ca)
            let wb = db ? numberWeight : asciiWeight(cb)
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
            e.weight = TextFolding.weight(v)
            if pendingCount > 0 {
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

// MARK: - Per-scalar data

/// How each scalar folds, computed from the standard library's Unicode data.
enum ScalarData {
    // Info bits.
    static let strippable: UInt32 = 1       // Mn removed by diacritic folding
    static let upper: UInt32 = 2            // changes when lowercased
    static let caseVariant: UInt32 = 4      // not upper, but changes when case folded (ß ς ſ µ ﬁ)
    static let wide: UInt32 = 8             // fullwidth ASCII form
    static let strokeShift: UInt32 = 4      // 2 bits: 1 short stroke overlay, 2 long solidus (ø)
    static let rankShift: UInt32 = 6        // 2 bits: primary class
    static let sensitive: UInt32 = 0x100    // may combine with what precedes under NFC
    static let notNFC: UInt32 = 0x200       // NFC replaces it (singletons, composition exclusions)
    static let markCountShift: UInt32 = 10  // 4 bits: count of removable marks in its decomposition
    static let markOffsetShift: UInt32 = 14 // 18 bits: their offset in the plane's `marks`

    /// Latin letters with stroke (no canonical decomposition) → base letter,
    /// and which overlay they count as at the diacritic level.
    static let strokeLetters: [UInt32: (UInt32, UInt32)] = [
        0x0141: (0x4C, 1), 0x0142: (0x6C, 1),   // Ł ł
        0x00D8: (0x4F, 2), 0x00F8: (0x6F, 2),   // Ø ø
        0x0110: (0x44, 1), 0x0111: (0x64, 1),   // Đ đ
        0x0126: (0x48, 1), 0x0127: (0x68, 1),   // Ħ ħ
        0x0166: (0x54, 1), 0x0167: (0x74, 1),   // Ŧ ŧ
        0x0243: (0x42, 1), 0x0180: (0x62, 1),   // Ƀ ƀ
        0x0197: (0x49, 1), 0x0268: (0x69, 1),   // Ɨ ɨ
        0x01E4: (0x47, 1), 0x01E5: (0x67, 1),   // Ǥ ǥ
        0x01B5: (0x5A, 1), 0x01B6: (0x7A, 1),   // Ƶ ƶ
        0x0248: (0x4A, 1), 0x0249: (0x6A, 1),   // Ɉ ɉ
        0x024C: (0x52, 1), 0x024D: (0x72, 1),   // Ɍ ɍ
        0xA740: (0x4B, 1), 0xA741: (0x6B, 1),   // Ꝁ ꝁ
        0x2C63: (0x50, 1), 0x1D7D: (0x70, 1),   // Ᵽ ᵽ
    ]

    /// Info bits of any scalar value (tables for planes 0–1).
    @inline(__always) static func info(_ v: UInt32) -> UInt32 {
        if let plane = FoldPlane.plane(for: v) { return plane.info(v) }
        if TextFolding.isHighIdentity(v) {
            // Tags are format characters (class 0); the rest has class 3.
            guard v >= 0xE0000 && v < 0xE0100, let x = Unicode.Scalar(v) else { return 3 << rankShift }
            return rankOf(x.properties.generalCategory) << rankShift
        }
        guard let x = Unicode.Scalar(v) else { return 3 << rankShift }
        var i = computeInfo(x, x.properties.generalCategory)
        if nfc([x]) != [x] { i |= notNFC }
        return i
    }

    static func nfd(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var s = String()
        s.unicodeScalars.append(contentsOf: scalars)
        return Array(s._nfd)
    }

    static func nfc(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var s = String()
        s.unicodeScalars.append(contentsOf: scalars)
        return Array(s._nfc)
    }

    @inline(__always) static func isStrippable(_ x: Unicode.Scalar) -> Bool {
        x.properties.generalCategory == .nonspacingMark && x.value != 0x3099 && x.value != 0x309A
    }

    /// Full case folding of one scalar, without locale: the lowercase
    /// mapping, with upper-then-lower for scalars that still change when case
    /// folded (ß → ss, ς → σ, ſ → s, ﬁ → fi, Cherokee small letters).
    static func caseFold(_ x: Unicode.Scalar) -> [Unicode.Scalar] {
        var r: [Unicode.Scalar] = []
        for t in x.properties.lowercaseMapping.unicodeScalars {
            if t.properties.changesWhenCaseFolded {
                for u in t.properties.uppercaseMapping.unicodeScalars {
                    r.append(contentsOf: u.properties.lowercaseMapping.unicodeScalars)
                }
            } else {
                r.append(t)
            }
        }
        return r
    }

    /// Diacritic folding of a scalar that is not a removable mark: stroke
    /// letters and fullwidth ASCII.
    @inline(__always) static func baseLetter(_ x: Unicode.Scalar) -> Unicode.Scalar {
        let v = x.value
        if v >= 0xFF01 && v <= 0xFF5E { return Unicode.Scalar(v - 0xFEE0).unsafelyUnwrapped }
        if let (b, _) = strokeLetters[v] { return Unicode.Scalar(b).unsafelyUnwrapped }
        return x
    }

    /// T for one scalar in `mode`, as NFC: NFC(T(NFD(x))).
    static func transform(_ x: Unicode.Scalar, mode: Int) -> [Unicode.Scalar] {
        var seq = nfd([x])
        let d = mode & 2 != 0
        if d { seq.removeAll(where: isStrippable) }
        if mode & 1 != 0 { seq = nfd(seq.flatMap(caseFold)) }
        if d { seq = seq.filter { !isStrippable($0) }.map(baseLetter) }
        return nfc(seq)
    }

    static func rankOf(_ gc: Unicode.GeneralCategory) -> UInt32 {
        switch gc {
        case .spaceSeparator, .lineSeparator, .paragraphSeparator, .control, .format: return 0
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
             .initialPunctuation, .finalPunctuation, .otherPunctuation,
             .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol: return 1
        default: return 3
        }
    }

    @inline(__always) static func isMark(_ gc: Unicode.GeneralCategory) -> Bool {
        gc == .nonspacingMark || gc == .spacingMark || gc == .enclosingMark
    }

    /// Hangul vowel and trailing jamo: they compose with a preceding syllable.
    @inline(__always) static func isJamoVT(_ v: UInt32) -> Bool {
        (v >= 0x1161 && v <= 0x1175) || (v >= 0x11A8 && v <= 0x11C2)
    }

    /// Info bits of a scalar, computed (for scalars outside the tables; the
    /// tables also add composition seconds to `sensitive`).
    static func computeInfo(_ x: Unicode.Scalar, _ gc: Unicode.GeneralCategory) -> UInt32 {
        let v = x.value
        var info = rankOf(gc) << rankShift
        if gc == .unassigned || gc == .privateUse || gc == .surrogate { return info }
        let p = x.properties
        if gc == .nonspacingMark && v != 0x3099 && v != 0x309A { info |= strippable }
        if p.changesWhenLowercased {
            info |= upper
        } else if p.changesWhenCaseFolded {
            info |= caseVariant
        }
        if v >= 0xFF01 && v <= 0xFF5E { info |= wide }
        if v >= 0xD8 && v <= 0xA741, let (_, kind) = strokeLetters[v] { info |= kind << strokeShift }
        if isMark(gc) || isJamoVT(v) || p.canonicalCombiningClass.rawValue != 0 { info |= sensitive }
        return info
    }
}

/// Fold tables for one Unicode plane (0 or 1): for each scalar, the output
/// in each mode and the info bits; two-level (pages of 256 scalars,
/// identical pages shared). Built once, on first use, from the standard
/// library's Unicode data; immutable afterwards.
final class FoldPlane: @unchecked Sendable {
    static let bmp = FoldPlane(plane: 0)
    static let plane1 = FoldPlane(plane: 1)

    @inline(__always) static func plane(for v: UInt32) -> FoldPlane? {
        if v < 0x10000 { return bmp }
        if v < 0x20000 { return plane1 }
        return nil
    }

    /// Entry bits: identity (the output is the scalar itself), sensitive (the
    /// output may combine with what precedes it: needs whole-text NFC);
    /// otherwise bits 6–29 are an offset into `pool` and bits 0–5 a length.
    static let identityBit: UInt32 = 0x8000_0000
    static let sensitiveBit: UInt32 = 0x4000_0000

    /// Page number (into `records`) of each 256-scalar page of the plane.
    let index: UnsafeMutablePointer<UInt16>
    /// Per scalar 4 words: entries for modes 1, 2, 3, then info bits.
    let records: UnsafeMutablePointer<UInt32>
    /// UTF-8 of non-identity outputs.
    let pool: UnsafeMutablePointer<UInt8>
    /// Removable marks of decompositions (see `ScalarData.markCountShift`).
    let marks: UnsafeMutablePointer<UInt32>
    let pageCount: Int
    let poolCount: Int

    @inline(__always) func entry(_ v: UInt32, _ mode: Int) -> UInt32 {
        let page = Int(index[Int(v >> 8 & 0xFF)])
        return records[(page << 10) | Int(v & 0xFF) << 2 | (mode - 1)]
    }

    @inline(__always) func info(_ v: UInt32) -> UInt32 {
        let page = Int(index[Int(v >> 8 & 0xFF)])
        return records[(page << 10) | Int(v & 0xFF) << 2 | 3]
    }

    /// Code points whose folds are trivially themselves (checked cheaply):
    /// surrogates, CJK unified ideographs, Hangul syllables, private use.
    private static func skipped(_ v: UInt32) -> Bool {
        (v >= 0x3400 && v <= 0x4DBF) || (v >= 0x4E00 && v <= 0x9FFF) || (v >= 0xAC00 && v <= 0xD7A3)
            || (v >= 0xD800 && v <= 0xF8FF)
    }

    private init(plane: UInt32) {
        let base = plane << 16
        // Pass 1: info bits and canonical decompositions. The last scalar of
        // each multi-scalar decomposition can compose with what precedes it
        // (Indic vowel parts, Kirat Rai…), so it is sensitive too.
        var infos = [UInt32](repeating: 3 << ScalarData.rankShift, count: 0x10000)
        var assigned = [Bool](repeating: false, count: 0x10000)
        var decomposable = Set<UInt32>()
        var seconds = Set<UInt32>()
        var marks: [UInt32] = []
        for k in 0..<0x10000 {
            let v = base | UInt32(k)
            guard !FoldPlane.skipped(v), let x = Unicode.Scalar(v) else { continue }
            let gc = x.properties.generalCategory
            if gc == .unassigned { continue }
            assigned[k] = true
            infos[k] = ScalarData.computeInfo(x, gc)
            var it = String(x)._nfd.makeIterator()
            if let first = it.next(), first == x, it.next() == nil { continue }
            decomposable.insert(v)
            var last = x
            var removed: [UInt32] = []
            for y in String(x)._nfd {
                last = y
                if ScalarData.isStrippable(y) { removed.append(y.value) }
            }
            seconds.insert(last.value)
            if ScalarData.nfc([x]) != [x] { infos[k] |= ScalarData.notNFC }
            if !removed.isEmpty {
                precondition(removed.count < 16 && marks.count < 1 << 18, "mark table overflow")
                infos[k] |= UInt32(removed.count) << ScalarData.markCountShift
                    | UInt32(marks.count) << ScalarData.markOffsetShift
                marks.append(contentsOf: removed)
            }
        }
        for v in seconds where v >> 16 == plane { infos[Int(v & 0xFFFF)] |= ScalarData.sensitive }
        func isSensitive(_ y: Unicode.Scalar) -> Bool {
            let v = y.value
            if v < 0x80 { return false }
            if v >> 16 == plane { return infos[Int(v & 0xFFFF)] & ScalarData.sensitive != 0 }
            return ScalarData.computeInfo(y, y.properties.generalCategory) & ScalarData.sensitive != 0
        }
        // Pass 2: records, in pages of 256 scalars; identical pages shared.
        var records: [UInt32] = []
        var pool: [UInt8] = []
        var pageNumbers = [[UInt32]: UInt16]()
        var index = [UInt16](repeating: 0, count: 256)
        var page = [UInt32](repeating: 0, count: 1024)
        for p in 0..<256 {
            for k in 0..<256 {
                let i = p << 8 | k
                let v = base | UInt32(i)
                let xi = infos[i]
                var rec = (FoldPlane.identityBit, FoldPlane.identityBit, FoldPlane.identityBit, xi)
                if assigned[i], let x = Unicode.Scalar(v) {
                    let sens = xi & ScalarData.sensitive != 0 ? FoldPlane.sensitiveBit : 0
                    let decomposes = decomposable.contains(v)
                    let cased = decomposes || xi & (ScalarData.upper | ScalarData.caseVariant) != 0
                    let marked = decomposes || xi & (ScalarData.strippable | ScalarData.wide) != 0
                        || xi >> ScalarData.strokeShift & 3 != 0
                    if !cased && !marked {
                        let e = FoldPlane.identityBit | sens
                        rec = (e, e, e, xi)
                    } else {
                        var entries: (UInt32, UInt32, UInt32) = (0, 0, 0)
                        for mode in 1...3 {
                            let out = (mode == 1 && !cased) || (mode == 2 && !marked) ? [x] : ScalarData.transform(x, mode: mode)
                            let outSens = out.contains(where: isSensitive) ? FoldPlane.sensitiveBit : 0
                            var e: UInt32
                            if out.count == 1 && out[0] == x {
                                e = FoldPlane.identityBit | outSens
                            } else {
                                var bytes: [UInt8] = []
                                for y in out { TextFolding.appendUTF8(y.value, &bytes) }
                                precondition(bytes.count < 64 && pool.count < 0xFF_FFFF, "fold table overflow")
                                e = outSens | UInt32(pool.count) << 6 | UInt32(bytes.count)
                                pool.append(contentsOf: bytes)
                            }
                            switch mode {
                            case 1: entries.0 = e
                            case 2: entries.1 = e
                            default: entries.2 = e
                            }
                        }
                        rec = (entries.0, entries.1, entries.2, xi)
                    }
                }
                page[k << 2] = rec.0; page[k << 2 | 1] = rec.1; page[k << 2 | 2] = rec.2; page[k << 2 | 3] = rec.3
            }
            if let n = pageNumbers[page] {
                index[p] = n
            } else {
                let n = UInt16(records.count / 1024)
                pageNumbers[page] = n
                records.append(contentsOf: page)
                index[p] = n
            }
        }
        self.index = .allocate(capacity: 256)
        self.index.initialize(from: index, count: 256)
        self.records = .allocate(capacity: records.count)
        self.records.initialize(from: records, count: records.count)
        self.pool = .allocate(capacity: max(pool.count, 1))
        self.pool.initialize(from: pool, count: pool.count)
        self.marks = .allocate(capacity: max(marks.count, 1))
        self.marks.initialize(from: marks, count: marks.count)
        self.pageCount = records.count / 1024
        self.poolCount = pool.count
    }
}
