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
    /// Reads one attribute value from the reader. `null` is returned as `.null`
    /// (the caller checks optionality).
    static func read(_ r: inout JSONReader, type: AttributeType) throws -> SQLValue {
        let kind = try r.peek()
        if kind == .null { try r.readNull(); return .null }
        switch type {
        case .string:
            guard kind == .string else { throw mismatch(kind, "a string") }
            return .text(try r.readString())
        case .url:
            guard kind == .string else { throw mismatch(kind, "a URL string") }
            let s = try r.readString()
            guard isValidURL(s) else { throw StrataError(.validation, "expected a URL, found text that is empty or contains spaces or control characters") }
            return .text(s)
        case .int:
            guard kind == .number else { throw mismatch(kind, "an integer") }
            switch try r.readNumber() {
            case .int(let v): return .int(v)
            case .double(let d):
                guard d == d.rounded(), d >= -9.2e18, d <= 9.2e18 else { throw StrataError(.validation, "expected an integer, found a number with a fraction or out of the 64-bit range") }
                return .int(Int64(d))
            }
        case .double:
            guard kind == .number else { throw mismatch(kind, "a number") }
            switch try r.readNumber() {
            case .int(let v): return .double(Double(v))
            case .double(let d):
                guard d.isFinite else { throw StrataError(.validation, "number out of range") }
                return .double(d)
            }
        case .bool:
            guard kind == .bool else { throw mismatch(kind, "true or false") }
            return .int(try r.readBool() ? 1 : 0)
        case .date:
            if kind == .number {
                switch try r.readNumber() {
                case .int(let v): return .double(Double(v))
                case .double(let d):
                    guard d.isFinite else { throw StrataError(.validation, "date out of range") }
                    return .double(d)
                }
            }
            guard kind == .string else { throw mismatch(kind, "an ISO-8601 date string or seconds since 1970") }
            let s = try r.readString()
            guard let t = ISO8601.parse(s.utf8) else { throw StrataError(.validation, "expected an ISO-8601 date such as 2026-11-22T09:30:00Z") }
            return .double(t)
        case .data:
            guard kind == .string else { throw mismatch(kind, "base64 text") }
            let s = try r.readString()
            guard let bytes = Base64.decode(s.utf8) else { throw StrataError(.validation, "expected base64 text") }
            return .blob(bytes)
        case .uuid:
            guard kind == .string else { throw mismatch(kind, "a UUID string") }
            let s = try r.readString()
            guard let c = UUIDText.canonical(s.utf8) else { throw StrataError(.validation, "expected a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F") }
            return .text(c)
        case .decimal:
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
        case .json:
            let v = try r.readValue()
            return .text(v.text)
        }
    }

    /// Converts a parsed JSON value (defaults, enum values) for an attribute type.
    static func convert(_ value: JSONValue, type: AttributeType) throws -> SQLValue {
        var text = value.text
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
        if s.isEmpty { return false }
        for u in s.unicodeScalars where u.value <= 0x20 || u.value == 0x7F { return false }
        return true
    }


    static func writeDate(_ seconds: Double, to w: inout JSONWriter) {
        w.beginRawString()
        if !ISO8601.format(seconds, into: &w.bytes) {
            // Outside years 0000-9999: fall back to the number of seconds as text.
            w.bytes.append(contentsOf: "\(seconds)".utf8)
        }
        w.endRawString()
    }
}
