/// Where a predicate node came from, for error messages: a JSON pointer
/// (`/predicate/and/1/rhs`) or a position in `#Predicate` text (`position 17`).
public struct SourceLocation: CustomStringConvertible, Sendable, Equatable {
    public var jsonPath: String?
    /// 1-based character offset into predicate text.
    public var textOffset: Int?

    public init(jsonPath: String) { self.jsonPath = jsonPath }
    public init(textOffset: Int) { self.textOffset = textOffset }
    public static let unknown = SourceLocation(jsonPath: "")

    public var description: String {
        if let o = textOffset { return "position \(o)" }
        return jsonPath ?? ""
    }
}

/// A literal value in a predicate, before it meets a type.
public enum PredicateLiteral: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A JSON number, kept as exact text ("42", "1.5e3").
    case number(String)
    case string(String)
    /// A typed literal: `{"date": "2026-11-22T00:00:00Z"}`, `{"uuid": ...}`, `{"decimal": ...}`, `{"data": base64}`, `{"url": ...}`.
    case typed(AttributeType, JSONValue)
    case array([PredicateLiteral])
}

/// A value in a predicate (swift-foundation's PredicateExpression nodes that yield values).
public indirect enum PredicateExpression: Equatable, Sendable {
    /// A key path from an object in scope: `scope` 0 is the innermost closure's
    /// object (`$0`), 1 the enclosing one, and so on. `path` walks attributes
    /// and relationships: `["livingAccommodation", "placeName"]`.
    case keyPath(scope: Int, path: [String], at: SourceLocation)
    /// A binding from the descriptor's `"bindings"` (`searchText`, `$now`).
    case variable(String, at: SourceLocation)
    case literal(PredicateLiteral, at: SourceLocation)
    /// The number of objects of a to-many key path (`$0.bucketList.count`), or characters of a string.
    case count(PredicateExpression, at: SourceLocation)
    /// `test ? a : b`
    case conditional(Predicate, PredicateExpression, PredicateExpression, at: SourceLocation)
    /// `a ?? b`
    case coalesce(PredicateExpression, PredicateExpression, at: SourceLocation)
    /// `$0.bucketList.filter { !$0.isInPlan }`: the related objects that satisfy the closure (its
    /// scope 0 is the element); only counted, tested for emptiness, or the receiver of `contains { }`
    /// and `allSatisfy { }`.
    case filtered(PredicateExpression, Predicate, at: SourceLocation)
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a % b` (`-a` is `0 - a`).
    case arithmetic(ArithmeticOperator, PredicateExpression, PredicateExpression, at: SourceLocation)

    public var location: SourceLocation {
        switch self {
        case .keyPath(_, _, let at), .variable(_, let at), .literal(_, let at), .count(_, let at),
             .conditional(_, _, _, let at), .coalesce(_, _, let at), .filtered(_, _, let at), .arithmetic(_, _, _, let at):
            return at
        }
    }
}

/// A boolean condition on objects (swift-foundation's Predicate, as one closed tree).
public indirect enum Predicate: Equatable, Sendable {
    case constant(Bool, at: SourceLocation)
    /// A boolean-valued expression used as a condition (`$0.isInPlan`, `flag`).
    case value(PredicateExpression)
    case conjunction([Predicate], at: SourceLocation)
    case disjunction([Predicate], at: SourceLocation)
    case negation(Predicate, at: SourceLocation)
    case comparison(ComparisonOperator, PredicateExpression, PredicateExpression, StringOptions, at: SourceLocation)
    case string(StringOperator, PredicateExpression, PredicateExpression, StringOptions, at: SourceLocation)
    /// `element in collection`: the collection is an array literal or a variable bound to an array.
    case inCollection(PredicateExpression, PredicateExpression, at: SourceLocation)
    /// `lower <= value && value <= upper` (`(lower...upper).contains(value)`).
    case between(PredicateExpression, PredicateExpression, PredicateExpression, at: SourceLocation)
    /// `$0 is PersonalTrip`: true for the entity and its subentities. `scope` as in key paths.
    case typeCheck(scope: Int, entity: String, at: SourceLocation)
    /// `$0.bucketList.contains { $0.isInPlan }`: the inner predicate's scope 0 is the element.
    case anySatisfy(PredicateExpression, Predicate, at: SourceLocation)
    /// `$0.bucketList.allSatisfy { ... }`
    case allSatisfy(PredicateExpression, Predicate, at: SourceLocation)
    /// `$0.bucketList.isEmpty`, `searchText.isEmpty`, `$0.name.isEmpty`
    case isEmpty(PredicateExpression, at: SourceLocation)
    /// `test ? a : b` between predicates.
    case conditional(Predicate, Predicate, Predicate, at: SourceLocation)
    /// `p ?? d`: a condition on an optional chain (`$0.livingAccommodation?.address.contains(q)`),
    /// `d` where the chain is nil. `p == true` is `p ?? false`.
    case orElse(Predicate, Predicate, at: SourceLocation)

    public var location: SourceLocation {
        switch self {
        case .constant(_, let at), .conjunction(_, let at), .disjunction(_, let at), .negation(_, let at),
             .comparison(_, _, _, _, let at), .string(_, _, _, _, let at), .inCollection(_, _, let at),
             .between(_, _, _, let at), .typeCheck(_, _, let at), .anySatisfy(_, _, let at),
             .allSatisfy(_, _, let at), .isEmpty(_, let at), .conditional(_, _, _, let at), .orElse(_, _, let at):
            return at
        case .value(let e): return e.location
        }
    }
}
