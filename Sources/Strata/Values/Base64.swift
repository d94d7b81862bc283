/// RFC 4648 base64 (standard alphabet), working directly on bytes.
enum Base64 {
    /// The 64 output characters, indexed by 6-bit value.
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Maps an input byte to its 6-bit value, or 0xFF when it is not in the alphabet.
    private static let decodeTable: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        var i: UInt8 = 0
        for c in 0..<64 {
            t[Int(alphabet.utf8Start[c])] = i
            i &+= 1
        }
        return t
    }()

    /// Length of the padded encoding of `count` bytes.
    @inline(__always) private static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Writes the padded encoding of `src` into `dst`, which holds exactly `encodedLength(src.count)` bytes.
    private static func encode(_ src: UnsafeRawBufferPointer, to dst: UnsafeMutableBufferPointer<UInt8>) {
        let table = alphabet.utf8Start
        let n = src.count
        var i = 0, o = 0
        while i + 3 <= n {
            let v = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8 | UInt32(src[i + 2])
            dst[o] = table[Int(v >> 18 & 63)]
            dst[o + 1] = table[Int(v >> 12 & 63)]
            dst[o + 2] = table[Int(v >> 6 & 63)]
            dst[o + 3] = table[Int(v & 63)]
            i += 3; o += 4
        }
        let rest = n - i
        if rest > 0 {
            let v = UInt32(src[i]) << 16 | (rest == 2 ? UInt32(src[i + 1]) << 8 : 0)
            dst[o] = table[Int(v >> 18 & 63)]
            dst[o + 1] = table[Int(v >> 12 & 63)]
            dst[o + 2] = rest == 2 ? table[Int(v >> 6 & 63)] : UInt8(ascii: "=")
            dst[o + 3] = UInt8(ascii: "=")
        }
    }

    /// Standard alphabet with '=' padding.
    static func encode(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        let len = encodedLength(bytes.count)
        if len == 0 { return }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: len))
        out.withUnsafeMutableBufferPointer { buf in
            encode(bytes, to: UnsafeMutableBufferPointer(rebasing: buf[start..<(start + len)]))
        }
    }

    /// Standard alphabet with '=' padding, as a String.
    static func encode(_ bytes: [UInt8]) -> String {
        let len = encodedLength(bytes.count)
        if len == 0 { return "" }
        return bytes.withUnsafeBytes { src in
            String(unsafeUninitializedCapacity: len) { dst in
                encode(src, to: UnsafeMutableBufferPointer(rebasing: dst[0..<len]))
                return len
            }
        }
    }

    /// Accepts standard alphabet, with or without padding; rejects anything else (whitespace too). Returns nil on invalid input.
    static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        if let r = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return r }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// Decodes contiguous base64 text; nil when invalid.
    private static func decode(buffer src: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var n = src.count
        // Padding: at most two '=' at the very end, and only on a whole 4-character group.
        if n > 0 && src[n - 1] == UInt8(ascii: "=") {
            guard n % 4 == 0 else { return nil }
            n -= 1
            if src[n - 1] == UInt8(ascii: "=") { n -= 1 }
        }
        let rest = n % 4
        if rest == 1 { return nil }
        let full = n - rest
        return decodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
            var out = [UInt8]()
            out.reserveCapacity(full / 4 * 3 + (rest == 0 ? 0 : rest - 1))
            var i = 0
            while i < full {
                let a = table[Int(src[i])], b = table[Int(src[i + 1])]
                let c = table[Int(src[i + 2])], d = table[Int(src[i + 3])]
                if (a | b | c | d) & 0xC0 != 0 { return nil }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                out.append(UInt8(truncatingIfNeeded: v >> 16))
                out.append(UInt8(truncatingIfNeeded: v >> 8))
                out.append(UInt8(truncatingIfNeeded: v))
                i += 4
            }
            if rest >= 2 {
                let a = table[Int(src[i])], b = table[Int(src[i + 1])]
                let c = rest == 3 ? table[Int(src[i + 2])] : 0
                if (a | b | c) & 0xC0 != 0 { return nil }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                out.append(UInt8(truncatingIfNeeded: v >> 16))
                if rest == 3 { out.append(UInt8(truncatingIfNeeded: v >> 8)) }
            }
            return out
        }
    }
}
