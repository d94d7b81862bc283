/// The exact sum of decimal texts (``DecimalText``), and their exact mean rounded to
/// ``meanDigits`` places: what a fetch's `sum` and `avg` aggregates give for a decimal
/// attribute, computed alike by SQLite's `strata_dsum`/`strata_davg` and, on PostgreSQL,
/// by `numeric` arithmetic. No floating point: `0.1 + 0.2` is `0.3`.
///
/// The range is PostgreSQL `numeric`'s, so that both stores answer alike: a value (or a sum)
/// with more than 131,072 digits before the point or 16,383 after it makes the sum fail
/// (``failed``), as it fails the statement on PostgreSQL.
public struct DecimalSum: Sendable {
    /// Places after the point of a mean (rounded half to even).
    public static let meanDigits = 20
    static let maxIntegerDigits = 131_072, maxFractionDigits = 16_383

    /// Signed digit sums, least significant first: the value is `Σ acc[i] × 10^(i - scale)`.
    /// Digits of each added value go in unnormalized (|acc[i]| grows by at most 9 per value)
    /// and are carried every ``carryEvery`` values, long before an Int64 could overflow.
    private var acc: [Int64] = []
    private var scale = 0
    private var pending = 0
    private static let carryEvery = 1 << 40
    /// Values added (for a mean).
    public private(set) var count: Int64 = 0
    /// A value was not a decimal, or out of range.
    public private(set) var failed = false

    public init() {}

    /// Adds decimal text; text that is not a decimal, or out of range, fails the sum.
    public mutating func add(_ text: UnsafeBufferPointer<UInt8>) {
        guard !failed else { return }
        guard let (negative, digits, exponent) = DecimalText.significand(text),
              -exponent <= DecimalSum.maxFractionDigits, digits.count + exponent <= DecimalSum.maxIntegerDigits else {
            failed = true
            return
        }
        count += 1
        if digits.isEmpty { return }
        if -exponent > scale {
            // More places after the point: shift what is there.
            acc.insert(contentsOf: repeatElement(0, count: -exponent - scale), at: 0)
            scale = -exponent
        }
        let low = exponent + scale        // index of the value's last digit
        let needed = low + digits.count
        if acc.count < needed { acc.append(contentsOf: repeatElement(0, count: needed - acc.count)) }
        var i = low
        for d in digits.reversed() {
            acc[i] += negative ? -Int64(d) : Int64(d)
            i += 1
        }
        pending += 1
        if pending >= DecimalSum.carryEvery { normalize() }
    }

    public mutating func add(_ text: String) {
        var t = text
        t.withUTF8 { add($0) }
    }

    /// Carries so that every entry is a digit of one sign.
    private mutating func normalize() {
        pending = 0
        _ = DecimalSum.carry(&acc)
    }

    /// Carries `a` in place: digits 0...9 and the sign of the whole, which it returns (`a`
    /// then holds the magnitude).
    private static func carry(_ a: inout [Int64]) -> Bool {
        var negative = false
        for pass in 0..<2 {
            var c: Int64 = 0
            for i in a.indices {
                let v = a[i] + c
                var r = v % 10
                var q = v / 10
                if r < 0 { r += 10; q -= 1 }
                a[i] = r
                c = q
            }
            while c > 0 { a.append(c % 10); c /= 10 }
            // A positive magnitude carries to c == 0 (always so on the second pass).
            if c == 0 || pass == 1 { return negative }
            // Negative: the magnitude is the negation, carried again.
            for i in a.indices { a[i] = -a[i] }
            // The borrowed -1 × 10^n term negates to +10^n.
            var n = -c, k = a.count
            while n > 0 { a.append(0); a[k] += n % 10; n /= 10; k += 1 }
            negative = true
        }
        return negative
    }

    /// The magnitude's digits (most significant first, no leading zeros), and the sign.
    private func digits() -> (negative: Bool, digits: [UInt8])? {
        var a = acc
        let negative = DecimalSum.carry(&a)
        while let last = a.last, last == 0 { a.removeLast() }
        guard a.count - scale <= DecimalSum.maxIntegerDigits else { return nil }
        return (negative, a.reversed().map { UInt8($0) })
    }

    /// `digits` × 10^-`scale` as canonical decimal text.
    private static func text(negative: Bool, _ digits: [UInt8], scale: Int) -> String {
        if digits.isEmpty { return "0" }
        var out: [UInt8] = negative ? [UInt8(ascii: "-")] : []
        out.reserveCapacity(digits.count + 4)
        for d in digits { out.append(d + 48) }
        out.append(UInt8(ascii: "e"))
        out.append(contentsOf: String(-scale).utf8)
        return DecimalText.canonical(out) ?? "0"
    }

    /// The sum (`"0"` when nothing was added), nil when it failed.
    public var total: String? {
        guard !failed, let (negative, d) = digits() else { return nil }
        return DecimalSum.text(negative: negative, d, scale: scale)
    }

    /// The sum divided by the number of values, rounded half to even to ``meanDigits``
    /// places; nil without values or when the sum failed.
    public var mean: String? { mean(over: count) }

    /// The sum divided by `n` (the number of values it sums), as ``mean``; nil when `n` is not positive.
    public func mean(over n: Int64) -> String? {
        guard !failed, n > 0, let (negative, d) = digits() else { return nil }
        // M = |sum| × 10^(scale + meanDigits) as an integer (its digits `d` then meanDigits zeros);
        // the mean × 10^meanDigits is M / (10^scale × count).
        let m = d + [UInt8](repeating: 0, count: DecimalSum.meanDigits)
        let c = UInt64(n)
        var quotient: [UInt8] = []
        quotient.reserveCapacity(m.count)
        var r: UInt64 = 0
        for digit in m {
            // r < c <= Int64.max: r × 10 + 9 fits in the full width.
            let (hi, lo) = r.multipliedFullWidth(by: 10)
            let (sumLo, overflow) = lo.addingReportingOverflow(UInt64(digit))
            let (q, rem) = c.dividingFullWidth((hi + (overflow ? 1 : 0), sumLo))
            quotient.append(UInt8(q))
            r = rem
        }
        // q = the quotient without its last `scale` digits; those (`low`) and r decide the rounding.
        let cut = max(quotient.count - scale, 0)
        var q = Array(quotient[0..<cut])
        let low = quotient[cut...]
        let roundUp: Bool
        if quotient.count < scale {
            roundUp = false  // the dropped digits have leading zeros: less than half
        } else if low.isEmpty {
            roundUp = 2 * r > c || (2 * r == c && (q.last ?? 0) % 2 == 1)
        } else {
            let first = low.first!
            let restZero = low.dropFirst().allSatisfy { $0 == 0 }
            if first > 5 || (first == 5 && !restZero) { roundUp = true }
            else if first == 5 { roundUp = r > 0 || (q.last ?? 0) % 2 == 1 }
            else { roundUp = false }
        }
        if roundUp {
            var i = q.count - 1
            while i >= 0 && q[i] == 9 { q[i] = 0; i -= 1 }
            if i >= 0 { q[i] += 1 } else { q.insert(1, at: 0) }
        }
        while let f = q.first, f == 0 { q.removeFirst() }
        return DecimalSum.text(negative: negative, q, scale: DecimalSum.meanDigits)
    }
}
