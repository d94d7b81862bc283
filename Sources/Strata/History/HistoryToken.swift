/// A history token: the sequence number of a recorded save, and the store it
/// belongs to. Opaque text in the API (`"42@5f0c9a1e"`), compared by sequence
/// in predicates; a token of another store is never compared with this one's.
public struct HistoryToken: Equatable, Sendable, CustomStringConvertible {
    public let sequence: Int64
    /// The first eight hexadecimal digits of the store's UUID.
    public let store: String

    public init(sequence: Int64, store: String) {
        self.sequence = sequence
        self.store = store
    }

    public var description: String { "\(sequence)@\(store)" }

    /// Parses token text; nil unless it is `<sequence>@<tag>` with a positive sequence.
    public static func parse(_ text: String) -> HistoryToken? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int64(parts[0]), n > 0, String(n) == parts[0],
              !parts[1].isEmpty, parts[1].count <= 8, parts[1].allSatisfy({ $0.isASCII && $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return HistoryToken(sequence: n, store: String(parts[1]))
    }

    /// The sequence of `text` as a token of the store tagged `store`. Messages name where
    /// the token is (`path`), never the caller's text.
    ///
    /// - Throws: `.invalid` (naming `path`) for text that is not a token;
    ///   `.historyExpired` for a token of another store (its history is not here).
    static func sequence(of text: String, store: String, path: String) throws -> Int64 {
        guard let t = parse(text) else {
            throw StrataError(.invalid, "the value at \(path) is not a history token (tokens look like \"42@\(store)\")", path: path)
        }
        guard t.store == store else {
            throw StrataError(.historyExpired, "the token at \(path) is not a token of this store (its tokens end in @\(store)): "
                              + "its history is not here; fetch everything again and continue from a token of this store", path: path)
        }
        return t.sequence
    }
}
