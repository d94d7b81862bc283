/// Exact decimal numbers kept as text: validation, canonical form and numeric comparison, without floating point.
enum DecimalText {
    /// Exponents may have at most this many significant digits (|exponent| < 10^9), so arithmetic on them cannot overflow.
    private static let maxExponentDigits = 9

    /// Byte ranges of a syntactically valid decimal text.
    private struct Parts {
        var negative = false
        var intStart = 0, intEnd = 0
        var fracStart = 0, fracEnd = 0      // empty when there is no '.'
        var expNegative = false
        var expStart = 0, expEnd = 0        // digits only, leading zeros skipped; empty when zero or absent
    }

    /// Splits `p` into its parts per the grammar of `canonical`; nil when it does not match.
    private static func split(_ p: UnsafeBufferPointer<UInt8>) -> Parts? {
        let n = p.count
        var r = Parts()
        var i = 0
        @inline(__always) func isDigit(_ at: Int) -> Bool { at < n && p[at] &- 48 <= 9 }
        if i < n && (p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+")) {
            r.negative = p[i] == UInt8(ascii: "-")
            i += 1
        }
        r.intStart = i
        while isDigit(i) { i += 1 }
        r.intEnd = i
        guard r.intEnd > r.intStart else { return nil }
        r.fracStart = i; r.fracEnd = i
        if i < n && p[i] == UInt8(ascii: ".") {
            i += 1
            r.fracStart = i
            while isDigit(i) { i += 1 }
            r.fracEnd = i
            guard r.fracEnd > r.fracStart else { return nil }
        }
        if i < n && (p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E")) {
            i += 1
            if i < n && (p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+")) {
                r.expNegative = p[i] == UInt8(ascii: "-")
                i += 1
            }
            let digitsStart = i
            while isDigit(i) { i += 1 }
            guard i > digitsStart else { return nil }
            var s = digitsStart
            while s < i && p[s] == UInt8(ascii: "0") { s += 1 }
            r.expStart = s; r.expEnd = i
        }
        guard i == n else { return nil }
        return r
    }

    /// Calls `body` with the text's bytes as a contiguous buffer.
    @inline(__always) private static func withBytes<C: Collection, R>(
        _ text: C, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R where C.Element == UInt8 {
        if let r = text.withContiguousStorageIfAvailable(body) { return r }
        return Array(text).withUnsafeBufferPointer(body)
    }

    /// Validates and canonicalizes decimal number text: optional '-' or '+', digits, optional '.' digits, optional exponent [eE][+-]?digits. Returns nil for empty, "NaN", "inf", ".5", "5.", hex, whitespace, and exponents of 10^9 or more in magnitude. Never rounds.
    ///
    /// Equal numbers have one canonical text, so stored values compare (and collide on unique
    /// constraints) by value: no '+', no leading zeros, no trailing zeros in the fraction, zero is
    /// "0" ("007.50" -> "7.5", "-0.00" -> "0", "1.5E+03" -> "1500", "1e-05" -> "0.00001").
    /// Plain notation unless it would need more than ``maxPaddingZeros`` zeros that are not digits
    /// of the input's significand: then one digit, the rest after '.', and 'e' with the exponent
    /// ("1e30", "-2.5e-12").
    static func canonical<C: Collection>(_ text: C) -> String? where C.Element == UInt8 {
        withBytes(text) { p -> String? in
            guard let r = split(p) else { return nil }
            guard r.expEnd - r.expStart <= maxExponentDigits else { return nil }
            let m = magnitude(p, r)
            if m.sign == 0 { return "0" }
            var out: [UInt8] = []
            out.reserveCapacity(m.count + maxPaddingZeros + 16)
            if m.sign < 0 { out.append(UInt8(ascii: "-")) }
            @inline(__always) func digits(_ from: Int, _ to: Int) {
                var k = from
                while k < to { out.append(digit(p, r, m.first + k)); k += 1 }
            }
            @inline(__always) func zeros(_ n: Int) { for _ in 0..<max(n, 0) { out.append(UInt8(ascii: "0")) } }
            let n = m.position, k = m.count   // value = 0.d1...dk x 10^n
            if n >= k && n - k <= maxPaddingZeros {
                digits(0, k); zeros(n - k)
            } else if n > 0 && n < k {
                digits(0, n); out.append(UInt8(ascii: ".")); digits(n, k)
            } else if n <= 0 && -n <= maxLeadingFractionZeros {
                out.append(UInt8(ascii: "0")); out.append(UInt8(ascii: ".")); zeros(-n); digits(0, k)
            } else {
                let exponent = n - 1
                guard exponent.magnitude < 1_000_000_000 else { return nil }
                digits(0, 1)
                if k > 1 { out.append(UInt8(ascii: ".")); digits(1, k) }
                out.append(UInt8(ascii: "e"))
                out.append(contentsOf: String(exponent).utf8)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Whether `p` is decimal text that ``canonical(_:)`` accepts (the form a store holds is
    /// canonical, but any valid text is read), without allocating for all but the largest exponents.
    static func isValid(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let r = split(p), r.expEnd - r.expStart <= maxExponentDigits else { return false }
        // A 9-digit exponent may still put the value out of range once normalized.
        return r.expEnd - r.expStart < maxExponentDigits || canonical(p) != nil
    }

    /// The value of decimal text as its significant digits (0-9, most significant first; empty
    /// for zero) times 10^`exponent`, with its sign; nil for text ``isValid(_:)`` refuses.
    static func significand(_ p: UnsafeBufferPointer<UInt8>) -> (negative: Bool, digits: [UInt8], exponent: Int)? {
        guard isValid(p), let r = split(p) else { return nil }
        let m = magnitude(p, r)
        if m.sign == 0 { return (false, [], 0) }
        var digits = [UInt8](repeating: 0, count: m.count)
        for k in 0..<m.count { digits[k] = digit(p, r, m.first + k) &- 48 }
        return (m.sign < 0, digits, m.position - m.count)
    }

    /// Most zeros written after the significant digits of an integer in plain notation ("1e21" is plain, "1e22" not).
    static let maxPaddingZeros = 21
    /// Most zeros written between '.' and the first significant digit ("1e-7" is "0.0000001", "1e-8" not).
    static let maxLeadingFractionZeros = 6

    /// A number as sign, significant digits and the power of ten of its first significant digit.
    private struct Magnitude {
        var sign = 0                // -1, 0, 1
        var first = 0, count = 0    // significant digits: indexes first..<first+count of the int+frac digit sequence
        var position = 0            // value = 0.d1d2d3... x 10^position
    }

    /// Digit `k` (0-based) of the concatenated integer and fraction digits.
    @inline(__always) private static func digit(_ p: UnsafeBufferPointer<UInt8>, _ r: Parts, _ k: Int) -> UInt8 {
        let intLen = r.intEnd - r.intStart
        return k < intLen ? p[r.intStart + k] : p[r.fracStart + k - intLen]
    }

    /// Sign, significant digits and decimal point position of split text.
    private static func magnitude(_ p: UnsafeBufferPointer<UInt8>, _ r: Parts) -> Magnitude {
        let intLen = r.intEnd - r.intStart
        let total = intLen + (r.fracEnd - r.fracStart)
        var first = 0
        while first < total && digit(p, r, first) == UInt8(ascii: "0") { first += 1 }
        var m = Magnitude()
        if first == total { return m }
        var last = total - 1
        while digit(p, r, last) == UInt8(ascii: "0") { last -= 1 }
        // Saturate very long exponents (only possible in non-canonical input) instead of overflowing.
        var exp = 0
        for j in r.expStart..<r.expEnd {
            exp = exp * 10 + Int(p[j] &- 48)
            if exp > 1_000_000_000_000_000 { break }
        }
        if r.expNegative { exp = -exp }
        m.sign = r.negative ? -1 : 1
        m.first = first
        m.count = last - first + 1
        m.position = intLen - first + exp
        return m
    }

    /// Compares two canonical decimal texts numerically and exactly (arbitrary length, exponents honoured), returning -1, 0, 1. "1.50" == "1.5".
    ///
    /// Text that is not a valid decimal sorts by its bytes after every valid one.
    static func compare(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                switch (split(pa), split(pb)) {
                case let (ra?, rb?): return compare(pa, ra, pb, rb)
                case (_?, nil): return -1
                case (nil, _?): return 1
                case (nil, nil):
                    let k = Swift.min(pa.count, pb.count)
                    for j in 0..<k where pa[j] != pb[j] { return pa[j] < pb[j] ? -1 : 1 }
                    return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1)
                }
            }
        }
    }

    /// Numeric comparison of two split decimal texts.
    private static func compare(_ pa: UnsafeBufferPointer<UInt8>, _ ra: Parts, _ pb: UnsafeBufferPointer<UInt8>, _ rb: Parts) -> Int {
        let x = magnitude(pa, ra), y = magnitude(pb, rb)
        if x.sign != y.sign { return x.sign < y.sign ? -1 : 1 }
        if x.sign == 0 { return 0 }
        var order = 0
        if x.position != y.position {
            order = x.position > y.position ? 1 : -1
        } else {
            let n = Swift.max(x.count, y.count)
            for k in 0..<n {
                let dx = k < x.count ? digit(pa, ra, x.first + k) : UInt8(ascii: "0")
                let dy = k < y.count ? digit(pb, rb, y.first + k) : UInt8(ascii: "0")
                if dx != dy { order = dx > dy ? 1 : -1; break }
            }
        }
        return x.sign * order
    }
}
