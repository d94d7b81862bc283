// The SQL twins of SQLFunctions for a PostgreSQL store: PL/pgSQL and SQL
// functions whose results are byte for byte those of the SQLite functions
// (TextFolding, Evaluation, DecimalText), generated from Strata's own Unicode
// tables so that the server's Unicode version and locale play no part.

// NFD and NFC through the standard library's SPI, as in TextFolding.swift.
@_spi(_Unicode) import Swift

/// Functions a PostgreSQL store installs in its schema, the SQL twins of
/// ``SQLFunctions`` (same arguments, same results for every input):
///
/// - `strata_fold(x text, flags integer) → text`: ``TextFolding/fold(_:caseInsensitive:diacriticInsensitive:)``
///   (flags 1 case-, 2 diacritic-insensitive, 3 both, 0 neither; NULL with a NULL `x`).
/// - `strata_contains`, `strata_has_prefix`, `strata_has_suffix(x text, y text, flags integer) → boolean`:
///   folded `x` contains, starts or ends with `y` (already folded); false with a NULL,
///   true for an empty `y`.
/// - `strata_compare(x text, y text, code integer) → boolean`: the comparison `code >> 2`
///   (``ComparisonOperator/functionCode``) of `x` folded with flags `code & 3` and `y`, in code
///   point order; `==` is true for two NULLs, an ordering with a NULL false; never NULL.
/// - `strata_lsc(x text, y text) → boolean`: localizedStandardContains, `y` folded with flags 3
///   (false with a NULL or an empty `y`).
/// - `strata_length(x text) → bigint`: Unicode scalars.
/// - `strata_iarith(a bigint, b bigint, code integer) → bigint`, `strata_farith(a double precision,
///   b double precision, code integer) → double precision`: `a op b` as SQLite's functions of the
///   same names compute it, NULL where Swift would trap or give no finite number.
/// - aggregate `strata_fsum(x double precision) → double precision`: the exact sum of the non-NULL
///   `x` rounded once to the nearest double, ties to even (``ExactSum/doubleSum``): 0 without rows,
///   NULL where the rounded sum, or an `x`, is not finite. Each `x` is added exactly to a numeric
///   that counts units of 2^-1074 (the mantissa and exponent read from `float8send`); the total is
///   written as decimal digits times 10^-1074 and read back by `float8in`, which rounds correctly
///   (a cast of float8 to numeric keeps 15 digits, so `sum(x::numeric)` would not be exact).
/// - `strata_int_total(s numeric) → bigint`: an int sum (`sum(bigint)`, exact in numeric) as
///   ``ExactSum/intSum`` gives it: 0 for NULL (no rows), NULL outside bigint.
/// - `strata_int_mean(s numeric, n bigint)`, `strata_float_mean(s double precision, n bigint) →
///   double precision`: a sum divided by the count of values (``ExactSum/intAverage``,
///   ``ExactSum/doubleAverage``): NULL without values or with a NULL sum; a quotient that
///   underflows is 0, as IEEE 754 gives it (PostgreSQL's division fails with 22003).
/// - `strata_standard_key(x text) → bytea`: a sort key whose byte order is
///   ``TextFolding/standardCompare(_:_:)`` (equal keys exactly when it returns 0).
/// - `strata_decimal(x text) → numeric`: the value of decimal text (``DecimalText``); text
///   that is not a decimal is NaN, which sorts after every number, as ``DecimalText/compare(_:_:)``
///   puts it after every valid one.
/// - `strata_damaged(entity text, attribute text, key bigint) → integer`: fails the statement
///   with SQLSTATE ``damagedState``, message `entity/key`, detail the attribute (`_entity`: the
///   row's entity name is not one of `entity`'s hierarchy), as `SQLFunctions`' `strata_damaged`.
///
/// - full-text search (version 5): `strata_tokens`, `strata_search_words`, `strata_search_match`,
///   `strata_relevance` (`PostgresFunctions+Search.swift`).
///
/// Every function but `strata_damaged` is IMMUTABLE and PARALLEL SAFE. `strata_fold` and
/// `strata_standard_key` call nothing of the schema but its Unicode tables (`strata_fold_map()`
/// and the others of ``PostgresUnicodeData/tables``), by the schema's name (an expression index
/// may use them whatever the search_path); the others call `strata_fold` by its unqualified name.
///
/// How the texts are computed, per function:
/// - folding follows ``TextFolding/foldBytes(_:mode:into:)`` step by step: ASCII text is
///   lowercased (`lower` under the "C" collation, which knows only A–Z); other text maps each
///   scalar through the fold tables (``FoldPlane``, exported as a JSON object: scalar → its
///   outputs in the three modes and whether each may combine with what precedes it), by one
///   `replace` per distinct non-ASCII scalar (text of up to 256 scalars) or scalar by scalar
///   into an array (longer text: linear in its length); when an output may combine (the fast path of
///   ``TextFolding/foldFast(_:mode:into:)`` gives up), the text is folded by the definition,
///   NFC(T(NFD(s))), with a decomposition, reordering and composition written in PL/pgSQL over
///   the standard library's normalization data (decompositions, combining classes, primary
///   composites; Hangul by arithmetic), reordering as the standard library does (see
///   ``nfdBlock(_:)``). PostgreSQL's own `normalize()` is not used: its Unicode version is the
///   server's (14.0 in PostgreSQL 15), not Swift's, and it reorders by the book.
/// - the sort key (``PostgresSortKey``) is the levels of ``TextFolding/collate(_:_:)`` written one
///   after the other, from the text as ``TextFolding/standardCompare(utf8:_:)`` reads it (NFC
///   unless ``TextFolding/isQuickNFC(_:)`` takes it as it is); each scalar's share of the
///   levels comes from running ``TextFolding/CollationCursor`` over that scalar alone.
/// - `strata_decimal` is exact within numeric's range (131072 digits before the point, 16383
///   after); DecimalText also takes exponents up to 10^9, and such a value fails the
///   statement (numeric's out-of-range error) rather than sort wrongly. Two texts that are
///   not decimals are both NaN, equal, where DecimalText orders them by their bytes: a sort
///   that must tell them apart adds the text itself (`ORDER BY strata_decimal(c), c COLLATE "C"`).
enum PostgresFunctions {
    /// Bump when a definition changes (the store re-installs when its stored number differs).
    /// 6: `strata_damaged` pins its search_path (so that a statement naming it does not load PL/pgSQL).
    /// 7: the Unicode tables are functions of the schema that `strata_fold` and `strata_standard_key`
    /// name by the schema's name (``installedVersion(_:)``).
    static let version = 7

    /// What a store's `functionsVersion` holds once this version's functions are installed in the
    /// schema `namespace`: the version and the schema the functions name their tables in. A schema
    /// renamed since holds another schema's name, which reads as functions to install again.
    static func installedVersion(_ namespace: String) -> String { "\(version):\(namespace)" }

    /// Whether a store's `functionsVersion` says its functions name the tables of a schema other
    /// than `namespace` (the schema was renamed since they were installed). Versions before 7 name none.
    static func namesAnotherSchema(_ stored: String, _ namespace: String) -> Bool {
        guard let colon = stored.firstIndex(of: ":") else { return false }
        return stored[stored.index(after: colon)...] != namespace
    }

    /// Where a definition names the store's schema (its quoted name and a dot, written in by
    /// ``definitions(schema:)``): `strata_fold` and `strata_standard_key` call the tables by their
    /// qualified names, as they must work whatever the search_path (an expression index calls them).
    static let schemaToken = "@strata_schema@."

    /// The SQLSTATE of `strata_damaged`'s error.
    static let damagedState = "SD001"

    /// CREATE OR REPLACE FUNCTION statements for the schema `schema`, unqualified names (the store
    /// runs them with search_path set to its schema only; builtins come from pg_catalog).
    static func definitions(schema: String) -> [String] {
        let qualified = bodyIdentifier(schema) + "."
        return statements.map { $0.containsText(schemaToken) ? $0.replacingAll(schemaToken, with: qualified) : $0 }
    }

    /// `name` as an identifier inside a function's body, which `$strata$` quotes and nothing
    /// escapes: a name holding a `$` is written as a Unicode-escaped identifier (`U&"a\0024b"`,
    /// a backslash doubled), so no name ends the body early; any other name quoted as usual.
    static func bodyIdentifier(_ name: String) -> String {
        guard name.utf8.contains(UInt8(ascii: "$")) else { return PostgresDialect().quote(name) }
        var out = "U&\""
        for ch in name.unicodeScalars {
            switch ch {
            case "$": out += "\\0024"
            case "\\": out += "\\\\"
            case "\"": out += "\"\""
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "\""
    }

    private static let statements: [String] = {
        let data = PostgresUnicodeData()
        return data.tables.map { table in
            """
            CREATE OR REPLACE FUNCTION \(table.name)() RETURNS jsonb
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$ SELECT \(table.literal) $strata$
            """
        } + [
            foldFunction(data),
            testFunction("strata_contains", "strpos(@F, y COLLATE \"C\") > 0"),
            testFunction("strata_has_prefix", "starts_with(@F, y COLLATE \"C\")"),
            testFunction("strata_has_suffix", "right(@F, char_length(y)) = y COLLATE \"C\""),
            compareFunction,
            lscFunction,
            lengthFunction,
            integerArithmeticFunction,
            doubleArithmeticFunction,
            standardKeyFunction(data),
            decimalFunction,
            damagedFunction,
        ] + exactSumFunctions + exactNumberComparisons + searchFunctions
    }()

    // MARK: - Integers against reals

    /// SQLite and ``Evaluation`` compare an integer with a real exactly; PostgreSQL has no
    /// `bigint`-`double precision` operators and converts the integer to a real, so 2^53 + 1
    /// would equal 2^53. The store's schema gets the six comparison operators for each
    /// order of the two types: an exact match of the operand types, which PostgreSQL prefers
    /// to its built-in operators reached through a cast (`IS DISTINCT FROM` and `IN` use `=`).
    /// `strata_int_real_order(a, b)` is -1, 0 or 1: the real's integer part (exact below 2^63)
    /// against the integer, then its fraction.
    private static let exactNumberComparisons: [String] = {
        var out = ["""
            CREATE OR REPLACE FUNCTION strata_int_real_order(a bigint, b double precision) RETURNS integer
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$
            SELECT CASE WHEN b <> b OR b >= 9223372036854775808.0 THEN -1
                        WHEN b < -9223372036854775808.0 THEN 1
                        WHEN a < CAST(trunc(b) AS bigint) THEN -1
                        WHEN a > CAST(trunc(b) AS bigint) THEN 1
                        WHEN b > trunc(b) THEN -1
                        WHEN b < trunc(b) THEN 1
                        ELSE 0 END
            $strata$
            """]
        let ops = [("=", "eq", "= 0", "=", "<>"), ("<>", "ne", "<> 0", "<>", "="), ("<", "lt", "< 0", ">", ">="),
                   ("<=", "le", "<= 0", ">=", ">"), (">", "gt", "> 0", "<", "<="), (">=", "ge", ">= 0", "<=", "<")]
        for (op, name, test, commutator, negator) in ops {
            out.append("""
                CREATE OR REPLACE FUNCTION strata_int_real_\(name)(a bigint, b double precision) RETURNS boolean
                LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$ SELECT strata_int_real_order(a, b) \(test) $strata$
                """)
            out.append("""
                CREATE OR REPLACE FUNCTION strata_real_int_\(name)(a double precision, b bigint) RETURNS boolean
                LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $strata$ SELECT -strata_int_real_order(b, a) \(test) $strata$
                """)
        }
        // Operators cannot be replaced: each is made once, when the schema does not have it (or has
        // only its shell, which naming it as another's commutator made).
        for (op, name, _, commutator, negator) in ops {
            for (l, r, f) in [("bigint", "double precision", "strata_int_real_"), ("double precision", "bigint", "strata_real_int_")] {
                out.append("""
                    DO $strata$ BEGIN
                      IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_operator WHERE oprname = '\(op)' AND oprnamespace = \(PostgresDialect.currentNamespace)
                                     AND oprleft = CAST('\(l)' AS regtype) AND oprright = CAST('\(r)' AS regtype)
                                     AND CAST(oprcode AS oid) <> 0) THEN
                        CREATE OPERATOR \(op) (LEFTARG = \(l), RIGHTARG = \(r), FUNCTION = \(f)\(name),
                                              COMMUTATOR = \(commutator), NEGATOR = \(negator));
                      END IF;
                    END $strata$
                    """)
            }
        }
        return out
    }()

    // MARK: - Simple functions

    /// `strata_contains` and its kind: false with a NULL, true for an empty `y` (a NULL
    /// `flags` is 0, as SQLite reads it). `test` reads folded `x` as `@F`. Under the "C"
    /// collation: bytes, whatever the columns' collation (a nondeterministic one refuses strpos).
    private static func testFunction(_ name: String, _ test: String) -> String {
        let f = "strata_fold(x, coalesce(flags, 0)) COLLATE \"C\""
        return """
            CREATE OR REPLACE FUNCTION \(name)(x text, y text, flags integer) RETURNS boolean
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
            SELECT CASE WHEN x IS NULL OR y IS NULL THEN false
                        WHEN octet_length(y) = 0 THEN true
                        ELSE \(test.replacingAll("@F", with: f)) END
            $strata$
            """
    }

    private static let compareFunction = """
        CREATE OR REPLACE FUNCTION strata_compare(x text, y text, code integer) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT CASE WHEN x IS NULL OR y IS NULL THEN
                      CASE coalesce(code, 0) >> 2 WHEN 0 THEN x IS NULL AND y IS NULL
                                                  WHEN 1 THEN NOT (x IS NULL AND y IS NULL)
                                                  ELSE false END
                    ELSE CASE coalesce(code, 0) >> 2
                      WHEN 0 THEN strata_fold(x, coalesce(code, 0) & 3) COLLATE "C" = y COLLATE "C"
                      WHEN 1 THEN strata_fold(x, coalesce(code, 0) & 3) COLLATE "C" <> y COLLATE "C"
                      WHEN 2 THEN strata_fold(x, code & 3) COLLATE "C" < y COLLATE "C"
                      WHEN 3 THEN strata_fold(x, code & 3) COLLATE "C" <= y COLLATE "C"
                      WHEN 4 THEN strata_fold(x, code & 3) COLLATE "C" > y COLLATE "C"
                      ELSE strata_fold(x, code & 3) COLLATE "C" >= y COLLATE "C" END END
        $strata$
        """

    private static let lscFunction = """
        CREATE OR REPLACE FUNCTION strata_lsc(x text, y text) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT CASE WHEN x IS NULL OR y IS NULL OR octet_length(y) = 0 THEN false
                    ELSE strpos(strata_fold(x, 3) COLLATE "C", y COLLATE "C") > 0 END
        $strata$
        """

    /// `a op b` of bigints as Swift computes it (``ArithmeticOperator/apply(_:_:)-(Int64,Int64)``): NULL
    /// where Swift traps (an overflow, the least bigint divided by -1, a division or remainder by
    /// zero) instead of PostgreSQL's error. Each operation is computed only once its check passed
    /// (a CASE arm whose condition is false is never evaluated, not even when planning with
    /// constants). Every operand is typed: the store's exact bigint-real operators would otherwise
    /// be chosen for a numeric against a bigint literal (through a real, losing the check's exactness).
    private static let integerArithmeticFunction = """
        CREATE OR REPLACE FUNCTION strata_iarith(a bigint, b bigint, code integer) RETURNS bigint
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT CASE code
          WHEN 0 THEN CASE WHEN a::numeric + b::numeric BETWEEN -9223372036854775808::numeric AND 9223372036854775807::numeric THEN a + b END
          WHEN 1 THEN CASE WHEN a::numeric - b::numeric BETWEEN -9223372036854775808::numeric AND 9223372036854775807::numeric THEN a - b END
          WHEN 2 THEN CASE WHEN a::numeric * b::numeric BETWEEN -9223372036854775808::numeric AND 9223372036854775807::numeric THEN a * b END
          WHEN 3 THEN CASE WHEN b <> 0::bigint AND NOT (a = (-9223372036854775807)::bigint - 1::bigint AND b = (-1)::bigint) THEN a / b END
          WHEN 4 THEN CASE WHEN b <> 0::bigint AND NOT (a = (-9223372036854775807)::bigint - 1::bigint AND b = (-1)::bigint) THEN a % b END
        END
        $strata$
        """

    /// `a op b` of doubles as IEEE 754 computes it (``ArithmeticOperator/apply(_:_:)-(Double,Double)``): NULL
    /// where the result is not finite. PostgreSQL computes the same IEEE operation, but fails with
    /// 22003 where it overflows (the result is not finite: NULL) or underflows to zero (which
    /// IEEE gives: a product of two numbers below 1, a quotient below 1); an infinite or NaN
    /// operand gives an infinite or NaN result, which is NULL too.
    private static let doubleArithmeticFunction = """
        CREATE OR REPLACE FUNCTION strata_farith(a double precision, b double precision, code integer) RETURNS double precision
        LANGUAGE plpgsql IMMUTABLE PARALLEL RESTRICTED AS $strata$
        DECLARE
          r double precision;
        BEGIN
          IF a IS NULL OR b IS NULL OR (code = 3 AND b = 0::float8) THEN RETURN NULL; END IF;
          BEGIN
            r := CASE code WHEN 0 THEN a + b WHEN 1 THEN a - b WHEN 2 THEN a * b WHEN 3 THEN a / b END;
          EXCEPTION WHEN numeric_value_out_of_range THEN
            IF (code = 2 AND abs(a) < 1::float8 AND abs(b) < 1::float8) OR (code = 3 AND abs(a) < abs(b)) THEN RETURN 0::float8; END IF;
            RETURN NULL;
          END;
          IF r IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8) THEN RETURN NULL; END IF;
          RETURN r;
        END
        $strata$
        """

    /// `@sum` and `@avg` (``PostgresDialect/exactAggregate(_:integer:_:)``), as ``ExactSum``
    /// computes them. A double `x` is ±m · 2^(e - 1075) (`e` its biased exponent, 1 for a subnormal,
    /// whose m has no implicit bit): ±m · 2^(e - 1) units of 2^-1074, added to a numeric
    /// (PostgreSQL's `power` of a numeric 2 to an integer is exact). A value that is not finite
    /// makes the state NaN, and the sum NULL. The largest finite double is 2^1024 - 2^971: a total
    /// of at least 2^1024 - 2^970 (2^2098 - 2^2044 units) rounds to infinity. Every operand is typed
    /// (the store's schema defines bigint-real operators).
    private static let exactSumFunctions: [String] = [
        """
        CREATE OR REPLACE FUNCTION strata_fsum_step(s numeric, x double precision) RETURNS numeric
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $strata$
        DECLARE
          b bigint;
          e integer;
          m bigint;
        BEGIN
          IF x IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8) THEN RETURN 'NaN'::numeric; END IF;
          IF x = 0::float8 THEN RETURN s; END IF;
          b := CAST(CAST('x' || encode(float8send(x), 'hex') AS bit(64)) AS bigint);
          e := CAST((b >> 52) & 2047::bigint AS integer);
          m := b & 4503599627370495::bigint;
          IF e = 0 THEN e := 1; ELSE m := m | 4503599627370496::bigint; END IF;
          IF b < 0::bigint THEN m := -m; END IF;
          RETURN s + CAST(m AS numeric) * power(2::numeric, CAST(e - 1 AS numeric));
        END
        $strata$
        """,
        """
        CREATE OR REPLACE FUNCTION strata_fsum_final(s numeric) RETURNS double precision
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
        BEGIN
          IF s IS NULL OR s = 'NaN'::numeric THEN RETURN NULL; END IF;
          IF s = 0::numeric THEN RETURN 0::float8; END IF;
          IF abs(s) >= power(2::numeric, 2098::numeric) - power(2::numeric, 2044::numeric) THEN RETURN NULL; END IF;
          RETURN CAST(CAST(trunc(s * power(5::numeric, 1074::numeric)) AS text) || 'e-1074' AS double precision);
        END
        $strata$
        """,
        """
        CREATE OR REPLACE AGGREGATE strata_fsum(double precision) (
          SFUNC = strata_fsum_step, STYPE = numeric, FINALFUNC = strata_fsum_final, INITCOND = '0', PARALLEL = SAFE)
        """,
        """
        CREATE OR REPLACE FUNCTION strata_int_total(s numeric) RETURNS bigint
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT CASE WHEN s IS NULL THEN 0::bigint
                    WHEN s BETWEEN -9223372036854775808::numeric AND 9223372036854775807::numeric THEN CAST(s AS bigint) END
        $strata$
        """,
        """
        CREATE OR REPLACE FUNCTION strata_int_mean(s numeric, n bigint) RETURNS double precision
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT CASE WHEN s IS NULL OR n IS NULL OR n = 0::bigint THEN NULL
                    ELSE CAST(s AS double precision) / CAST(n AS double precision) END
        $strata$
        """,
        """
        CREATE OR REPLACE FUNCTION strata_float_mean(s double precision, n bigint) RETURNS double precision
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
        BEGIN
          IF s IS NULL OR n IS NULL OR n = 0::bigint THEN RETURN NULL; END IF;
          IF s = 0::float8 OR abs(s) >= 1e-290::float8 THEN RETURN s / CAST(n AS double precision); END IF;
          BEGIN
            RETURN s / CAST(n AS double precision);
          EXCEPTION WHEN numeric_value_out_of_range THEN
            RETURN 0::float8;
          END;
        END
        $strata$
        """,
    ]

    private static let lengthFunction = """
        CREATE OR REPLACE FUNCTION strata_length(x text) RETURNS bigint
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT char_length(x)::bigint
        $strata$
        """

    /// Decimal text as ``DecimalText`` reads it: the grammar is checked first (a cast alone
    /// would also take " 1", ".5", "Infinity", "0x1F" or "1_000"); what fails it is NaN.
    /// PostgreSQL's numeric holds up to 131072 digits before the point and 16383 after:
    /// a value beyond (an exponent past them; DecimalText allows up to 10^9) fails the
    /// statement with numeric's own out-of-range error instead of comparing wrongly.
    private static let decimalFunction = """
        CREATE OR REPLACE FUNCTION strata_decimal(x text) RETURNS numeric
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $strata$
        SELECT CASE WHEN x IS NULL THEN NULL
                    WHEN x COLLATE "C" ~ E'^[-+]?[0-9]+(\\\\.[0-9]+)?([eE][-+]?[0-9]+)?$' THEN x::numeric
                    ELSE 'NaN'::numeric END
        $strata$
        """

    /// Always fails, like SQLFunctions' `strata_damaged`, carrying the same facts: the
    /// object (`entity/key`) as the message, the attribute as the detail; the entity and the
    /// attribute also as the error's table and column fields, which the store reads. NULL arguments
    /// read as SQLite reads them ("" and 0).
    ///
    /// Its search_path is its own (`pg_catalog`: it calls only built-ins), and so PostgreSQL
    /// looks its language up when it is first called, not when a statement naming it starts:
    /// every read of a hierarchy names it in its entity check, which finds nothing in a sound
    /// store, and a connection's first PL/pgSQL function costs it the loading of PL/pgSQL
    /// (about 0.8 ms, more than a small query).
    private static let damagedFunction = """
        CREATE OR REPLACE FUNCTION strata_damaged(entity text, attribute text, key bigint) RETURNS integer
        LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $strata$
        BEGIN
          RAISE EXCEPTION USING ERRCODE = '\(damagedState)',
            MESSAGE = coalesce(entity, '') || '/' || coalesce(key, 0)::text,
            DETAIL = coalesce(attribute, ''),
            TABLE = coalesce(entity, ''),
            COLUMN = coalesce(attribute, '');
        END
        $strata$
        """

    // MARK: - Folding

    /// `strata_fold`: ASCII by `lower`; other text scalar by scalar through the fold tables
    /// (TextFolding's fast path) unless an output may combine with what precedes it; then
    /// NFC(T(NFD(s))) (the slow path): NFD, T per scalar, and NFC (NFD again, then composition).
    private static func foldFunction(_ d: PostgresUnicodeData) -> String {
        """
        CREATE OR REPLACE FUNCTION strata_fold(x text, flags integer) RETURNS text
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
        DECLARE
          s text COLLATE "C" := x;
          m integer := coalesce(flags, 0) & 3;
          r text COLLATE "C";
          rest text COLLATE "C";
          src text COLLATE "C";
          c text COLLATE "C";
          e jsonb;
          o text;
          stage integer;
          bail boolean;
          parts text[];
          \(normalizeDeclarations)
        BEGIN
          IF s IS NULL THEN RETURN NULL; END IF;
          IF m = 0 THEN RETURN s; END IF;
          IF octet_length(s) = char_length(s) THEN
            IF m & 1 = 1 THEN RETURN lower(s); END IF;
            RETURN s;
          END IF;
          -- Fast path: each scalar's output. Up to 256 scalars, one replace per distinct
          -- non-ASCII scalar (no output holds a scalar that folds: the tests check it); longer
          -- text scalar by scalar (stage 0), which stays linear.
          IF char_length(s) <= 256 THEN
            r := CASE WHEN m & 1 = 1 THEN lower(s) ELSE s END;
            rest := regexp_replace(s, E'[\\\\x01-\\\\x7F]+', '', 'g');
            WHILE rest <> '' LOOP
              c := left(rest, 1);
              e := \(d.foldMap) -> c;
              IF e IS NOT NULL THEN
                IF (e ->> 3)::integer & (1 << (m - 1)) <> 0 THEN
                  r := NULL;
                  EXIT;
                END IF;
                o := e ->> (m - 1);
                IF o IS NOT NULL THEN r := replace(r, c, o); END IF;
              END IF;
              rest := replace(rest, c, '');
            END LOOP;
            IF r IS NOT NULL THEN RETURN r; END IF;
            stage := 1;
          ELSE
            stage := 0;
          END IF;
          -- Stages: 0 the fast path scalar by scalar; 1 NFD of the text; 2 T per scalar of
          -- that (the slow path); 3 NFD of T's output; then composition.
          src := s;
          LOOP
            IF stage = 1 OR stage = 3 THEN
              \(nfdBlock(d))
              EXIT WHEN stage = 3;
              stage := 2;
            ELSE
              cs := string_to_array(s, NULL);
              n := cardinality(cs);
            END IF;
            parts := '{}';
            bail := false;
            FOR j IN 1 .. n LOOP
              IF stage = 2 THEN u := a[j]; c := chr(u); ELSE c := cs[j]; u := ascii(c); END IF;
              IF u < 128 THEN
                IF m & 1 = 1 AND u BETWEEN 65 AND 90 THEN c := chr(u + 32); END IF;
                parts[j] := c;
              ELSE
                e := \(d.foldMap) -> c;
                IF e IS NULL THEN
                  parts[j] := c;
                ELSIF stage = 0 AND (e ->> 3)::integer & (1 << (m - 1)) <> 0 THEN
                  bail := true;
                  EXIT;
                ELSE
                  parts[j] := coalesce(e ->> (m - 1), c);
                END IF;
              END IF;
            END LOOP;
            IF stage = 0 THEN
              IF NOT bail THEN RETURN array_to_string(parts, ''); END IF;
              stage := 1;
            ELSE
              src := array_to_string(parts, '');
              stage := 3;
            END IF;
          END LOOP;
          \(composeBlock(d))
          RETURN array_to_string(cs, '');
        END
        $strata$
        """
    }

    // MARK: - Normalization (PL/pgSQL)

    /// Variables of ``nfdBlock(_:)`` and ``composeBlock(_:)``.
    private static let normalizeDeclarations = """
        a integer[];
          k integer[];
          b integer[];
          cs text[];
          n integer;
          nb integer;
          q integer;
          j integer;
          t integer;
          u integer;
          v integer;
          cc integer;
          st integer;
          lc integer;
          lo integer;
          dec jsonb;
        """

    /// The canonical decomposition of `src` as scalars `a[1..n]` with their combining classes
    /// `k[1..n]`, in canonical order as the standard library orders them: a non-starter moves
    /// before those of a higher class, but not past the start of the decomposition of a scalar
    /// of class 0 (`lo`): Swift's NFD sorts each segment that starts at such a scalar of the
    /// input, so U+0345 U+0F73 stays U+0345 U+0F71 U+0F72 (U+0F73, U+0F75 and U+0F81 are of
    /// class 0 but decompose to non-starters).
    private static func nfdBlock(_ d: PostgresUnicodeData) -> String {
        """
        n := 0;
            lo := 1;
            a := '{}';
            k := '{}';
            FOREACH c IN ARRAY string_to_array(src, NULL) LOOP
              v := ascii(c);
              IF v < 192 THEN
                n := n + 1; a[n] := v; k[n] := 0;
                CONTINUE;
              END IF;
              IF v BETWEEN 44032 AND 55203 THEN
                t := v - 44032;
                n := n + 1; a[n] := 4352 + t / 588; k[n] := 0;
                n := n + 1; a[n] := 4449 + (t % 588) / 28; k[n] := 0;
                IF t % 28 <> 0 THEN n := n + 1; a[n] := 4519 + t % 28; k[n] := 0; END IF;
                CONTINUE;
              END IF;
              dec := \(d.decompositions) -> c;
              IF dec IS NULL THEN q := 1; ELSE q := jsonb_array_length(dec); END IF;
              IF v < \(d.firstCombining) OR NOT \(d.combiningClasses) ? c THEN lo := n + 1; END IF;
              FOR j IN 0 .. q - 1 LOOP
                IF dec IS NULL THEN u := v; ELSE u := (dec ->> j)::integer; END IF;
                IF u < \(d.firstCombining) THEN
                  cc := 0;
                ELSE
                  cc := coalesce((\(d.combiningClasses) ->> chr(u))::integer, 0);
                END IF;
                IF cc = 0 OR n < lo OR k[n] <= cc THEN
                  n := n + 1; a[n] := u; k[n] := cc;
                ELSE
                  t := n;
                  WHILE t >= lo AND k[t] > cc LOOP
                    a[t + 1] := a[t]; k[t + 1] := k[t];
                    t := t - 1;
                  END LOOP;
                  a[t + 1] := u; k[t + 1] := cc;
                  n := n + 1;
                END IF;
              END LOOP;
            END LOOP;
        """
    }

    /// Canonical composition of `a[1..n]` (classes `k`): the NFC text as scalars `cs[1..nb]`.
    private static func composeBlock(_ d: PostgresUnicodeData) -> String {
        """
        nb := 0;
          b := '{}';
          st := 0;
          lc := 256;
          FOR j IN 1 .. n LOOP
            u := a[j];
            cc := k[j];
            IF st > 0 AND (lc < cc OR lc = 0) AND u >= \(d.firstSecond) THEN
              v := b[st];
              t := NULL;
              IF u BETWEEN 4449 AND 4469 THEN
                IF v BETWEEN 4352 AND 4370 THEN t := 44032 + ((v - 4352) * 21 + (u - 4449)) * 28; END IF;
              ELSIF u BETWEEN 4520 AND 4546 AND v BETWEEN 44032 AND 55203 AND (v - 44032) % 28 = 0 THEN
                t := v + u - 4519;
              ELSE
                t := (\(d.compositions) ->> (chr(v) || chr(u)))::integer;
              END IF;
              IF t IS NOT NULL THEN
                b[st] := t;
                CONTINUE;
              END IF;
            END IF;
            IF cc = 0 THEN st := nb + 1; END IF;
            lc := cc;
            nb := nb + 1;
            b[nb] := u;
          END LOOP;
          cs := '{}';
          FOR j IN 1 .. nb LOOP cs[j] := chr(b[j]); END LOOP;
        """
    }

    // MARK: - Sort key

    /// `strata_standard_key`: the levels of ``TextFolding/collate(_:_:)`` over the NFC text (as
    /// ``TextFolding/isQuickNFC(_:)`` decides it), each as text whose UTF-8 byte order is the
    /// level's order, joined by a 0 byte (no text holds one), then the text's own bytes (level 5).
    /// See ``PostgresSortKey`` for the levels. ASCII text takes a path without a loop: level 1 is the
    /// lowercased text with punctuation and DEL translated, level 3 the text with capitals
    /// translated, level 2 empty; digit runs are cut out by one regexp_replace. Other text goes scalar by
    /// scalar: each scalar's share of the levels from a JSON object (``PostgresSortKey/entry(_:)``),
    /// removable marks join the group before them, digit runs (ASCII and fullwidth) are read here.
    private static func standardKeyFunction(_ d: PostgresUnicodeData) -> String {
        let punctuation = PostgresSortKey.asciiFrom, codes = PostgresSortKey.asciiTo
        let asciiL1 = "ARRAY[" + (1..<128).map { "chr(\(PostgresSortKey.asciiPrimary(UInt8($0))))" }.joined(separator: ", ") + "]"
        return """
        CREATE OR REPLACE FUNCTION strata_standard_key(x text) RETURNS bytea
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
        DECLARE
          s text COLLATE "C" := x;
          src text COLLATE "C";
          w text COLLATE "C";
          run text COLLATE "C";
          c text COLLATE "C";
          e jsonb;
          l1 text COLLATE "C" := '';
          l2 text COLLATE "C" := '';
          l3 text COLLATE "C" := '';
          l4 text COLLATE "C" := '';
          sep integer := 0;
          zs integer := 0;
          len integer;
          i integer;
          z integer;
          dg integer;
          fw boolean;
          sig text COLLATE "C";
          dropped boolean := false;
          parts text[];
          ds text[];
          b1 text[] := '{}';
          b2 text[] := '{}';
          b3 text[] := '{}';
          b4 text[] := '{}';
          steps integer := 0;
          \(normalizeDeclarations)
        BEGIN
          IF s IS NULL THEN RETURN NULL; END IF;
          IF octet_length(s) = char_length(s) THEN
            w := lower(s);
            IF w ~ '[0-9]' THEN
              -- Digit runs cut out: segments at odd places, runs at even ones (U+FFFF is no ASCII).
              parts := string_to_array(regexp_replace(w, '([0-9]+)', E'\\uFFFF\\\\1\\uFFFF', 'g'), E'\\uFFFF');
              cs := string_to_array(regexp_replace(s, '([0-9]+)', E'\\uFFFF\\\\1\\uFFFF', 'g'), E'\\uFFFF');
              ds := '{}';
              FOR j IN 2 .. cardinality(parts) BY 2 LOOP
                run := parts[j];
                sig := ltrim(run, '0');
                z := length(run) - length(sig);
                parts[j] := E'\\x44' || chr(length(length(sig)::text)) || length(sig)::text || sig;
                cs[j] := '0';
                IF z = 0 THEN
                  zs := zs + 1;
                ELSE
                  ds[j] := repeat(E'\\x01', zs) || chr(1 + length(z::text)) || z::text;
                  zs := 0;
                END IF;
              END LOOP;
              l4 := array_to_string(ds, '');
              l1 := translate(array_to_string(parts, ''), \(punctuation), \(codes));
              l3 := translate(array_to_string(cs, ''), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', repeat(chr(129), 26));
            ELSE
              IF w ~ E'[!-/:-@[-`{-~\\x7F]' THEN l1 := translate(w, \(punctuation), \(codes)); ELSE l1 := w; END IF;
              IF w = s THEN l3 := s; ELSE l3 := translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', repeat(chr(129), 26)); END IF;
            END IF;
            RETURN convert_to(l1, 'UTF8') || decode('0000', 'hex') || convert_to(l3, 'UTF8') || decode('00', 'hex')
              || convert_to(l4, 'UTF8') || decode('00', 'hex') || convert_to(s, 'UTF8');
          END IF;
          IF s ~ \(d.maybeNotNFC) THEN
            src := s;
            \(nfdBlock(d))
            \(composeBlock(d))
            s := array_to_string(cs, '');
          ELSE
            cs := string_to_array(s, NULL);
          END IF;
          len := cardinality(cs);
          i := 1;
          WHILE i <= len LOOP
            -- The levels grow in pieces of at most 256 elements (linear in the text's length).
            steps := steps + 1;
            IF steps = 256 THEN
              b1 := b1 || l1; b2 := b2 || l2; b3 := b3 || l3; b4 := b4 || l4;
              l1 := ''; l2 := ''; l3 := ''; l4 := '';
              steps := 0;
            END IF;
            c := cs[i];
            u := ascii(c);
            IF u BETWEEN 48 AND 57 OR u BETWEEN 65296 AND 65305 THEN
              z := 0;
              dg := 0;
              fw := false;
              ds := '{}';
              LOOP
                IF u >= 65296 THEN u := u - 65296; fw := true; ELSE u := u - 48; END IF;
                IF dg = 0 AND u = 0 THEN
                  z := z + 1;
                ELSE
                  dg := dg + 1;
                  ds[dg] := chr(48 + u);
                END IF;
                i := i + 1;
                EXIT WHEN i > len;
                u := ascii(cs[i]);
                EXIT WHEN NOT (u BETWEEN 48 AND 57 OR u BETWEEN 65296 AND 65305);
              END LOOP;
              l1 := l1 || E'\\x44' || chr(length(dg::text)) || dg::text || array_to_string(ds, '');
              l3 := l3 || CASE WHEN fw THEN chr(128) ELSE '0' END;
              sep := sep + 1;
              IF z = 0 THEN
                zs := zs + 1;
              ELSE
                l4 := l4 || repeat(E'\\x01', zs) || chr(1 + length(z::text)) || z::text;
                zs := 0;
              END IF;
              dropped := false;
              CONTINUE;
            END IF;
            i := i + 1;
            IF u < 128 THEN
              l1 := l1 || (\(asciiL1))[u];
              l3 := l3 || CASE WHEN u BETWEEN 65 AND 90 THEN chr(129) ELSE c END;
              sep := sep + 1;
              dropped := false;
              CONTINUE;
            END IF;
            e := \(d.keyMap) -> c;
            IF e IS NULL THEN
              l1 := l1 || E'\\x7B' || c;
              l3 := l3 || E'\\x01';
              sep := sep + 1;
              dropped := false;
            ELSIF jsonb_typeof(e) = 'number' THEN
              IF e::integer = 0 THEN
                IF NOT dropped THEN
                  l2 := l2 || repeat(E'\\x01', sep) || c;
                  sep := 0;
                END IF;
              ELSE
                l1 := l1 || CASE WHEN e::integer = 1 THEN E'\\x22' ELSE E'\\x43' END || c;
                l3 := l3 || E'\\x01';
                sep := sep + 1;
                dropped := false;
              END IF;
            ELSIF e ->> 0 = '' THEN
              dropped := true;
            ELSE
              l1 := l1 || (e ->> 0);
              IF e ->> 1 <> '' THEN
                l2 := l2 || repeat(E'\\x01', sep) || (e ->> 1);
                sep := (e ->> 2)::integer;
              ELSE
                sep := sep + (e ->> 2)::integer;
              END IF;
              l3 := l3 || (e ->> 3);
              dropped := false;
            END IF;
          END LOOP;
          RETURN convert_to(array_to_string(b1, '') || l1, 'UTF8') || decode('00', 'hex')
            || convert_to(array_to_string(b2, '') || l2, 'UTF8') || decode('00', 'hex')
            || convert_to(array_to_string(b3, '') || l3, 'UTF8') || decode('00', 'hex')
            || convert_to(array_to_string(b4, '') || l4, 'UTF8') || decode('00', 'hex')
            || convert_to(s, 'UTF8');
        END
        $strata$
        """
    }
}

extension PostgresFunctions {
    /// `strata_standard_key(x)` for a column `x`, with the function's ASCII path spelled out for
    /// ASCII text without digits (the function, PL/pgSQL, costs about 4 µs a call; this about
    /// 1.3): level 1 the lowercased text with punctuation and DEL translated (when it holds any),
    /// level 2 empty, level 3 the text with capitals as U+0081, level 4 empty, then the text's
    /// own bytes — byte for byte the function's key, so that both kinds of rows sort together.
    /// Other text, and NULL, goes to the function.
    static func standardKey(column x: String) -> String {
        let c = "\(x) COLLATE \"C\""
        let level1 = "CASE WHEN \(c) ~ '[^ a-zA-Z]' THEN translate(lower(\(c)), \(PostgresSortKey.asciiFrom), \(PostgresSortKey.asciiTo)) ELSE lower(\(c)) END"
        let level3 = "regexp_replace(\(c), '[A-Z]', chr(129), 'g')"
        let gap = "decode('0000', 'hex')"
        let key = "convert_to(\(level1), 'UTF8') || \(gap) || convert_to(\(level3), 'UTF8') || \(gap) || convert_to(\(x), 'UTF8')"
        return "CASE WHEN octet_length(\(x)) = char_length(\(x)) AND \(c) !~ '[0-9]' THEN \(key) ELSE strata_standard_key(\(x)) END"
    }
}

/// The sort key of `strata_standard_key`: the levels of ``TextFolding/collate(_:_:)``, each
/// as text whose UTF-8 byte order is the level's order (UTF-8 keeps code point order),
/// joined by a 0 byte, then the NFC text's bytes (level 5, code point order).
///
/// 1. Primary: the elements' encodings one after the other; the 0 byte after them makes a
///    shorter sequence sort first. An element's encoding starts with a scalar that tells its
///    class, and the bands of those scalars follow the classes (whitespace and controls <
///    punctuation and symbols < numbers < the rest), so that ASCII text is nearly itself:
///    - whitespace and controls: ASCII U+0001–U+0020 as themselves, DEL as U+0021, any
///      other as U+0022 and the scalar;
///    - punctuation and symbols: ASCII as U+0023 + its root-collation position (0–31),
///      any other as U+0043 and the scalar;
///    - a number: U+0044, the count of its significant digits (the count's length as a
///      scalar, then its decimal digits) and those digits, so numbers compare by value;
///    - the rest: a digit that is not part of a number (a fold's output) as U+0045 and the
///      digit, ASCII letters as themselves (lowercase), any other as U+007B and the scalar.
/// 2. Diacritics: the lead group, then per element 1 and its group's tokens (stroke or spelled
///    letter, the marks of the scalar's decomposition, the marks that follow it) as scalars
///    (all above 1); trailing 1s dropped, so that a group that is a prefix of the other sorts
///    first. ASCII text has none.
/// 3. Case: per element one scalar, compared only with an element of the same primary weight
///    (levels 1 and 2 tie): for case entry 0 the element's ASCII character when its weight is
///    one (letters lowercase), "0" for a number, else U+0001; for entry t > 0 U+007F + t. So
///    lowercase ASCII text is itself, a capital U+0081.
/// 4. Leading zeros: per number 1 for none, else the count's length + 1 then its digits;
///    trailing 1s dropped.
fileprivate enum PostgresSortKey {
    /// ASCII punctuation (in root-collation order) and DEL, and what level 1 makes of them.
    static var asciiFrom: String { sqlLiteral(TextFolding.asciiPunctuationOrder + [0x7F]) }
    static var asciiTo: String { sqlLiteral((0..<32).map { UInt8(0x23 + $0) } + [0x21]) }

    /// Level 1 of a non-digit ASCII byte (its element's one scalar).
    static func asciiPrimary(_ b: UInt8) -> UInt32 {
        UInt32(scalar(TextFolding.asciiWeight(b)).first!.value)
    }

    /// An E'' literal of ASCII bytes (every byte as \xNN).
    static func sqlLiteral(_ bytes: [UInt8]) -> String {
        "E'" + bytes.map { b -> String in
            let h = String(b, radix: 16)
            return "\\x" + (h.count == 1 ? "0" + h : h)
        }.joined() + "'"
    }

    /// The level-1 encoding of a non-number element of weight `w`.
    static func scalar(_ w: UInt32) -> [Unicode.Scalar] {
        let rank = w >> 24, value = w & 0xFF_FFFF
        func u(_ v: UInt32) -> Unicode.Scalar { Unicode.Scalar(v).unsafelyUnwrapped }
        switch rank {
        case 0:
            if value == 0x7F { return [u(0x21)] }
            return value < 0x80 ? [u(value)] : [u(0x22), u(value)]
        case 1:
            return value < 0x80 ? [u(0x23 + value)] : [u(0x43), u(value)]
        default:
            if value >= 0x30 && value <= 0x39 { return [u(0x45), u(value)] }
            return value >= 0x61 && value <= 0x7A ? [u(value)] : [u(0x7B), u(value)]
        }
    }

    /// Level 3 of a non-number element of weight `w` and case entry `t`.
    static func caseScalar(_ w: UInt32, _ t: UInt32) -> Unicode.Scalar {
        if t > 0 { return Unicode.Scalar(0x7F + t).unsafelyUnwrapped }
        let rank = w >> 24, value = w & 0xFF_FFFF
        if value >= 0x80 { return Unicode.Scalar(1) }
        if rank == 1 { return Unicode.Scalar(TextFolding.asciiPunctuationOrder[Int(value)]) }
        return Unicode.Scalar(UInt8(value))
    }

    /// The sort-key entry of a scalar that can occur in NFC text (not an ASCII one): nil for
    /// digits (read as numbers) and for plain scalars (a letter-class scalar that folds to itself
    /// with no case, stroke or marks: U+007B and itself, an empty group, case U+0001); 0 for a
    /// removable mark; 1 and 2 for plain whitespace or controls and plain punctuation or symbols
    /// (U+0022 or U+0043 and itself); else `[level 1, level 2 up to its last token, count of
    /// the level-2 1s after that, level 3]` (level 1 empty: the scalar folds to nothing, and
    /// the marks that follow it go with it).
    static func entry(_ x: Unicode.Scalar) -> String? {
        let v = x.value
        if (v >= 0x30 && v <= 0x39) || (v >= 0xFF10 && v <= 0xFF19) { return nil }
        if v >= 0x300 && ScalarData.info(v) & ScalarData.strippable != 0 { return "0" }
        var bytes: [UInt8] = []
        TextFolding.appendUTF8(v, &bytes)
        var elements: [TextFolding.CollationElement] = []
        bytes.withUnsafeBufferPointer { p in
            var cursor = TextFolding.CollationCursor(p)
            while let e = cursor.next() { elements.append(e) }
        }
        if elements.count == 1, let e = elements.first, e.weight & 0xFF_FFFF == v, e.tertiary == 0, e.stroke == 0,
           e.markCount == 0 {
            switch e.weight >> 24 {
            case 3: return nil
            case 0: return "1"
            case 1: return "2"
            default: break
            }
        }
        var l1: [Unicode.Scalar] = [], l2: [Unicode.Scalar] = [], l3: [Unicode.Scalar] = []
        for e in elements {
            precondition(e.weight != TextFolding.numberWeight, "a number from a scalar that is not a digit")
            l1 += scalar(e.weight)
            l2.append(Unicode.Scalar(1))
            if e.stroke != 0 { l2.append(Unicode.Scalar(e.stroke).unsafelyUnwrapped) }
            if let marks = e.marks {
                for k in 0..<e.markCount { l2.append(Unicode.Scalar(marks[k]).unsafelyUnwrapped) }
            }
            l3.append(caseScalar(e.weight, e.tertiary))
        }
        var trailing = 0
        while l2.last == Unicode.Scalar(1) { l2.removeLast(); trailing += 1 }
        return "[" + [l1, l2].map { PostgresJSONObject.quote(PostgresJSONObject.string($0)) }.joined(separator: ",")
            + ",\(trailing)," + PostgresJSONObject.quote(PostgresJSONObject.string(l3)) + "]"
    }
}

// MARK: - Data

/// The Unicode data the functions carry, computed from the standard library and Strata's tables:
/// each table a jsonb literal (dollar-quoted: no escaping depends on the server's settings) that
/// an argument-free SQL function of the store's schema returns (``tables``), which the functions
/// call by its qualified name (``PostgresFunctions/schemaToken``). The planner inlines such a call
/// into a constant when PL/pgSQL plans the expression, once per connection, so a call costs
/// nothing more than a literal in the function's text; the text of `strata_fold` and
/// `strata_standard_key` stays small, and a statement naming them does not read the tables.
fileprivate struct PostgresUnicodeData {
    /// The tables' functions: name and the jsonb literal each returns.
    let tables: [(name: String, literal: String)]
    /// Scalar → [mode 1, mode 2, mode 3 output (null: itself), bit m-1 set when the mode's
    /// output may combine with what precedes it (the fast path gives up)].
    let foldMap: String
    /// Scalar → its canonical decomposition (code points), for every scalar that has one but
    /// the Hangul syllables.
    let decompositions: String
    /// Scalar → canonical combining class, when not 0.
    let combiningClasses: String
    /// Two scalars → the primary composite they compose to (Hangul syllables aside).
    let compositions: String
    /// Scalar → its sort-key entry (``PostgresSortKey/entry(_:)``), for the non-ASCII scalars that
    /// have one.
    let keyMap: String
    /// A regular expression (an E'' literal) matching the scalars after which
    /// ``TextFolding/isQuickNFC(_:)`` no longer takes text for NFC as it is: from U+0300, those
    /// that may combine with what precedes them or that NFC replaces, and above plane 1 those
    /// that are not identity.
    let maybeNotNFC: String
    /// The lowest scalar with a combining class other than 0.
    let firstCombining: UInt32
    /// The lowest scalar that is the second of a composition.
    let firstSecond: UInt32

    /// A call of the table `name` in the store's schema (a parenthesized constant once inlined).
    static func table(_ name: String) -> String { "(\(PostgresFunctions.schemaToken)\(name)())" }

    /// Code points of the two planes of Strata's fold tables, and the only decomposing or
    /// folding scalars above them (CJK compatibility ideographs, variation selectors 17–256);
    /// tags U+E0000–U+E007F are format characters (a class of their own in sort keys).
    static func scalars() -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(0x20000 + 0x300 + 0x200)
        for v in UInt32(1)..<0x20000 { if let x = Unicode.Scalar(v) { out.append(x) } }
        for v in UInt32(0x2F800)..<0x2FA20 { out.append(Unicode.Scalar(v).unsafelyUnwrapped) }
        for v in UInt32(0xE0000)..<0xE01F0 { out.append(Unicode.Scalar(v).unsafelyUnwrapped) }
        return out
    }

    /// Whether a scalar can be skipped outright: CJK unified ideographs, Hangul syllables
    /// and private use fold to themselves, do not decompose, and are plain in sort keys.
    @inline(__always) static func isTrivial(_ v: UInt32) -> Bool {
        (v >= 0x3400 && v <= 0x4DBF) || (v >= 0x4E00 && v <= 0x9FFF) || (v >= 0xAC00 && v <= 0xD7A3)
            || (v >= 0xE000 && v <= 0xF8FF)
    }

    init() {
        var fold = PostgresJSONObject(), decomp = PostgresJSONObject(), classes = PostgresJSONObject(), comps = PostgresJSONObject(), key = PostgresJSONObject()
        var firstCombining: UInt32 = 0x110000, firstSecond: UInt32 = 0x110000
        var quickCheck = ScalarRanges()
        for x in Self.scalars() {
            let v = x.value
            // Unassigned scalars fold to themselves, do not decompose and are plain in sort keys.
            if Self.isTrivial(v) || x.properties.generalCategory == .unassigned { continue }
            let ccc = x.properties.canonicalCombiningClass.rawValue
            if ccc != 0 {
                classes.add(x, String(ccc))
                firstCombining = min(firstCombining, v)
            }
            if v < 0x80 { continue }
            if let f = Self.foldEntry(x) { fold.add(x, f) }
            let info = ScalarData.info(v)
            if v >= 0x300 && (v >= 0x20000 ? !TextFolding.isHighIdentity(v) : info & (ScalarData.sensitive | ScalarData.notNFC) != 0) {
                quickCheck.add(v)
            }
            if v >= 0xC0 {
                let d = ScalarData.nfd([x])
                if d != [x] {
                    decomp.add(x, "[" + d.map { String($0.value) }.joined(separator: ",") + "]")
                    if d.count >= 2 && info & ScalarData.notNFC == 0, let pair = Self.pair(x, d) {
                        comps.add(pair, String(v))
                        firstSecond = min(firstSecond, pair[1].value)
                    }
                }
            }
            if info & ScalarData.notNFC == 0, let k = PostgresSortKey.entry(x) { key.add(x, k) }
        }
        tables = [("strata_fold_map", fold.literal), ("strata_decompositions", decomp.literal),
                  ("strata_combining_classes", classes.literal), ("strata_compositions", comps.literal),
                  ("strata_key_map", key.literal)]
        foldMap = Self.table("strata_fold_map")
        decompositions = Self.table("strata_decompositions")
        combiningClasses = Self.table("strata_combining_classes")
        compositions = Self.table("strata_compositions")
        keyMap = Self.table("strata_key_map")
        maybeNotNFC = quickCheck.regex
        self.firstCombining = firstCombining
        self.firstSecond = min(firstSecond, 0x1161)
    }

    /// The two scalars a primary composite `c` (decomposition `d`) is composed from: the NFC
    /// of all of `d` but one scalar, and that scalar, checked to compose back to `c`.
    static func pair(_ c: Unicode.Scalar, _ d: [Unicode.Scalar]) -> [Unicode.Scalar]? {
        for i in d.indices.reversed() {
            var rest = d
            let second = rest.remove(at: i)
            let first = ScalarData.nfc(rest)
            if first.count == 1 && ScalarData.nfc([first[0], second]) == [c] { return [first[0], second] }
        }
        return nil
    }

    /// `[o1, o2, o3, sensitive]` for a scalar of the fold tables that is not identity and
    /// insensitive in every mode; nil for those that are.
    static func foldEntry(_ x: Unicode.Scalar) -> String? {
        let v = x.value
        var outs: [String] = []
        var sensitive = 0
        var any = false
        for mode in 1...3 {
            if let plane = FoldPlane.plane(for: v) {
                let e = plane.entry(v, mode)
                if e & FoldPlane.sensitiveBit != 0 { sensitive |= 1 << (mode - 1); any = true }
                if e & FoldPlane.identityBit != 0 {
                    outs.append("null")
                } else {
                    let cnt = Int(e & 0x3F), off = Int(e >> 6 & 0xFF_FFFF)
                    let bytes = Array(UnsafeBufferPointer(start: plane.pool + off, count: cnt))
                    outs.append(PostgresJSONObject.quote(String(decoding: bytes, as: UTF8.self)))
                    any = true
                }
            } else if TextFolding.isHighIdentity(v) {
                return nil
            } else {
                // Above plane 1, TextFolding's fast path gives up on what is not identity.
                sensitive |= 1 << (mode - 1); any = true
                let t = ScalarData.transform(x, mode: mode)
                outs.append(t == [x] ? "null" : PostgresJSONObject.quote(PostgresJSONObject.string(t)))
            }
        }
        return any ? "[" + outs.joined(separator: ",") + ",\(sensitive)]" : nil
    }
}

/// Scalars added in increasing order, kept as ranges, written as a bracket expression.
fileprivate struct ScalarRanges {
    private(set) var ranges: [(UInt32, UInt32)] = []

    mutating func add(_ v: UInt32) {
        if let last = ranges.last, last.1 + 1 == v {
            ranges[ranges.count - 1].1 = v
        } else {
            ranges.append((v, v))
        }
    }

    /// `E'[…]'`: PostgreSQL's regular expressions take \uXXXX and \UXXXXXXXX escapes.
    var regex: String {
        func escape(_ v: UInt32) -> String {
            let hex = String(v, radix: 16, uppercase: true)
            return v <= 0xFFFF ? "\\\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                : "\\\\U" + String(repeating: "0", count: 8 - hex.count) + hex
        }
        return "E'[" + ranges.map { $0.0 == $0.1 ? escape($0.0) : escape($0.0) + "-" + escape($0.1) }.joined() + "]'"
    }
}

/// A JSON object written as a dollar-quoted jsonb literal.
fileprivate struct PostgresJSONObject {
    private var text = "{"
    private var empty = true

    mutating func add(_ key: Unicode.Scalar, _ value: String) { add([key], value) }

    mutating func add(_ key: [Unicode.Scalar], _ value: String) {
        if !empty { text += "," }
        empty = false
        text += Self.quote(Self.string(key))
        text += ":"
        text += value
    }

    /// The object as `$strata_data$…$strata_data$::jsonb` (a parenthesized constant).
    var literal: String {
        let body = text + "}"
        precondition(!body.containsText("$strata_data$"))
        return "($strata_data$" + body + "$strata_data$::jsonb)"
    }

    static func string(_ scalars: [Unicode.Scalar]) -> String {
        var s = String()
        s.unicodeScalars.append(contentsOf: scalars)
        return s
    }

    /// A JSON string: quote, backslash and controls escaped, everything else as it is.
    static func quote(_ s: String) -> String {
        var out = "\""
        for x in s.unicodeScalars {
            switch x.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0..<0x20:
                let hex = String(x.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(x)
            }
        }
        return out + "\""
    }
}
