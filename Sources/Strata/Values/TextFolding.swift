// Text folding for case- and diacritic-insensitive matching: the entry points
// (`fold`, `localizedStandardContains`) and the algorithm (a table-driven fast
// path over UTF-8, the NFC(T(NFD(s))) definition as the slow path). Finder-order
// comparison is in TextFolding+Comparison.swift, UTF-8 byte helpers in
// TextFolding+UTF8.swift, the per-scalar data and fold tables in
// TextFolding+Tables.swift.

// Canonical decomposition and composition (NFD, NFC) are not public API in
// Swift's standard library, but the library ships them as SPI (`_nfd`, `_nfc`,
// the normalizer that `String`'s own canonical-equivalence comparison and
// `_StringProcessing` use). Text folding uses them only to build the lookup
// tables once (TextFolding+Tables.swift) and on the rare slow path (combining
// marks that must be recomposed).
// Using the standard library's own normalizer keeps folding consistent with
// `String ==` and with the Unicode version of the toolchain.
@_spi(_Unicode) import Swift

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

    // MARK: - Modes

    /// 1: case-insensitive, 2: diacritic-insensitive, 3: both, 0: neither.
    @inline(__always) static func modeIndex(_ c: Bool, _ d: Bool) -> Int { (c ? 1 : 0) | (d ? 2 : 0) }

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
    static func foldFast<Out: FoldOutput>(_ p: UnsafeBufferPointer<UInt8>, mode: Int, into out: inout Out) -> Bool {
        let n = p.count
        let lower = mode & 1 != 0
        var i = 0
        var runStart = 0   // bytes [runStart, i) are copied unchanged
        var bmp: FoldPlane? = nil
        while i < n {
            let b = p[i]
            if b < 0x80 {
                if lower && (b &- 0x41) < 26 {
                    if runStart < i { out.append(bytes: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
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
            if runStart < i { out.append(bytes: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
            let off = Int(e >> 6 & 0xFF_FFFF), cnt = Int(e & 0x3F)
            if cnt > 0 { out.append(bytes: UnsafeBufferPointer(start: plane.pool + off, count: cnt)) }
            i += len
            runStart = i
        }
        if runStart < n {
            if runStart == 0 {
                out.append(bytes: p)
            } else {
                out.append(bytes: UnsafeBufferPointer(rebasing: p[runStart..<n]))
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
}
