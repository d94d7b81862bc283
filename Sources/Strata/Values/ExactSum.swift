/// The exact sum of a multiset of numbers, whatever their order: the one definition of
/// `@sum` and `@avg` (`$0.bucketList.map { $0.cost }.reduce(0, +)`), used by the predicate
/// evaluator and by SQLite's `strata_isum`/`strata_fsum`/`strata_iavg`/`strata_favg`
/// aggregates; PostgreSQL's twins compute the same results (docs/predicates.md, "Sums and
/// averages").
///
/// - Ints sum exactly (in 128 bits): ``intSum`` is the sum, nil when it is outside Int64
///   (however the values were ordered: only the total counts, not a running sum).
/// - Doubles sum exactly, in a fixed-point accumulator holding every finite double
///   (2^-1074 to 2^1024) with 64 bits to spare, and the exact total rounds once, to the
///   nearest double, ties to even (what Python's `math.fsum` gives, without its failure on an
///   intermediate overflow: 1e308 + 1e308 - 1e308 is 1e308). ``doubleSum`` is nil when the
///   rounded total is not finite (its magnitude is at least 2^1024 - 2^970), or when a value
///   was not finite.
/// - ``count`` is the number of values added (nils are not added).
/// - The average of ints is `Double(sum) / Double(count)`, of doubles `doubleSum / Double(count)`,
///   each operation rounded to nearest; nil without values, and, for doubles, where the sum is nil.
///
/// Example:
///
///     var s = ExactSum()
///     for x in [1e100, 1.0, -1e100] { s.add(x) }
///     s.doubleSum  // 1.0 (a running sum in doubles gives 0.0)
public struct ExactSum: Sendable {
    /// The sum of the ints added.
    public private(set) var ints: Int128 = 0
    /// The number of values added.
    public private(set) var count: Int64 = 0
    /// The doubles added, in units of 2^-1074, as a two's complement integer of
    /// ``limbCount`` 64-bit limbs (least significant first); empty until a double is added.
    private var limbs: [UInt64] = []
    /// A double that was not finite, or a value of another kind (``addInvalid()``), was added.
    private var invalid = false

    /// Limbs enough for 2^1024 / 2^-1074 (2098 bits), 2^63 additions more and a sign.
    static let limbCount = 35

    public init() {}

    /// Adds an int.
    public mutating func add(_ x: Int64) {
        ints += Int128(x)
        count += 1
    }

    /// Adds a double exactly.
    public mutating func add(_ x: Double) {
        count += 1
        guard x.isFinite else { invalid = true; return }
        if limbs.isEmpty { limbs = Array(repeating: 0, count: ExactSum.limbCount) }
        guard x != 0 else { return }
        // x = ±m · 2^(q), m < 2^53; at bit q + 1074 of the accumulator.
        let bits = x.bitPattern
        let biased = Int((bits >> 52) & 0x7FF)
        var m = bits & ((1 << 52) - 1)
        let position: Int
        if biased == 0 {
            position = 0                       // subnormal: m · 2^-1074
        } else {
            m |= 1 << 52
            position = biased - 1              // m · 2^(biased - 1075) = m · 2^(biased - 1) units
        }
        let k = position / 64, r = position % 64
        let lo = m << UInt64(r)
        let hi = r == 0 ? 0 : m >> UInt64(64 - r)
        accumulate(lo, hi, at: k, negative: x.sign == .minus)
    }

    /// Adds (or, when `negative`, subtracts) the 128 bits `hi:lo` at limb `k`, carrying (borrowing) up.
    private mutating func accumulate(_ lo: UInt64, _ hi: UInt64, at k: Int, negative: Bool) {
        let op: (UInt64, UInt64) -> (partialValue: UInt64, overflow: Bool) =
            negative ? { $0.subtractingReportingOverflow($1) } : { $0.addingReportingOverflow($1) }
        var (s, c) = op(limbs[k], lo)
        limbs[k] = s
        let carryIn: UInt64 = c ? 1 : 0
        (s, c) = op(limbs[k + 1], hi)
        let (s2, c2) = op(s, carryIn)
        limbs[k + 1] = s2
        var carry = c || c2
        var i = k + 2
        while carry && i < limbs.count {
            (limbs[i], carry) = op(limbs[i], 1)
            i += 1
        }
    }

    /// Adds a value of a sum of ints (`integer`) or of doubles: nil is skipped, an int converts to a
    /// double in a sum of doubles, and any other value makes every result nil (``addInvalid()``).
    public mutating func add(_ v: SQLValue, integer: Bool) {
        switch v {
        case .null: return
        case .int(let i) where integer: add(i)
        case .int(let i): add(Double(i))
        case .double(let d) where !integer: add(d)
        default: addInvalid()
        }
    }

    /// Notes a value that is neither nil nor a number of the sum's kind: every result is nil.
    public mutating func addInvalid() {
        count += 1
        invalid = true
    }

    /// The exact sum of the ints, nil when it does not fit in Int64.
    public var intSum: Int64? { invalid ? nil : Int64(exactly: ints) }

    /// The exact sum of the doubles rounded to the nearest double (ties to even); 0.0 when none
    /// were added; nil when the rounded sum, or a value added, is not finite.
    public var doubleSum: Double? {
        if invalid { return nil }
        guard limbs.contains(where: { $0 != 0 }) else { return 0 }
        var magnitude = limbs
        let negative = magnitude[magnitude.count - 1] >> 63 == 1
        if negative {
            // Two's complement: invert and add one.
            var carry: UInt64 = 1
            for i in magnitude.indices {
                let (s, c) = (~magnitude[i]).addingReportingOverflow(carry)
                magnitude[i] = s
                carry = c ? 1 : 0
            }
        }
        guard let top = magnitude.lastIndex(where: { $0 != 0 }) else { return 0 }
        let h = top * 64 + (63 - magnitude[top].leadingZeroBitCount)   // the highest bit set
        func bit(_ i: Int) -> Bool { i >= 0 && (magnitude[i / 64] >> UInt64(i % 64)) & 1 == 1 }
        let sign: FloatingPointSign = negative ? .minus : .plus
        if h <= 52 {
            // Below 2^53 units: exact (a subnormal, or the least normal doubles).
            return Double(sign: sign, exponent: -1074, significand: Double(magnitude[0]))
        }
        // The 53 bits from h down, then round to nearest, ties to even.
        var m: UInt64 = 0
        for i in stride(from: h, through: h - 52, by: -1) { m = m << 1 | (bit(i) ? 1 : 0) }
        let round = bit(h - 53)
        var sticky = false
        if h - 54 >= 0 {
            let lowLimb = (h - 54) / 64
            for i in 0..<lowLimb where magnitude[i] != 0 { sticky = true; break }
            if !sticky {
                let width = (h - 54) % 64 + 1
                let mask: UInt64 = width == 64 ? ~0 : (1 << UInt64(width)) - 1
                sticky = magnitude[lowLimb] & mask != 0
            }
        }
        var exponent = h - 52 - 1074
        if round && (sticky || m & 1 == 1) {
            m += 1
            if m == 1 << 53 { m = 1 << 52; exponent += 1 }
        }
        // The largest finite double is (2^53 - 1) · 2^971.
        guard exponent <= 971 else { return nil }
        return Double(sign: sign, exponent: exponent, significand: Double(m))
    }

    /// The sum of the ints as a double, divided by their number; nil when none were added.
    public var intAverage: Double? {
        count == 0 || invalid ? nil : Double(ints) / Double(count)
    }

    /// ``doubleSum`` divided by the number of values; nil when none were added or the sum is nil.
    public var doubleAverage: Double? {
        guard count > 0, let s = doubleSum else { return nil }
        return s / Double(count)
    }
}
