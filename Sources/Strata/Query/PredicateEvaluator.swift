/// An object the evaluator can read: stored values and related objects.
protocol EvaluatedObject: AnyObject {
    var entity: Entity { get }
    var pk: Int64 { get }
    /// The stored value of an attribute (`.null` when none), in SQLite form.
    func value(of attribute: Attribute) -> SQLValue
    /// The objects related through a relationship (at most one for to-one).
    func related(_ relationship: Relationship) -> [EvaluatedObject]
}

/// The second interpreter of typed predicates: evaluates them on objects in
/// memory, with exactly the semantics of the SQL compiler (``Evaluation``).
/// The differential tests check the two against each other.
struct PredicateEvaluator {
    func evaluate(_ p: TypedPredicate, on object: EvaluatedObject) -> Bool {
        evaluate(p, [object]) == true
    }

    /// True or false, or nil when the evaluation fails (a guard's requirement does not hold),
    /// as Foundation evaluates: left to right, `&&`, `||` and `?:` short-circuiting. Over
    /// related objects (`contains { }`, `allSatisfy { }`) a failure for one fails the whole.
    func evaluate(_ p: TypedPredicate, _ scopes: [EvaluatedObject]) -> Bool? {
        switch p {
        case .constant(let b): return b
        case .and(let parts):
            for part in parts {
                guard let r = evaluate(part, scopes) else { return nil }
                if !r { return false }
            }
            return true
        case .or(let parts):
            for part in parts {
                guard let r = evaluate(part, scopes) else { return nil }
                if r { return true }
            }
            return false
        case .not(let inner): return evaluate(inner, scopes).map { !$0 }
        case .compare(let op, let a, let b, let domain, let options):
            return Evaluation.compare(op, value(a, scopes), value(b, scopes), domain: domain, options: options)
        case .string(let op, let a, let b, let options):
            return Evaluation.stringTest(op, value(a, scopes), value(b, scopes), options: options)
        case .inList(let e, let values, let domain):
            let x = value(e, scopes)
            if x.isNull { return values.contains(where: \.isNull) }
            return values.contains { !$0.isNull && Evaluation.compare(.equal, x, $0, domain: domain, options: []) }
        case .isA(let scope, let entities):
            let o = scopes[scopes.count - 1 - scope]
            return entities.contains { $0 === o.entity }
        case .any(let ref, let inner):
            let results = many(ref, scopes).map { evaluate(inner, scopes + [$0]) }
            if results.contains(where: { $0 == nil }) { return nil }
            return results.contains(true)
        case .all(let ref, let inner):
            let results = many(ref, scopes).map { evaluate(inner, scopes + [$0]) }
            if results.contains(where: { $0 == nil }) { return nil }
            return !results.contains(false)
        case .isEmptyMany(let ref):
            return many(ref, scopes).isEmpty
        case .isEmptyString(let e):
            return value(e, scopes).isEmptyText
        case .conditional(let t, let a, let b):
            guard let test = evaluate(t, scopes) else { return nil }
            return test ? evaluate(a, scopes) : evaluate(b, scopes)
        case .boolValue(let e):
            if case .int(let i) = value(e, scopes) { return i != 0 }
            return false
        case .guarded(let requires, let inner):
            for r in requires where evaluate(r, scopes) != true { return nil }
            return evaluate(inner, scopes)
        }
    }

    /// The object at the end of a key path's to-one hops, or nil.
    private func hop(_ ref: KeyPathRef, _ scopes: [EvaluatedObject]) -> EvaluatedObject? {
        let start = scopes[scopes.count - 1 - ref.scope]
        if !ref.casts.isEmpty {
            // Nil where an object on the way is not of the entity the key path casts it to.
            var o: EvaluatedObject? = start
            var k = 0
            for cast in ref.casts {
                while k < cast.hops { o = o?.related(ref.path[k]).first; k += 1 }
                guard let object = o, object.entity.isKind(of: cast.entity) else { return nil }
            }
        }
        var o: EvaluatedObject? = start
        for r in ref.hops { o = o?.related(r).first }
        return o
    }

    private func many(_ ref: KeyPathRef, _ scopes: [EvaluatedObject]) -> [EvaluatedObject] {
        guard case .toMany(let r) = ref.end, let o = hop(ref, scopes) else { return [] }
        return o.related(r)
    }

    func value(_ e: TypedExpression, _ scopes: [EvaluatedObject]) -> SQLValue {
        switch e {
        case .keyPath(let ref, _):
            guard let o = hop(ref, scopes) else { return .null }
            switch ref.end {
            case .attribute(let a): return o.value(of: a)
            case .toOne(let r): return o.related(r).first.map { .int($0.pk) } ?? .null
            case .object: return .int(o.pk)
            case .toMany: return .null
            }
        case .constant(let v, _): return v
        case .parameter: return .null  // prepared fetches run in SQL only
        case .list: return .null
        case .count(let ref): return .int(Int64(many(ref, scopes).count))
        case .countWhere(let ref, let p): return .int(Int64(many(ref, scopes).filter { evaluate(p, scopes + [$0]) == true }.count))
        case .arithmetic(let op, let a, let b, _, let integer): return Evaluation.arithmetic(op, value(a, scopes), value(b, scopes), integer: integer)
        case .aggregate(let f, let ref, let filter, let v, let type):
            if f.isExact {
                var values: [SQLValue] = []
                for o in many(ref, scopes) where filter.map({ evaluate($0, scopes + [o]) == true }) ?? true {
                    values.append(value(v, scopes + [o]))
                }
                return Evaluation.exactAggregate(f, values, integer: v.type == .attribute(.int))
            }
            var best: SQLValue = .null
            for o in many(ref, scopes) {
                if let filter, evaluate(filter, scopes + [o]) != true { continue }
                let x = value(v, scopes + [o])
                if x.isNull { continue }
                guard !best.isNull, let c = Evaluation.order(x, best, domain: type, options: []) else {
                    if best.isNull { best = x }
                    continue
                }
                if (f == .max && c > 0) || (f == .min && c < 0) { best = x }
            }
            return best
        case .length(let inner):
            if case .text(let s) = value(inner, scopes) { return .int(Int64(s.unicodeScalars.count)) }
            return .null
        case .conditional(let t, let a, let b, _):
            return evaluate(t, scopes) == true ? value(a, scopes) : value(b, scopes)
        case .coalesce(let a, let b, _):
            let x = value(a, scopes)
            return x.isNull ? value(b, scopes) : x
        }
    }
}
