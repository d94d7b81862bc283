// Matching raw UTF-8 text against an already folded (or, without options, plain) operand (the SQL
// functions strata_contains, strata_has_prefix, strata_has_suffix,
// strata_compare, strata_lsc): the raw side is folded into a reusable scratch
// buffer, ASCII text by a single lowercasing pass, other text by `foldFast`,
// so that a row costs no allocation once the buffer has grown.

import Glibc

/// Where ``TextFolding/foldFast(_:mode:into:)`` writes: an array, or a scratch buffer.
protocol FoldOutput {
    mutating func append(_ b: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: FoldOutput where Element == UInt8 {
    @inline(__always) mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

extension TextFolding {
    /// Buffers reused across calls (one set per database connection: SQLite
    /// calls a connection's functions one at a time).
    struct Scratch {
        /// ASCII text lowercased, or other text folded by ``foldFast(_:mode:into:)``.
        var buffer = ByteBuffer()
        /// Text that needs the slow path (``foldSlow(_:mode:into:)``) or repair.
        var folded: [UInt8] = []

        mutating func release() {
            buffer.release()
            folded = []
        }

        /// Calls `body` with `p` folded in `mode` (0...3; 0: as is, invalid UTF-8
        /// repaired with U+FFFD as `String(decoding:as:)` does): `p` itself when
        /// folding changes nothing, else bytes in these buffers.
        @inline(__always)
        mutating func withFolded<R>(_ p: UnsafeBufferPointer<UInt8>, mode: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            let n = p.count
            guard n > 0, let src = p.baseAddress else { return body(p) }
            buffer.count = 0
            let dst = buffer.reserve(n)
            if mode & 1 == 0 {
                // Diacritic folding leaves ASCII as it is.
                if TextFolding.isASCII(src, n) { return body(p) }
            } else if TextFolding.lowercaseASCII(src, n, into: dst) {
                return body(UnsafeBufferPointer(start: dst, count: n))
            }
            if mode == 0 {
                if TextFolding.isValidUTF8(p) { return body(p) }
                folded.removeAll(keepingCapacity: true)
                folded.append(contentsOf: String(decoding: p, as: UTF8.self).utf8)
                return folded.withUnsafeBufferPointer(body)
            }
            if TextFolding.foldFast(p, mode: mode, into: &buffer) {
                return body(UnsafeBufferPointer(start: buffer.base, count: buffer.count))
            }
            folded.removeAll(keepingCapacity: true)
            foldSlow(String(decoding: p, as: UTF8.self), mode: mode, into: &folded)
            return folded.withUnsafeBufferPointer(body)
        }
    }

    /// A growable byte buffer, appended to without Array's uniqueness and
    /// capacity bookkeeping.
    struct ByteBuffer: FoldOutput {
        private(set) var base: UnsafeMutablePointer<UInt8>? = nil
        var count = 0
        private var capacity = 0

        /// Room for `extra` more bytes; returns where they go.
        @inline(__always) mutating func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
            if count + extra > capacity { grow(count + extra) }
            return base.unsafelyUnwrapped + count
        }

        private mutating func grow(_ needed: Int) {
            let newCapacity = max(needed, 64, capacity * 2)
            let b = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            if let base {
                b.update(from: base, count: count)
                base.deallocate()
            }
            base = b
            capacity = newCapacity
        }

        @inline(__always) mutating func append(_ b: UInt8) {
            reserve(1).pointee = b
            count += 1
        }

        @inline(__always) mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
            guard let src = bytes.baseAddress, bytes.count > 0 else { return }
            reserve(bytes.count).update(from: src, count: bytes.count)
            count += bytes.count
        }

        mutating func release() {
            base?.deallocate()
            base = nil
            count = 0
            capacity = 0
        }
    }

    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Whether `n` bytes at `p` are ASCII, eight at a time.
    @inline(__always) static func isASCII(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        let raw = UnsafeRawPointer(p)
        var acc: UInt64 = 0
        var i = 0
        while i + 8 <= n {
            acc |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        var tail: UInt8 = 0
        while i < n { tail |= p[i]; i += 1 }
        return acc & highBits == 0 && tail < 0x80
    }

    /// Copies `n` bytes at `p` to `dst` with A-Z lowercased, eight at a time; false (and a
    /// partial copy) as soon as a byte is not ASCII.
    @inline(__always) static func lowercaseASCII(_ p: UnsafePointer<UInt8>, _ n: Int, into dst: UnsafeMutablePointer<UInt8>) -> Bool {
        let raw = UnsafeRawPointer(p), out = UnsafeMutableRawPointer(dst)
        var i = 0
        while i + 8 <= n {
            let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if x & highBits != 0 { return false }
            // Per byte (all below 0x80, so no carry crosses a byte): the high bit of
            // x + (0x80 - 'A') is set from 'A' up, that of x + (0x80 - 'Z' - 1) above 'Z'.
            let upper = (x &+ ones &* (0x80 - 0x41)) & ~(x &+ ones &* (0x80 - 0x5B)) & highBits
            out.storeBytes(of: x | upper >> 2, toByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            let b = p[i]
            if b >= 0x80 { return false }
            dst[i] = (b &- 0x41) < 26 ? b | 0x20 : b
            i += 1
        }
        return true
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
