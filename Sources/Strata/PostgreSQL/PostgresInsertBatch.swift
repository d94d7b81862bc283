/// The rows of one entity that a save inserts, held back to be sent in one statement
/// (``PostgresDialect/insertRows(_:columns:types:)``): per column, the text of a PostgreSQL
/// array literal of its values, to which each row appends its element. Values reach the
/// server as bound parameters (one literal each), never in the statement's text.
struct PostgresInsertBatch {
    let entity: Entity
    /// The rows, in the order they were inserted (an error names one of them).
    private(set) var ids: [ObjectID] = []
    /// Per column (the key, the entity name, then every stored slot): the literal so far, without its braces.
    private var arrays: [[UInt8]]

    /// The most columns a batch takes: `unnest` takes at most 100 arrays (PostgreSQL's
    /// FUNC_MAX_ARGS), the key and the entity name two of them.
    static let maxColumns = 98
    /// The most rows one statement sends.
    static let maxRows = 1000

    init(_ entity: Entity) {
        self.entity = entity
        arrays = Array(repeating: [], count: entity.storedColumns.count + 2)
    }

    var count: Int { ids.count }

    /// Appends a row: `values`, one per stored slot of the entity, in slot order.
    /// - Throws: `.invalid` for text holding NUL, which PostgreSQL's text cannot (nothing appended).
    mutating func append(_ id: ObjectID, _ values: [SQLValue]) throws {
        for case .text(let t) in values where t.utf8.contains(0) { throw PGConnection.textWithNUL() }
        ids.append(id)
        let first = ids.count == 1
        PostgresInsertBatch.append(.int(id.pk), to: &arrays[0], first: first)
        PostgresInsertBatch.append(.text(entity.name), to: &arrays[1], first: first)
        for (i, v) in values.enumerated() { PostgresInsertBatch.append(v, to: &arrays[i + 2], first: first) }
    }

    /// The statement's parameters: one array literal per column.
    var arguments: [SQLValue] {
        arrays.map { a in
            var literal = [UInt8(ascii: "{")]
            literal += a
            literal.append(UInt8(ascii: "}"))
            return .text(String(decoding: literal, as: UTF8.self))
        }
    }

    /// Appends `value` as an element of an array literal: numbers as PostgreSQL reads them, text
    /// and bytes (`\x…`) quoted with `"` and `\` escaped, NULL unquoted.
    private static func append(_ value: SQLValue, to a: inout [UInt8], first: Bool) {
        if !first { a.append(UInt8(ascii: ",")) }
        switch value {
        case .null:
            a += "NULL".utf8
        case .int(let v):
            a += String(v).utf8
        case .double(let v):
            if v.isNaN { a += "NaN".utf8 } else if v.isInfinite { a += (v < 0 ? "-Infinity" : "Infinity").utf8 } else { a += "\(v)".utf8 }
        case .text(let t):
            a.append(UInt8(ascii: "\""))
            for b in t.utf8 {
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { a.append(UInt8(ascii: "\\")) }
                a.append(b)
            }
            a.append(UInt8(ascii: "\""))
        case .blob(let bytes):
            a += "\"\\\\x".utf8
            let hex = Array("0123456789abcdef".utf8)
            for b in bytes {
                a.append(hex[Int(b >> 4)])
                a.append(hex[Int(b & 15)])
            }
            a.append(UInt8(ascii: "\""))
        }
    }
}
