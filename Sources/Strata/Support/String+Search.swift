/// A string found in a string by its UTF-8 bytes: what the SQL engines, the PostgreSQL
/// dollar quote and URI parsing see, so a search for a delimiter or a token finds every
/// occurrence those would find, also one followed by a combining mark (which a search by
/// characters would take for part of another character). For the ASCII texts Strata looks
/// for, this is what the standard library's `contains(_:)` and `replacing(_:with:)` of a
/// string find; those live in the `_StringProcessing` module, whose regular-expression engine
/// libstrata.so does not link (Package.swift): linked in, it was 1 MB of the library's code and
/// 3,100 of the relocations every process applies when it loads the library.
extension StringProtocol where SubSequence == Substring {
    /// The first occurrence of `other`'s UTF-8 bytes, as a slice of this string; nil when there
    /// is none or `other` is empty.
    func firstOccurrence(ofText other: some StringProtocol) -> Substring? { self[...].firstOccurrence(of: Array(other.utf8)) }

    /// Whether `other`'s UTF-8 bytes occur here (never, when `other` is empty).
    func containsText(_ other: some StringProtocol) -> Bool { firstOccurrence(ofText: other) != nil }

    /// A copy with every occurrence of `target`'s bytes (non-empty) replaced by `replacement`, left to right.
    func replacingAll(_ target: String, with replacement: String) -> String {
        var out = ""
        var rest = self[...]
        while let found = rest.firstOccurrence(ofText: target) {
            out += rest[..<found.startIndex]
            out += replacement
            rest = rest[found.endIndex...]
        }
        return out + rest
    }
}

extension Substring {
    fileprivate func firstOccurrence(of needle: [UInt8]) -> Substring? {
        guard let head = needle.first else { return nil }
        let bytes = utf8
        var start = bytes.startIndex
        while start != bytes.endIndex {
            if bytes[start] == head {
                var end = bytes.index(after: start), matched = 1
                while matched < needle.count, end != bytes.endIndex, bytes[end] == needle[matched] {
                    bytes.formIndex(after: &end)
                    matched += 1
                }
                // A match starts at a byte that begins a scalar (the needle's first byte does), so
                // both ends are scalar boundaries of this string.
                if matched == needle.count { return self[start..<end] }
            }
            bytes.formIndex(after: &start)
        }
        return nil
    }
}
