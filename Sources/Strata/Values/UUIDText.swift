/// UUIDs as canonical 8-4-4-4-12 hex text (uppercase on output, like Foundation's `UUID.uuidString`).
enum UUIDText {
    /// Value of a hex digit (either case), or 0xFF.
    @inline(__always) private static func hexValue(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- 48
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c &- 55
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- 87
        default: return 0xFF
        }
    }

    /// Whether text position `i` (0..<36) holds a dash in the canonical form.
    @inline(__always) private static func isDashPosition(_ i: Int) -> Bool { i == 8 || i == 13 || i == 18 || i == 23 }

    /// Whether the contiguous text is canonical 8-4-4-4-12 hex (either case, or uppercase only).
    private static func isValid(_ p: UnsafeBufferPointer<UInt8>, uppercaseOnly: Bool = false) -> Bool {
        guard p.count == 36 else { return false }
        for i in 0..<36 {
            if isDashPosition(i) {
                if p[i] != UInt8(ascii: "-") { return false }
            } else if hexValue(p[i]) == 0xFF || (uppercaseOnly && p[i] >= UInt8(ascii: "a")) {
                return false
            }
        }
        return true
    }

    /// Whether the text is a UUID as Strata stores one: canonical and uppercase.
    static func isStoredForm(_ p: UnsafeBufferPointer<UInt8>) -> Bool { isValid(p, uppercaseOnly: true) }

    /// Calls `body` with the text's bytes as a contiguous buffer.
    @inline(__always) private static func withBytes<C: Collection, R>(
        _ text: C, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R where C.Element == UInt8 {
        if let r = text.withContiguousStorageIfAvailable(body) { return r }
        return Array(text).withUnsafeBufferPointer(body)
    }

    /// Parses canonical 8-4-4-4-12 hex (either case); returns 16 bytes or nil.
    static func parse<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        guard text.count == 36 else { return nil }
        return withBytes(text) { p -> [UInt8]? in
            guard isValid(p) else { return nil }
            var out = [UInt8]()
            out.reserveCapacity(16)
            var i = 0
            while i < 36 {
                if isDashPosition(i) { i += 1; continue }
                out.append(hexValue(p[i]) << 4 | hexValue(p[i + 1]))
                i += 2
            }
            return out
        }
    }

    /// Uppercase canonical text (as Swift's UUID.uuidString); a wrong-length input is zero-padded or truncated to 16 bytes.
    static func format(_ bytes: [UInt8]) -> String {
        let digits: StaticString = "0123456789ABCDEF"
        let d = digits.utf8Start
        return String(unsafeUninitializedCapacity: 36) { out in
            var o = 0
            for j in 0..<16 {
                if j == 4 || j == 6 || j == 8 || j == 10 { out[o] = UInt8(ascii: "-"); o += 1 }
                let b: UInt8 = j < bytes.count ? bytes[j] : 0
                out[o] = d[Int(b >> 4)]
                out[o + 1] = d[Int(b & 15)]
                o += 2
            }
            return o
        }
    }

    /// Canonical uppercase text of input, or nil if invalid.
    static func canonical<C: Collection>(_ text: C) -> String? where C.Element == UInt8 {
        guard text.count == 36 else { return nil }
        return withBytes(text) { p -> String? in
            guard isValid(p) else { return nil }
            return String(unsafeUninitializedCapacity: 36) { out in
                for i in 0..<36 {
                    let c = p[i]
                    // Valid input: only 'a'...'f' need changing.
                    out[i] = c >= UInt8(ascii: "a") ? c &- 32 : c
                }
                return 36
            }
        }
    }

    /// A random version-4 UUID in uppercase canonical text (SystemRandomNumberGenerator).
    static func random() -> String {
        var rng = SystemRandomNumberGenerator()
        let hi = rng.next() as UInt64, lo = rng.next() as UInt64
        var bytes = [UInt8](repeating: 0, count: 16)
        for j in 0..<8 {
            bytes[j] = UInt8(truncatingIfNeeded: hi >> (56 - 8 * UInt64(j)))
            bytes[8 + j] = UInt8(truncatingIfNeeded: lo >> (56 - 8 * UInt64(j)))
        }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        return format(bytes)
    }
}
