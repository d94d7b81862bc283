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
}

/// String tests.
public enum StringOperator: String, CaseIterable, Sendable {
    case contains, hasPrefix, hasSuffix, localizedStandardContains
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
