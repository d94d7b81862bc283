/// The full-text search functions of a PostgreSQL store (functions version 5), the SQL twins of
/// SQLite's (`SQLFunctions+Search.swift`), both following ``TextSearch``:
///
/// - `strata_tokens(x text) → text[]`: the tokens of `x` (NULL with a NULL). A searchable
///   column has a GIN index on it (`T.search(column)`); `matches` tests `@>` of its whole words
///   there. It calls `strata_fold` with the search_path it was created with (an index
///   expression is also computed by maintenance commands that run with another one).
/// - `strata_search_words(q text) → text[]`: the whole (not prefix) tokens of a search text.
/// - `strata_search_match(x text, q text) → boolean`: `x` matches `q`; false with a NULL, never NULL.
/// - `strata_relevance(x text, q text) → double precision`: 0 with a NULL `x`.
///
/// Tokens are read with two regular expressions whose classes are generated from the standard
/// library's Unicode data (``TextSearch/isTokenScalar(_:)``, ``TextSearch/isSingleScalar(_:)``):
/// a scalar of the single class alone, or a run of the other token scalars; a search token may
/// be followed by `*` (a prefix). PostgreSQL's regular expressions compare bracket ranges by code
/// point, whatever the locale, so the server's Unicode version plays no part.
extension PostgresFunctions {
    static let searchFunctions: [String] = {
        let (single, run) = searchClasses()
        let tokens = "'[\(single)]|[\(run)]+'"
        let query = "'([\(single)]|[\(run)]+)(\\*?)'"
        let hit = "CASE WHEN m[2] = '' THEN t.v = m[1] COLLATE \"C\" ELSE starts_with(t.v, m[1] COLLATE \"C\") END"
        return [
            """
            CREATE OR REPLACE FUNCTION strata_tokens(x text) RETURNS text[]
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path FROM CURRENT AS $strata$
            SELECT ARRAY(SELECT m[1] FROM regexp_matches(strata_fold(x, 3), \(tokens), 'g') AS m)
            $strata$
            """,
            """
            CREATE OR REPLACE FUNCTION strata_search_words(q text) RETURNS text[]
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$
            SELECT ARRAY(SELECT m[1] FROM regexp_matches(strata_fold(q, 3), \(query), 'g') AS m WHERE m[2] = '')
            $strata$
            """,
            """
            CREATE OR REPLACE FUNCTION strata_search_match(x text, q text) RETURNS boolean
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
            SELECT CASE WHEN x IS NULL OR q IS NULL THEN false
                        ELSE EXISTS (SELECT 1 FROM regexp_matches(strata_fold(q, 3), \(query), 'g'))
                             AND NOT EXISTS (SELECT 1 FROM regexp_matches(strata_fold(q, 3), \(query), 'g') AS m
                                             WHERE NOT EXISTS (SELECT 1 FROM unnest(strata_tokens(x)) AS t(v) WHERE \(hit))) END
            $strata$
            """,
            """
            CREATE OR REPLACE FUNCTION strata_relevance(x text, q text) RETURNS double precision
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
            SELECT CASE WHEN x IS NULL OR q IS NULL THEN CAST(0 AS double precision)
                        ELSE (SELECT CASE WHEN cardinality(s.tk) = 0 THEN CAST(0 AS double precision)
                                          ELSE CAST((SELECT count(*) FROM unnest(s.tk) AS t(v), regexp_matches(strata_fold(q, 3), \(query), 'g') AS m
                                                     WHERE \(hit)) AS double precision) / CAST(cardinality(s.tk) AS double precision) END
                              FROM (SELECT strata_tokens(x) AS tk) AS s) END
            $strata$
            """,
        ]
    }()

    /// The two bracket-expression bodies: scalars that are a token alone, and the other token scalars,
    /// as ranges of `\U` escapes (in a string literal that standard_conforming_strings keeps as it is).
    static func searchClasses() -> (single: String, run: String) {
        var single: [ClosedRange<UInt32>] = [], run: [ClosedRange<UInt32>] = []
        func add(_ v: UInt32, to ranges: inout [ClosedRange<UInt32>]) {
            if let last = ranges.last, last.upperBound + 1 == v { ranges[ranges.count - 1] = last.lowerBound...v } else { ranges.append(v...v) }
        }
        for v in UInt32(0)...0x10FFFF {
            guard let s = Unicode.Scalar(v), TextSearch.isTokenScalar(s) else { continue }
            if TextSearch.isSingleScalar(s) { add(v, to: &single) } else { add(v, to: &run) }
        }
        func text(_ ranges: [ClosedRange<UInt32>]) -> String {
            func hex(_ v: UInt32) -> String {
                let h = String(v, radix: 16, uppercase: true)
                return "\\U" + String(repeating: "0", count: 8 - h.count) + h
            }
            return ranges.map { $0.count == 1 ? hex($0.lowerBound) : hex($0.lowerBound) + "-" + hex($0.upperBound) }.joined()
        }
        return (text(single), text(run))
    }
}
