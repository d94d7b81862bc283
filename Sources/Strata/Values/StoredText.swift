/// Checks of text read from a store file, which is untrusted input: each
/// answers whether bytes are what Strata writes for a type, without
/// allocating (the object writer runs them on every value it writes out).
enum StoredText {
    /// The length of the UTF-8 sequence that starts at `i` (1 to 4), or 0 when
    /// the bytes there are not a well-formed sequence (RFC 3629: no overlong
    /// forms, no surrogates, nothing above U+10FFFF).
    @inline(__always)
    static func sequenceLength(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
        let n = s.count
        let b0 = s[i]
        if b0 < 0x80 { return 1 }
        @inline(__always) func cont(_ k: Int) -> Bool { k < n && s[k] & 0xC0 == 0x80 }
        switch b0 {
        case 0xC2...0xDF:
            return cont(i + 1) ? 2 : 0
        case 0xE0...0xEF:
            guard i + 2 < n, cont(i + 1), cont(i + 2) else { return 0 }
            let b1 = s[i + 1]
            if b0 == 0xE0 && b1 < 0xA0 { return 0 }   // overlong
            if b0 == 0xED && b1 > 0x9F { return 0 }   // surrogates
            return 3
        case 0xF0...0xF4:
            guard i + 3 < n, cont(i + 1), cont(i + 2), cont(i + 3) else { return 0 }
            let b1 = s[i + 1]
            if b0 == 0xF0 && b1 < 0x90 { return 0 }   // overlong
            if b0 == 0xF4 && b1 > 0x8F { return 0 }   // above U+10FFFF
            return 4
        default:
            return 0
        }
    }

    /// Whether `s` is exactly one JSON value (RFC 8259; whitespace around it
    /// allowed) nesting at most `maxLevels` arrays and objects, its strings
    /// well-formed UTF-8 without raw control characters. A scan with a
    /// fixed-size stack of bits: no tree, no allocation.
    static func isJSONValue(_ s: UnsafeBufferPointer<UInt8>, maxLevels: Int = ValueCodec.maxJSONValueLevels) -> Bool {
        var scan = JSONScan(s, maxLevels: min(maxLevels, JSONScan.capacity))
        return scan.valid()
    }
}

/// The scanner of ``StoredText/isJSONValue(_:maxLevels:)``.
private struct JSONScan {
    static let capacity = 256
    let s: UnsafeBufferPointer<UInt8>
    let n: Int
    let maxLevels: Int
    var i = 0
    /// One bit per open container, 1 for an object (four words: up to 256 levels).
    var stack: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    var depth = 0

    init(_ s: UnsafeBufferPointer<UInt8>, maxLevels: Int) {
        self.s = s
        n = s.count
        self.maxLevels = maxLevels
    }

    @inline(__always) mutating func skipSpace() {
        while i < n {
            let c = s[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    mutating func push(object: Bool) -> Bool {
        guard depth < maxLevels else { return false }
        let word = depth >> 6, bit = UInt64(1) << UInt64(depth & 63)
        withUnsafeMutableBytes(of: &stack) { raw in
            let words = raw.bindMemory(to: UInt64.self)
            words[word] = object ? words[word] | bit : words[word] & ~bit
        }
        depth += 1
        return true
    }

    /// Whether the innermost open container is an object.
    func top() -> Bool {
        let d = depth - 1
        return withUnsafeBytes(of: stack) { raw in
            raw.bindMemory(to: UInt64.self)[d >> 6] & (UInt64(1) << UInt64(d & 63)) != 0
        }
    }

    @inline(__always) mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= n else { return false }
        for k in 0..<count where s[i + k] != word.utf8Start[k] { return false }
        i += count
        return true
    }

    mutating func string() -> Bool {
        // At the opening quote.
        i += 1
        while i < n {
            let c = s[i]
            if c == UInt8(ascii: "\"") { i += 1; return true }
            if c < 0x20 { return false }
            if c == UInt8(ascii: "\\") {
                i += 1
                guard i < n else { return false }
                switch s[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 1
                case UInt8(ascii: "u"):
                    guard i + 4 < n else { return false }
                    for k in 1...4 where !isHex(s[i + k]) { return false }
                    i += 5
                default:
                    return false
                }
                continue
            }
            if c < 0x80 { i += 1; continue }
            let k = StoredText.sequenceLength(s, i)
            if k == 0 { return false }
            i += k
        }
        return false
    }

    @inline(__always) func isHex(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66)
    }

    @inline(__always) func isDigit(_ at: Int) -> Bool { at < n && s[at] &- 0x30 <= 9 }

    mutating func number() -> Bool {
        if s[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return false }
        if s[i] == UInt8(ascii: "0") { i += 1 } else { while isDigit(i) { i += 1 } }
        if i < n && s[i] == UInt8(ascii: ".") {
            i += 1
            guard isDigit(i) else { return false }
            while isDigit(i) { i += 1 }
        }
        if i < n && s[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < n && (s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-")) { i += 1 }
            guard isDigit(i) else { return false }
            while isDigit(i) { i += 1 }
        }
        return true
    }

    /// One scalar value or an opening bracket at `i`.
    mutating func value() -> Bool {
        guard i < n else { return false }
        switch s[i] {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    mutating func valid() -> Bool {
        skipSpace()
        // After an opening bracket, a comma or a colon: a value is expected.
        var expectValue = true
        while true {
            if expectValue {
                skipSpace()
                guard i < n else { return false }
                let c = s[i]
                if c == UInt8(ascii: "[") || c == UInt8(ascii: "{") {
                    guard push(object: c == UInt8(ascii: "{")) else { return false }
                    i += 1
                    skipSpace()
                    // An empty container closes at once.
                    if i < n && s[i] == (c == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
                        i += 1
                        depth -= 1
                        expectValue = false
                    } else if c == UInt8(ascii: "{") {
                        guard i < n, s[i] == UInt8(ascii: "\""), string() else { return false }
                        skipSpace()
                        guard i < n, s[i] == UInt8(ascii: ":") else { return false }
                        i += 1
                    }
                    continue
                }
                guard value() else { return false }
                expectValue = false
            }
            // After a value: the end, a comma or a closing bracket.
            skipSpace()
            if depth == 0 { return i == n }
            guard i < n else { return false }
            let c = s[i]
            let inObject = top()
            if c == UInt8(ascii: ",") {
                i += 1
                if inObject {
                    skipSpace()
                    guard i < n, s[i] == UInt8(ascii: "\""), string() else { return false }
                    skipSpace()
                    guard i < n, s[i] == UInt8(ascii: ":") else { return false }
                    i += 1
                }
                expectValue = true
            } else if c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                i += 1
                depth -= 1
            } else {
                return false
            }
        }
    }
}

extension ByteSink {
    /// A JSON string of text read from a store, escaped as `JSONWriter.escape` does, if the text
    /// is well-formed UTF-8; false when it is not (what was appended is then to be discarded).
    @inline(__always) mutating func utf8String(_ s: UnsafeBufferPointer<UInt8>) -> Bool {
        append(UInt8(ascii: "\""))
        let n = s.count
        var start = 0
        var i = 0
        while i < n {
            let c = s[i]
            if c >= 0x20 && c < 0x80 && c != 0x22 && c != 0x5C { i += 1; continue }
            if c >= 0x80 {
                let k = StoredText.sequenceLength(s, i)
                if k == 0 { return false }
                i += k
                continue
            }
            if start < i { append(UnsafeBufferPointer(rebasing: s[start..<i])) }
            escape(c)
            i += 1
            start = i
        }
        if start < n { append(UnsafeBufferPointer(rebasing: s[start..<n])) }
        append(UInt8(ascii: "\""))
        return true
    }
}
