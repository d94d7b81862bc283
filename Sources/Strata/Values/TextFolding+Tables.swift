// The per-scalar data of text folding: the info bits of each scalar and how it
// folds (`ScalarData`, computed from the standard library's Unicode data),
// and the two-level lookup tables built from it once per plane (`FoldPlane`).

// NFD and NFC through the standard library's SPI: see TextFolding.swift.
@_spi(_Unicode) import Swift

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
    fileprivate static func skipped(_ v: UInt32) -> Bool {
        (v >= 0x3400 && v <= 0x4DBF) || (v >= 0x4E00 && v <= 0x9FFF) || (v >= 0xAC00 && v <= 0xD7A3)
            || (v >= 0xD800 && v <= 0xF8FF)
    }

    /// Builds the plane's tables in two passes, then copies them into storage of their own.
    private init(plane: UInt32) {
        let scalars = PlaneScalars(plane: plane)
        let tables = PlaneTables(scalars)
        self.index = .allocate(capacity: 256)
        self.index.initialize(from: tables.index, count: 256)
        self.records = .allocate(capacity: tables.records.count)
        self.records.initialize(from: tables.records, count: tables.records.count)
        self.pool = .allocate(capacity: max(tables.pool.count, 1))
        self.pool.initialize(from: tables.pool, count: tables.pool.count)
        self.marks = .allocate(capacity: max(scalars.marks.count, 1))
        self.marks.initialize(from: scalars.marks, count: scalars.marks.count)
        self.pageCount = tables.records.count / 1024
        self.poolCount = tables.pool.count
    }
}

/// Pass 1 of a plane's tables: the info bits of each of its scalars, which are assigned
/// and which have a canonical decomposition, and the removable marks of those.
private struct PlaneScalars {
    let plane: UInt32
    /// By scalar (low 16 bits): info bits, with `notNFC`, the marks' count and offset, and
    /// `sensitive` for the last scalar of any multi-scalar decomposition.
    private(set) var infos = [UInt32](repeating: 3 << ScalarData.rankShift, count: 0x10000)
    private(set) var assigned = [Bool](repeating: false, count: 0x10000)
    private(set) var decomposable = Set<UInt32>()
    /// Removable marks of decompositions, each scalar's run found through its info bits.
    private(set) var marks: [UInt32] = []

    init(plane: UInt32) {
        self.plane = plane
        let base = plane << 16
        var seconds = Set<UInt32>()
        for k in 0..<0x10000 {
            let v = base | UInt32(k)
            guard !FoldPlane.skipped(v), let x = Unicode.Scalar(v) else { continue }
            let gc = x.properties.generalCategory
            if gc == .unassigned { continue }
            assigned[k] = true
            infos[k] = ScalarData.computeInfo(x, gc)
            if let last = noteDecomposition(x, at: k) { seconds.insert(last) }
        }
        // The last scalar of each multi-scalar decomposition can compose with what
        // precedes it (Indic vowel parts, Kirat Rai…), so it is sensitive too.
        for v in seconds where v >> 16 == plane { infos[Int(v & 0xFFFF)] |= ScalarData.sensitive }
    }

    /// For a scalar with a canonical decomposition: marks it decomposable, `notNFC` when NFC
    /// replaces it, notes its removable marks, and returns the decomposition's last scalar;
    /// nil (and no change) for a scalar that is its own decomposition.
    private mutating func noteDecomposition(_ x: Unicode.Scalar, at k: Int) -> UInt32? {
        var it = String(x)._nfd.makeIterator()
        if let first = it.next(), first == x, it.next() == nil { return nil }
        decomposable.insert(x.value)
        var last = x
        var removed: [UInt32] = []
        for y in String(x)._nfd {
            last = y
            if ScalarData.isStrippable(y) { removed.append(y.value) }
        }
        if ScalarData.nfc([x]) != [x] { infos[k] |= ScalarData.notNFC }
        if !removed.isEmpty {
            precondition(removed.count < 16 && marks.count < 1 << 18, "mark table overflow")
            infos[k] |= UInt32(removed.count) << ScalarData.markCountShift
                | UInt32(marks.count) << ScalarData.markOffsetShift
            marks.append(contentsOf: removed)
        }
        return last.value
    }

    /// Whether `y` may combine with what precedes it (from the tables for this plane).
    func isSensitive(_ y: Unicode.Scalar) -> Bool {
        let v = y.value
        if v < 0x80 { return false }
        if v >> 16 == plane { return infos[Int(v & 0xFFFF)] & ScalarData.sensitive != 0 }
        return ScalarData.computeInfo(y, y.properties.generalCategory) & ScalarData.sensitive != 0
    }
}

/// Pass 2 of a plane's tables: the four words of each scalar (see ``FoldPlane/records``)
/// in pages of 256 scalars, identical pages stored once, and the UTF-8 of the outputs.
private struct PlaneTables {
    private(set) var records: [UInt32] = []
    private(set) var pool: [UInt8] = []
    /// Page number (into `records`) of each page of the plane.
    private(set) var index = [UInt16](repeating: 0, count: 256)
    private var pageNumbers = [[UInt32]: UInt16]()

    init(_ scalars: PlaneScalars) {
        var page = [UInt32](repeating: 0, count: 1024)
        for p in 0..<256 {
            for k in 0..<256 {
                let rec = record(p << 8 | k, scalars)
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
    }

    /// The entries of scalar `i` of the plane for modes 1, 2, 3, and its info bits: identity
    /// (with the sensitive bit of the scalar) where no mode can change it.
    private mutating func record(_ i: Int, _ scalars: PlaneScalars) -> (UInt32, UInt32, UInt32, UInt32) {
        let v = scalars.plane << 16 | UInt32(i)
        let xi = scalars.infos[i]
        guard scalars.assigned[i], let x = Unicode.Scalar(v) else {
            return (FoldPlane.identityBit, FoldPlane.identityBit, FoldPlane.identityBit, xi)
        }
        let sens = xi & ScalarData.sensitive != 0 ? FoldPlane.sensitiveBit : 0
        let decomposes = scalars.decomposable.contains(v)
        let cased = decomposes || xi & (ScalarData.upper | ScalarData.caseVariant) != 0
        let marked = decomposes || xi & (ScalarData.strippable | ScalarData.wide) != 0
            || xi >> ScalarData.strokeShift & 3 != 0
        if !cased && !marked {
            let e = FoldPlane.identityBit | sens
            return (e, e, e, xi)
        }
        let e1 = entry(x, mode: 1, unchanged: !cased, scalars)
        let e2 = entry(x, mode: 2, unchanged: !marked, scalars)
        let e3 = entry(x, mode: 3, unchanged: false, scalars)
        return (e1, e2, e3, xi)
    }

    /// The entry of `x` in `mode` (`unchanged`: the mode cannot change it): identity when it
    /// folds to itself, else its output appended to the pool; sensitive when the output may combine.
    private mutating func entry(_ x: Unicode.Scalar, mode: Int, unchanged: Bool, _ scalars: PlaneScalars) -> UInt32 {
        let out = unchanged ? [x] : ScalarData.transform(x, mode: mode)
        let outSens = out.contains(where: { scalars.isSensitive($0) }) ? FoldPlane.sensitiveBit : 0
        if out.count == 1 && out[0] == x { return FoldPlane.identityBit | outSens }
        var bytes: [UInt8] = []
        for y in out { TextFolding.appendUTF8(y.value, &bytes) }
        precondition(bytes.count < 64 && pool.count < 0xFF_FFFF, "fold table overflow")
        let e = outSens | UInt32(pool.count) << 6 | UInt32(bytes.count)
        pool.append(contentsOf: bytes)
        return e
    }
}
