/// The type of a predicate value.
indirect enum ValueType: Equatable, CustomStringConvertible {
    case attribute(AttributeType)
    case null
    /// A to-one relationship's object (compared by identity).
    case object(Entity)
    /// A to-many relationship's objects.
    case objects(Entity)
    /// An array (from a literal or a binding) of elements of a type, nil when unknown (empty/null-only).
    case array(ValueType?)

    static func == (a: ValueType, b: ValueType) -> Bool {
        switch (a, b) {
        case let (.attribute(x), .attribute(y)): return x == y
        case (.null, .null): return true
        case let (.object(x), .object(y)), let (.objects(x), .objects(y)): return x === y
        case let (.array(x), .array(y)): return x == y
        default: return false
        }
    }

    var description: String {
        switch self {
        case .attribute(let t): return t.rawValue
        case .null: return "nil"
        case .object(let e): return e.name
        case .objects(let e): return "[\(e.name)]"
        case .array(let t): return "[\(t.map(\.description) ?? "?")]"
        }
    }

    var isNumeric: Bool { self == .attribute(.int) || self == .attribute(.double) }
}

/// A resolved key path: from the object at `scope`, through to-one `hops`, to `end`.
/// `forced` lists the prefixes unwrapped with `!` (`$0.livingAccommodation!.placeName`:
/// 1, the first hop), by their number of components.
struct KeyPathRef {
    enum End {
        case attribute(Attribute)
        case toOne(Relationship)
        case toMany(Relationship)
        /// The object itself (an empty path after hops is not allowed; used for `$0` identity).
        case object
    }
    let scope: Int
    let hops: [Relationship]
    let end: End
    let text: String
    var forced: [Int] = []
    /// Down-casts on the way (`($0 as? BusinessTrip)?.perdiem`, or `$0.perdiem` of a Trip, implied):
    /// where the object after `hops` of ``path`` is not an `entity`, the key path is nil.
    var casts: [(hops: Int, entity: Entity)] = []

    /// Every to-one hop to the object the key path reads: `hops`, and a to-one end's relationship.
    var path: [Relationship] {
        if case .toOne(let r) = end { return hops + [r] }
        return hops
    }

    /// Whether `other` reads the same attribute through the same hops (and casts).
    func sameKeyPath(as other: KeyPathRef) -> Bool {
        guard case .attribute(let a) = end, case .attribute(let b) = other.end, a === b, scope == other.scope,
              hops.count == other.hops.count, casts.count == other.casts.count else { return false }
        return zip(hops, other.hops).allSatisfy { $0 === $1 }
            && zip(casts, other.casts).allSatisfy { $0.hops == $1.hops && $0.entity === $1.entity }
    }
}

/// A value, bound and type-checked against the model.
indirect enum TypedExpression {
    case keyPath(KeyPathRef, ValueType)
    case constant(SQLValue, ValueType)
    /// A variable of a prepared fetch: the value of ``PredicateChecker/Slot`` `n`, given at each run.
    case parameter(Int, ValueType)
    case list([SQLValue], ValueType)
    case count(KeyPathRef)
    /// The related objects of a to-many key path that satisfy a condition (it cannot fail), counted.
    case countWhere(KeyPathRef, TypedPredicate)
    case length(TypedExpression)
    case conditional(TypedPredicate, TypedExpression, TypedExpression, ValueType)
    case coalesce(TypedExpression, TypedExpression, ValueType)
    /// `a op b` in ints (`integer`) or doubles, of type `type` (a date plus seconds is a date):
    /// nil where an operand is, or where Swift would trap (``Evaluation/arithmetic(_:_:_:integer:)``).
    case arithmetic(ArithmeticOperator, TypedExpression, TypedExpression, ValueType, integer: Bool)
    /// The largest (smallest) non-nil `value` of the related objects of a to-many key path that
    /// satisfy `filter` (it cannot fail); nil when there are none. `@sum` and `@avg` add the
    /// non-nil values exactly (``Evaluation/exactAggregate(_:_:integer:)``): the type is the
    /// value's for a sum, double for an average.
    case aggregate(AggregateFunction, KeyPathRef, filter: TypedPredicate?, value: TypedExpression, ValueType)

    var type: ValueType {
        switch self {
        case .keyPath(_, let t), .constant(_, let t), .parameter(_, let t), .list(_, let t), .conditional(_, _, _, let t), .coalesce(_, _, let t),
             .arithmetic(_, _, _, let t, _), .aggregate(_, _, _, _, let t): return t
        case .count, .countWhere, .length: return .attribute(.int)
        }
    }

    var constantValue: SQLValue? {
        if case .constant(let v, _) = self { return v }
        return nil
    }
}

/// A predicate, bound and type-checked: what the SQL compiler and the evaluator interpret.
indirect enum TypedPredicate {
    case constant(Bool)
    case and([TypedPredicate])
    case or([TypedPredicate])
    case not(TypedPredicate)
    /// `domain` is the type both sides are compared as.
    case compare(ComparisonOperator, TypedExpression, TypedExpression, domain: ValueType, options: StringOptions)
    case string(StringOperator, TypedExpression, TypedExpression, options: StringOptions)
    case inList(TypedExpression, [SQLValue], domain: ValueType)
    case isA(scope: Int, entities: [Entity])
    case any(KeyPathRef, TypedPredicate)
    case all(KeyPathRef, TypedPredicate)
    case isEmptyMany(KeyPathRef)
    case isEmptyString(TypedExpression)
    case conditional(TypedPredicate, TypedPredicate, TypedPredicate)
    case boolValue(TypedExpression)
    /// A condition whose evaluation fails (Foundation throws) unless every one of `requires`
    /// holds: a nil unwrapped with `!` along the way. Such a failure anywhere on the path the
    /// evaluation takes leaves the object out (``PredicateFailures``).
    case guarded([TypedPredicate], TypedPredicate)

    var constantValue: Bool? {
        if case .constant(let b) = self { return b }
        return nil
    }
}

extension TypedPredicate {
    /// The `matches` tests of the predicate: the searched key path and the search text of each,
    /// and whether it is inside a closure over related objects (`any`/`all`), where it searches
    /// their values rather than the object's. (The `$relevance` sort key needs exactly one, of
    /// the object's own.)
    var searches: [(ref: KeyPathRef, query: TypedExpression, nested: Bool)] {
        var out: [(ref: KeyPathRef, query: TypedExpression, nested: Bool)] = []
        func visit(_ p: TypedPredicate, nested: Bool) {
            switch p {
            case .string(.matches, .keyPath(let ref, _), let q, _): out.append((ref, q, nested))
            case .and(let parts), .or(let parts): for part in parts { visit(part, nested: nested) }
            case .not(let inner): visit(inner, nested: nested)
            case .conditional(let t, let a, let b): for part in [t, a, b] { visit(part, nested: nested) }
            case .guarded(let requires, let inner): for part in requires + [inner] { visit(part, nested: nested) }
            case .any(_, let inner), .all(_, let inner): visit(inner, nested: true)
            default: break
            }
        }
        visit(self, nested: false)
        return out
    }
}
