import Glibc

/// Finished JSON text in one `malloc`'d, NUL-terminated buffer: what a fetch
/// returns. The C layer hands the buffer itself to its caller (`take()`,
/// freed with `free`, i.e. `strata_free`); nothing is copied after writing.
public final class JSONBuffer {
    private var base: UnsafeMutablePointer<UInt8>?
    /// Bytes of text, without the terminating NUL.
    public let count: Int

    init(base: UnsafeMutablePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { free(base) }

    /// Gives up the buffer: the caller owns the NUL-terminated text and frees it with `free`.
    /// Nil when it was taken already.
    public func take() -> UnsafeMutablePointer<CChar>? {
        defer { base = nil }
        return base.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) }
    }

    /// A buffer holding a copy of `bytes`.
    static func copying(_ bytes: [UInt8]) -> JSONBuffer {
        var sink = ByteSink(capacity: bytes.count)
        sink.append(bytes)
        return sink.finish()
    }

    /// A copy of the text (for Swift callers and tests).
    public var bytes: [UInt8] {
        guard let base else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: count))
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }
}

/// The object writer's output: one growing `malloc`/`realloc` buffer written in
/// place. A trivial value (pointer, count, capacity): the row loop retains
/// nothing. Its owner either finishes it (`finish()`, ownership moves to a
/// ``JSONBuffer``) or frees it (`deallocate()`). One byte beyond `count` is
/// always reserved for the terminating NUL.
struct ByteSink {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 4096) {
        let n = max(capacity, 16)
        guard let p = malloc(n) else { fatalError("out of memory") }
        base = p.assumingMemoryBound(to: UInt8.self)
        self.capacity = n
    }

    /// Makes room for `n` more bytes (and the NUL).
    @inline(__always) mutating func reserve(_ n: Int) {
        if count + n >= capacity { grow(n) }
    }

    @inline(never) private mutating func grow(_ n: Int) {
        var c = capacity
        while count + n >= c { c *= 2 }
        guard let p = realloc(base, c) else { fatalError("out of memory") }
        base = p.assumingMemoryBound(to: UInt8.self)
        capacity = c
    }

    @inline(__always) mutating func append(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    @inline(__always) mutating func append(_ b1: UInt8, _ b2: UInt8) {
        reserve(2)
        base[count] = b1
        base[count + 1] = b2
        count += 2
    }

    @inline(__always) mutating func append(_ s: UnsafeBufferPointer<UInt8>) {
        guard let src = s.baseAddress, s.count > 0 else { return }
        reserve(s.count)
        (base + count).update(from: src, count: s.count)
        count += s.count
    }

    @inline(__always) mutating func append(_ s: UnsafeRawBufferPointer) {
        append(s.bindMemory(to: UInt8.self))
    }

    mutating func append(_ a: [UInt8]) { a.withUnsafeBufferPointer { append($0) } }

    /// The bytes written so far (valid until the next write).
    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Forgets what was written, keeping the buffer.
    mutating func removeAll() { count = 0 }

    /// Removes the last byte (an unwanted comma).
    mutating func dropLast() { if count > 0 { count -= 1 } }

    mutating func null() { reserve(4); append(0x6E, 0x75); append(0x6C, 0x6C) }

    mutating func bool(_ v: Bool) {
        if v { append(0x74, 0x72); append(0x75, 0x65) } else { append(0x66, 0x61); append(0x6C, 0x73); append(0x65) }
    }

    /// Decimal digits of `v` (as `JSONWriter.appendInt`).
    @inline(__always) mutating func int(_ v: Int64) {
        reserve(20)
        if v == 0 { base[count] = UInt8(ascii: "0"); count += 1; return }
        var u = v.magnitude
        if v < 0 { base[count] = UInt8(ascii: "-"); count += 1 }
        var digits = 0
        var t = u
        while t > 0 { digits += 1; t /= 10 }
        var i = count + digits
        count = i
        while u > 0 {
            i -= 1
            base[i] = UInt8(truncatingIfNeeded: u % 10) &+ 48
            u /= 10
        }
    }

    /// As `JSONWriter.double`: shortest round-trip form, integers with ".0", non-finite as null.
    mutating func double(_ v: Double) {
        guard v.isFinite else { null(); return }
        if v == v.rounded(), abs(v) < 1e15 {
            int(Int64(v))
            append(UInt8(ascii: "."), UInt8(ascii: "0"))
        } else {
            var s = v.description
            s.withUTF8 { append($0) }
        }
    }

    /// The escape of a byte a JSON string cannot hold as is: a quote, a backslash or a control character.
    @inline(__always) mutating func escape(_ c: UInt8) {
        switch c {
        case 0x22: append(0x5C, 0x22)
        case 0x5C: append(0x5C, 0x5C)
        case 0x0A: append(0x5C, UInt8(ascii: "n"))
        case 0x0D: append(0x5C, UInt8(ascii: "r"))
        case 0x09: append(0x5C, UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            append(0x5C, UInt8(ascii: "u"))
            append(0x30, 0x30)
            append(hex.utf8Start[Int(c >> 4)], hex.utf8Start[Int(c & 0xF)])
        }
    }

    /// Hands the text over, NUL-terminated; the sink must not be used afterwards.
    mutating func finish() -> JSONBuffer {
        reserve(0)
        base[count] = 0
        return JSONBuffer(base: base, count: count)
    }

    /// Frees the buffer (a sink that is not finished).
    func deallocate() { free(base) }
}
