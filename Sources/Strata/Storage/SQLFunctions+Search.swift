import CSQLite

/// The SQL functions of full-text search (``TextSearch``), registered on a connection with the
/// others its first statement naming one needs (``SQLFunctions/registerNamed(_:)``):
///
/// - `strata_matches(x, q)`: 1 when text `x` matches the search text `q`, else 0 (0 with a NULL);
/// - `strata_relevance(x, q)`: the relevance of `x` for `q`, a real (0 with a NULL `x`);
/// - `strata_index_text(x)`: what a full-text table stores for `x`: its tokens joined by spaces
///   (NULL with a NULL or without tokens);
/// - `strata_fts_query(q)`: the FTS5 query of the search text `q`, one quoted phrase per token
///   (`"trav" *` for a prefix), implicitly ANDed; `""` (which FTS5 matches with nothing) for
///   a search text without tokens or NULL.
///
/// A search text's tokens are computed once per statement (SQLite's auxiliary data of a
/// constant argument). A token holds only letters, digits and marks, so it never holds a quote,
/// and FTS5's `ascii` tokenizer (which splits at ASCII punctuation and spaces only and lowercases
/// ASCII, already lowercase here) reads back exactly the tokens Strata wrote.
extension SQLFunctions {
    static func registerSearch(_ db: OpaquePointer) {
        sqlite3_create_function_v2(db, "strata_matches", 2, pureFlags, nil, matchesFunction, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_relevance", 2, pureFlags, nil, relevanceFunction, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_index_text", 1, pureFlags, nil, indexTextFunction, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_fts_query", 1, pureFlags, nil, ftsQueryFunction, nil, nil, nil)
    }

    /// A search text's tokens, kept as a statement's auxiliary data.
    private final class QueryTokens {
        let tokens: [TextSearch.QueryToken]
        init(_ tokens: [TextSearch.QueryToken]) { self.tokens = tokens }
    }

    /// The tokens of the search text of argument `n` (empty for NULL), computed once per statement.
    private static func queryTokens(_ ctx: OpaquePointer, _ arg: OpaquePointer, _ n: Int32) -> [TextSearch.QueryToken] {
        if let p = sqlite3_get_auxdata(ctx, n) { return Unmanaged<QueryTokens>.fromOpaque(p).takeUnretainedValue().tokens }
        guard let q = text(arg) else { return [] }
        let tokens = TextSearch.query(utf8: q)
        sqlite3_set_auxdata(ctx, n, Unmanaged.passRetained(QueryTokens(tokens)).toOpaque()) { p in
            if let p { Unmanaged<QueryTokens>.fromOpaque(p).release() }
        }
        return tokens
    }

    private static let matchesFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
        let query = queryTokens(ctx, a1, 1)
        guard !query.isEmpty, let x = text(a0) else { sqlite3_result_int(ctx, 0); return }
        sqlite3_result_int(ctx, TextSearch.matches(utf8: x, query: query) ? 1 : 0)
    }

    private static let relevanceFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
        let query = queryTokens(ctx, a1, 1)
        guard let x = text(a0) else { sqlite3_result_double(ctx, 0); return }
        sqlite3_result_double(ctx, TextSearch.relevance(utf8: x, query: query))
    }

    private static let indexTextFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
        var indexed: [UInt8] = []
        guard let x = text(a0), case let n = TextSearch.indexText(utf8: x, into: &indexed), n > 0 else { sqlite3_result_null(ctx); return }
        indexed.withUnsafeBufferPointer { resultText(ctx, UnsafeBufferPointer(rebasing: $0[..<n])) }
    }

    private static let ftsQueryFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
        var out: [UInt8] = []
        for (i, t) in queryTokens(ctx, a0, 0).enumerated() {
            if i > 0 { out.append(0x20) }
            out.append(0x22)
            out.append(contentsOf: t.text)
            out.append(0x22)
            if t.isPrefix { out.append(contentsOf: [0x20, 0x2A]) }
        }
        if out.isEmpty { out = [0x22, 0x22] }
        out.withUnsafeBufferPointer { resultText(ctx, $0) }
    }
}
