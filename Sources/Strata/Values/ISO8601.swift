/// ISO-8601 / RFC 3339 timestamps <-> seconds since 1970-01-01T00:00:00Z (proleptic Gregorian, UTC).
enum ISO8601 {
    /// Seconds from 1970-01-01 to 0000-01-01T00:00:00Z.
    private static let minSeconds: Int = -62_167_219_200
    /// Seconds from 1970-01-01 to 10000-01-01T00:00:00Z (exclusive upper bound).
    private static let endSeconds: Int = 253_402_300_800

    /// Parses "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS[.fraction]]" followed by "Z", "z", "+HH:MM", "-HH:MM", "+HHMM" or nothing (nothing = UTC; 'T' may also be a space or 't') into seconds since 1970-01-01T00:00:00Z. Validates ranges (month 1-12, day within month incl. leap years, hour 0-23, minute 0-59, second 0-60). Years 0000-9999. Returns nil on anything else.
    static func parse<C: Collection>(_ text: C) -> Double? where C.Element == UInt8 {
        if let r = text.withContiguousStorageIfAvailable({ parse(buffer: $0) }) { return r }
        return Array(text).withUnsafeBufferPointer { parse(buffer: $0) }
    }

    /// Parses contiguous timestamp text; nil when invalid.
    private static func parse(buffer p: UnsafeBufferPointer<UInt8>) -> Double? {
        let n = p.count
        /// Value of `count` ASCII digits at `at`, or -1 if any is missing or not a digit.
        @inline(__always) func digits(_ at: Int, _ count: Int) -> Int {
            if at + count > n { return -1 }
            var v = 0
            for k in at..<(at + count) {
                let d = p[k] &- 48
                if d > 9 { return -1 }
                v = v * 10 + Int(d)
            }
            return v
        }
        @inline(__always) func byte(_ at: Int) -> UInt8 { at < n ? p[at] : 0 }

        guard n >= 10, byte(4) == UInt8(ascii: "-"), byte(7) == UInt8(ascii: "-") else { return nil }
        let year = digits(0, 4), month = digits(5, 2), day = digits(8, 2)
        guard year >= 0, month >= 1, month <= 12, day >= 1, day <= daysInMonth(year, month) else { return nil }
        let days = daysFromCivil(year, month, day)
        if n == 10 { return Double(days * 86_400) }

        let t = p[10]
        guard t == UInt8(ascii: "T") || t == UInt8(ascii: "t") || t == UInt8(ascii: " ") else { return nil }
        guard byte(13) == UInt8(ascii: ":") else { return nil }
        let hour = digits(11, 2), minute = digits(14, 2)
        guard hour >= 0, hour <= 23, minute >= 0, minute <= 59 else { return nil }
        var i = 16
        var second = 0
        var fraction = 0.0
        if byte(i) == UInt8(ascii: ":") {
            second = digits(i + 1, 2)
            guard second >= 0, second <= 60 else { return nil }
            i += 3
            if byte(i) == UInt8(ascii: ".") {
                i += 1
                let start = i
                var mantissa = 0, scale = 1
                while i < n, p[i] &- 48 <= 9 {
                    if i - start < 15 {  // keeps mantissa exact; later digits are below Double precision
                        mantissa = mantissa * 10 + Int(p[i] &- 48)
                        scale *= 10
                    }
                    i += 1
                }
                guard i > start else { return nil }
                fraction = Double(mantissa) / Double(scale)
            }
        }

        var offset = 0
        if i < n {
            let z = p[i]
            if z == UInt8(ascii: "Z") || z == UInt8(ascii: "z") {
                i += 1
            } else if z == UInt8(ascii: "+") || z == UInt8(ascii: "-") {
                let oh = digits(i + 1, 2)
                var om: Int
                if byte(i + 3) == UInt8(ascii: ":") {
                    om = digits(i + 4, 2); i += 6
                } else {
                    om = digits(i + 3, 2); i += 5
                }
                guard oh >= 0, oh <= 23, om >= 0, om <= 59 else { return nil }
                offset = (oh * 60 + om) * 60
                if z == UInt8(ascii: "-") { offset = -offset }
            } else {
                return nil
            }
            guard i == n else { return nil }
        }
        let whole = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return Double(whole) + fraction
    }

    /// Formats as "YYYY-MM-DDTHH:MM:SSZ"; when the value has a fractional second, ".mmm" (3 digits) if it is whole milliseconds after rounding to microseconds, else ".uuuuuu" (6 digits). Negative values (before 1970) must work (floor division). Values outside years 0000...9999 or non-finite: format with clamping is NOT wanted — return false and append nothing.
    @discardableResult static func format(_ seconds: Double, into out: inout [UInt8]) -> Bool {
        guard let (whole, fraction, width) = split(seconds) else { return false }

        var days = whole / 86_400
        var secs = whole - days * 86_400
        if secs < 0 { secs += 86_400; days -= 1 }
        let (year, month, day) = civilFromDays(days)

        out.reserveCapacity(out.count + 27)
        @inline(__always) func two(_ v: Int) {
            out.append(UInt8(truncatingIfNeeded: 48 + v / 10))
            out.append(UInt8(truncatingIfNeeded: 48 + v % 10))
        }
        two(year / 100); two(year % 100)
        out.append(UInt8(ascii: "-")); two(month)
        out.append(UInt8(ascii: "-")); two(day)
        out.append(UInt8(ascii: "T")); two(secs / 3_600)
        out.append(UInt8(ascii: ":")); two(secs / 60 % 60)
        out.append(UInt8(ascii: ":")); two(secs % 60)
        if fraction != 0 {
            out.append(UInt8(ascii: "."))
            var divisor = width == 6 ? 100_000 : 100
            while divisor > 0 {
                out.append(UInt8(truncatingIfNeeded: 48 + fraction / divisor % 10))
                divisor /= 10
            }
        }
        out.append(UInt8(ascii: "Z"))
        return true
    }

    /// Whether `format` can write `seconds`: finite and, after rounding the
    /// fraction, within years 0000-9999. Exactly the dates Strata accepts.
    static func isFormattable(_ seconds: Double) -> Bool { split(seconds) != nil }

    /// Whole seconds, fraction digits and their count (3 or 6) of a formattable date, or nil.
    private static func split(_ seconds: Double) -> (whole: Int, fraction: Int, width: Int)? {
        // The comparisons also reject NaN and infinities, and keep Int(_:) below from trapping.
        guard seconds >= Double(minSeconds), seconds < Double(endSeconds) else { return nil }
        let floored = seconds.rounded(.down)
        var whole = Int(floored)
        let frac = seconds - floored  // exact, in [0, 1)
        var fraction = Int((frac * 1_000_000).rounded())
        var width = 6
        let millis = Int((frac * 1_000).rounded())
        // Milliseconds when they are exact to the microsecond, or when they parse back to the very same
        // Double (far from 1970 a Double cannot hold whole microseconds, so ".001" may look like ".001002").
        if fraction % 1_000 == 0 || floored + Double(millis) / 1_000 == seconds {
            fraction = millis; width = 3
        }
        if fraction == (width == 3 ? 1_000 : 1_000_000) { whole += 1; fraction = 0 }
        guard whole < endSeconds else { return nil }
        return (whole, fraction, width)
    }

    /// Formats as `format(_:into:)` does, returning nil where it returns false.
    static func format(_ seconds: Double) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(27)
        guard format(seconds, into: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `year` is a Gregorian leap year.
    @inline(__always) private static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// Number of days in `month` (1-12) of `year`.
    @inline(__always) private static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a valid civil date (H. Hinnant's algorithm; year >= 0).
    @inline(__always) private static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Civil date of a day count since 1970-01-01 (H. Hinnant's algorithm).
    @inline(__always) private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
