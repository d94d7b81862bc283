/// Strata's full-text tokenizer: what `matches` (docs/predicates.md, "Full-text
/// search") finds, and the relevance it sorts by. Every store indexes and matches
/// with these rules (SQLite's `strata_matches`/`strata_relevance` call this code,
/// PostgreSQL's `strata_tokens` is generated from ``isTokenScalar(_:)`` and
/// ``isSingleScalar(_:)``), and the in-memory evaluator uses it directly.
///
/// - The text is folded as `localizedStandardContains` folds it
///   (``TextFolding``: case, diacritics, width).
/// - A token is a maximal run of letters, digits and marks (general categories
///   L*, N*, M*), except that each CJK ideograph, kana and Hangul syllable is a
///   token of its own (``isSingleScalar(_:)``). Everything else (spaces,
///   punctuation, symbols, emoji) separates tokens.
/// - A search text is tokenized the same way; a token directly followed by `*`
///   is a prefix (`trav*`). A value matches when every token of the search text
///   is one of its tokens (a prefix: begins one of its tokens). A search text
///   without a token matches nothing.
/// - Relevance: the number of the value's tokens each search token matches (a
///   prefix every token it begins), summed over the search tokens, divided by the
///   number of the value's tokens; 0 for a value without tokens.
enum TextSearch {
    /// One token of a search text.
    struct QueryToken: Equatable {
        let text: [UInt8]
        let isPrefix: Bool
    }

    // MARK: Classes of scalars

    /// A letter, digit or mark (general category L*, N*, M*): part of a token.
    static func isTokenScalar(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if v < 0x80 {
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
        }
        switch s.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark,
             .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// A token scalar that is a token by itself: a CJK ideograph (Unicode's Ideographic
    /// property), kana (U+3040–U+30FF, U+31F0–U+31FF, halfwidth U+FF66–U+FF9F, U+1AFF0–U+1B16F)
    /// or a Hangul syllable (U+AC00–U+D7A3).
    static func isSingleScalar(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if v < 0x3040 { return false }
        guard isTokenScalar(s) else { return false }
        switch v {
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F, 0x1AFF0...0x1B16F, 0xAC00...0xD7A3: return true
        default: return s.properties.isIdeographic
        }
    }

    // MARK: Tokens

    /// The tokens of `text` (folded UTF-8 each).
    static func tokens(_ text: String) -> [[UInt8]] {
        var copy = text
        return copy.withUTF8 { tokens(utf8: $0) }
    }

    /// The tokens of UTF-8 text (invalid sequences read as U+FFFD, as the folding functions read them).
    static func tokens(utf8: UnsafeBufferPointer<UInt8>) -> [[UInt8]] {
        var out: [[UInt8]] = []
        scan(utf8, stars: false) { token, _ in out.append(token) }
        return out
    }

    /// The tokens of a search text, each marked when it is a prefix (followed by `*`).
    static func query(_ text: String) -> [QueryToken] {
        var copy = text
        return copy.withUTF8 { query(utf8: $0) }
    }

    static func query(utf8: UnsafeBufferPointer<UInt8>) -> [QueryToken] {
        var out: [QueryToken] = []
        scan(utf8, stars: true) { out.append(QueryToken(text: $0, isPrefix: $1)) }
        return out
    }

    /// Folds `utf8` and calls `emit` with each token; with `stars`, a token directly followed
    /// by `*` is emitted as a prefix and the `*` is consumed.
    private static func scan(_ utf8: UnsafeBufferPointer<UInt8>, stars: Bool, _ emit: ([UInt8], Bool) -> Void) {
        var folded: [UInt8] = []
        folded.reserveCapacity(utf8.count)
        TextFolding.fold(utf8: utf8, caseInsensitive: true, diacriticInsensitive: true, into: &folded)
        var current: [UInt8] = []
        var pending: [UInt8]? = nil   // a token waiting to learn whether a `*` follows
        func flush(prefix: Bool) {
            if let p = pending { emit(p, prefix) }
            pending = nil
        }
        func endRun() {
            guard !current.isEmpty else { return }
            flush(prefix: false)
            pending = current
            current = []
        }
        var i = 0
        let n = folded.count
        while i < n {
            // The folded text is valid UTF-8: decode one scalar and its length.
            let b0 = folded[i]
            var v = UInt32(b0), len = 1
            if b0 >= 0xF0 { len = 4; v = UInt32(b0 & 0x07) } else if b0 >= 0xE0 { len = 3; v = UInt32(b0 & 0x0F) } else if b0 >= 0xC0 { len = 2; v = UInt32(b0 & 0x1F) }
            if i + len > n { len = 1; v = 0xFFFD }
            if len > 1 { for k in 1..<len { v = v << 6 | UInt32(folded[i + k] & 0x3F) } }
            let s = Unicode.Scalar(v) ?? "\u{FFFD}"
            if isTokenScalar(s) {
                if isSingleScalar(s) {
                    endRun()
                    flush(prefix: false)
                    pending = Array(folded[i..<(i + len)])
                } else {
                    if current.isEmpty { flush(prefix: false) }
                    current.append(contentsOf: folded[i..<(i + len)])
                }
            } else {
                endRun()
                if stars && s == "*" && pending != nil {
                    flush(prefix: true)
                } else {
                    flush(prefix: false)
                }
            }
            i += len
        }
        endRun()
        flush(prefix: false)
    }

    // MARK: Matching and relevance

    /// Whether `token` is matched by `q` (equal, or begun by a prefix).
    @inline(__always) static func matches(_ q: QueryToken, _ token: [UInt8]) -> Bool {
        q.isPrefix ? token.starts(with: q.text) : token == q.text
    }

    /// Whether a value with `tokens` matches the search tokens `query` (false without search tokens).
    static func matches(tokens: [[UInt8]], query: [QueryToken]) -> Bool {
        guard !query.isEmpty else { return false }
        return query.allSatisfy { q in tokens.contains { matches(q, $0) } }
    }

    /// The relevance of a value with `tokens` for `query` (the type's rules).
    static func relevance(tokens: [[UInt8]], query: [QueryToken]) -> Double {
        guard !tokens.isEmpty else { return 0 }
        var hits = 0
        for q in query { for t in tokens where matches(q, t) { hits += 1 } }
        return Double(hits) / Double(tokens.count)
    }

    static func matches(_ value: String, _ searchText: String) -> Bool {
        matches(tokens: tokens(value), query: query(searchText))
    }

    static func relevance(_ value: String, _ searchText: String) -> Double {
        relevance(tokens: tokens(value), query: query(searchText))
    }

    /// Whether the UTF-8 value matches `query`: ``matches(tokens:query:)`` of its tokens, read in
    /// place without allocating when the value is ASCII (a full-text search re-checks every hit).
    static func matches(utf8: UnsafeBufferPointer<UInt8>, query: [QueryToken]) -> Bool {
        guard !query.isEmpty else { return false }
        guard query.count <= 64, isASCII(utf8) else { return matches(tokens: tokens(utf8: utf8), query: query) }
        var unmatched: UInt64 = query.count == 64 ? ~0 : (1 << UInt64(query.count)) &- 1
        forEachASCIIToken(utf8) { token in
            for (i, q) in query.enumerated() where unmatched & (1 << UInt64(i)) != 0 && asciiMatches(q, utf8, token) {
                unmatched &= ~(1 << UInt64(i))
            }
            return unmatched != 0
        }
        return unmatched == 0
    }

    /// The relevance of the UTF-8 value for `query` (``relevance(tokens:query:)``), read in place
    /// when the value is ASCII.
    static func relevance(utf8: UnsafeBufferPointer<UInt8>, query: [QueryToken]) -> Double {
        guard isASCII(utf8) else { return relevance(tokens: tokens(utf8: utf8), query: query) }
        var hits = 0, count = 0
        forEachASCIIToken(utf8) { token in
            count += 1
            for q in query where asciiMatches(q, utf8, token) { hits += 1 }
            return true
        }
        return count == 0 ? 0 : Double(hits) / Double(count)
    }

    /// The text a full-text index stores for a value: its tokens joined by spaces (nil without tokens).
    static func indexText(utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        let n = indexText(utf8: utf8, into: &out)
        return n == 0 ? nil : Array(out[..<n])
    }

    /// ``indexText(utf8:)`` written at the start of `out`, which keeps its storage (a caller
    /// indexing many values allocates once) and may hold more bytes after the text; returns
    /// the text's length, 0 without tokens.
    static func indexText(utf8: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Int {
        guard isASCII(utf8) else {
            out.removeAll(keepingCapacity: true)
            for (i, t) in tokens(utf8: utf8).enumerated() {
                if i > 0 { out.append(0x20) }
                out.append(contentsOf: t)
            }
            return out.count
        }
        // Tokens are separated in the value by at least one byte each, which becomes one space:
        // the text is never longer than the value.
        if out.count < utf8.count { out = [UInt8](repeating: 0, count: max(utf8.count, 2 * out.count)) }
        return out.withUnsafeMutableBufferPointer { o -> Int in
            var n = 0
            forEachASCIIToken(utf8) { token in
                if n > 0 { o[n] = 0x20; n += 1 }
                for i in token { o[n] = utf8[i].asciiLowercased; n += 1 }
                return true
            }
            return n
        }
    }

    // MARK: ASCII values in place

    // Folding ASCII lowercases A–Z and nothing else, and its token scalars are the letters and
    // digits, none of them a token by itself; so the tokens of ASCII text are its runs of letters
    // and digits, lowercased.

    @inline(__always) private static func isASCII(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for b in utf8 { any |= b }
        return any < 0x80
    }

    /// Calls `body` with the byte range of each token of ASCII text, in order, until it returns false.
    @inline(__always)
    private static func forEachASCIIToken(_ utf8: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
        var start = -1
        for i in 0..<utf8.count {
            let lower = utf8[i].asciiLowercased
            if (lower &- 0x61) < 26 || (lower &- 0x30) < 10 {
                if start < 0 { start = i }
            } else if start >= 0 {
                if !body(start..<i) { return }
                start = -1
            }
        }
        if start >= 0 { _ = body(start..<utf8.count) }
    }

    /// ``matches(_:_:)`` of the search token `q` and the ASCII token at `range` of `utf8`, lowercasing as it compares.
    @inline(__always)
    private static func asciiMatches(_ q: QueryToken, _ utf8: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        let n = q.text.count
        guard q.isPrefix ? n <= range.count : n == range.count else { return false }
        return q.text.withUnsafeBufferPointer { t in
            for k in 0..<n where t[k] != utf8[range.lowerBound + k].asciiLowercased { return false }
            return true
        }
    }
}
