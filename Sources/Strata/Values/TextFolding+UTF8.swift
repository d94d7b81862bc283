// Byte-level UTF-8 helpers of text folding and comparison: ASCII checks,
// decoding one scalar, validation, encoding, and substring search.

import Glibc

extension TextFolding {
    @inline(__always) static func isASCII(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        return isASCII(base, p.count)
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
}
