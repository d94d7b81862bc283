/// Writes JSON text straight into a byte buffer: no intermediate object tree.
///
/// Commas are placed automatically: call `key` before each member value,
/// and the value methods (or `beginObject` / `beginArray`) after it.
///
///     var w = JSONWriter()
///     w.beginObject(); w.key("name"); w.string("Paris"); w.endObject()
///     w.string  // {"name":"Paris"}
public struct JSONWriter {
    public var bytes: [UInt8]
    @usableFromInline var needsComma = false

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always) mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma = false }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma = true }
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma = false }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma = true }

    public mutating func key(_ name: String) {
        separate()
        var name = name
        name.withUTF8 { escape($0) }
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A key given as pre-escaped JSON text including quotes and colon (`"name":`).
    mutating func rawKey(_ quotedKeyColon: [UInt8]) {
        separate()
        bytes.append(contentsOf: quotedKeyColon)
        needsComma = false
    }

    public mutating func null() { separate(); bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]); needsComma = true }
    public mutating func bool(_ v: Bool) {
        separate()
        if v { bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
        needsComma = true
    }

    public mutating func int(_ v: Int64) {
        separate()
        JSONWriter.appendInt(v, to: &bytes)
        needsComma = true
    }

    static func appendInt(_ v: Int64, to bytes: inout [UInt8]) {
        if v == 0 { bytes.append(UInt8(ascii: "0")); return }
        var u = v.magnitude
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        var tmp: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes scratch
        withUnsafeMutableBytes(of: &tmp) { buf in
            var i = 24
            while u > 0 {
                i -= 1
                buf[i] = UInt8(truncatingIfNeeded: u % 10) &+ 48
                u /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[i..<24]))
        }
    }

    /// Finite doubles in shortest round-trip form; non-finite values as null.
    public mutating func double(_ v: Double) {
        guard v.isFinite else { null(); return }
        separate()
        if v == v.rounded(), abs(v) < 1e15 {
            JSONWriter.appendInt(Int64(v), to: &bytes)
            bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "0")])
        } else {
            bytes.append(contentsOf: v.description.utf8)
        }
        needsComma = true
    }

    public mutating func string(_ s: String) {
        separate()
        var s = s
        s.withUTF8 { escape($0) }
        needsComma = true
    }

    mutating func string(utf8 buffer: UnsafeBufferPointer<UInt8>) {
        separate()
        escape(buffer)
        needsComma = true
    }

    /// Appends already valid JSON text as one value.
    public mutating func raw(_ json: String) {
        separate()
        bytes.append(contentsOf: json.utf8)
        needsComma = true
    }

    mutating func raw(bytes other: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(contentsOf: other)
        needsComma = true
    }

    /// Starts a string value whose content the caller appends unescaped (it must need no escaping).
    mutating func beginRawString() { separate(); bytes.append(UInt8(ascii: "\"")) }
    mutating func endRawString() { bytes.append(UInt8(ascii: "\"")); needsComma = true }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    @inline(__always)
    mutating func escape(_ s: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        var i = 0
        let n = s.count
        while i < n {
            let c = s[i]
            if c >= 0x20 && c != 0x22 && c != 0x5C { i += 1; continue }
            if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: s[start..<i])) }
            switch c {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            default:
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                bytes.append(JSONWriter.hex[Int(c >> 4)])
                bytes.append(JSONWriter.hex[Int(c & 0xF)])
            }
            i += 1
            start = i
        }
        if start < n { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: s[start..<n])) }
        bytes.append(UInt8(ascii: "\""))
    }
}
