import CSQLite
import Glibc

/// SQL functions and collations Strata registers on every connection (most of the functions
/// before its first statement naming one: ``registerNamed(_:)``), so
/// that SQL agrees with ``Evaluation`` (SQLite's own LIKE/lower are ASCII-only).
/// In the functions below, `flags` 1 is case-insensitive, 2 diacritic-insensitive
/// (``StringOptions`` raw values), 0 neither; `x` is raw text, folded per row, and
/// `y` is already folded with the same flags (the compiler folds constants once,
/// other operands with `strata_fold`). A value that is not text is taken as its
/// text; invalid UTF-8 is read as `String(decoding:as:)` repairs it (U+FFFD), as
/// the rest of Strata reads it, so SQL agrees with ``Evaluation`` on it too.
///
/// - `strata_fold(text, flags)`: the folded text (NULL with a NULL).
/// - `strata_contains` and its kind also serve string tests without options
///   (flags 0): a byte search, faster than instr() and exact on invalid UTF-8.
/// - `strata_contains(x, y, flags)`, `strata_has_prefix(x, y, flags)`,
///   `strata_has_suffix(x, y, flags)`: 1 or 0 (0 with a NULL; an empty `y` is
///   contained, a prefix and a suffix).
/// - `strata_compare(x, y, code)`: the comparison `code >> 2` (``ComparisonOperator/functionCode``)
///   of folded `x` and `y` with flags `code & 3`, 1 or 0, NULL as ``Evaluation``
///   treats nil (`==` is 1 for two NULLs, ordering with a NULL is 0).
/// - `strata_lsc(x, y)`: localizedStandardContains, `y` folded with flags 3; 1 or 0
///   (0 with a NULL or an empty `y`).
/// - `strata_length(text)`: the number of Unicode scalars (NULL with a NULL).
/// - `strata_iarith(a, b, code)`, `strata_farith(a, b, code)`: `a op b` in integers or doubles
///   (``Evaluation/arithmetic(_:_:_:integer:)``), NULL with a NULL and where Swift would trap or
///   give no finite number.
/// - aggregates `strata_isum(x)`, `strata_fsum(x)`: the exact sum of the non-NULL `x`, integers or
///   reals (an integer converts), as ``ExactSum`` computes it: 0 without rows, NULL where it fails
///   (an integer sum outside Int64, a real sum that is not finite) or where an `x` is of another
///   class. `strata_iavg(x)`, `strata_favg(x)`: their average, a real, NULL without non-NULL `x`
///   and where the sum is NULL (``QueryDialect/exactAggregate(_:integer:_:)``).
/// - aggregate `strata_dsum(x)`: the exact sum of decimal text `x` (``DecimalSum``), as decimal
///   text: "0" without rows, NULL where it fails (a value that is not decimal text, or out of
///   range); `strata_dmean(sum, n)`: ``DecimalSum/mean(over:)`` of a sum's text over `n` values
///   (``QueryDialect/decimalSum(_:)``, ``QueryDialect/decimalMean(sum:count:)``).
/// - `strata_damaged(entity, attribute, key)`: fails the statement with `.corrupt`
///   naming the object `entity/key` and its `attribute` (`_entity`: the row's
///   entity name). The compilers' guards call it for a stored value of the wrong
///   storage class (``QueryDialect/storedAs(_:_:entity:attribute:key:)``); the
///   error reaches Strata as ``damagedCode``, and ``damage(_:)`` turns it into
///   the error with entity and attribute.
/// - `strata_entities_known(k)`, `strata_entities_checked(k, v)`: whether this connection found
///   the rows of hierarchy `k` clean on the file as it is now, and noting that it did when `v` (an
///   entity search's result) is NULL; `v` is returned (``SQLiteDialect/unknownEntity(table:_:root:)``).
/// - full-text search (``TextSearch``; `SQLFunctions+Search.swift`): `strata_matches(x, q)`,
///   `strata_relevance(x, q)`, `strata_index_text(x)`, `strata_fts_query(q)`.
/// - collation `strata_standard`: localizedStandard order (Finder order).
/// - collation `strata_decimal`: exact numeric order of decimal text.
///
/// The folding functions fold `x` into a buffer of their own per connection
/// (SQLite runs a connection's functions one at a time): ASCII text in one
/// lowercasing pass, other text with ``TextFolding/foldFast(_:mode:into:)``,
/// no allocation per row once the buffer has grown. They never return text
/// but `strata_fold`, whose result SQLite copies (SQLITE_TRANSIENT): two
/// folded operands of one expression can be alive at once.
enum SQLFunctions {
    typealias Function = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void
    /// A collation: two texts as (byte count, bytes); negative, zero or positive.
    typealias CollationFunction = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32

    /// The flags of every function but `strata_damaged`: same result for the same arguments, no side effects.
    static let pureFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS

    /// Registers, on a new connection, what its reads name from the first one on: `strata_damaged`,
    /// the entity checks and the two collations (an index may use a collation its statements do not
    /// name). The other functions wait for the first statement naming one (``registerNamed(_:)``):
    /// registering all of them costs a fresh process's open about as much as its first query's
    /// statement, and most connections name none of them.
    /// Each is a C function of its own below; none captures anything, so a call per row
    /// allocates nothing.
    static func register(_ db: OpaquePointer) {
        // Not deterministic (it fails), and never callable from a schema object of the file.
        sqlite3_create_function_v2(db, "strata_damaged", 3, SQLITE_UTF8 | SQLITE_DIRECTONLY, nil, damagedFunction, nil, nil, nil)
        registerEntityChecks(db)
        sqlite3_create_collation_v2(db, "strata_standard", SQLITE_UTF8, nil, standardCollation, nil)
        sqlite3_create_collation_v2(db, "strata_decimal", SQLITE_UTF8, nil, decimalCollation, nil)
    }

    /// Registers every function of the type's comment that ``register(_:)`` does not, once per connection.
    static func registerNamed(_ db: OpaquePointer) {
        withScratch(db, "strata_fold", 2, foldFunction)
        withScratch(db, "strata_contains", 3, containsFunction)
        withScratch(db, "strata_has_prefix", 3, hasPrefixFunction)
        withScratch(db, "strata_has_suffix", 3, hasSuffixFunction)
        withScratch(db, "strata_compare", 3, compareFunction)
        withScratch(db, "strata_lsc", 2, localizedStandardContainsFunction)
        sqlite3_create_function_v2(db, "strata_length", 1, pureFlags, nil, lengthFunction, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_iarith", 3, pureFlags, nil, integerArithmeticFunction, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_farith", 3, pureFlags, nil, doubleArithmeticFunction, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_isum", 1, pureFlags, nil, nil, integerStep, integerSumFinal, nil)
        sqlite3_create_function_v2(db, "strata_fsum", 1, pureFlags, nil, nil, doubleStep, doubleSumFinal, nil)
        sqlite3_create_function_v2(db, "strata_iavg", 1, pureFlags, nil, nil, integerStep, integerAverageFinal, nil)
        sqlite3_create_function_v2(db, "strata_favg", 1, pureFlags, nil, nil, doubleStep, doubleAverageFinal, nil)
        sqlite3_create_function_v2(db, "strata_dsum", 1, pureFlags, nil, nil, decimalStep, decimalSumFinal, nil)
        sqlite3_create_function_v2(db, "strata_dmean", 2, pureFlags, nil, decimalMeanFunction, nil, nil, nil)
        registerSearch(db)
    }

    /// Whether `sql` may name a function ``registerNamed(_:)`` registers: a `strata_` name (in any
    /// case, anywhere in the text, quoted or not) other than what ``register(_:)`` registers and the
    /// two tables every open reads. A name this does not know counts: a statement gets every
    /// function too many, never one too few (SQLite resolves a statement's functions when it
    /// prepares it, and a store's schema objects name none: ``StoredSchemaCheck``).
    static func mayNameLateFunction(_ sql: UnsafeBufferPointer<UInt8>) -> Bool {
        let prefix: StaticString = "strata_"
        let p = prefix.utf8Start, m = prefix.utf8CodeUnitCount
        let n = sql.count
        var i = 0
        while i + m <= n {
            var j = 0
            while j < m && sql[i + j].asciiLowercased == p[j] { j += 1 }
            guard j == m else { i += 1; continue }
            var end = i + m
            while end < n, isNameByte(sql[end]) { end += 1 }
            if !isKnownAtOpen(UnsafeBufferPointer(rebasing: sql[(i + m)..<end])) { return true }
            i = end
        }
        return false
    }

    /// The names after `strata_` that ``mayNameLateFunction(_:)`` passes over.
    private static let namesAtOpen: [StaticString] = ["damaged", "entities_known", "entities_checked", "standard", "decimal",
                                                      "metadata", "sequence"]

    private static func isKnownAtOpen(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        for known in namesAtOpen where known.utf8CodeUnitCount == name.count {
            let k = known.utf8Start
            var j = 0
            while j < name.count && name[j].asciiLowercased == k[j] { j += 1 }
            if j == name.count { return true }
        }
        return false
    }

    /// A byte of an unquoted SQL name: ASCII letter, digit, '_', '$' or any byte of a non-ASCII character.
    @inline(__always) private static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x24 || c >= 0x80
    }

    /// Registers a function with a scratch buffer of its own, freed with the connection.
    private static func withScratch(_ db: OpaquePointer, _ name: String, _ argc: Int32, _ f: Function) {
        let scratch = UnsafeMutablePointer<TextFolding.Scratch>.allocate(capacity: 1)
        scratch.initialize(to: TextFolding.Scratch())
        sqlite3_create_function_v2(db, name, argc, pureFlags, scratch, f, nil, nil, { p in
            guard let s = p?.assumingMemoryBound(to: TextFolding.Scratch.self) else { return }
            s.pointee.release()
            s.deinitialize(count: 1)
            s.deallocate()
        })
    }

    /// `strata_fold(text, flags)`: the folded text, NULL with a NULL.
    private static let foldFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
        guard let x = SQLFunctions.text(a0) else { sqlite3_result_null(ctx); return }
        let mode = Int(sqlite3_value_int(a1) & 3)
        SQLFunctions.scratch(ctx).pointee.withFolded(x, mode: mode) { SQLFunctions.resultText(ctx, $0) }
    }

    /// `strata_contains(x, y, flags)`: whether folded `x` contains `y`.
    private static let containsFunction: Function = { ctx, argc, argv in
        SQLFunctions.test(ctx, argc, argv) { h, n in TextFolding.contains(h, n) }
    }

    /// `strata_has_prefix(x, y, flags)`: whether folded `x` starts with `y`.
    private static let hasPrefixFunction: Function = { ctx, argc, argv in
        SQLFunctions.test(ctx, argc, argv) { h, n in TextFolding.hasPrefix(h, n) }
    }

    /// `strata_has_suffix(x, y, flags)`: whether folded `x` ends with `y`.
    private static let hasSuffixFunction: Function = { ctx, argc, argv in
        SQLFunctions.test(ctx, argc, argv) { h, n in TextFolding.hasSuffix(h, n) }
    }

    /// `strata_compare(x, y, code)`: the comparison `code >> 2` of folded `x` and `y`, NULL as ``Evaluation`` treats nil.
    private static let compareFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 3, let a0 = argv[0], let a1 = argv[1], let a2 = argv[2] else { return }
        let code = Int(sqlite3_value_int(a2))
        let op = code >> 2
        guard let x = SQLFunctions.text(a0), let y = SQLFunctions.text(a1) else {
            let bothNull = sqlite3_value_type(a0) == SQLITE_NULL && sqlite3_value_type(a1) == SQLITE_NULL
            sqlite3_result_int(ctx, op == 0 ? (bothNull ? 1 : 0) : op == 1 ? (bothNull ? 0 : 1) : 0)
            return
        }
        let c = SQLFunctions.scratch(ctx).pointee.withFolded(x, mode: code & 3) { TextFolding.byteCompare($0, y) }
        let r: Bool
        switch op {
        case 0: r = c == 0
        case 1: r = c != 0
        case 2: r = c < 0
        case 3: r = c <= 0
        case 4: r = c > 0
        default: r = c >= 0
        }
        sqlite3_result_int(ctx, r ? 1 : 0)
    }

    /// `strata_lsc(x, y)`: localizedStandardContains, 0 with a NULL or an empty `y`.
    private static let localizedStandardContainsFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
        guard let x = SQLFunctions.text(a0), let y = SQLFunctions.text(a1), y.count > 0 else { sqlite3_result_int(ctx, 0); return }
        let r = SQLFunctions.scratch(ctx).pointee.withFolded(x, mode: 3) { TextFolding.contains($0, y) }
        sqlite3_result_int(ctx, r ? 1 : 0)
    }

    /// `strata_length(text)`: the number of Unicode scalars, NULL with a NULL.
    /// `strata_iarith(a, b, code)`: ``ArithmeticOperator/apply(_:_:)-(Int64,Int64)`` of two integers, operator
    /// ``ArithmeticOperator/functionCode`` `code`; NULL with a NULL or another class, and where Swift traps.
    private static let integerArithmeticFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 3, let a0 = argv[0], let a1 = argv[1], let a2 = argv[2] else { return }
        guard sqlite3_value_type(a0) == SQLITE_INTEGER, sqlite3_value_type(a1) == SQLITE_INTEGER,
              let op = arithmeticOperator(sqlite3_value_int64(a2)),
              let r = op.apply(sqlite3_value_int64(a0), sqlite3_value_int64(a1)) else {
            sqlite3_result_null(ctx)
            return
        }
        sqlite3_result_int64(ctx, r)
    }

    /// `strata_farith(a, b, code)`: ``ArithmeticOperator/apply(_:_:)-(Double,Double)`` of two numbers (an integer
    /// converts); NULL with a NULL or another class, and where the result is not a finite number.
    private static let doubleArithmeticFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 3, let a0 = argv[0], let a1 = argv[1], let a2 = argv[2] else { return }
        func number(_ v: OpaquePointer) -> Double? {
            switch sqlite3_value_type(v) {
            case SQLITE_INTEGER: return Double(sqlite3_value_int64(v))
            case SQLITE_FLOAT: return sqlite3_value_double(v)
            default: return nil
            }
        }
        guard let a = number(a0), let b = number(a1), let op = arithmeticOperator(sqlite3_value_int64(a2)),
              let r = op.apply(a, b) else {
            sqlite3_result_null(ctx)
            return
        }
        sqlite3_result_double(ctx, r)
    }

    typealias FinalFunction = @convention(c) (OpaquePointer?) -> Void

    /// The state of an aggregate's rows so far (an ``ExactSum``, a ``DecimalSum``), made at its
    /// first row: the aggregate context holds a pointer to it, which the final function frees
    /// (``takeState(_:)``: SQLite calls the final function of every aggregate it started, also
    /// when a statement stops early). Nil when SQLite has no memory.
    private static func state<T>(_ ctx: OpaquePointer, _ initial: @autoclosure () -> T) -> UnsafeMutablePointer<T>? {
        guard let raw = sqlite3_aggregate_context(ctx, Int32(MemoryLayout<UnsafeMutablePointer<T>?>.size)) else { return nil }
        let slot = raw.assumingMemoryBound(to: UnsafeMutablePointer<T>?.self)
        if slot.pointee == nil {
            let s = UnsafeMutablePointer<T>.allocate(capacity: 1)
            s.initialize(to: initial())
            slot.pointee = s
        }
        return slot.pointee
    }

    /// The state ``state(_:_:)`` made (nil when no row was added), freed.
    private static func takeState<T>(_ ctx: OpaquePointer, _ type: T.Type) -> T? {
        let slot = sqlite3_aggregate_context(ctx, 0)?.assumingMemoryBound(to: UnsafeMutablePointer<T>?.self)
        guard let s = slot?.pointee else { return nil }
        let value = s.move()
        s.deallocate()
        slot?.pointee = nil
        return value
    }

    /// Adds a row's value with ``ExactSum/add(_:integer:)`` (``Evaluation/exactAggregate(_:_:integer:)``).
    private static func step(_ ctx: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<OpaquePointer?>?, integer: Bool) {
        guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
        let type = sqlite3_value_type(a0)
        if type == SQLITE_NULL { return }
        guard let s = state(ctx, ExactSum()) else { sqlite3_result_error_nomem(ctx); return }
        switch type {
        case SQLITE_INTEGER: s.pointee.add(.int(sqlite3_value_int64(a0)), integer: integer)
        case SQLITE_FLOAT: s.pointee.add(.double(sqlite3_value_double(a0)), integer: integer)
        default: s.pointee.addInvalid()
        }
    }

    /// The result of `f` (``AggregateFunction/result(of:integer:)``; of no rows when none was
    /// added), its state freed.
    private static func finish(_ ctx: OpaquePointer?, _ f: AggregateFunction, integer: Bool) {
        guard let ctx else { return }
        let value = f.result(of: takeState(ctx, ExactSum.self) ?? ExactSum(), integer: integer)
        switch value {
        case .int(let i): sqlite3_result_int64(ctx, i)
        case .double(let d): sqlite3_result_double(ctx, d)
        default: sqlite3_result_null(ctx)
        }
    }

    /// Adds a row's decimal text to the ``DecimalSum`` (NULL adds nothing; anything else fails the sum).
    private static let decimalStep: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
        let type = sqlite3_value_type(a0)
        if type == SQLITE_NULL { return }
        guard let s = SQLFunctions.state(ctx, DecimalSum()) else { sqlite3_result_error_nomem(ctx); return }
        guard type == SQLITE_TEXT, let p = sqlite3_value_text(a0) else { s.pointee.add(UnsafeBufferPointer(start: nil, count: 0)); return }
        s.pointee.add(UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(a0))))
    }

    /// `strata_dsum`: the sum as decimal text ("0" without rows), NULL where it failed.
    private static let decimalSumFinal: FinalFunction = { ctx in
        guard let ctx else { return }
        SQLFunctions.resultText(ctx, (SQLFunctions.takeState(ctx, DecimalSum.self) ?? DecimalSum()).total)
    }

    /// `strata_dmean(sum, count)`: ``DecimalSum/mean`` of a sum's decimal text over `count` values.
    private static let decimalMeanFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
        guard sqlite3_value_type(a0) == SQLITE_TEXT, sqlite3_value_type(a1) == SQLITE_INTEGER, let p = sqlite3_value_text(a0) else {
            sqlite3_result_null(ctx)
            return
        }
        var s = DecimalSum()
        s.add(UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(a0))))
        SQLFunctions.resultText(ctx, s.mean(over: sqlite3_value_int64(a1)))
    }

    private static func resultText(_ ctx: OpaquePointer, _ text: String?) {
        guard var text else { sqlite3_result_null(ctx); return }
        text.withUTF8 { b in
            sqlite3_result_text(ctx, UnsafeRawPointer(b.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(b.count), SQLITE_TRANSIENT_PTR)
        }
    }

    private static let integerStep: Function = { ctx, argc, argv in SQLFunctions.step(ctx, argc, argv, integer: true) }
    private static let doubleStep: Function = { ctx, argc, argv in SQLFunctions.step(ctx, argc, argv, integer: false) }
    private static let integerSumFinal: FinalFunction = { ctx in SQLFunctions.finish(ctx, .sum, integer: true) }
    private static let doubleSumFinal: FinalFunction = { ctx in SQLFunctions.finish(ctx, .sum, integer: false) }
    private static let integerAverageFinal: FinalFunction = { ctx in SQLFunctions.finish(ctx, .avg, integer: true) }
    private static let doubleAverageFinal: FinalFunction = { ctx in SQLFunctions.finish(ctx, .avg, integer: false) }

    private static func arithmeticOperator(_ code: Int64) -> ArithmeticOperator? {
        ArithmeticOperator.allCases.first { Int64($0.functionCode) == code }
    }

    private static let lengthFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
        guard sqlite3_value_type(a0) != SQLITE_NULL, let p = sqlite3_value_text(a0) else { sqlite3_result_null(ctx); return }
        // Unicode scalars: bytes that do not continue a UTF-8 sequence (SQLite's length() stops at NUL).
        var n: Int64 = 0
        for b in UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(a0))) where b & 0xC0 != 0x80 { n += 1 }
        sqlite3_result_int64(ctx, n)
    }

    /// `strata_damaged(entity, attribute, key)`: notes the ``Damage`` and fails the statement with ``damagedCode``.
    private static let damagedFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 3, let a0 = argv[0], let a1 = argv[1], let a2 = argv[2] else { return }
        let note = Damage(entity: SQLFunctions.string(a0) ?? "", attribute: SQLFunctions.string(a1) ?? "",
                          key: sqlite3_value_int64(a2))
        Damage.current = note
        sqlite3_result_error(ctx, note.error.message, -1)
        sqlite3_result_error_code(ctx, SQLFunctions.damagedCode)
    }

    /// Collation `strata_standard`: localizedStandard order (Finder order).
    private static let standardCollation: CollationFunction = { _, n1, p1, n2, p2 in
        let a = UnsafeBufferPointer(start: p1?.assumingMemoryBound(to: UInt8.self), count: Int(n1))
        let b = UnsafeBufferPointer(start: p2?.assumingMemoryBound(to: UInt8.self), count: Int(n2))
        return Int32(TextFolding.standardCompare(utf8: a, b))
    }

    /// Collation `strata_decimal`: exact numeric order of decimal text.
    private static let decimalCollation: CollationFunction = { _, n1, p1, n2, p2 in
        let a = String(decoding: UnsafeBufferPointer(start: p1?.assumingMemoryBound(to: UInt8.self), count: Int(n1)), as: UTF8.self)
        let b = String(decoding: UnsafeBufferPointer(start: p2?.assumingMemoryBound(to: UInt8.self), count: Int(n2)), as: UTF8.self)
        return Int32(DecimalText.compare(a, b))
    }

    /// The extended result code of `strata_damaged`: SQLITE_CORRUPT with a subcode SQLite does not use.
    static let damagedCode: Int32 = SQLITE_CORRUPT | (0x5D << 8)

    /// What `strata_damaged` reported, kept for the thread that runs the statement (SQLite calls
    /// a function on the thread stepping it), so that the error thrown can name the entity and attribute.
    final class Damage {
        let entity: String
        let attribute: String
        let key: Int64

        init(entity: String, attribute: String, key: Int64) {
            self.entity = entity
            self.attribute = attribute
            self.key = key
        }

        var error: StrataError {
            let problem = attribute == "_entity" ? "the row's entity name is not an entity of \(entity)'s hierarchy"
                : "'\(attribute)' holds a value of another type than its attribute's"
            return StrataError(.corrupt, "\(entity)/\(key): \(problem) (the store file is damaged)", entity: entity,
                               attribute: attribute == "_entity" ? nil : attribute)
        }

        private static let slot: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key) { p in
                if let p { Unmanaged<Damage>.fromOpaque(p).release() }
            }
            return key
        }()

        /// The last report on this thread (setting it releases the previous one).
        static var current: Damage? {
            get { pthread_getspecific(slot).map { Unmanaged<Damage>.fromOpaque($0).takeUnretainedValue() } }
            set {
                if let old = pthread_getspecific(slot) { Unmanaged<Damage>.fromOpaque(old).release() }
                pthread_setspecific(slot, newValue.map { Unmanaged.passRetained($0).toOpaque() })
            }
        }
    }

    /// `error` as the `.corrupt` error naming entity, attribute and object when `strata_damaged`
    /// failed the statement; any other error as it is.
    static func damage(_ error: Error) -> Error {
        guard let e = error as? StrataError, e.sqliteCode == damagedCode, let note = Damage.current else { return error }
        Damage.current = nil
        return note.error
    }

    /// The UTF-8 text of a value (its bytes: NUL characters included), nil for NULL.
    @inline(__always) static func text(_ v: OpaquePointer) -> UnsafeBufferPointer<UInt8>? {
        if sqlite3_value_type(v) == SQLITE_NULL { return nil }
        guard let p = sqlite3_value_text(v) else { return nil }   // out of memory
        return UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(v)))
    }

    @inline(__always) static func scratch(_ ctx: OpaquePointer) -> UnsafeMutablePointer<TextFolding.Scratch> {
        sqlite3_user_data(ctx).unsafelyUnwrapped.assumingMemoryBound(to: TextFolding.Scratch.self)
    }

    static func resultText(_ ctx: OpaquePointer, _ b: UnsafeBufferPointer<UInt8>) {
        if let base = b.baseAddress {
            sqlite3_result_text(ctx, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(b.count), SQLITE_TRANSIENT_PTR)
        } else {
            sqlite3_result_text(ctx, "", 0, SQLITE_TRANSIENT_PTR)
        }
    }

    /// `strata_contains` and its kind: `test(folded x, y)`, 0 with a NULL.
    @inline(__always) static func test(_ ctx: OpaquePointer?, _ argc: Int32, _ argv: UnsafeMutablePointer<OpaquePointer?>?,
                                       _ test: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        guard let ctx, let argv, argc == 3, let a0 = argv[0], let a1 = argv[1], let a2 = argv[2] else { return }
        guard let x = text(a0), let y = text(a1) else { sqlite3_result_int(ctx, 0); return }
        let mode = Int(sqlite3_value_int(a2) & 3)
        let r = scratch(ctx).pointee.withFolded(x, mode: mode) { test($0, y) }
        sqlite3_result_int(ctx, r ? 1 : 0)
    }
}

// MARK: Entity searches, once per version of the file

extension SQLFunctions {
    /// A connection's hierarchies whose rows an entity search found clean, each with the file's
    /// data version then. SQLite changes the data version (`SQLITE_FCNTL_DATA_VERSION`) with every
    /// commit to the file, this connection's or another's, in this process or another: a version
    /// that has not changed is the same rows. Reached only by the connection's two functions,
    /// which SQLite runs one at a time.
    final class EntityChecks {
        /// The data version of each (an `Int`: a dictionary type every process already uses).
        var clean: [String: Int] = [:]
    }

    static func registerEntityChecks(_ db: OpaquePointer) {
        let checks = EntityChecks()
        // Each function holds the table once, released with the function (when the connection closes).
        let release: @convention(c) (UnsafeMutableRawPointer?) -> Void = { p in
            if let p { Unmanaged<EntityChecks>.fromOpaque(p).release() }
        }
        // Not deterministic (their answer changes with the file), and never callable from a schema object.
        let flags = SQLITE_UTF8 | SQLITE_DIRECTONLY
        sqlite3_create_function_v2(db, "strata_entities_known", 1, flags, Unmanaged.passRetained(checks).toOpaque(),
                                   entitiesKnownFunction, nil, nil, release)
        sqlite3_create_function_v2(db, "strata_entities_checked", 2, flags, Unmanaged.passRetained(checks).toOpaque(),
                                   entitiesCheckedFunction, nil, nil, release)
    }

    /// The data version of the connection's main database, nil when SQLite cannot tell.
    private static func dataVersion(_ ctx: OpaquePointer) -> UInt32? {
        guard let db = sqlite3_context_db_handle(ctx) else { return nil }
        var version: UInt32 = 0
        return sqlite3_file_control(db, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK ? version : nil
    }

    private static func entityChecks(_ ctx: OpaquePointer) -> EntityChecks? {
        sqlite3_user_data(ctx).map { Unmanaged<EntityChecks>.fromOpaque($0).takeUnretainedValue() }
    }

    /// A text argument as a string (nil for NULL).
    private static func string(_ v: OpaquePointer) -> String? {
        SQLFunctions.text(v).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `strata_entities_known(k)`: 1 when the rows of `k` were found clean at the file's present version.
    private static let entitiesKnownFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
        guard let checks = SQLFunctions.entityChecks(ctx), let k = SQLFunctions.string(a0), let seen = checks.clean[k],
              let now = SQLFunctions.dataVersion(ctx), seen == Int(now) else {
            sqlite3_result_int(ctx, 0)
            return
        }
        sqlite3_result_int(ctx, 1)
    }

    /// `strata_entities_checked(k, v)`: `v`, noting `k` clean at the file's present version when `v` is
    /// NULL and the connection writes nothing: rows a context's pending changes wrote or deleted
    /// inside its read (rolled back after it) are not the file's.
    private static let entitiesCheckedFunction: Function = { ctx, argc, argv in
        guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
        if sqlite3_value_type(a1) == SQLITE_NULL, let db = sqlite3_context_db_handle(ctx), sqlite3_txn_state(db, "main") != SQLITE_TXN_WRITE,
           let checks = SQLFunctions.entityChecks(ctx), let k = SQLFunctions.string(a0) {
            checks.clean[k] = SQLFunctions.dataVersion(ctx).map { Int($0) }
        }
        sqlite3_result_value(ctx, a1)
    }
}
