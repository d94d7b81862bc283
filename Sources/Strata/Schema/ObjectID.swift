/// A persistent identifier: the concrete entity and the primary key,
/// written `"Trip/42"`. The key is unique across an entity hierarchy.
public struct ObjectID: Hashable, CustomStringConvertible, @unchecked Sendable {
    public let entity: Entity
    public let pk: Int64

    public init(entity: Entity, pk: Int64) {
        self.entity = entity
        self.pk = pk
    }

    public static func == (a: ObjectID, b: ObjectID) -> Bool { a.pk == b.pk && a.entity.root === b.entity.root }
    public func hash(into h: inout Hasher) {
        h.combine(pk)
        h.combine(ObjectIdentifier(entity.root))
    }

    public var description: String { "\(entity.name)/\(pk)" }

    /// Splits `"Trip/42"` into its entity name and key, or nil. Only the canonical
    /// form is an identifier: a positive key in ASCII digits without leading zeros
    /// (no sign, no spaces), so each object has exactly one identifier text.
    static func parse(_ text: String) -> (entity: String, pk: Int64)? {
        guard let slash = text.lastIndex(of: "/") else { return nil }
        let name = String(text[..<slash])
        let digits = text.utf8[text.utf8.index(after: slash)...]
        guard !name.isEmpty, let first = digits.first, first != UInt8(ascii: "0"),
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let pk = Int64(Substring(digits)), pk > 0 else { return nil }
        return (name, pk)
    }

    /// Writes `"Entity/pk"` as a JSON string.
    func write(to w: inout JSONWriter) {
        w.beginRawString()
        w.bytes.append(contentsOf: entity.name.utf8)
        w.bytes.append(UInt8(ascii: "/"))
        JSONWriter.appendInt(pk, to: &w.bytes)
        w.endRawString()
    }
}
