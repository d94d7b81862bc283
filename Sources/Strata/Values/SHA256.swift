import CStrataSHA

/// SHA-256 (FIPS 180-4), one-shot over a byte collection.
enum SHA256 {
    /// The 64 round constants (CStrataSHA keeps the one table, for its rounds and these).
    private static var k: UnsafeBufferPointer<UInt32> { UnsafeBufferPointer(start: cstrata_sha256_constants(), count: 64) }

    /// FIPS 180-4 SHA-256.
    static func hash<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        if let r = bytes.withContiguousStorageIfAvailable({ hash(buffer: $0) }) { return r }
        return Array(bytes).withUnsafeBufferPointer { hash(buffer: $0) }
    }

    /// Lowercase hex of the digest.
    static func hex(_ string: String) -> String {
        var s = string
        return hex(digest: s.withUTF8 { hash(buffer: $0) })
    }

    /// Lowercase hex of the digest of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        hex(digest: bytes.withUnsafeBufferPointer { hash(buffer: $0) })
    }

    /// Lowercase hex of a digest.
    private static func hex(digest: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: 64) { out in
            let digits: StaticString = "0123456789abcdef"
            let d = digits.utf8Start
            var o = 0
            for b in digest {
                out[o] = d[Int(b >> 4)]
                out[o + 1] = d[Int(b & 15)]
                o += 2
            }
            return o
        }
    }

    /// Whether this processor runs SHA-256 in hardware (CStrataSHA: x86-64's SHA extensions).
    static let hardware = cstrata_sha256_hardware() != 0

    /// Digest of contiguous bytes: on the processor's SHA instructions where it has them
    /// (``hardware``), else in Swift; `hardware: false` forces the Swift one (for tests).
    static func hash(buffer data: UnsafeBufferPointer<UInt8>, hardware: Bool = SHA256.hardware) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 8) { h in
            h[0] = 0x6a09e667; h[1] = 0xbb67ae85; h[2] = 0x3c6ef372; h[3] = 0xa54ff53a
            h[4] = 0x510e527f; h[5] = 0x9b05688c; h[6] = 0x1f83d9ab; h[7] = 0x5be0cd19
            let state = h.baseAddress!
            func run(_ blocks: UnsafePointer<UInt8>, _ count: Int) {
                if hardware { cstrata_sha256_blocks(state, blocks, count) } else { compress(blocks, count, state) }
            }
            let n = data.count
            let whole = n / 64
            if whole > 0, let base = data.baseAddress { run(base, whole) }
            // Final block(s): remaining bytes, 0x80, zeros, 64-bit big-endian bit length.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                let offset = whole * 64
                let rest = n - offset
                for j in 0..<rest { tail[j] = data[offset + j] }
                tail[rest] = 0x80
                let total = rest + 9 <= 64 ? 64 : 128
                for j in (rest + 1)..<total { tail[j] = 0 }
                let bits = UInt64(truncatingIfNeeded: n) &* 8
                for j in 0..<8 { tail[total - 1 - j] = UInt8(truncatingIfNeeded: bits >> (8 * UInt64(j))) }
                run(UnsafePointer(tail.baseAddress!), total / 64)
            }
            var out = [UInt8]()
            out.reserveCapacity(32)
            for v in h {
                out.append(UInt8(truncatingIfNeeded: v >> 24))
                out.append(UInt8(truncatingIfNeeded: v >> 16))
                out.append(UInt8(truncatingIfNeeded: v >> 8))
                out.append(UInt8(truncatingIfNeeded: v))
            }
            return out
        }
    }

    /// The Swift compression function over `count` 64-byte blocks at `blocks`, updating `state`.
    private static func compress(_ blocks: UnsafePointer<UInt8>, _ count: Int, _ state: UnsafeMutablePointer<UInt32>) {
        var h = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        let k = SHA256.k
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<count {
                compress(UnsafeBufferPointer(start: blocks + 64 * i, count: 64), &h, k, w)
            }
        }
        state[0] = h.0; state[1] = h.1; state[2] = h.2; state[3] = h.3
        state[4] = h.4; state[5] = h.5; state[6] = h.6; state[7] = h.7
    }

    /// Right rotation of a 32-bit word.
    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }

    /// Processes one 64-byte block into the hash state, using `w` (64 words) as the message schedule.
    @inline(__always) private static func compress(
        _ block: UnsafeBufferPointer<UInt8>,
        _ h: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
        _ k: UnsafeBufferPointer<UInt32>,
        _ w: UnsafeMutableBufferPointer<UInt32>
    ) {
        for t in 0..<16 {
            let j = t * 4
            w[t] = UInt32(block[j]) << 24 | UInt32(block[j + 1]) << 16 | UInt32(block[j + 2]) << 8 | UInt32(block[j + 3])
        }
        for t in 16..<64 {
            let x = w[t - 15], y = w[t - 2]
            let s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3)
            let s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = h.0, b = h.1, c = h.2, d = h.3, e = h.4, f = h.5, g = h.6, hh = h.7
        // Eight rounds a step, each with the working variables in the places the round before
        // left them: no shifting of all eight words after every round.
        @inline(__always) func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                                     _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ t: Int) {
            let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ (g ^ (e & (f ^ g))) &+ k[t] &+ w[t]
            let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) | (c & (a | b)))
            d &+= t1
            h = t1 &+ t2
        }
        var t = 0
        while t < 64 {
            round(a, b, c, &d, e, f, g, &hh, t)
            round(hh, a, b, &c, d, e, f, &g, t + 1)
            round(g, hh, a, &b, c, d, e, &f, t + 2)
            round(f, g, hh, &a, b, c, d, &e, t + 3)
            round(e, f, g, &hh, a, b, c, &d, t + 4)
            round(d, e, f, &g, hh, a, b, &c, t + 5)
            round(c, d, e, &f, g, hh, a, &b, t + 6)
            round(b, c, d, &e, f, g, hh, &a, t + 7)
            t += 8
        }
        h.0 &+= a; h.1 &+= b; h.2 &+= c; h.3 &+= d
        h.4 &+= e; h.5 &+= f; h.6 &+= g; h.7 &+= hh
    }
}
