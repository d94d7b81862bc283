// The operators of predicates, shared with the dialect that spells them
// (``QueryDialect``) and with history filters.

/// Comparison operators.
public enum ComparisonOperator: String, CaseIterable, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

    /// The comparison's number in Strata's SQL functions (`strata_compare`'s code `>> 2`).
    var functionCode: Int {
        switch self {
        case .equal: return 0
        case .notEqual: return 1
        case .less: return 2
        case .lessOrEqual: return 3
        case .greater: return 4
        case .greaterOrEqual: return 5
        }
    }
}

/// Arithmetic on numbers and dates.
public enum ArithmeticOperator: String, CaseIterable, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"

    /// The operation's number in Strata's SQL functions (`strata_iarith`, `strata_farith`).
    var functionCode: Int {
        switch self {
        case .add: return 0
        case .subtract: return 1
        case .multiply: return 2
        case .divide: return 3
        case .remainder: return 4
        }
    }

    /// `a op b` as Swift computes it, nil where Swift traps (an overflow, the least int divided
    /// by -1, a division or remainder by zero). One definition for every store and the evaluator.
    func apply(_ a: Int64, _ b: Int64) -> Int64? {
        let (r, overflow): (Int64, Bool)
        switch self {
        case .add: (r, overflow) = a.addingReportingOverflow(b)
        case .subtract: (r, overflow) = a.subtractingReportingOverflow(b)
        case .multiply: (r, overflow) = a.multipliedReportingOverflow(by: b)
        case .divide:
            guard b != 0 else { return nil }
            (r, overflow) = a.dividedReportingOverflow(by: b)
        case .remainder:
            guard b != 0 else { return nil }
            (r, overflow) = a.remainderReportingOverflow(dividingBy: b)
        }
        return overflow ? nil : r
    }

    /// `a op b` in IEEE 754 doubles, nil where the result is not finite (a division by zero
    /// included) and for `%`, which takes ints only.
    func apply(_ a: Double, _ b: Double) -> Double? {
        let r: Double
        switch self {
        case .add: r = a + b
        case .subtract: r = a - b
        case .multiply: r = a * b
        case .divide:
            guard b != 0 else { return nil }
            r = a / b
        case .remainder: return nil
        }
        return r.isFinite ? r : nil
    }
}

/// What a value of related objects aggregates to (`$0.bucketList.map { $0.priority }.max()`;
/// JSON `{"@max": [source, value]}`, the raw value after the `@`).
public enum AggregateFunction: String, CaseIterable, Sendable {
    /// The largest (smallest) value: ints, doubles, dates and strings, compared as everywhere.
    case max, min
    /// The exact sum of ints or doubles (``ExactSum``): `map { }.reduce(0, +)` in text.
    case sum
    /// The average of ints or doubles (``ExactSum``), a double: `map { }.average()` in text.
    case avg

    /// Whether the function adds the values (``ExactSum``) rather than picks one of them.
    var isExact: Bool { self == .sum || self == .avg }

    /// The result of `@sum` or `@avg` over the values added to `s`, ints (`integer`) or doubles:
    /// a sum is the value's type, an average a double; NULL where ``ExactSum`` gives nil. One
    /// definition for the evaluator and SQLite's aggregates (NULL for `max` and `min`).
    func result(of s: ExactSum, integer: Bool) -> SQLValue {
        let r: SQLValue?
        switch (self, integer) {
        case (.sum, true): r = s.intSum.map { .int($0) }
        case (.sum, false): r = s.doubleSum.map { .double($0) }
        case (.avg, true): r = s.intAverage.map { .double($0) }
        case (.avg, false): r = s.doubleAverage.map { .double($0) }
        case (.max, _), (.min, _): r = nil
        }
        return r ?? .null
    }

    /// How `#Predicate` text calls the function on the values of `map { }`.
    var textCall: String {
        switch self {
        case .max: return "max()"
        case .min: return "min()"
        case .sum: return "reduce(0, +)"
        case .avg: return "average()"
        }
    }
}

/// String tests. `matches` is full-text search (``TextSearch``) on a searchable attribute.
public enum StringOperator: String, CaseIterable, Sendable {
    case contains, hasPrefix, hasSuffix, localizedStandardContains, matches
}

/// String comparison options: `c` case-insensitive, `d` diacritic-insensitive.
public struct StringOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let caseInsensitive = StringOptions(rawValue: 1)
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    /// Parses "", "c", "d", "cd", "dc".
    public init?(text: String) {
        var o: StringOptions = []
        for ch in text {
            switch ch {
            case "c": o.insert(.caseInsensitive)
            case "d": o.insert(.diacriticInsensitive)
            default: return nil
            }
        }
        self = o
    }

    public var text: String { (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") }
}
