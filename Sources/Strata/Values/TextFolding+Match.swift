// Matching raw UTF-8 text against an already folded operand (the SQL
// functions strata_contains, strata_has_prefix, strata_has_suffix,
// strata_compare, strata_lsc): the raw side is folded into a reusable scratch
// buffer, ASCII text by a single lowercasing pass, other text by `foldBytes`,
// so that a row costs no allocation once the buffer has grown.

import Glibc

extension TextFolding {
    /// A growable byte buffer reused across calls (one per database
    /// connection: SQLite calls a connection's functions one at a time).
    struct Scratch {
        /// Non-ASCII text folded by ``foldBytes``.
        var folded: [UInt8] = []
        /// ASCII text lowercased.
        var ascii: UnsafeMutablePointer<UInt8>? = nil
        var asciiCapacity = 0

        mutating func release() {
            ascii?.deallocate()
            ascii = nil
            asciiCapacity = 0
            folded = []
        }

        /// Calls `body` with `p` folded in `mode` (1...3): `p` itself when
        /// folding changes nothing, else bytes in this buffer.
        @inline(__always)
        mutating func withFolded<R>(_ p: UnsafeBufferPointer<UInt8>, mode: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            let n = p.count
            guard n > 0, let src = p.baseAddress else { return body(p) }
            if mode & 1 == 0 {
                // Diacritic folding leaves ASCII as it is.
                var acc: UInt8 = 0
                for i in 0..<n { acc |= src[i] }
                if acc < 0x80 { return body(p) }
            } else if let dst = asciiBuffer(n) {
                var i = 0
                while i < n {
                    let b = src[i]
                    if b >= 0x80 { break }
                    dst[i] = (b &- 0x41) < 26 ? b | 0x20 : b
                    i += 1
                }
                if i == n { return body(UnsafeBufferPointer(start: dst, count: n)) }
            }
            folded.removeAll(keepingCapacity: true)
            foldBytes(p, mode: mode, into: &folded)
            return folded.withUnsafeBufferPointer(body)
        }

        @inline(__always)
        private mutating func asciiBuffer(_ n: Int) -> UnsafeMutablePointer<UInt8>? {
            if asciiCapacity < n {
                ascii?.deallocate()
                asciiCapacity = max(n, 64, asciiCapacity * 2)
                ascii = UnsafeMutablePointer<UInt8>.allocate(capacity: asciiCapacity)
            }
            return ascii
        }
    }

    /// The tests of ``Evaluation/stringTest(_:_:_:options:)`` on folded bytes
    /// (an empty needle is contained, a prefix and a suffix).
    static func contains(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        let nc = n.count
        if nc == 0 { return true }
        let hc = h.count
        guard nc <= hc, let hb = h.baseAddress, let nb = n.baseAddress else { return false }
        let first = Int32(nb[0])
        if nc == 1 { return memchr(hb, first, hc) != nil }
        // memchr for the first byte, memcmp for the rest (glibc's memmem needs _GNU_SOURCE).
        let last = hc - nc
        var i = 0
        while i <= last {
            guard let q = memchr(hb + i, first, last - i + 1) else { return false }
            let pos = hb.distance(to: q.assumingMemoryBound(to: UInt8.self))
            if memcmp(hb + pos + 1, nb + 1, nc - 1) == 0 { return true }
            i = pos + 1
        }
        return false
    }

    static func hasPrefix(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        let nc = n.count
        if nc == 0 { return true }
        guard nc <= h.count, let hb = h.baseAddress, let nb = n.baseAddress else { return false }
        return memcmp(hb, nb, nc) == 0
    }

    static func hasSuffix(_ h: UnsafeBufferPointer<UInt8>, _ n: UnsafeBufferPointer<UInt8>) -> Bool {
        let nc = n.count
        if nc == 0 { return true }
        guard nc <= h.count, let hb = h.baseAddress, let nb = n.baseAddress else { return false }
        return memcmp(hb + (h.count - nc), nb, nc) == 0
    }

    /// Unicode scalar (UTF-8 byte) order: -1, 0, 1.
    static func byteCompare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let m = min(a.count, b.count)
        if m > 0, let ab = a.baseAddress, let bb = b.baseAddress {
            let c = memcmp(ab, bb, m)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : a.count > b.count ? 1 : 0
    }
}
