/// The value semantics shared by the predicate evaluator, constant folding
/// and the SQL compiler's helper functions — one definition, so that SQL and
/// in-memory evaluation agree:
///
/// - `==` / `!=` treat nil as a value (nil == nil); ordering comparisons and
///   string tests with a nil operand are false.
/// - Strings compare by Unicode scalar values (UTF-8 byte order), after
///   folding when options `c` / `d` are given.
/// - Decimals compare exactly; ints and doubles compare numerically, exactly
///   (an int is not rounded to a double first).
/// - `contains`, `hasPrefix`, `hasSuffix` with an empty needle are true;
///   `localizedStandardContains` with an empty needle is false (as Foundation).
/// - `@sum` and `@avg` add exactly, whatever the order of the values (``ExactSum``):
///   an int sum outside Int64 and a double sum that is not finite fail (NULL).
/// - The `localizedStandard` sort order is ``TextFolding/standardCompare(_:_:)``
///   alone: the `strata_standard` collation of SQL sorts calls it, and the
///   differential tests order with it (Latin letters without a decomposition
///   sort as spelled: æ as ae, þ as th, ð as d, ı as i …).
enum Evaluation {
    static func compare(_ op: ComparisonOperator, _ x: SQLValue, _ y: SQLValue, domain: ValueType, options: StringOptions) -> Bool {
        if x.isNull || y.isNull {
            switch op {
            case .equal: return x.isNull && y.isNull
            case .notEqual: return !(x.isNull && y.isNull)
            default: return false
            }
        }
        guard let c = order(x, y, domain: domain, options: options) else { return op == .notEqual }
        switch op {
        case .equal: return c == 0
        case .notEqual: return c != 0
        case .less: return c < 0
        case .lessOrEqual: return c <= 0
        case .greater: return c > 0
        case .greaterOrEqual: return c >= 0
        }
    }

    /// -1, 0, 1 for two non-null values of a domain; nil when incomparable.
    static func order(_ x: SQLValue, _ y: SQLValue, domain: ValueType, options: StringOptions) -> Int? {
        if domain == .attribute(.decimal), case .text(let a) = x, case .text(let b) = y {
            return DecimalText.compare(a, b)
        }
        switch (x, y) {
        case let (.int(a), .int(b)): return a < b ? -1 : a > b ? 1 : 0
        case let (.int(a), .double(b)): return exact(a, b)
        case let (.double(a), .int(b)): return -exact(b, a)
        case let (.double(a), .double(b)): return sign(a, b)
        case let (.text(a), .text(b)):
            if options.isEmpty { return bytes(a, b) }
            return bytes(fold(a, options), fold(b, options))
        case let (.blob(a), .blob(b)):
            return a.lexicographicallyPrecedes(b) ? -1 : a == b ? 0 : 1
        default: return nil
        }
    }

    private static func sign(_ a: Double, _ b: Double) -> Int { a < b ? -1 : a > b ? 1 : 0 }

    /// An integer against a double, exactly (as SQLite compares them):
    /// 9007199254740993 > 9007199254740992.0, though both convert to the same double.
    static func exact(_ i: Int64, _ d: Double) -> Int {
        if d.isNaN { return 1 }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let floor = d.rounded(.down)
        let f = Int64(floor)
        if i != f { return i < f ? -1 : 1 }
        return floor < d ? -1 : 0
    }

    static func bytes(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                let n = min(pa.count, pb.count)
                for i in 0..<n where pa[i] != pb[i] { return pa[i] < pb[i] ? -1 : 1 }
                return pa.count < pb.count ? -1 : pa.count > pb.count ? 1 : 0
            }
        }
    }

    static func fold(_ s: String, _ options: StringOptions) -> String {
        TextFolding.fold(s, caseInsensitive: options.contains(.caseInsensitive),
                         diacriticInsensitive: options.contains(.diacriticInsensitive))
    }

    static func stringTest(_ op: StringOperator, _ x: SQLValue, _ y: SQLValue, options: StringOptions) -> Bool {
        guard case .text(var a) = x, case .text(var b) = y else { return false }
        if op == .localizedStandardContains { return TextFolding.localizedStandardContains(a, b) }
        if op == .matches { return TextSearch.matches(a, b) }
        if !options.isEmpty { a = fold(a, options); b = fold(b, options) }
        let ua = Array(a.utf8), ub = Array(b.utf8)
        switch op {
        case .contains:
            if ub.isEmpty { return true }
            if ub.count > ua.count { return false }
            for i in 0...(ua.count - ub.count) where ua[i] == ub[0] && Array(ua[i..<(i + ub.count)]) == ub { return true }
            return false
        case .hasPrefix: return ua.starts(with: ub)
        case .hasSuffix: return ua.count >= ub.count && Array(ua[(ua.count - ub.count)...]) == ub
        case .localizedStandardContains, .matches: return false
        }
    }

    /// `x op y` as Swift computes it, or NULL where Swift would trap or give no finite number
    /// (an int overflow, a division or remainder by zero, a result that is not finite) and
    /// where an operand is nil. Ints stay ints (division truncates); with `integer` false
    /// both sides are doubles (an int converts). The evaluator and constant folding compute with
    /// ``ArithmeticOperator/apply(_:_:)-(Int64,Int64)``, as SQLite's `strata_iarith`/`strata_farith` do.
    static func arithmetic(_ op: ArithmeticOperator, _ x: SQLValue, _ y: SQLValue, integer: Bool) -> SQLValue {
        if integer {
            guard case .int(let a) = x, case .int(let b) = y else { return .null }
            return op.apply(a, b).map { .int($0) } ?? .null
        }
        guard let a = x.numberValue, let b = y.numberValue else { return .null }
        return op.apply(a, b).map { .double($0) } ?? .null
    }

    /// `@sum` or `@avg` of `values` (nils skipped) as ``ExactSum`` computes it, in ints (`integer`)
    /// or doubles (an int converts): a sum is 0 without values and NULL where it fails (outside
    /// Int64, not finite); an average is a double, NULL without values and where a sum of doubles
    /// fails. A value of another kind (a damaged store's) makes every result NULL, as SQLite's
    /// `strata_isum` and its kind compute it.
    static func exactAggregate(_ f: AggregateFunction, _ values: [SQLValue], integer: Bool) -> SQLValue {
        var s = ExactSum()
        for x in values { s.add(x, integer: integer) }
        return f.result(of: s, integer: integer)
    }
}

extension SQLValue {
    /// An int or a double as a double (nil for anything else).
    var numberValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}
