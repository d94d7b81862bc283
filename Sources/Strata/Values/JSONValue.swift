/// A parsed JSON document, for the cold paths (schemas, configurations,
/// descriptors). Numbers keep their exact text; object members keep their order.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)):
            if x == y { return true }
            return Double(x) == Double(y)
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            guard x.count == y.count else { return false }
            if x.count <= KeySet.scanLimit {
                for (k, v) in x {
                    guard let other = y.first(where: { $0.0 == k }), other.1 == v else { return false }
                }
                return true
            }
            // Keys are unique (the reader rejects duplicates): one hash lookup per key.
            let index = Dictionary(y.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
            for (k, v) in x {
                guard let other = index[k], other == v else { return false }
            }
            return true
        default: return false
        }
    }

    /// Parses JSON text; errors are `.invalid` with the byte offset.
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { buf in try parse(buf) }
    }

    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var r = JSONReader(buffer)
        let v = try r.readValue()
        try r.expectEnd()
        return v
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first(where: { $0.0 == key })?.1 }
        return nil
    }

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public func write(to w: inout JSONWriter) {
        switch self {
        case .null: w.null()
        case .bool(let b): w.bool(b)
        case .number(let n): w.raw(n)
        case .string(let s): w.string(s)
        case .array(let items):
            w.beginArray()
            for item in items { item.write(to: &w) }
            w.endArray()
        case .object(let members):
            w.beginObject()
            for (k, v) in members { w.key(k); v.write(to: &w) }
            w.endObject()
        }
    }

    /// Minified JSON text.
    public var text: String {
        var w = JSONWriter()
        write(to: &w)
        return w.string
    }

    /// Minified JSON text with object keys sorted (a canonical form for hashing and comparison).
    public var canonicalText: String {
        var w = JSONWriter()
        writeCanonical(to: &w)
        return w.string
    }

    func writeCanonical(to w: inout JSONWriter) {
        switch self {
        case .array(let items):
            w.beginArray()
            for item in items { item.writeCanonical(to: &w) }
            w.endArray()
        case .object(let members):
            w.beginObject()
            for (k, v) in members.sorted(by: { $0.0 < $1.0 }) { w.key(k); v.writeCanonical(to: &w) }
            w.endObject()
        default: write(to: &w)
        }
    }
}

/// Strict reading of a JSON object's members with path-aware errors:
/// every key must be consumed, else the unknown key is an error naming its path.
struct ObjectReader {
    let members: [(String, JSONValue)]
    let path: JSONPath
    let what: String
    /// Which of the first 64 members were read, a bit each by index (keys are unique: the reader rejects duplicates).
    private var readLow: UInt64 = 0
    /// Which members past the first 64 were read (empty, so not allocated, for smaller objects).
    private var readHigh: [Bool]
    /// Every key asked for, present or not: the known keys an error names. Room for the most a
    /// declaration asks (14) is made at once: appending key by key regrew it several times per object.
    private var asked: [String]

    init(_ value: JSONValue, path: JSONPath, what: String) throws {
        guard case .object(let m) = value else {
            throw StrataError(.invalid, "\(what)\(path.at) must be a JSON object, found \(value.typeName)", path: path.description)
        }
        members = m
        self.path = path
        self.what = what
        readHigh = m.count > 64 ? Array(repeating: false, count: m.count - 64) : []
        asked = []
        asked.reserveCapacity(16)
    }

    @inline(__always) private func wasRead(_ i: Int) -> Bool { i < 64 ? readLow & (1 << UInt64(i)) != 0 : readHigh[i - 64] }

    mutating func value(_ key: String) -> JSONValue? {
        asked.append(key)
        guard let i = members.firstIndex(where: { $0.0 == key }) else { return nil }
        if i < 64 { readLow |= 1 << UInt64(i) } else { readHigh[i - 64] = true }
        return members[i].1
    }

    mutating func string(_ key: String, required: Bool = false) throws -> String? {
        guard let v = value(key) else {
            if required { throw StrataError(.invalid, "\(what)\(path.at) is missing required key '\(key)'", path: (path / key).description) }
            return nil
        }
        guard case .string(let s) = v else {
            throw StrataError(.invalid, "'\(key)' at \(path / key) must be a string, found \(v.typeName)", path: (path / key).description)
        }
        return s
    }

    mutating func bool(_ key: String) throws -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else {
            throw StrataError(.invalid, "'\(key)' at \(path / key) must be true or false, found \(v.typeName)", path: (path / key).description)
        }
        return b
    }

    mutating func int(_ key: String) throws -> Int64? {
        guard let v = value(key) else { return nil }
        guard case .number(let n) = v, let i = Int64(n) else {
            throw StrataError(.invalid, "'\(key)' at \(path / key) must be an integer, found \(v.typeName)", path: (path / key).description)
        }
        return i
    }

    mutating func array(_ key: String) throws -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let a) = v else {
            throw StrataError(.invalid, "'\(key)' at \(path / key) must be an array, found \(v.typeName)", path: (path / key).description)
        }
        return a
    }

    /// Throws for the first key that was never asked for.
    func finish(allowed: [String] = []) throws {
        for (i, (k, _)) in members.enumerated() where !wasRead(i) && !allowed.contains(k) {
            let known = (Array(Set(asked)) + allowed).sorted().joined(separator: ", ")
            throw StrataError(.invalid, "unknown key '\(k)' in \(what)\(path.at) (known keys: \(known))", path: (path / k).description)
        }
    }
}
