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
///   (``SQLFunctions/compareCode(_:)``) of `x` folded with flags `code & 3` and `y`, in code
///   point order; `==` is true for two NULLs, an ordering with a NULL false; never NULL.
/// - `strata_lsc(x text, y text) → boolean`: localizedStandardContains, `y` folded with flags 3
///   (false with a NULL or an empty `y`).
/// - `strata_length(x text) → bigint`: Unicode scalars.
/// - `strata_standard_key(x text) → bytea`: a sort key whose byte order is
///   ``TextFolding/standardCompare(_:_:)`` (equal keys exactly when it returns 0).
/// - `strata_decimal(x text) → numeric`: the value of decimal text (``DecimalText``); text
///   that is not a decimal is NaN, which sorts after every number, as ``DecimalText/compare(_:_:)``
///   puts it after every valid one.
/// - `strata_damaged(entity text, attribute text, key bigint) → integer`: fails the statement
///   with SQLSTATE ``damagedState``, message `entity/key`, detail the attribute (`_entity`: the
///   row's entity name is not one of `entity`'s hierarchy), as `SQLFunctions`' `strata_damaged`.
///
/// Every function but `strata_damaged` is IMMUTABLE and PARALLEL SAFE. `strata_fold` and
/// `strata_standard_key` call nothing of the schema (an expression index may use them whatever
/// the search_path); the others call `strata_fold` by its unqualified name.
///
/// How the texts are computed, per function:
/// - folding follows ``TextFolding/foldBytes(_:mode:into:)`` step by step: ASCII text is
///   lowercased (`lower` under the "C" collation, which knows only A–Z); other text maps each
///   scalar through the fold tables (``FoldPlane``, exported as a JSON object: scalar → its
///   outputs in the three modes and whether each may combine with what precedes it), by one
///   `replace` per distinct non-ASCII scalar; when an output may combine (the fast path of
///   ``TextFolding/foldFast(_:mode:into:)`` gives up), the text is folded by the definition,
///   NFC(T(NFD(s))), with a decomposition, reordering and composition written in PL/pgSQL over
///   the standard library's normalization data (decompositions, combining classes, primary
///   composites; Hangul by arithmetic). PostgreSQL's own `normalize()` is not used: its Unicode
///   version is the server's, not Swift's.
/// - the sort key is the levels of ``TextFolding/collate(_:_:)`` written one after the other
///   (see ``standardKeyFunction``), from the NFC text; each scalar's share of the levels comes
///   from running ``TextFolding/CollationCursor`` over that scalar alone.
enum PostgresFunctions {
    /// Bump when a definition changes (the store re-installs when its stored number differs).
    static let version = 1

    /// The SQLSTATE of `strata_damaged`'s error.
    static let damagedState = "SD001"

    /// CREATE OR REPLACE FUNCTION statements, unqualified names (the store runs them with
    /// search_path set to its schema only; builtins come from pg_catalog).
    static func definitions() -> [String] { statements }

    private static let statements: [String] = {
        let data = PostgresUnicodeData()
        return [
            foldFunction(data),
            testFunction("strata_contains", "strpos(@F, y COLLATE \"C\") > 0"),
            testFunction("strata_has_prefix", "starts_with(@F, y COLLATE \"C\")"),
            testFunction("strata_has_suffix", "right(@F, char_length(y)) = y COLLATE \"C\""),
            compareFunction,
            lscFunction,
            lengthFunction,
            standardKeyFunction(data),
            decimalFunction,
            damagedFunction,
        ]
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
    /// object (`entity/key`) as the message, the attribute as the detail. NULL arguments
    /// read as SQLite reads them ("" and 0).
    private static let damagedFunction = """
        CREATE OR REPLACE FUNCTION strata_damaged(entity text, attribute text, key bigint) RETURNS integer
        LANGUAGE plpgsql VOLATILE AS $strata$
        BEGIN
          RAISE EXCEPTION USING ERRCODE = '\(damagedState)',
            MESSAGE = coalesce(entity, '') || '/' || coalesce(key, 0)::text,
            DETAIL = coalesce(attribute, '');
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
          pass integer;
          \(normalizeDeclarations)
        BEGIN
          IF s IS NULL THEN RETURN NULL; END IF;
          IF m = 0 THEN RETURN s; END IF;
          IF octet_length(s) = char_length(s) THEN
            IF m & 1 = 1 THEN RETURN lower(s); END IF;
            RETURN s;
          END IF;
          -- Fast path: each scalar's output, one replace per distinct non-ASCII scalar (no
          -- output holds a scalar that folds: the tests check it).
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
          -- Slow path: NFD, T per scalar, NFD of that, composition.
          src := s;
          FOR pass IN 1 .. 2 LOOP
            \(nfdBlock(d))
            EXIT WHEN pass = 2;
            q := 0;
            cs := '{}';
            FOR j IN 1 .. n LOOP
              u := a[j];
              q := q + 1;
              IF u < 128 THEN
                IF m & 1 = 1 AND u BETWEEN 65 AND 90 THEN u := u + 32; END IF;
                cs[q] := chr(u);
              ELSE
                c := chr(u);
                cs[q] := coalesce(\(d.foldMap) -> c ->> (m - 1), c);
              END IF;
            END LOOP;
            src := array_to_string(cs, '');
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

    /// `strata_standard_key`: the levels of ``TextFolding/collate(_:_:)`` over the NFC text,
    /// each as text whose UTF-8 byte order is the level's order, joined by a 0 byte (no text
    /// holds one) and followed by the NFC text's own bytes (level 5):
    /// 1. primary: per element a class tag (1 whitespace/controls, 2 punctuation/symbols,
    ///    3 numbers, 4 the rest) and its value (the folded scalar; ASCII punctuation its
    ///    root-collation position + 1); a number: the count of its significant digits (the
    ///    count's length, then its decimal digits) then those digits, so that numbers
    ///    compare by value. A shorter sequence sorts first: the 0 byte ends it.
    /// 2. diacritics: the lead group, then per element 1 and its group's tokens (stroke or
    ///    spelled letter, the marks of the scalar's decomposition, the marks that follow it),
    ///    as scalars (all above 1); trailing 1s (empty groups) dropped, so a group that is a
    ///    prefix of the other sorts first.
    /// 3. case: per element its case entry + 1, trailing 1s dropped.
    /// 4. leading zeros: per number 1 for none, else the count's length + 1 then its digits;
    ///    trailing 1s dropped.
    /// Each scalar's share of levels 1–3 is a fixed text (the cursor's elements for that scalar
    /// alone): a JSON object holds it for every scalar but the plain ones (a letter-class scalar
    /// that folds to itself, with no case, stroke or marks: tag 4 and itself, an empty group,
    /// case 0); removable marks join the group before them; digit runs are read here.
    private static func standardKeyFunction(_ d: PostgresUnicodeData) -> String {
        """
        CREATE OR REPLACE FUNCTION strata_standard_key(x text) RETURNS bytea
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$
        DECLARE
          s text COLLATE "C" := x;
          src text COLLATE "C";
          c text COLLATE "C";
          e jsonb;
          p1 text[] := '{}';
          p2 text[] := '{}';
          p3 text[] := '{}';
          p4 text[] := '{}';
          n1 integer := 0;
          n2 integer := 0;
          n3 integer := 0;
          n4 integer := 0;
          len integer;
          i integer;
          z integer;
          dg integer;
          fw boolean;
          ds text[];
          dropped boolean := false;
          \(normalizeDeclarations)
        BEGIN
          IF s IS NULL THEN RETURN NULL; END IF;
          IF s ~ \(d.maybeNotNFC) THEN
            src := s;
            \(nfdBlock(d))
            \(composeBlock(d))
            s := array_to_string(cs, '');
          ELSE
            cs := string_to_array(s, NULL);
          END IF;
          len := coalesce(cardinality(cs), 0);
          i := 1;
          WHILE i <= len LOOP
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
              n1 := n1 + 1; p1[n1] := E'\\x03' || chr(length(dg::text)) || dg::text || array_to_string(ds, '');
              n2 := n2 + 1; p2[n2] := E'\\x01';
              n3 := n3 + 1; p3[n3] := CASE WHEN fw THEN E'\\x02' ELSE E'\\x01' END;
              n4 := n4 + 1; p4[n4] := CASE WHEN z = 0 THEN E'\\x01' ELSE chr(1 + length(z::text)) || z::text END;
              dropped := false;
              CONTINUE;
            END IF;
            e := \(d.keyMap) -> c;
            IF e IS NULL THEN
              n1 := n1 + 1; p1[n1] := E'\\x04' || c;
              n2 := n2 + 1; p2[n2] := E'\\x01';
              n3 := n3 + 1; p3[n3] := E'\\x01';
              dropped := false;
            ELSIF jsonb_typeof(e) = 'number' THEN
              IF NOT dropped THEN n2 := n2 + 1; p2[n2] := c; END IF;
            ELSIF e ->> 0 = '' THEN
              dropped := true;
            ELSE
              n1 := n1 + 1; p1[n1] := e ->> 0;
              n2 := n2 + 1; p2[n2] := e ->> 1;
              n3 := n3 + 1; p3[n3] := e ->> 2;
              dropped := false;
            END IF;
            i := i + 1;
          END LOOP;
          RETURN convert_to(array_to_string(p1, ''), 'UTF8') || decode('00', 'hex')
            || convert_to(rtrim(array_to_string(p2, ''), E'\\x01'), 'UTF8') || decode('00', 'hex')
            || convert_to(rtrim(array_to_string(p3, ''), E'\\x01'), 'UTF8') || decode('00', 'hex')
            || convert_to(rtrim(array_to_string(p4, ''), E'\\x01'), 'UTF8') || decode('00', 'hex')
            || convert_to(s, 'UTF8');
        END
        $strata$
        """
    }
}

// MARK: - Data

/// The Unicode data the functions carry, as jsonb literals (dollar-quoted: no escaping
/// depends on the server's settings), computed from the standard library and Strata's tables.
struct PostgresUnicodeData {
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
    /// Scalar → [levels 1, 2, 3 of its collation elements] for non-plain scalars; 0 for
    /// the removable marks.
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
        var fold = JSONObject(), decomp = JSONObject(), classes = JSONObject(), comps = JSONObject(), key = JSONObject()
        var firstCombining: UInt32 = 0x110000, firstSecond: UInt32 = 0x110000
        var quickCheck = RangeSet()
        for x in Self.scalars() {
            let v = x.value
            if Self.isTrivial(v) { continue }
            let ccc = x.properties.canonicalCombiningClass.rawValue
            if ccc != 0 {
                classes.add(x, String(ccc))
                firstCombining = min(firstCombining, v)
            }
            if v < 0x80 {
                if let k = Self.keyEntry(x) { key.add(x, k) }
                continue
            }
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
            if info & ScalarData.notNFC == 0, let k = Self.keyEntry(x) { key.add(x, k) }
        }
        foldMap = fold.literal
        decompositions = decomp.literal
        combiningClasses = classes.literal
        compositions = comps.literal
        keyMap = key.literal
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
                    outs.append(JSONObject.quote(String(decoding: bytes, as: UTF8.self)))
                    any = true
                }
            } else if TextFolding.isHighIdentity(v) {
                return nil
            } else {
                // Above plane 1, TextFolding's fast path gives up on what is not identity.
                sensitive |= 1 << (mode - 1); any = true
                let t = ScalarData.transform(x, mode: mode)
                outs.append(t == [x] ? "null" : JSONObject.quote(JSONObject.string(t)))
            }
        }
        return any ? "[" + outs.joined(separator: ",") + ",\(sensitive)]" : nil
    }

    /// The sort key entry of a scalar that can occur in NFC text: 0 for a removable mark,
    /// nil for digits (read as numbers) and plain scalars, else its levels 1–3.
    static func keyEntry(_ x: Unicode.Scalar) -> String? {
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
        if elements.count == 1, let e = elements.first, e.weight == 3 << 24 | v, e.tertiary == 0, e.stroke == 0,
           e.markCount == 0 {
            return nil
        }
        var l1: [Unicode.Scalar] = [], l2: [Unicode.Scalar] = [], l3: [Unicode.Scalar] = []
        for e in elements {
            precondition(e.weight != TextFolding.numberWeight, "a number from a scalar that is not a digit")
            let rank = e.weight >> 24, value = e.weight & 0xFF_FFFF
            l1.append(Unicode.Scalar(rank + 1).unsafelyUnwrapped)
            l1.append(Unicode.Scalar(rank == 1 && value < 0x80 ? value + 1 : value).unsafelyUnwrapped)
            l2.append(Unicode.Scalar(1))
            if e.stroke != 0 { l2.append(Unicode.Scalar(e.stroke).unsafelyUnwrapped) }
            if let marks = e.marks {
                for k in 0..<e.markCount { l2.append(Unicode.Scalar(marks[k]).unsafelyUnwrapped) }
            }
            l3.append(Unicode.Scalar(e.tertiary + 1).unsafelyUnwrapped)
        }
        return "[" + [l1, l2, l3].map { JSONObject.quote(JSONObject.string($0)) }.joined(separator: ",") + "]"
    }
}

/// Scalars added in increasing order, kept as ranges, written as a bracket expression.
struct RangeSet {
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
struct JSONObject {
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
        precondition(!body.contains("$strata_data$"))
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

private extension String {
    /// Every occurrence of `target` replaced (without Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        let t = Array(target.utf8), src = Array(utf8)
        var out: [UInt8] = []
        var i = 0
        while i < src.count {
            if i + t.count <= src.count && Array(src[i..<(i + t.count)]) == t {
                out.append(contentsOf: replacement.utf8)
                i += t.count
            } else {
                out.append(src[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
