/// Predicates that can fail as they are evaluated, and their lowering to conditions
/// that cannot.
///
/// Foundation evaluates a predicate left to right, `&&`, `||` and `?:` short-circuiting,
/// and throws where it unwraps a nil (`$0.livingAccommodation!.placeName`): the object is
/// not selected. A store has no per-row error, so a condition that may fail
/// (``TypedPredicate/guarded(_:_:)``) is lowered to two conditions that cannot: `whenTrue`,
/// the evaluation succeeds and gives true, and `whenFalse`, it succeeds and gives false.
/// A fetch selects `whenTrue`; under `!` the two swap, so a failure never turns into a
/// selection (`!($0.a!.x == 1)` selects no object whose `a` is nil).
///
/// `contains { }` and `allSatisfy { }` over a closure that may fail fail as soon as the
/// closure fails for one related object, whatever it gives for the others (Foundation
/// stops at the first decisive object, in an order a store does not keep).
extension TypedPredicate {
    /// Whether some part of the condition can fail.
    var isFallible: Bool {
        switch self {
        case .guarded: return true
        case .and(let parts), .or(let parts): return parts.contains(where: \.isFallible)
        case .not(let inner), .any(_, let inner), .all(_, let inner): return inner.isFallible
        case .conditional(let t, let a, let b): return t.isFallible || a.isFallible || b.isFallible
        case .constant, .compare, .string, .inList, .isA, .isEmptyMany, .isEmptyString, .boolValue: return false
        }
    }

    /// The condition a fetch runs: `whenTrue` when some part can fail, else the condition itself.
    var lowered: TypedPredicate { isFallible ? whenTrue : self }

    /// The evaluation succeeds and gives true.
    var whenTrue: TypedPredicate {
        guard isFallible else { return self }
        switch self {
        case .guarded(let requires, let p): return .allOf(requires + [p.whenTrue])
        case .and(let parts): return .allOf(parts.map(\.whenTrue))
        case .or(let parts):
            // p1 true, or p1 false and p2 true, …
            var options: [TypedPredicate] = []
            var before: [TypedPredicate] = []
            for p in parts {
                options.append(.allOf(before + [p.whenTrue]))
                before.append(p.whenFalse)
            }
            return .anyOf(options)
        case .not(let inner): return inner.whenFalse
        case .conditional(let t, let a, let b):
            return .anyOf([.allOf([t.whenTrue, a.whenTrue]), .allOf([t.whenFalse, b.whenTrue])])
        case .any(let ref, let inner):
            return .allOf([.any(ref, inner.whenTrue), .not(.any(ref, inner.fails))])
        case .all(let ref, let inner):
            return .all(ref, inner.whenTrue)
        case .constant, .compare, .string, .inList, .isA, .isEmptyMany, .isEmptyString, .boolValue: return self
        }
    }

    /// The evaluation succeeds and gives false.
    var whenFalse: TypedPredicate {
        guard isFallible else { return .negated(self) }
        switch self {
        case .guarded(let requires, let p): return .allOf(requires + [p.whenFalse])
        case .and(let parts):
            // p1 false, or p1 true and p2 false, …
            var options: [TypedPredicate] = []
            var before: [TypedPredicate] = []
            for p in parts {
                options.append(.allOf(before + [p.whenFalse]))
                before.append(p.whenTrue)
            }
            return .anyOf(options)
        case .or(let parts): return .allOf(parts.map(\.whenFalse))
        case .not(let inner): return inner.whenTrue
        case .conditional(let t, let a, let b):
            return .anyOf([.allOf([t.whenTrue, a.whenFalse]), .allOf([t.whenFalse, b.whenFalse])])
        case .any(let ref, let inner):
            return .all(ref, inner.whenFalse)
        case .all(let ref, let inner):
            return .allOf([.any(ref, inner.whenFalse), .not(.any(ref, inner.fails))])
        case .constant, .compare, .string, .inList, .isA, .isEmptyMany, .isEmptyString, .boolValue: return .negated(self)
        }
    }

    /// The evaluation fails.
    var fails: TypedPredicate { .negated(.anyOf([whenTrue, whenFalse])) }

    /// How many nodes `whenTrue` and `whenFalse` have, without building them (saturating): a
    /// deeply alternating predicate of parts that can fail would lower to very large conditions.
    var loweredSizes: (whenTrue: Int, whenFalse: Int) {
        func add(_ a: Int, _ b: Int) -> Int { a > Int.max / 4 || b > Int.max / 4 ? Int.max / 4 : a + b }
        guard isFallible else { let n = nodeCount; return (n, add(n, 1)) }
        switch self {
        case .guarded(let requires, let p):
            let r = requires.reduce(0) { add($0, $1.nodeCount) }
            let (t, f) = p.loweredSizes
            return (add(add(r, t), 1), add(add(r, f), 1))
        case .and(let parts), .or(let parts):
            let sizes = parts.map(\.loweredSizes)
            let isAnd: Bool
            if case .and = self { isAnd = true } else { isAnd = false }
            // The plain side: one node over every part's; the chained side: each part with those before it.
            var plain = 1, chained = 1, before = 0
            for (t, f) in sizes {
                plain = add(plain, isAnd ? t : f)
                chained = add(chained, add(add(before, isAnd ? f : t), 1))
                before = add(before, isAnd ? t : f)
            }
            return isAnd ? (plain, chained) : (chained, plain)
        case .not(let inner):
            let (t, f) = inner.loweredSizes
            return (f, t)
        case .conditional(let c, let a, let b):
            let (ct, cf) = c.loweredSizes, (at, af) = a.loweredSizes, (bt, bf) = b.loweredSizes
            return (add(add(ct, at), add(add(cf, bt), 3)), add(add(ct, af), add(add(cf, bf), 3)))
        case .any(_, let inner), .all(_, let inner):
            let (t, f) = inner.loweredSizes
            let both = add(add(add(t, f), t), add(f, 6))
            return (both, both)
        case .constant, .compare, .string, .inList, .isA, .isEmptyMany, .isEmptyString, .boolValue: return (1, 2)
        }
    }

    private var nodeCount: Int {
        switch self {
        case .and(let parts), .or(let parts): return parts.reduce(1) { $0 + $1.nodeCount }
        case .not(let inner), .any(_, let inner), .all(_, let inner): return 1 + inner.nodeCount
        case .conditional(let t, let a, let b): return 1 + t.nodeCount + a.nodeCount + b.nodeCount
        case .guarded(let requires, let p): return requires.reduce(1 + p.nodeCount) { $0 + $1.nodeCount }
        case .constant, .compare, .string, .inList, .isA, .isEmptyMany, .isEmptyString, .boolValue: return 1
        }
    }

    /// A conjunction of `parts`, flattened (a single part is itself; none is true).
    static func allOf(_ parts: [TypedPredicate]) -> TypedPredicate {
        var out: [TypedPredicate] = []
        for p in parts {
            if p.constantValue == true { continue }
            if p.constantValue == false { return .constant(false) }
            if case .and(let inner) = p { out += inner } else { out.append(p) }
        }
        return out.isEmpty ? .constant(true) : out.count == 1 ? out[0] : .and(out)
    }

    /// A disjunction of `parts`, flattened (a single part is itself; none is false).
    static func anyOf(_ parts: [TypedPredicate]) -> TypedPredicate {
        var out: [TypedPredicate] = []
        for p in parts {
            if p.constantValue == false { continue }
            if p.constantValue == true { return .constant(true) }
            if case .or(let inner) = p { out += inner } else { out.append(p) }
        }
        return out.isEmpty ? .constant(false) : out.count == 1 ? out[0] : .or(out)
    }

    /// `!p` of a condition that cannot fail (`!!p` is `p`, a constant folds).
    static func negated(_ p: TypedPredicate) -> TypedPredicate {
        if let c = p.constantValue { return .constant(!c) }
        if case .not(let inner) = p { return inner }
        return .not(p)
    }
}
