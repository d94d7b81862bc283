import Glibc

/// A pull parser over UTF-8 JSON text, used on the hot paths (objects in)
/// so that values go from the input bytes to SQLite bindings without an
/// intermediate tree. Syntax errors are `.invalid` errors with reason
/// `.malformedJSON`, naming the byte offset; the caller adds the JSON path of
/// the value it was reading.
struct JSONReader {
    enum Kind { case object, array, string, number, bool, null }

    let buffer: UnsafeBufferPointer<UInt8>
    private(set) var position = 0
    private var depth = 0
    static let maxDepth = 128

    init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    // MARK: Errors

    func syntaxError(_ what: String) -> StrataError {
        if position >= buffer.count {
            return StrataError(.invalid, "malformed JSON: unexpected end of input, \(what)", reason: .malformedJSON)
        }
        return JSONReader.malformed(at: position, what)
    }

    /// A syntax error at byte `offset` of the input.
    static func malformed(at offset: Int, _ what: String) -> StrataError {
        StrataError(.invalid, "malformed JSON at offset \(offset): \(what)", reason: .malformedJSON)
    }

    // MARK: Lexing

    @inline(__always) mutating func skipWhitespace() {
        while position < buffer.count {
            let c = buffer[position]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { position += 1 } else { return }
        }
    }

    @inline(__always) mutating func peekByte() -> UInt8? {
        skipWhitespace()
        return position < buffer.count ? buffer[position] : nil
    }

    /// The kind of the next value, without consuming it.
    mutating func peek() throws -> Kind {
        guard let c = peekByte() else { throw syntaxError("expected a value") }
        switch c {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw syntaxError("unexpected character '\(Character(Unicode.Scalar(c)))'")
        }
    }

    @inline(__always) mutating func expect(_ c: UInt8, _ what: String) throws {
        guard peekByte() == c else { throw syntaxError("expected \(what)") }
        position += 1
    }

    /// Fails unless only whitespace remains.
    mutating func expectEnd() throws {
        if peekByte() != nil { throw syntaxError("unexpected text after the JSON value") }
    }

    // MARK: Containers

    /// Reads an object, calling `body` once per member with the key; `body`
    /// must consume exactly one value. Duplicate keys are rejected.
    mutating func readObject(checkDuplicates: Bool = true, _ body: (inout JSONReader, String) throws -> Void) throws {
        var seen = KeySet()
        try readMemberList({ r in
            let key = try r.readString()
            if checkDuplicates, !seen.insert(key) {
                throw StrataError(.invalid, "duplicate key in JSON object at offset \(r.position)")
            }
            return key
        }, body)
    }

    /// A member name as the input spells it: the bytes between its quotes when they hold no
    /// escape (valid UTF-8, checked), else the decoded text.
    struct Name {
        let raw: UnsafeBufferPointer<UInt8>?
        private let decoded: String?
        init(raw: UnsafeBufferPointer<UInt8>) { self.raw = raw; decoded = nil }
        init(decoded: String) { raw = nil; self.decoded = decoded }
        /// The name as text.
        var string: String { decoded ?? String(decoding: raw!, as: UTF8.self) }
    }

    /// Reads an object as `readObject(checkDuplicates: false)` does (same checks and errors),
    /// handing `body` each member's name without making a `String` of it when it has no escape.
    mutating func readMembers(_ body: (inout JSONReader, Name) throws -> Void) throws {
        try readMemberList({ r in
            if let raw = try r.readPlainString() { return Name(raw: raw) }
            return Name(decoded: try r.readString())
        }, body)
    }

    /// The object frame both readers above share: the `{`, the depth bound, a member name
    /// (read by `name`, positioned at its opening quote), the `:`, `body` for its value, and the
    /// `,`/`}` loop, with the same syntax errors at the same offsets for both.
    @inline(__always)
    private mutating func readMemberList<N>(_ name: (inout JSONReader) throws -> N,
                                            _ body: (inout JSONReader, N) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "'{'")
        depth += 1
        guard depth <= JSONReader.maxDepth else { throw syntaxError("nesting deeper than \(JSONReader.maxDepth)") }
        if peekByte() == UInt8(ascii: "}") { position += 1; depth -= 1; return }
        while true {
            guard peekByte() == UInt8(ascii: "\"") else { throw syntaxError("expected a member name") }
            let member = try name(&self)
            try expect(UInt8(ascii: ":"), "':'")
            try body(&self, member)
            guard let c = peekByte() else { throw syntaxError("expected ',' or '}'") }
            position += 1
            if c == UInt8(ascii: "}") { break }
            if c != UInt8(ascii: ",") { position -= 1; throw syntaxError("expected ',' or '}'") }
        }
        depth -= 1
    }

    /// The value of the object's first member, when the object at the reader starts with member
    /// `name` (spelled without escapes) and its value is a string without escapes; nil otherwise,
    /// also for any syntax error (a full read of the object then finds it). Reads nothing.
    func leadingString(member name: StaticString) -> String? {
        var r = self
        guard r.peekByte() == UInt8(ascii: "{") else { return nil }
        r.position += 1
        guard r.peekByte() == UInt8(ascii: "\""), let key = try? r.readPlainString(),
              key.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)),
              r.peekByte() == UInt8(ascii: ":") else { return nil }
        r.position += 1
        guard r.peekByte() == UInt8(ascii: "\""), let value = try? r.readPlainString() else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    /// Reads an array, calling `body` once per element with its index.
    mutating func readArray(_ body: (inout JSONReader, Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "'['")
        depth += 1
        guard depth <= JSONReader.maxDepth else { throw syntaxError("nesting deeper than \(JSONReader.maxDepth)") }
        if peekByte() == UInt8(ascii: "]") { position += 1; depth -= 1; return }
        var index = 0
        while true {
            try body(&self, index)
            index += 1
            guard let c = peekByte() else { throw syntaxError("expected ',' or ']'") }
            position += 1
            if c == UInt8(ascii: "]") { break }
            if c != UInt8(ascii: ",") { position -= 1; throw syntaxError("expected ',' or ']'") }
        }
        depth -= 1
    }

    // MARK: Scalars

    mutating func readNull() throws {
        try literal("null")
    }

    mutating func readBool() throws -> Bool {
        guard let c = peekByte() else { throw syntaxError("expected true or false") }
        if c == UInt8(ascii: "t") { try literal("true"); return true }
        try literal("false")
        return false
    }

    private mutating func literal(_ word: StaticString) throws {
        skipWhitespace()
        let n = word.utf8CodeUnitCount
        guard position + n <= buffer.count else { throw syntaxError("expected '\(word)'") }
        for i in 0..<n where buffer[position + i] != word.utf8Start[i] {
            throw syntaxError("expected '\(word)'")
        }
        position += n
    }


    struct NumberRange { var lowerBound: Int; var upperBound: Int; var isInteger: Bool }

    mutating func scanNumber() throws -> NumberRange {
        skipWhitespace()
        let start = position
        var isInteger = true
        if position < buffer.count && buffer[position] == UInt8(ascii: "-") { position += 1 }
        guard position < buffer.count, isDigit(buffer[position]) else { throw syntaxError("expected a digit") }
        if buffer[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < buffer.count && isDigit(buffer[position]) { position += 1 }
        }
        if position < buffer.count && buffer[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < buffer.count, isDigit(buffer[position]) else { throw syntaxError("expected a digit after '.'") }
            while position < buffer.count && isDigit(buffer[position]) { position += 1 }
        }
        if position < buffer.count && (buffer[position] == UInt8(ascii: "e") || buffer[position] == UInt8(ascii: "E")) {
            isInteger = false
            position += 1
            if position < buffer.count && (buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-")) { position += 1 }
            guard position < buffer.count, isDigit(buffer[position]) else { throw syntaxError("expected a digit in the exponent") }
            while position < buffer.count && isDigit(buffer[position]) { position += 1 }
        }
        return NumberRange(lowerBound: start, upperBound: position, isInteger: isInteger)
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// A number read as a JSON number: an exact Int64 when it is an integer
    /// in range, else a Double.
    enum Number { case int(Int64), double(Double) }

    mutating func readNumber() throws -> Number {
        let r = try scanNumber()
        let slice = UnsafeBufferPointer(rebasing: buffer[r.lowerBound..<r.upperBound])
        if r.isInteger, let v = JSONReader.parseInt(slice) { return .int(v) }
        return .double(JSONReader.parseDouble(slice))
    }

    static func parseInt(_ s: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        var negative = false
        if s.count > 0 && s[0] == UInt8(ascii: "-") { negative = true; i = 1 }
        guard i < s.count else { return nil }
        var v: Int64 = 0
        while i < s.count {
            let d = Int64(s[i] &- 48)
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
            if o1 || o2 { return nil }
            v = a
            i += 1
        }
        return v
    }

    static func parseDouble(_ s: UnsafeBufferPointer<UInt8>) -> Double {
        // strtod needs a NUL-terminated copy; numbers are short (a buffer on the stack, not an array).
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: s.count + 1) { tmp in
            for i in 0..<s.count { tmp[i] = CChar(bitPattern: s[i]) }
            tmp[s.count] = 0
            return strtod(tmp.baseAddress!, nil)
        }
    }

    /// Reads a string, decoding escapes; invalid UTF-8 is an error.
    mutating func readString() throws -> String {
        // Fast path: no escapes.
        if let plain = try readPlainString() { return String(decoding: plain, as: UTF8.self) }
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        // The runs between escapes copied whole: room for the first run and a few escapes at once.
        var end = plainRun(from: start).end
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end - start + 16)
        while true {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[position..<end]))
            position = end
            guard let scalar = try escapeOrClosingQuote() else { break }
            if scalar.isASCII { bytes.append(UInt8(scalar.value)) } else { bytes.append(contentsOf: UTF8.encode(scalar)!) }
            end = plainRun(from: position).end
        }
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw JSONReader.malformed(at: start, "string is not valid UTF-8")
        }
        return s
    }

    /// What ends a run of a string's plain bytes (the reader at its end): an escape, read (its
    /// character), or the closing quote, read (nil). The end of the input or a control
    /// character is an error.
    private mutating func escapeOrClosingQuote() throws -> Unicode.Scalar? {
        guard position < buffer.count else { throw syntaxError("unterminated string") }
        let c = buffer[position]
        position += 1
        if c == UInt8(ascii: "\"") { return nil }
        if c < 0x20 { position -= 1; throw syntaxError("control character in string") }
        return try readEscape()
    }

    /// The character of the escape after a backslash (the reader just past the backslash):
    /// `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u` with four hex digits (a
    /// surrogate pair as two); anything else is an error at the escape's letter.
    private mutating func readEscape() throws -> Unicode.Scalar {
        guard position < buffer.count else { throw syntaxError("unterminated escape") }
        let e = buffer[position]
        position += 1
        switch e {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if scalar >= 0xD800 && scalar < 0xDC00 {
                guard position + 1 < buffer.count, buffer[position] == UInt8(ascii: "\\"),
                      buffer[position + 1] == UInt8(ascii: "u") else { throw syntaxError("unpaired surrogate") }
                position += 2
                let low = try readHex4()
                guard low >= 0xDC00 && low < 0xE000 else { throw syntaxError("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar < 0xE000 {
                throw syntaxError("unpaired surrogate")
            }
            guard let u = Unicode.Scalar(scalar) else { throw syntaxError("invalid \\u escape") }
            return u
        default:
            position -= 1
            throw syntaxError("invalid escape")
        }
    }

    /// Skips a string as `readString` reads it (same checks and errors), without making it.
    /// An escape's output is whole characters, so the bytes between escapes are valid UTF-8
    /// exactly when the decoded string is: each run is checked on its own.
    mutating func skipString() throws {
        if try readPlainString() != nil { return }
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        var valid = true
        repeat {
            let (end, ascii) = plainRun(from: position)
            if valid && !ascii { valid = TextFolding.isValidUTF8(UnsafeBufferPointer(rebasing: buffer[position..<end])) }
            position = end
        } while try escapeOrClosingQuote() != nil
        guard valid else { throw JSONReader.malformed(at: start, "string is not valid UTF-8") }
    }

    /// Reads a string that has no escape, as `readString` reads it (same checks and errors),
    /// returning the bytes between its quotes; nil, with nothing read, when it has an escape
    /// or no closing quote (the full reader then reads it).
    mutating func readPlainString() throws -> UnsafeBufferPointer<UInt8>? {
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        let (end, ascii) = plainRun(from: start)
        guard end < buffer.count, buffer[end] != UInt8(ascii: "\\") else {
            position = start - 1
            return nil
        }
        position = end
        guard buffer[end] == UInt8(ascii: "\"") else { throw syntaxError("control character in string") }
        let slice = UnsafeBufferPointer(rebasing: buffer[start..<end])
        guard ascii || TextFolding.isValidUTF8(slice) else {
            throw JSONReader.malformed(at: start, "string is not valid UTF-8")
        }
        position += 1
        return slice
    }

    /// From `start`, the offset of the first quote, backslash or control character (the
    /// input's length: none), and whether every byte before it is ASCII. Eight bytes at a time.
    @inline(__always) private func plainRun(from start: Int) -> (end: Int, ascii: Bool) {
        guard let base = buffer.baseAddress else { return (start, true) }
        let raw = UnsafeRawPointer(base)
        let n = buffer.count
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var i = start
        var seen: UInt64 = 0
        while i + 8 <= n {
            let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let quote = x ^ (ones &* 0x22), backslash = x ^ (ones &* 0x5C)
            // A byte that is 0 in `quote` or `backslash`, or below 0x20 in `x` (exact tests for "any";
            // the lowest byte flagged is exact too, as a borrow only moves up).
            let stop = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((x &- ones &* 0x20) & ~x)) & highs
            if stop != 0 {
                // The first stop is the lowest flagged byte (read little-endian); the bytes below it count.
                let k = stop.trailingZeroBitCount >> 3
                if k > 0 { seen |= x & (UInt64.max >> (64 - 8 * UInt64(k))) }
                return (i + k, seen & highs == 0)
            }
            seen |= x
            i += 8
        }
        while i < n {
            let c = base[i]
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { break }
            seen |= UInt64(c)
            i += 1
        }
        return (i, seen & highs == 0)
    }

    /// Skips an object as `readObject(checkDuplicates: false)` reads it, without making its keys.
    private mutating func skipObject() throws {
        try expect(UInt8(ascii: "{"), "'{'")
        depth += 1
        guard depth <= JSONReader.maxDepth else { throw syntaxError("nesting deeper than \(JSONReader.maxDepth)") }
        if peekByte() == UInt8(ascii: "}") { position += 1; depth -= 1; return }
        while true {
            guard peekByte() == UInt8(ascii: "\"") else { throw syntaxError("expected a member name") }
            try skipString()
            try expect(UInt8(ascii: ":"), "':'")
            try skipValue()
            guard let c = peekByte() else { throw syntaxError("expected ',' or '}'") }
            position += 1
            if c == UInt8(ascii: "}") { break }
            if c != UInt8(ascii: ",") { position -= 1; throw syntaxError("expected ',' or '}'") }
        }
        depth -= 1
    }

    private mutating func readHex4() throws -> UInt32 {
        guard position + 4 <= buffer.count else { throw syntaxError("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = buffer[position]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw syntaxError("invalid \\u escape")
            }
            v = v << 4 | d
            position += 1
        }
        return v
    }

    /// Skips one value of any kind, checking it as reading would, without making strings.
    mutating func skipValue() throws {
        switch try peek() {
        case .object: try skipObject()
        case .array: try readArray { r, _ in try r.skipValue() }
        case .string: try skipString()
        case .number: _ = try scanNumber()
        case .bool: _ = try readBool()
        case .null: try readNull()
        }
    }

    /// Reads any value as a tree; a duplicate key is an error naming its JSON path
    /// (the path is the key's position, not its text, in the message).
    /// `maxLevels` limits how deeply the value itself nests (`[]` is one level,
    /// a scalar none), wherever it sits in the document.
    mutating func readValue(at path: JSONPath = JSONPath(), maxLevels: Int = Int.max) throws -> JSONValue {
        var scratch = TreeScratch()
        do {
            return try readTree(remaining: maxLevels, limit: maxLevels, &scratch)
        } catch let e as TreeError {
            throw e.error(under: path)
        }
    }

    /// A failure of `readTree` whose JSON path is made on the way out: reading makes no path for
    /// the members it reads (few documents fail), each level adds its step as the error passes.
    private struct TreeError: Error {
        enum Kind { case tooDeep(limit: Int), duplicateKey }
        enum PathStep { case key(String), index(Int) }
        let kind: Kind
        /// Innermost first.
        var steps: [PathStep]

        func error(under base: JSONPath) -> StrataError {
            var path = base
            for step in steps.reversed() {
                switch step {
                case .key(let key): path = path / key
                case .index(let index): path = path / index
                }
            }
            switch kind {
            case .tooDeep(let limit):
                return StrataError(.invalid, "JSON value nests deeper than \(limit) levels at \(path)", path: path.description)
            case .duplicateKey:
                return StrataError(.invalid, "duplicate key in JSON object at \(path)", path: path.description)
            }
        }
    }

    /// The members and items of the objects and arrays `readTree` is inside, innermost last: a
    /// container's go on the end while it is read, then leave as one array of exactly their
    /// number (no array per container grown member by member, none kept to find duplicate keys).
    private struct TreeScratch {
        var members: [(String, JSONValue)] = []
        var items: [JSONValue] = []
    }

    private mutating func readTree(remaining maxLevels: Int, limit: Int, _ scratch: inout TreeScratch) throws -> JSONValue {
        let kind = try peek()
        if kind == .object || kind == .array, maxLevels < 1 { throw TreeError(kind: .tooDeep(limit: limit), steps: []) }
        switch kind {
        case .object:
            let start = scratch.members.count
            // Past KeySet.scanLimit keys, the keys so far are hashed instead of scanned.
            var hashed: Set<String>?
            try readObject(checkDuplicates: false) { r, key in
                if hashed == nil {
                    for i in start..<scratch.members.count where scratch.members[i].0 == key {
                        throw TreeError(kind: .duplicateKey, steps: [.key(key)])
                    }
                    if scratch.members.count - start >= KeySet.scanLimit {
                        hashed = Set(scratch.members[start...].lazy.map(\.0))
                        hashed!.insert(key)
                    }
                } else if !hashed!.insert(key).inserted {
                    throw TreeError(kind: .duplicateKey, steps: [.key(key)])
                }
                do {
                    let value = try r.readTree(remaining: maxLevels - 1, limit: limit, &scratch)
                    scratch.members.append((key, value))
                } catch var e as TreeError {
                    e.steps.append(.key(key))
                    throw e
                }
            }
            let members = Array(scratch.members[start...])
            scratch.members.removeSubrange(start...)
            return .object(members)
        case .array:
            let start = scratch.items.count
            try readArray { r, i in
                do {
                    let item = try r.readTree(remaining: maxLevels - 1, limit: limit, &scratch)
                    scratch.items.append(item)
                } catch var e as TreeError {
                    e.steps.append(.index(i))
                    throw e
                }
            }
            let items = Array(scratch.items[start...])
            scratch.items.removeSubrange(start...)
            return .array(items)
        case .string: return .string(try readString())
        case .number:
            let r = try scanNumber()
            let slice = UnsafeBufferPointer(rebasing: buffer[r.lowerBound..<r.upperBound])
            return .number(String(decoding: slice, as: UTF8.self))
        case .bool: return .bool(try readBool())
        case .null: try readNull(); return .null
        }
    }
}

/// The keys of one JSON object seen so far: a linear scan while the object is
/// small, a hash set past a few keys, so checking every key of an object for
/// duplicates is linear overall.
struct KeySet {
    /// Objects with at most this many keys are scanned, not hashed.
    static let scanLimit = 12
    private var small: [String] = []
    private var large: Set<String>?

    /// Adds `key`; false when it was there already.
    mutating func insert(_ key: String) -> Bool {
        if let inserted = large?.insert(key).inserted { return inserted }
        if small.contains(key) { return false }
        small.append(key)
        if small.count > KeySet.scanLimit {
            large = Set(small)
            small = []
        }
        return true
    }
}

extension JSONReader {
    /// The value of the member `key` of the object `json` (parsed before, without error), minified
    /// as ``JSONValue/text`` writes it: copied from the bytes without their white space. Nil when
    /// the object has no member spelled `key` or the value holds a string escape, which the
    /// writer may spell otherwise (the caller then writes the text from the tree).
    ///
    /// Copying is exact for JSON that parsed: outside strings only white space goes; a string
    /// without escapes is its bytes (the reader refuses control characters and invalid UTF-8 in
    /// one, and the writer escapes only those, `"` and `\`); numbers keep their text.
    static func minifiedMember(_ key: StaticString, of json: UnsafeBufferPointer<UInt8>) -> String? {
        var r = JSONReader(json)
        let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var range: Range<Int>?
        do {
            try r.readMembers { r, member in
                r.skipWhitespace()
                let start = r.position
                try r.skipValue()
                if let raw = member.raw, raw.elementsEqual(name) { range = start..<r.position }
            }
        } catch {
            return nil
        }
        guard let range else { return nil }
        let value = UnsafeBufferPointer(rebasing: json[range])
        var escaped = false
        let text = String(unsafeUninitializedCapacity: value.count) { out in
            var n = 0
            var inString = false
            for c in value {
                if inString {
                    if c == UInt8(ascii: "\\") { escaped = true; return 0 }
                    if c == UInt8(ascii: "\"") { inString = false }
                } else if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 {
                    continue
                } else if c == UInt8(ascii: "\"") {
                    inString = true
                }
                out[n] = c
                n += 1
            }
            return n
        }
        return escaped ? nil : text
    }
}
