/// A value as SQLite stores it.
public enum SQLValue: Equatable, Hashable, Sendable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])

    var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// Conversions between JSON input and stored values, per attribute type.
///
/// Input rules (DESIGN §4): dates are ISO-8601 text or seconds since 1970;
/// `data` is base64; `uuid` canonical text; `decimal` a number or numeric
/// text (kept exactly); `json` any JSON value (stored minified).
enum ValueCodec {
    /// How deeply a `json` attribute value may nest by itself (`[]` is one level), so
    /// that an object holding it, inside the array `strata_fetch` returns, stays
    /// within the reader's limit and can always be written back.
    static let maxJSONValueLevels = 100
    static let minDateSeconds: Int64 = -62_167_219_200
    static let endDateSeconds: Int64 = 253_402_300_800

    /// Reads one attribute value from the reader. `null` is returned as `.null`
    /// (the caller checks optionality); any other value must be one the type takes,
    /// each type's rules a step of its own below.
    /// `path` is where the value sits in the input; errors inside a `json` value name their own path below it.
    static func read(_ r: inout JSONReader, type: AttributeType, path: JSONPath = JSONPath()) throws -> SQLValue {
        let kind = try r.peek()
        if kind == .null { try r.readNull(); return .null }
        switch type {
        case .string: return try readText(&r, kind)
        case .url: return try readURL(&r, kind)
        case .int: return try readInt(&r, kind)
        case .double: return try readDouble(&r, kind)
        case .bool: return try readBool(&r, kind)
        case .date: return try readDate(&r, kind)
        case .data: return try readData(&r, kind)
        case .uuid: return try readUUID(&r, kind)
        case .decimal: return try readDecimal(&r, kind)
        case .json: return .text(try r.readValue(at: path, maxLevels: maxJSONValueLevels).text)
        case .composite: throw StrataError(.validation, "a composite value is an object of its fields, read field by field")
        }
    }

    /// A string attribute: any JSON string.
    @inline(__always) private static func readText(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .string else { throw mismatch(kind, "a string") }
        return .text(try r.readString())
    }

    /// A URL attribute: a string that is not empty and has no spaces or control characters.
    @inline(__always) private static func readURL(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .string else { throw mismatch(kind, "a URL string") }
        let s = try r.readString()
        guard isValidURL(s) else { throw StrataError(.validation, "expected a URL, found text that is empty or contains spaces or control characters") }
        return .text(s)
    }

    /// An int attribute: an integer, or a number without a fraction within the 64-bit range.
    @inline(__always) private static func readInt(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .number else { throw mismatch(kind, "an integer") }
        switch try r.readNumber() {
        case .int(let v): return .int(v)
        case .double(let d):
            guard d == d.rounded(), d >= -9.2e18, d <= 9.2e18 else { throw StrataError(.validation, "expected an integer, found a number with a fraction or out of the 64-bit range") }
            return .int(Int64(d))
        }
    }

    /// A double attribute: any finite number.
    @inline(__always) private static func readDouble(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .number else { throw mismatch(kind, "a number") }
        switch try r.readNumber() {
        case .int(let v): return .double(Double(v))
        case .double(let d):
            guard d.isFinite else { throw StrataError(.validation, "number out of range") }
            return .double(d)
        }
    }

    /// A bool attribute: true or false, stored as 1 or 0.
    @inline(__always) private static func readBool(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .bool else { throw mismatch(kind, "true or false") }
        return .int(try r.readBool() ? 1 : 0)
    }

    /// A date attribute: seconds since 1970 or ISO-8601 text, within the years ISO-8601 text can write.
    @inline(__always) private static func readDate(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        let t: Double
        if kind == .number {
            switch try r.readNumber() {
            case .int(let v): t = Double(v)
            case .double(let d): t = d
            }
        } else {
            guard kind == .string else { throw mismatch(kind, "an ISO-8601 date string or seconds since 1970") }
            let s = try r.readString()
            guard let parsed = ISO8601.parse(s.utf8) else { throw StrataError(.validation, "expected an ISO-8601 date such as 2026-11-22T09:30:00Z") }
            t = parsed
        }
        // Only dates that come back out as ISO-8601 text (and so can be written again) go in.
        guard ISO8601.isFormattable(t) else {
            throw StrataError(.validation, "date out of range: years 0000 to 9999 only (from 0000-01-01T00:00:00Z, \(minDateSeconds) seconds since 1970, to before 10000-01-01T00:00:00Z, \(endDateSeconds))")
        }
        return .double(t)
    }

    /// A data attribute: base64 text, stored as its bytes.
    @inline(__always) private static func readData(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .string else { throw mismatch(kind, "base64 text") }
        let s = try r.readString()
        guard let bytes = Base64.decode(s.utf8) else { throw StrataError(.validation, "expected base64 text") }
        return .blob(bytes)
    }

    /// A UUID attribute: UUID text, stored in its canonical form.
    @inline(__always) private static func readUUID(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        guard kind == .string else { throw mismatch(kind, "a UUID string") }
        let s = try r.readString()
        guard let c = UUIDText.canonical(s.utf8) else { throw StrataError(.validation, "expected a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F") }
        return .text(c)
    }

    /// A decimal attribute: a number (its text as written, never through a double) or numeric
    /// text, stored as canonical decimal text.
    @inline(__always) private static func readDecimal(_ r: inout JSONReader, _ kind: JSONReader.Kind) throws -> SQLValue {
        let text: String
        if kind == .number {
            let range = try r.scanNumber()
            text = String(decoding: UnsafeBufferPointer(rebasing: r.buffer[range.lowerBound..<range.upperBound]), as: UTF8.self)
        } else if kind == .string {
            text = try r.readString()
        } else {
            throw mismatch(kind, "a decimal number or numeric string")
        }
        guard let c = DecimalText.canonical(text.utf8) else { throw StrataError(.validation, "expected a decimal number") }
        return .text(c)
    }

    /// Converts a parsed JSON value (defaults, enum values) for an attribute type.
    static func convert(_ value: JSONValue, type: AttributeType) throws -> SQLValue {
        // A number holds its JSON text as read: no writer needed.
        var text: String
        if case .number(let n) = value { text = n } else { text = value.text }
        return try text.withUTF8 { buf in
            var r = JSONReader(buf)
            return try read(&r, type: type)
        }
    }

    static func mismatch(_ kind: JSONReader.Kind, _ expected: String) -> StrataError {
        let found: String
        switch kind {
        case .object: found = "an object"
        case .array: found = "an array"
        case .string: found = "a string"
        case .number: found = "a number"
        case .bool: found = "a boolean"
        case .null: found = "null"
        }
        return StrataError(.validation, "expected \(expected), found \(found)")
    }

    static func isValidURL(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { isValidURL(utf8: $0) }
    }

    /// ``isValidURL(_:)`` over UTF-8 bytes (a byte at or below 0x20, or 0x7F, is such a scalar).
    static func isValidURL(utf8 s: UnsafeBufferPointer<UInt8>) -> Bool {
        if s.isEmpty { return false }
        for c in s where c <= 0x20 || c == 0x7F { return false }
        return true
    }


    /// Writes a stored value as the JSON of an attribute of `type` (as reads return it).
    static func write(_ v: SQLValue, type: AttributeType, to w: inout JSONWriter) {
        switch v {
        case .null: w.null()
        case .int(let n):
            switch type {
            case .bool: w.bool(n != 0)
            case .double: w.double(Double(n))
            case .date: writeDate(Double(n), to: &w)
            default: w.int(n)
            }
        case .double(let d):
            if type == .date { writeDate(d, to: &w) } else { w.double(d) }
        case .text(let s):
            // A json value, or a composite's object of fields (``Entity/compositeValues(_:)``): JSON text.
            if type == .json || type == .composite { var s = s; s.withUTF8 { w.raw(bytes: $0) } } else { w.string(s) }
        case .blob(let b):
            w.beginRawString()
            b.withUnsafeBytes { Base64.encode($0, into: &w.bytes) }
            w.endRawString()
        }
    }

    static func writeDate(_ seconds: Double, to w: inout JSONWriter) {
        w.beginRawString()
        if !ISO8601.format(seconds, into: &w.bytes) {
            // Outside years 0000-9999 (input rejects such dates; only a store written otherwise
            // holds one): fall back to the number of seconds as text.
            w.bytes.append(contentsOf: "\(seconds)".utf8)
        }
        w.endRawString()
    }
}

extension SQLValue {
    /// The values as one JSON array text (a list bound as one parameter); a blob is null.
    static func jsonArray(_ values: [SQLValue]) -> SQLValue {
        var w = JSONWriter()
        w.beginArray()
        for v in values {
            switch v {
            case .null: w.null()
            case .int(let i): w.int(i)
            case .double(let d): w.double(d)
            case .text(let s): w.string(s)
            case .blob: w.null()
            }
        }
        w.endArray()
        return .text(w.string)
    }
}
