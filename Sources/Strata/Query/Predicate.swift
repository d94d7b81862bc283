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
    /// `$0.bucketList.map { $0.priority }.max()`: the largest (smallest) of a value of the related
    /// objects (a to-many key path, or a filter of one); the value's scope 0 is the element.
    /// `.reduce(0, +)` (`@sum`) and `.average()` (`@avg`): their exact sum and average.
    case aggregate(AggregateFunction, PredicateExpression, PredicateExpression, at: SourceLocation)

    public var location: SourceLocation {
        switch self {
        case .keyPath(_, _, let at), .variable(_, let at), .literal(_, let at), .count(_, let at),
             .conditional(_, _, _, let at), .coalesce(_, _, let at), .filtered(_, _, let at), .arithmetic(_, _, _, let at),
             .aggregate(_, _, _, let at):
            return at
        }
    }
}

extension Predicate {
    /// The tree moved into a context `by` scopes deeper: a key path (or `is`) that reaches the
    /// tree's own object, or beyond it, reaches `by` scopes further (closures inside keep theirs).
    func shifted(by s: Int, level: Int = 0) -> Predicate {
        guard s != 0 else { return self }
        func e(_ x: PredicateExpression) -> PredicateExpression { x.shifted(by: s, level: level) }
        func p(_ x: Predicate, _ l: Int = level) -> Predicate { x.shifted(by: s, level: l) }
        switch self {
        case .constant: return self
        case .value(let x): return .value(e(x))
        case .conjunction(let parts, let at): return .conjunction(parts.map { p($0) }, at: at)
        case .disjunction(let parts, let at): return .disjunction(parts.map { p($0) }, at: at)
        case .negation(let x, let at): return .negation(p(x), at: at)
        case .comparison(let op, let a, let b, let o, let at): return .comparison(op, e(a), e(b), o, at: at)
        case .string(let op, let a, let b, let o, let at): return .string(op, e(a), e(b), o, at: at)
        case .inCollection(let a, let b, let at): return .inCollection(e(a), e(b), at: at)
        case .between(let a, let b, let c, let at): return .between(e(a), e(b), e(c), at: at)
        case .typeCheck(let scope, let name, let at): return .typeCheck(scope: scope >= level ? scope + s : scope, entity: name, at: at)
        case .anySatisfy(let c, let q, let at): return .anySatisfy(e(c), p(q, level + 1), at: at)
        case .allSatisfy(let c, let q, let at): return .allSatisfy(e(c), p(q, level + 1), at: at)
        case .isEmpty(let x, let at): return .isEmpty(e(x), at: at)
        case .conditional(let a, let b, let c, let at): return .conditional(p(a), p(b), p(c), at: at)
        case .orElse(let a, let b, let at): return .orElse(p(a), p(b), at: at)
        case .evaluate(let name, let scope, let at): return .evaluate(name, scope: scope >= level ? scope + s : scope, at: at)
        }
    }
}

extension PredicateExpression {
    func shifted(by s: Int, level: Int) -> PredicateExpression {
        func e(_ x: PredicateExpression) -> PredicateExpression { x.shifted(by: s, level: level) }
        switch self {
        case .keyPath(let scope, let path, let at): return .keyPath(scope: scope >= level ? scope + s : scope, path: path, at: at)
        case .variable, .literal: return self
        case .count(let x, let at): return .count(e(x), at: at)
        case .conditional(let t, let a, let b, let at): return .conditional(t.shifted(by: s, level: level), e(a), e(b), at: at)
        case .coalesce(let a, let b, let at): return .coalesce(e(a), e(b), at: at)
        case .filtered(let c, let q, let at): return .filtered(e(c), q.shifted(by: s, level: level + 1), at: at)
        case .arithmetic(let op, let a, let b, let at): return .arithmetic(op, e(a), e(b), at: at)
        case .aggregate(let f, let c, let v, let at): return .aggregate(f, e(c), v.shifted(by: s, level: level + 1), at: at)
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
    /// `tripFilter.evaluate($0)`: the predicate bound to a variable (`{"predicate": …}`), for the
    /// object at `scope`.
    case evaluate(String, scope: Int, at: SourceLocation)

    public var location: SourceLocation {
        switch self {
        case .constant(_, let at), .conjunction(_, let at), .disjunction(_, let at), .negation(_, let at),
             .comparison(_, _, _, _, let at), .string(_, _, _, _, let at), .inCollection(_, _, let at),
             .between(_, _, _, let at), .typeCheck(_, _, let at), .anySatisfy(_, _, let at),
             .allSatisfy(_, _, let at), .isEmpty(_, let at), .conditional(_, _, _, let at), .orElse(_, _, let at), .evaluate(_, _, let at):
            return at
        case .value(let e): return e.location
        }
    }
}
