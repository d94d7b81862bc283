/// Binds variables and type-checks a predicate against the model, before
/// any SQL runs: unknown key paths, type mismatches, operators not valid for
/// a type and transient attributes are `.invalid` errors naming the JSON
/// path or text position. Constant parts (`searchText.isEmpty ? ...`) are
/// folded away, so the SQL sees only what depends on the rows.
struct PredicateChecker {
    let schema: Schema
    let bindings: [String: JSONValue]
    /// Entities of the objects in scope; the last is `$0`.
    private(set) var scopes: [Entity]
    /// Set while typing the key path of a comparison with nil: only then may
    /// an external-storage attribute be read (its column holds a file name).
    private var nilTest = false
    /// Per scope (innermost last), the to-one hops its key paths join, with the tables each takes.
    private var joins: [[String: Int]] = [[:]]
    /// What the condition being typed needs to be evaluated without failing (its unwrapped
    /// key paths not nil), innermost condition last (``TypedPredicate/guarded(_:_:)``).
    private var requirements: [[TypedPredicate]] = []
    /// The bound predicates being inlined (`evaluate`), outermost first.
    private var evaluating: [String] = []
    static let maxEvaluateDepth = 16
    /// The most nodes the conditions a predicate lowers to may have (``TypedPredicate/loweredSizes``).
    static let maxLoweredNodes = 4_000
    /// Tables the key paths of one scope may join: SQLite joins at most 64 in
    /// one SELECT, and the statement around a predicate joins some of its own.
    static let maxJoins = 32
    /// Values one predicate may bind (SQLite's default limit is 32,766).
    static let maxParameters = 30_000

    /// A variable of a prepared fetch: the type its values take where it is used, and
    /// the enum attribute they must be a member of (nil: none).
    struct Slot {
        let name: String
        let type: ValueType
        let at: SourceLocation
        var enumAttribute: Attribute?
    }

    /// Thrown while checking with ``slots`` where a variable's value, not only its type,
    /// decides the check: a variable without a typed counterpart (`$a == $b`, `$q.count`),
    /// an `in` list, or a `contains` whose left side is a variable (an array or a string).
    struct NeedsValues: Error {}

    /// Non-nil when checking for a prepared fetch: variables become ``TypedExpression/parameter``
    /// slots whose values each run gives (``slotValue(_:_:)``), instead of taking `bindings`' values.
    var slots: [Slot]?

    init(schema: Schema, root: Entity, bindings: [String: JSONValue]) {
        self.schema = schema
        self.bindings = bindings
        self.scopes = [root]
    }

    func fail(_ message: String, _ at: SourceLocation) -> StrataError {
        if let offset = at.textOffset {
            return StrataError(.invalid, "\(message) (at position \(offset) of the predicate text)")
        }
        return StrataError(.invalid, "\(message) (at \(at))", path: at.jsonPath)
    }

    // MARK: Predicates

    /// How deeply the SQL of a predicate may nest, in units of
    /// ``PredicateCompiler/depth(_:safe:)``: SQLite 3.40's parser holds at
    /// most 100 pending symbols, of which the statement around a predicate
    /// (a prefetching subquery, the entity test) takes up to 17.
    static let maxSQLDepth = 78

    /// Type-checks and folds a predicate; a part whose SQL would nest deeper
    /// than SQLite parses is `.invalid` at that part.
    mutating func check(_ p: Predicate) throws -> TypedPredicate {
        let outerNilTest = nilTest
        nilTest = false
        defer { nilTest = outerNilTest }
        let t = try checkNode(p)
        if t.isFallible {
            let (whenTrue, whenFalse) = t.loweredSizes
            if max(whenTrue, whenFalse) > PredicateChecker.maxLoweredNodes {
                throw fail("predicate too complex: its force unwraps ('!') under alternating !, && and || would need conditions of more than \(PredicateChecker.maxLoweredNodes) parts (use ?. and ?? instead)", p.location)
            }
            try limitDepth(max(PredicateCompiler.depth(t.whenTrue), PredicateCompiler.depth(t.whenFalse)), p.location)
        } else {
            try limitDepth(PredicateCompiler.depth(t), p.location)
        }
        return t
    }

    private func limitDepth(_ depth: Int, _ at: SourceLocation) throws {
        guard depth > PredicateChecker.maxSQLDepth else { return }
        throw fail("predicate nested too deeply: this part exceeds the nesting SQLite can parse (about 34 levels of alternating !, && and ||, 6 of contains/allSatisfy closures or 11 of conditionals; docs/predicates.md §6)", at)
    }

    /// One node, its parts checked through ``check(_:)``: the switch only dispatches;
    /// each kind of node is checked and folded by a step of its own.
    private mutating func checkNode(_ p: Predicate) throws -> TypedPredicate {
        switch p {
        case .constant(let b, _): return .constant(b)
        case .value(let e): return try atom { try $0.condition(e) }
        case .conjunction(let parts, _): return try conjunction(parts)
        case .disjunction(let parts, _): return try disjunction(parts)
        case .negation(let inner, _): return try negation(inner)
        case .comparison(let op, let a, let b, let options, let at): return try atom { try $0.comparison(op, a, b, options, at) }
        case .string(let op, let a, let b, let options, let at): return try atom { try $0.stringTest(op, a, b, options, at) }
        case .inCollection(let element, let collection, let at): return try atom { try $0.membership(element, collection, at) }
        case .between(let x, let lo, let hi, let at):
            return try check(.conjunction([.comparison(.greaterOrEqual, x, lo, [], at: at),
                                           .comparison(.lessOrEqual, x, hi, [], at: at)], at: at))
        case .typeCheck(let scope, let name, let at): return try typeCheck(scope, name, at)
        case .anySatisfy(let seq, let inner, _): return try atom { try $0.quantifier(any: true, seq, inner) }
        case .allSatisfy(let seq, let inner, _): return try atom { try $0.quantifier(any: false, seq, inner) }
        case .isEmpty(let e, let at): return try atom { try $0.emptiness(e, at) }
        case .conditional(let test, let a, let b, _): return try conditional(test, a, b)
        case .orElse(let p, let d, _): return try orElse(p, d)
        case .evaluate(let name, let scope, let at): return try evaluated(name, scope, at)
        }
    }

    /// The predicate bound to `name`, checked for the object at `scope` (in place of `evaluate`).
    private mutating func evaluated(_ name: String, _ scope: Int, _ at: SourceLocation) throws -> TypedPredicate {
        let tree = try bound(name, scope, at)
        evaluating.append(name)
        defer { evaluating.removeLast() }
        do {
            try checkKeyPaths(tree)
            return try check(tree)
        } catch var e as StrataError where e.path == nil {
            // A position in the bound predicate's text: say which.
            e.message = "in the predicate bound to '\(name)': " + e.message
            e.path = (JSONPath() / "bindings" / name / "predicate").description
            throw e
        }
    }

    /// The predicate bound to `name` (`{"predicate": tree or text}`), moved to the object at `scope`.
    private mutating func bound(_ name: String, _ scope: Int, _ at: SourceLocation) throws -> Predicate {
        if slots != nil { throw NeedsValues() }
        guard scope < scopes.count else { throw fail("'$\(scope)' is not in scope", at) }
        guard let v = bindings[name] else {
            throw fail("unknown variable '\(name)' (bindings: \(bindings.keys.sorted().joined(separator: ", ")))", at)
        }
        guard case .object(let members) = v, members.count == 1, members[0].0 == "predicate" else {
            throw fail("variable '\(name)' must be bound to {\"predicate\": …} (a predicate's JSON or #Predicate text) to be evaluated", at)
        }
        guard evaluating.count < PredicateChecker.maxEvaluateDepth, !evaluating.contains(name) else {
            throw fail("predicate '\(name)' evaluates itself (through \(evaluating.joined(separator: ", ")))", at)
        }
        return try PredicateJSON.predicate(members[0].1, JSONPath() / "bindings" / name / "predicate").shifted(by: scope)
    }

    /// `p ?? d`: `d` where the optional chain `p` tests is nil, else `p` (a condition that tests
    /// no optional value is itself).
    private mutating func orElse(_ p: Predicate, _ d: Predicate) throws -> TypedPredicate {
        let chainIsNil = try nilChain(p)
        let t = try check(p)
        guard let chainIsNil else { return t }
        let td = try check(d)
        if let c = chainIsNil.constantValue { return c ? td : t }
        return .conditional(chainIsNil, td, t)
    }

    /// Whether the value a condition tests through an optional chain is nil; nil when it tests none.
    private mutating func nilChain(_ p: Predicate) throws -> TypedPredicate? {
        switch p {
        case .negation(let q, _): return try nilChain(q)
        case .string(_, let a, _, _, let at): return try isNil(a, at)
        case .value(let e): return try isNil(e, e.location)
        case .isEmpty(let e, let at), .anySatisfy(let e, _, let at), .allSatisfy(let e, _, let at): return try isNil(e, at)
        default: return nil
        }
    }

    /// `e == nil` for a key path; for a to-many one, whether the object holding it is nil.
    private mutating func isNil(_ e: PredicateExpression, _ at: SourceLocation) throws -> TypedPredicate? {
        var source = e
        if case .filtered(let s, _, _) = e { source = s }
        guard case .keyPath(let scope, let path, let kat) = source, !path.isEmpty else { return nil }
        var target = path
        if case .toMany = try resolve(scope: scope, path: path, at: kat).end {
            guard path.count > 1 else { return nil }
            target = Array(path.dropLast())
        }
        return try atom { try $0.comparison(.equal, .keyPath(scope: scope, path: target, at: kat), .literal(.null, at: at), [], at) }
    }

    /// Types `e` for its type alone: what it needs is not noted (it is not evaluated).
    private mutating func typeOnly(_ e: PredicateExpression, expected: ValueType?) throws -> TypedExpression {
        let depth = requirements.count
        requirements.append([])
        defer { requirements.removeLast(requirements.count - depth) }
        return try value(e, expected: expected)
    }

    /// Notes what the value being typed needs (nothing outside a condition).
    private mutating func note(_ needs: [TypedPredicate]) {
        guard !needs.isEmpty, !requirements.isEmpty else { return }
        requirements[requirements.count - 1] += needs
    }

    /// Types one condition; what its values need to be evaluated without failing guards it.
    private mutating func atom(_ body: (inout PredicateChecker) throws -> TypedPredicate) throws -> TypedPredicate {
        requirements.append([])
        let t: TypedPredicate
        do { t = try body(&self) } catch { requirements.removeLast(); throw error }
        let needs = requirements.removeLast()
        return needs.isEmpty ? t : .guarded(needs, t)
    }

    /// Notes what evaluating `ref` needs: each prefix unwrapped with `!` that can be nil is not nil.
    private mutating func require(_ ref: KeyPathRef, _ path: [String], _ at: SourceLocation) throws {
        guard !ref.forced.isEmpty, !requirements.isEmpty else { return }
        let names = path.map(PredicateChecker.unmarked)
        for k in ref.forced {
            let prefix = try resolve(scope: ref.scope, path: Array(names[0..<k]), at: at)
            let type: ValueType
            switch prefix.end {
            case .attribute(let a) where a.isOptional || !prefix.casts.isEmpty: type = .attribute(a.type)
            case .toOne(let r): type = .object(r.destination)
            case .object where !prefix.casts.isEmpty: type = .object(prefix.casts[prefix.casts.count - 1].entity)
            default: continue  // never nil: a required attribute, a to-many relationship, the object itself
            }
            let need = TypedPredicate.compare(.notEqual, .keyPath(prefix, type), .constant(.null, .null), domain: type, options: [])
            note([need])
        }
    }

    /// The last key path component that names the object itself (`$0.trip?.persistentModelID`).
    static let identity = "persistentModelID"

    /// A key path component without its force-unwrap mark (`livingAccommodation!`).
    static func unmarked(_ component: String) -> String {
        component.hasSuffix("!") ? String(component.dropLast()) : component
    }

    /// A value used as a condition: it must be a bool (or nil); a constant folds.
    private mutating func condition(_ e: PredicateExpression) throws -> TypedPredicate {
        let t = try value(e, expected: .attribute(.bool))
        guard t.type == .attribute(.bool) || t.type == .null else {
            throw fail("expected a condition, found a value of type \(t.type)", e.location)
        }
        if let c = t.constantValue { return .constant(c == .int(1)) }
        return .boolValue(t)
    }

    /// `&&`: false as soon as a part folds to false, true parts dropped, nested conjunctions flattened.
    private mutating func conjunction(_ parts: [Predicate]) throws -> TypedPredicate {
        var out: [TypedPredicate] = []
        for part in parts {
            let t = try check(part)
            // What comes before still runs, and may fail.
            if t.constantValue == false { return out.contains(where: \.isFallible) ? .and(out + [t]) : .constant(false) }
            if t.constantValue == true { continue }
            // `a && (b && c)` is one conjunction.
            if case .and(let inner) = t { out += inner } else { out.append(t) }
        }
        return out.isEmpty ? .constant(true) : out.count == 1 ? out[0] : .and(out)
    }

    /// `||`: true as soon as a part folds to true, false parts dropped, nested disjunctions
    /// flattened, equalities with one key path merged (``mergeEqualities(_:)``).
    private mutating func disjunction(_ parts: [Predicate]) throws -> TypedPredicate {
        var out: [TypedPredicate] = []
        for part in parts {
            let t = try check(part)
            if t.constantValue == true { return out.contains(where: \.isFallible) ? .or(out + [t]) : .constant(true) }
            if t.constantValue == false { continue }
            if case .or(let inner) = t { out += inner } else { out.append(t) }
        }
        out = PredicateChecker.mergeEqualities(out)
        return out.isEmpty ? .constant(false) : out.count == 1 ? out[0] : .or(out)
    }

    /// `!`: a constant folds, and `!!p` is `p`.
    private mutating func negation(_ inner: Predicate) throws -> TypedPredicate {
        let t = try check(inner)
        if let c = t.constantValue { return .constant(!c) }
        // Conditions are two-valued (the compiler makes every operand of NOT 0 or 1), so !!p is p.
        if case .not(let p) = t { return p }
        return .not(t)
    }

    /// `$n is Entity`: true when every object of the scope is one; `.invalid` when none can be.
    private func typeCheck(_ scope: Int, _ name: String, _ at: SourceLocation) throws -> TypedPredicate {
        guard scope < scopes.count else { throw fail("'$\(scope)' is not in scope", at) }
        let s = scopes[scopes.count - 1 - scope]
        guard let target = schema.entity(named: name) else { throw fail("unknown entity '\(name)' in 'is'", at) }
        if s.isKind(of: target) { return .constant(true) }
        guard target.isKind(of: s) else {
            throw fail("'\(s.name)' objects can never be '\(name)' (not a subentity)", at)
        }
        return .isA(scope: scope, entities: target.descendants)
    }

    /// `contains(where:)` (`any`) or `allSatisfy` over a to-many key path: the closure is
    /// checked in a new scope of the relationship's destination; a constant closure folds.
    private mutating func quantifier(any isAny: Bool, _ seq: PredicateExpression, _ inner: Predicate) throws -> TypedPredicate {
        if case .filtered(let source, let body, let fat) = seq {
            // Over the objects a filter keeps: contains { f && p }, allSatisfy { !f || p }.
            let (ref, f) = try filtered(source, body, fat)
            guard case .toMany(let rel) = ref.end else { return .constant(false) }
            let t = try inScope(of: rel) { try $0.check(inner) }
            let body = isAny ? TypedPredicate.allOf([f, t]) : TypedPredicate.anyOf([.negated(f), t])
            if let c = body.constantValue {
                if isAny { return c ? .not(.isEmptyMany(ref)) : .constant(false) }
                return c ? .constant(true) : .isEmptyMany(ref)
            }
            return isAny ? .any(ref, body) : .all(ref, body)
        }
        let (ref, rel) = try manyKeyPath(seq, isAny ? "contains(where:)" : "allSatisfy")
        let t = try inScope(of: rel) { try $0.check(inner) }
        if let c = t.constantValue {
            // any(true) = !isEmpty, any(false) = false; all(true) = true, all(false) = isEmpty
            if isAny { return c ? .not(.isEmptyMany(ref)) : .constant(false) }
            return c ? .constant(true) : .isEmptyMany(ref)
        }
        return isAny ? .any(ref, t) : .all(ref, t)
    }

    /// `isEmpty` of a to-many key path, a string (a constant folds) or an array literal.
    private mutating func emptiness(_ e: PredicateExpression, _ at: SourceLocation) throws -> TypedPredicate {
        if case .filtered(let source, let body, let fat) = e {
            let (ref, f) = try filtered(source, body, fat)
            if let c = f.constantValue { return c ? .isEmptyMany(ref) : .constant(true) }
            return .not(.any(ref, f))
        }
        if case .keyPath(let scope, let path, let kat) = e {
            let ref = try resolve(scope: scope, path: path, at: kat)
            if case .toMany = ref.end { try countJoins(ref, kat); try require(ref, path, kat); return .isEmptyMany(ref) }
        }
        let t = try value(e, expected: nil)
        switch t.type {
        case .attribute(.string), .attribute(.url), .null:
            if let c = t.constantValue { return .constant(c.isEmptyText) }
            return .isEmptyString(t)
        case .array:
            if case .list(let items, _) = t { return .constant(items.isEmpty) }
            return .constant(false)
        default:
            throw fail("'isEmpty' applies to strings and to-many relationships, not \(t.type)", at)
        }
    }

    /// `test ? a : b` as conditions: a constant test leaves only the branch it picks.
    private mutating func conditional(_ test: Predicate, _ a: Predicate, _ b: Predicate) throws -> TypedPredicate {
        let t = try check(test)
        if let c = t.constantValue { return try check(c ? a : b) }
        return .conditional(t, try check(a), try check(b))
    }

    private static let ordered: Set<AttributeType> = [.string, .int, .double, .date, .decimal, .url]

    private func isLiteralLike(_ e: PredicateExpression) -> Bool {
        switch e {
        case .literal, .variable: return true
        default: return false
        }
    }

    private mutating func comparison(_ op: ComparisonOperator, _ a: PredicateExpression, _ b: PredicateExpression,
                                     _ options: StringOptions, _ at: SourceLocation) throws -> TypedPredicate {
        // Type the anchored side (a key path, count, ...) first; literals take its type.
        var ta: TypedExpression
        var tb: TypedExpression
        // `photo == nil`: null-ness is exact also for a value kept in a file.
        let outerNilTest = nilTest
        nilTest = (op == .equal || op == .notEqual) && (isNil(a) || isNil(b))
        defer { nilTest = outerNilTest }
        /// A composite is nil or not: its value is its fields'.
        func checkComposite(_ anchored: TypedExpression, _ other: PredicateExpression) throws {
            if anchored.type == .attribute(.composite) && !isNil(other) {
                throw fail("a composite value compares only with nil; compare its fields (e.g. $0.address.city)", at)
            }
        }
        if isLiteralLike(a) && !isLiteralLike(b) {
            tb = try value(b, expected: nil)
            try checkComposite(tb, a)
            ta = try value(a, expected: tb.type)
        } else {
            ta = try value(a, expected: nil)
            try checkComposite(ta, b)
            tb = try value(b, expected: ta.type)
        }
        // Two literals: a string literal next to a typed literal takes its type.
        if ta.constantValue != nil && tb.constantValue != nil && ta.type != tb.type {
            if case .literal = a, tb.type != .null, ta.type != .null { ta = try value(a, expected: tb.type) }
            else if case .literal = b, ta.type != .null, tb.type != .null { tb = try value(b, expected: ta.type) }
        }
        let domain = try comparisonDomain(op, ta.type, tb.type, at)
        if op == .equal || op == .notEqual {
            try checkEnumMember(ta, tb, b.location, bound: Self.variableName(b))
            try checkEnumMember(tb, ta, a.location, bound: Self.variableName(a))
        }
        if options != [] {
            guard domain == .attribute(.string) || domain == .attribute(.url) || domain == .null else {
                throw fail("string options 'c'/'d' apply to string comparisons, not \(domain)", at)
            }
        }
        if let x = ta.constantValue, let y = tb.constantValue {
            return .constant(Evaluation.compare(op, x, y, domain: domain, options: options))
        }
        return .compare(op, ta, tb, domain: domain, options: options)
    }

    private func isNil(_ e: PredicateExpression) -> Bool {
        switch e {
        case .literal(.null, _): return true
        case .variable(let name, _): return slots == nil && bindings[name] == .null
        default: return false
        }
    }

    /// The name of the variable `e` is, if it is one.
    private static func variableName(_ e: PredicateExpression) -> String? {
        if case .variable(let name, _) = e { return name }
        return nil
    }

    /// A constant compared with an enum attribute must be one of its values:
    /// a misspelled member would silently match nothing (or, with `!=`, everything).
    /// - Parameter bound: the variable that gave the value, if one did.
    private mutating func checkEnumMember(_ key: TypedExpression, _ value: TypedExpression, _ at: SourceLocation,
                                          bound: String? = nil) throws {
        guard case .keyPath(let ref, _) = key, case .attribute(let a) = ref.end, a.enumValues != nil else { return }
        if case .parameter(let slot, _) = value { slots?[slot].enumAttribute = a; return }
        guard let v = value.constantValue else { return }
        try checkEnumMember(a, v, at, bound: bound)
    }

    /// The refusal names the attribute, the place (path or text position) and
    /// the members, never the value: errors do not carry what the caller bound.
    private func checkEnumMember(_ a: Attribute, _ v: SQLValue, _ at: SourceLocation, bound: String? = nil) throws {
        guard let allowed = a.enumValues, !v.isNull else { return }
        let domain: ValueType = .attribute(a.type == .int ? .double : a.type)
        if allowed.contains(where: { Evaluation.compare(.equal, v, $0, domain: domain, options: []) }) { return }
        let list = (a.enumJSON ?? []).map(\.text).joined(separator: ", ")
        let what = bound.map { "the value bound to '\($0)'" } ?? "the value compared"
        throw fail("\(what) is not a value of enum attribute '\(a.entity.name).\(a.name)' (allowed: \(list))", at)
            .with(entity: a.entity.name, attribute: a.name)
    }

    private func comparisonDomain(_ op: ComparisonOperator, _ a: ValueType, _ b: ValueType, _ at: SourceLocation) throws -> ValueType {
        let isEquality = op == .equal || op == .notEqual
        switch (a, b) {
        case (.null, .null):
            guard isEquality else { throw fail("operator \(op.rawValue) is not valid with nil", at) }
            return .null
        case (.null, let t), (let t, .null):
            guard isEquality else { throw fail("operator \(op.rawValue) is not valid with nil", at) }
            switch t {
            case .objects: throw fail("a to-many relationship is never nil; use isEmpty", at)
            case .array: throw fail("an array cannot be compared with nil", at)
            default: return t
            }
        case let (.attribute(x), .attribute(y)):
            if x == .json || y == .json { throw fail("json attributes cannot be compared", at) }
            let dx: AttributeType = x == .int ? .double : x
            let dy: AttributeType = y == .int ? .double : y
            guard dx == dy else { throw fail("type mismatch: cannot compare \(x.rawValue) with \(y.rawValue)", at) }
            if !isEquality && !PredicateChecker.ordered.contains(x) {
                throw fail("operator \(op.rawValue) is not valid for \(x.rawValue) values", at)
            }
            return x == y ? .attribute(x) : .attribute(.double)
        case let (.object(x), .object(y)):
            guard isEquality else { throw fail("operator \(op.rawValue) is not valid for objects", at) }
            guard x.root === y.root else { throw fail("type mismatch: cannot compare \(x.name) with \(y.name)", at) }
            return .object(x.root)
        case (.objects, _), (_, .objects):
            throw fail("a to-many relationship cannot be compared; use count, isEmpty or contains(where:)", at)
        case (.array, _), (_, .array):
            throw fail("an array cannot be compared; use contains (in)", at)
        default:
            throw fail("type mismatch: cannot compare \(a) with \(b)", at)
        }
    }

    private mutating func stringTest(_ op: StringOperator, _ a: PredicateExpression, _ b: PredicateExpression,
                                     _ options: StringOptions, _ at: SourceLocation) throws -> TypedPredicate {
        // `names.contains($0.name)` with `names` bound to an array is membership.
        if op == .contains, case .variable = a, slots != nil { throw NeedsValues() }
        if op == .contains, case .variable(let name, _) = a, case .array? = bindings[name] {
            return try membership(b, a, at)
        }
        if op == .contains, case .literal(.array, _) = a { return try membership(b, a, at) }
        let ta = try value(a, expected: .attribute(.string))
        let tb = try value(b, expected: .attribute(.string))
        for (t, e) in [(ta, a), (tb, b)] {
            switch t.type {
            case .attribute(.string), .attribute(.url), .null: break
            default: throw fail("'\(op.rawValue)' applies to strings, not \(t.type)", e.location)
            }
        }
        if op == .matches { try checkSearch(ta, tb, a, b, options, at) }
        if let x = ta.constantValue, let y = tb.constantValue {
            return .constant(Evaluation.stringTest(op, x, y, options: options))
        }
        return .string(op, ta, tb, options: options)
    }

    /// `matches` searches a searchable attribute (a key path, through to-one hops) for a search
    /// text that is a value (a literal or a variable), without options.
    private func checkSearch(_ ta: TypedExpression, _ tb: TypedExpression, _ a: PredicateExpression, _ b: PredicateExpression,
                             _ options: StringOptions, _ at: SourceLocation) throws {
        guard options.isEmpty else { throw fail("'matches' takes no options (it always ignores case and diacritics)", at) }
        guard case .keyPath(let ref, _) = ta, case .attribute(let attribute) = ref.end else {
            throw fail("'matches' searches a searchable string attribute (a key path such as $0.title)", a.location)
        }
        guard attribute.isSearchable else {
            throw fail("'matches' needs a searchable attribute: '\(ref.text)' (\(attribute.entity.name).\(attribute.name)) is not searchable "
                       + "(declare it with \"searchable\": true)", a.location)
        }
        switch tb {
        case .constant, .parameter: break
        default: throw fail("the search text of 'matches' must be a string literal or a variable, not a value of the object", b.location)
        }
    }

    private mutating func membership(_ element: PredicateExpression, _ collection: PredicateExpression, _ at: SourceLocation) throws -> TypedPredicate {
        let te = try value(element, expected: nil)
        let elementType = te.type
        let items: [PredicateLiteral]
        switch collection {
        case .literal(.array(let xs), _): items = xs
        case .variable(let name, let vat):
            if slots != nil { throw NeedsValues() }
            guard let v = bindings[name] else { throw fail("unknown variable '\(name)' (bindings: \(bindings.keys.sorted().joined(separator: ", ")))", vat) }
            guard case .array = v, case .array(let xs) = try PredicateJSON.literal(v, JSONPath()) else {
                throw fail("variable '\(name)' must be bound to an array for 'in'", vat)
            }
            items = xs
        default:
            throw fail("'in' needs an array literal or a variable bound to an array", collection.location)
        }
        switch elementType {
        case .attribute(let t) where t == .json || t == .data || t == .composite:
            throw fail("'in' is not valid for \(t.rawValue) values", at)
        case .objects, .array:
            throw fail("'in' needs a single value on the left, not \(elementType)", element.location)
        default: break
        }
        var values: [SQLValue] = []
        for item in items {
            values.append(try coerce(item, to: elementType, at: collection.location))
            try checkEnumMember(te, .constant(values[values.count - 1], elementType), collection.location)
        }
        let domain: ValueType = elementType == .attribute(.int) && values.contains(where: { if case .double = $0 { return true } else { return false } })
            ? .attribute(.double) : elementType
        if let c = te.constantValue {
            return .constant(values.contains { Evaluation.compare(.equal, c, $0, domain: domain, options: []) })
        }
        return .inList(te, values, domain: domain)
    }

    /// `a == 1 || a == 2 || a == nil` as `[1, 2, nil].contains(a)`: equalities
    /// of one key path with constants (and `in` lists of it) in a disjunction
    /// become one `in` list, which compiles to one `IN` however long.
    static func mergeEqualities(_ parts: [TypedPredicate]) -> [TypedPredicate] {
        struct Group { var ref: KeyPathRef; var type: ValueType; var domain: ValueType; var values: [SQLValue]; var count: Int }
        func member(_ p: TypedPredicate) -> (KeyPathRef, ValueType, ValueType, [SQLValue])? {
            switch p {
            case .compare(.equal, .keyPath(let ref, let type), .constant(let v, _), let domain, let options) where options.isEmpty:
                return (ref, type, domain, [v])
            case .compare(.equal, .constant(let v, _), .keyPath(let ref, let type), let domain, let options) where options.isEmpty:
                return (ref, type, domain, [v])
            case .inList(.keyPath(let ref, let type), let values, let domain):
                return (ref, type, domain, values)
            default: return nil
            }
        }
        var groups: [String: Group] = [:]
        var order: [String] = []
        for p in parts {
            guard let (ref, type, domain, values) = member(p) else { continue }
            // Only key paths to attributes other than data (a JSON array cannot hold bytes), values compared in one domain.
            guard case .attribute(let a) = ref.end, a.type != .data else { continue }
            let key = "\(ref.scope)|\(ref.text)|\(domain)"
            if groups[key] == nil { groups[key] = Group(ref: ref, type: type, domain: domain, values: [], count: 0); order.append(key) }
            groups[key]?.values += values
            groups[key]?.count += 1
        }
        guard groups.values.contains(where: { $0.count > 1 }) else { return parts }
        var out: [TypedPredicate] = []
        var emitted: Set<String> = []
        for p in parts {
            guard let (ref, _, domain, _) = member(p), case .attribute(let a) = ref.end, a.type != .data else { out.append(p); continue }
            let key = "\(ref.scope)|\(ref.text)|\(domain)"
            guard let g = groups[key], g.count > 1 else { out.append(p); continue }
            if emitted.insert(key).inserted { out.append(.inList(.keyPath(g.ref, g.type), g.values, domain: g.domain)) }
        }
        return out
    }

    // MARK: Values

    /// Types and folds an expression; `expected` is the type its context gives a literal
    /// (nil: none). The switch only dispatches; each kind of expression has a step of its own.
    mutating func value(_ e: PredicateExpression, expected: ValueType?) throws -> TypedExpression {
        switch e {
        case .keyPath(let scope, let path, let at): return try keyPathValue(scope, path, at)
        case .literal(let lit, let at): return try literalValue(lit, expected, at)
        case .variable(let name, let at): return try variableValue(name, expected, at)
        case .count(let inner, let at): return try countValue(inner, at)
        case .conditional(let test, let a, let b, let at): return try conditionalValue(test, a, b, expected, at)
        case .coalesce(let a, let b, let at): return try coalesceValue(a, b, expected, at)
        case .filtered(_, _, let at):
            throw fail("'filter' gives related objects, not a value: count them, test isEmpty, or use contains { } or allSatisfy { } on them", at)
        case .arithmetic(let op, let a, let b, let at): return try arithmeticValue(op, a, b, at)
        case .aggregate(let f, let source, let v, let at): return try aggregateValue(f, source, v, at)
        }
    }

    /// `source.map { value }.max()`: the value typed for the related objects (ints, doubles, dates
    /// and strings, compared as everywhere); it fails where the value fails for one of them.
    /// `@sum` and `@avg` (`reduce(0, +)`, `average()`) take ints and doubles (``ExactSum``): a sum
    /// fails where it is nil (an int sum outside Int64, a double sum that is not finite), and so
    /// does an average of doubles.
    private mutating func aggregateValue(_ f: AggregateFunction, _ source: PredicateExpression, _ v: PredicateExpression,
                                         _ at: SourceLocation) throws -> TypedExpression {
        var filter: TypedPredicate?
        let ref: KeyPathRef, rel: Relationship
        if case .filtered(let s, let body, _) = source {
            (ref, rel) = try manyKeyPath(s, "filter")
            filter = try inScope(of: rel) { try $0.check(body) }
        } else {
            (ref, rel) = try manyKeyPath(source, "map { }.\(f.textCall)")
        }
        let depth = requirements.count
        requirements.append([])
        let tv: TypedExpression
        do {
            tv = try inScope(of: rel) { try $0.value(v, expected: nil) }
        } catch {
            requirements.removeLast(requirements.count - depth)
            throw error
        }
        let needs = requirements.removeLast()
        try checkAggregated(f, tv.type, v.location)
        // The filter runs first, for every object; then the value, for those it keeps.
        if let p = filter, p.isFallible { note([.negated(.any(ref, p.fails))]) }
        if !needs.isEmpty {
            let kept = filter.map { [$0.lowered] } ?? []
            note([.negated(.any(ref, .allOf(kept + [.negated(.allOf(needs))])))])
        }
        let type: ValueType = f == .avg ? .attribute(.double) : tv.type
        let e = TypedExpression.aggregate(f, ref, filter: filter?.lowered, value: tv, type)
        if f == .sum || (f == .avg && tv.type == .attribute(.double)) {
            // The sum is nil only where it fails.
            let sum = f == .sum ? e : .aggregate(.sum, ref, filter: filter?.lowered, value: tv, tv.type)
            note([.compare(.notEqual, sum, .constant(.null, .null), domain: tv.type, options: [])])
        }
        return e
    }

    /// The values an aggregate takes: `max()`/`min()` those that order, `@sum`/`@avg` numbers.
    private func checkAggregated(_ f: AggregateFunction, _ type: ValueType, _ at: SourceLocation) throws {
        if f.isExact {
            switch type {
            case .attribute(.int), .attribute(.double): return
            case .attribute(.decimal):
                throw fail("'@\(f.rawValue)' (text: \(f.textCall)) of decimal values is not supported (sums and averages take ints and doubles; decimals compare exactly but have no arithmetic)", at)
            default:
                throw fail("'@\(f.rawValue)' (text: \(f.textCall)) of \(type) values is not supported (sums and averages take ints and doubles)", at)
            }
        }
        switch type {
        case .attribute(.int), .attribute(.double), .attribute(.date), .attribute(.string), .attribute(.url): return
        default: throw fail("'\(f.rawValue)()' of \(type) values is not supported (ints, doubles, dates and strings)", at)
        }
    }

    /// `a op b`: ints stay ints, a double makes doubles, a date plus or minus seconds is a date and
    /// a date minus a date is seconds. A literal or variable takes the other side's type (seconds
    /// next to a date). Where the operation can fail (an int overflow, a division by zero, a result
    /// that is not finite) the condition that reads it needs it not to (Foundation would trap).
    private mutating func arithmeticValue(_ op: ArithmeticOperator, _ a: PredicateExpression, _ b: PredicateExpression,
                                          _ at: SourceLocation) throws -> TypedExpression {
        func operandType(_ other: ValueType) -> ValueType? {
            other == .attribute(.date) ? .attribute(.double) : other.isNumeric ? other : nil
        }
        var ta: TypedExpression, tb: TypedExpression
        if isLiteralLike(a) && isLiteralLike(b) {
            // `3 * 86400.0`: each by itself (an int and a double make a double).
            ta = try value(a, expected: nil)
            tb = try value(b, expected: nil)
        } else if isLiteralLike(a) {
            tb = try value(b, expected: nil)
            ta = try value(a, expected: operandType(tb.type))
        } else {
            ta = try value(a, expected: nil)
            tb = try value(b, expected: operandType(ta.type))
        }
        // A literal counts by its value: 2.5 next to an int is a double (the operation is in doubles).
        func byValue(_ t: TypedExpression) -> TypedExpression {
            if case .constant(.double(let d), .attribute(.int)) = t { return .constant(.double(d), .attribute(.double)) }
            return t
        }
        ta = byValue(ta)
        tb = byValue(tb)
        for (t, e) in [(ta, a), (tb, b)] {
            switch t.type {
            case .attribute(.int), .attribute(.double), .attribute(.date): break
            case .null: throw fail("arithmetic with nil is not supported ('\(op.rawValue)' needs two values; use ?? for a default)", e.location)
            case .attribute(.string), .attribute(.url): throw fail("arithmetic on strings is not supported ('\(op.rawValue)')", at)
            case .attribute(.decimal): throw fail("arithmetic on decimal values is not supported ('\(op.rawValue)'; decimals compare exactly)", at)
            default: throw fail("arithmetic on \(t.type) values is not supported ('\(op.rawValue)' takes numbers and dates)", at)
            }
        }
        let type: ValueType
        let integer: Bool
        switch (ta.type, tb.type, op) {
        case (.attribute(.int), .attribute(.int), _): type = .attribute(.int); integer = true
        case (_, _, .remainder): throw fail("'%' applies to ints (a remainder of doubles or dates is not supported)", at)
        case (.attribute(.date), .attribute(.date), .subtract): type = .attribute(.double); integer = false
        case (.attribute(.date), .attribute(.date), _): throw fail("'\(op.rawValue)' of two dates is not supported (a date minus a date is seconds)", at)
        case (.attribute(.date), _, .add), (.attribute(.date), _, .subtract), (_, .attribute(.date), .add): type = .attribute(.date); integer = false
        case (.attribute(.date), _, _), (_, .attribute(.date), _):
            throw fail("'\(op.rawValue)' with a date is not supported (a date plus or minus seconds is a date)", at)
        default: type = .attribute(.double); integer = false
        }
        if !integer {
            if case .constant(.int(let i), _) = ta { ta = .constant(.double(Double(i)), .attribute(.double)) }
            if case .constant(.int(let i), _) = tb { tb = .constant(.double(Double(i)), .attribute(.double)) }
        }
        if let x = ta.constantValue, let y = tb.constantValue {
            let r = Evaluation.arithmetic(op, x, y, integer: integer)
            // Failing for every object: no object is selected by what reads it.
            if r.isNull { note([.constant(false)]) }
            return r.isNull ? .constant(.null, .null) : .constant(r, type)
        }
        let e = TypedExpression.arithmetic(op, ta, tb, type, integer: integer)
        // What can fail: an int overflow (+ - * and the least int / -1), a division by zero, a double out of range.
        var canFail = true
        if (op == .divide || op == .remainder), integer, case .int(let d)? = tb.constantValue, d != 0, d != -1 { canFail = false }
        if canFail {
            var ok: [TypedPredicate] = [.compare(.notEqual, e, .constant(.null, .null), domain: type, options: [])]
            for t in [ta, tb] where t.constantValue == nil { ok.append(.compare(.equal, t, .constant(.null, .null), domain: t.type, options: [])) }
            note([.anyOf(ok)])
        }
        return e
    }

    /// `source.filter { body }`: the to-many key path, and the closure checked for its objects.
    private mutating func filtered(_ source: PredicateExpression, _ body: Predicate, _ at: SourceLocation) throws -> (KeyPathRef, TypedPredicate) {
        let (ref, rel) = try manyKeyPath(source, "filter")
        return (ref, try inScope(of: rel) { try $0.check(body) })
    }

    /// A to-many key path's reference and relationship, its joins counted and its unwraps noted.
    private mutating func manyKeyPath(_ source: PredicateExpression, _ what: String) throws -> (KeyPathRef, Relationship) {
        guard case .keyPath(let scope, let path, let kat) = source else {
            throw fail("'\(what)' needs a to-many key path", source.location)
        }
        let ref = try resolve(scope: scope, path: path, at: kat)
        guard case .toMany(let rel) = ref.end else {
            throw fail("'\(ref.text)' is not a to-many relationship: '\(what)' applies to to-many relationships", kat)
        }
        try countJoins(ref, kat)
        try require(ref, path, kat)
        return (ref, rel)
    }

    /// `body` checked in the scope of an object `rel` relates to.
    private mutating func inScope<T>(of rel: Relationship, _ body: (inout PredicateChecker) throws -> T) throws -> T {
        scopes.append(rel.destination)
        joins.append([:])
        defer { scopes.removeLast(); joins.removeLast() }
        return try body(&self)
    }

    /// A key path, typed by what it ends at; an external-storage attribute only in a test for nil.
    private mutating func keyPathValue(_ scope: Int, _ path: [String], _ at: SourceLocation) throws -> TypedExpression {
        let ref = try resolve(scope: scope, path: path, at: at)
        try countJoins(ref, at)
        try require(ref, path, at)
        switch ref.end {
        case .attribute(let a):
            if a.externalStorage && !nilTest {
                throw fail("'\(ref.text)' uses external storage: its values cannot be compared, searched or sorted (only == nil and != nil)", at)
            }
            return .keyPath(ref, .attribute(a.type))
        case .toOne(let r): return .keyPath(ref, .object(r.destination))
        case .toMany(let r): return .keyPath(ref, .objects(r.destination))
        case .object: return .keyPath(ref, .object(scopes[scopes.count - 1 - scope]))
        }
    }

    /// A literal converted to the expected type, or typed by itself without one.
    private func literalValue(_ lit: PredicateLiteral, _ expected: ValueType?, _ at: SourceLocation) throws -> TypedExpression {
        if let expected { return constant(try coerce(lit, to: expected, at: at), expected, lit) }
        return try inferred(lit, at: at)
    }

    /// A variable: with ``slots``, a parameter slot of the expected type (``NeedsValues`` without
    /// one); else its bound value as a literal (an unknown variable is `.invalid`).
    private mutating func variableValue(_ name: String, _ expected: ValueType?, _ at: SourceLocation) throws -> TypedExpression {
        if slots != nil {
            switch expected {
            case .attribute?, .object?:
                slots?.append(Slot(name: name, type: expected ?? .null, at: at))
                return .parameter((slots?.count ?? 1) - 1, expected ?? .null)
            default: throw NeedsValues()
            }
        }
        guard let v = bindings[name] else {
            throw fail("unknown variable '\(name)' (bindings: \(bindings.keys.sorted().joined(separator: ", ")))", at)
        }
        let lit = try PredicateJSON.literal(v, JSONPath() / "bindings" / name)
        return try literalValue(lit, expected, at)
    }

    /// `count` of a to-many key path, a string (in Unicode scalars) or an array literal; constants fold.
    private mutating func countValue(_ inner: PredicateExpression, _ at: SourceLocation) throws -> TypedExpression {
        if case .filtered(let source, let body, let fat) = inner {
            let (ref, f) = try filtered(source, body, fat)
            if let c = f.constantValue { return c ? .count(ref) : .constant(.int(0), .attribute(.int)) }
            // The count fails where the closure fails for one of the objects.
            if f.isFallible { note([.negated(.any(ref, f.fails))]) }
            return .countWhere(ref, f.lowered)
        }
        if case .keyPath(let scope, let path, let kat) = inner {
            // A member named `count` (a composite's field, an attribute): read, not counted, as in Swift.
            if let member = try? resolve(scope: scope, path: path + ["count"], at: kat), case .attribute = member.end {
                return try value(.keyPath(scope: scope, path: path + ["count"], at: kat), expected: nil)
            }
            let ref = try resolve(scope: scope, path: path, at: kat)
            if case .toMany = ref.end { try countJoins(ref, kat); try require(ref, path, kat); return .count(ref) }
        }
        let t = try value(inner, expected: nil)
        switch t.type {
        case .attribute(.string), .attribute(.url):
            if let c = t.constantValue { return .constant(.int(Int64(c.textValue?.unicodeScalars.count ?? 0)), .attribute(.int)) }
            return .length(t)
        case .array:
            if case .list(let items, _) = t { return .constant(.int(Int64(items.count)), .attribute(.int)) }
            throw fail("'count' needs a to-many relationship, a string or an array", at)
        default:
            throw fail("'count' applies to to-many relationships, strings and arrays, not \(t.type)", at)
        }
    }

    /// `test ? a : b` as a value: a constant test leaves the branch it picks; otherwise
    /// the branches unify to one type (ints in a double conditional become doubles).
    private mutating func conditionalValue(_ test: Predicate, _ a: PredicateExpression, _ b: PredicateExpression,
                                           _ expected: ValueType?, _ at: SourceLocation) throws -> TypedExpression {
        let t = try check(test)
        let depthBefore = requirements.count
        if let c = t.constantValue {
            // A literal branch still takes the type of the other (`false ? $0.startDate : "2026-01-01T00:00:00Z"` is a date).
            let (chosen, other) = c ? (a, b) : (b, a)
            if isLiteralLike(chosen) && !isLiteralLike(other), let to = try? typeOnly(other, expected: expected), to.type != .null {
                return try value(chosen, expected: to.type)
            }
            return try value(chosen, expected: expected)
        }
        // A literal branch takes the type of a key path branch (a url, where a string is expected), else the expected one.
        var ta: TypedExpression, tb: TypedExpression
        do {
            requirements.append([])
            ta = try value(a, expected: expected)
            var needsA = requirements.removeLast()
            requirements.append([])
            tb = try value(b, expected: isLiteralLike(b) && !isLiteralLike(a) && ta.type != .null ? ta.type : expected)
            let needsB = requirements.removeLast()
            if isLiteralLike(a) && !isLiteralLike(b) && tb.type != .null {
                requirements.append([])
                ta = try value(a, expected: tb.type)
                needsA = requirements.removeLast()
            }
            // The test runs first; then the branch it picks.
            if t.isFallible || !needsA.isEmpty || !needsB.isEmpty {
                note([.anyOf([.allOf([t.whenTrue] + needsA), .allOf([t.whenFalse] + needsB)])])
            }
        } catch {
            requirements.removeLast(requirements.count - depthBefore)
            throw error
        }
        let type = try unify(ta.type, tb.type, at)
        if type == .attribute(.double) {
            if case .constant(.int(let i), _) = ta { ta = .constant(.double(Double(i)), type) }
            if case .constant(.int(let i), _) = tb { tb = .constant(.double(Double(i)), type) }
        }
        return .conditional(t.lowered, ta, tb, type)
    }

    /// `a ?? b`: `b` takes `a`'s type; a constant `a` folds to itself, or to `b` when nil.
    private mutating func coalesceValue(_ a: PredicateExpression, _ b: PredicateExpression,
                                        _ expected: ValueType?, _ at: SourceLocation) throws -> TypedExpression {
        let ta = try value(a, expected: expected)
        requirements.append([])
        let tb: TypedExpression
        do { tb = try value(b, expected: ta.type == .null ? expected : ta.type) } catch { requirements.removeLast(); throw error }
        // `b` is evaluated only when `a` is nil: so is what it needs.
        let needs = requirements.removeLast()
        let type = try unify(ta.type, tb.type, at)
        if let c = ta.constantValue {
            if c.isNull { note(needs) }
            return c.isNull ? tb : ta
        }
        if !needs.isEmpty {
            note([.anyOf([.compare(.notEqual, ta, .constant(.null, .null), domain: ta.type, options: []), .allOf(needs)])])
        }
        return .coalesce(ta, tb, type)
    }

    private func unify(_ a: ValueType, _ b: ValueType, _ at: SourceLocation) throws -> ValueType {
        if a == b { return a }
        if a == .null { return b }
        if b == .null { return a }
        if a.isNumeric && b.isNumeric { return .attribute(.double) }
        throw fail("type mismatch: the two branches are \(a) and \(b)", at)
    }

    private func constant(_ v: SQLValue, _ t: ValueType, _ lit: PredicateLiteral) -> TypedExpression {
        v.isNull ? .constant(.null, .null) : .constant(v, t)
    }

    /// The type of a literal seen without context.
    private func inferred(_ lit: PredicateLiteral, at: SourceLocation) throws -> TypedExpression {
        switch lit {
        case .null: return .constant(.null, .null)
        case .bool(let b): return .constant(.int(b ? 1 : 0), .attribute(.bool))
        case .string(let s): return .constant(.text(s), .attribute(.string))
        case .number(let n):
            if let i = Int64(n) { return .constant(.int(i), .attribute(.int)) }
            guard let d = Double(n), d.isFinite else { throw fail("number out of range", at) }
            return .constant(.double(d), .attribute(.double))
        case .typed(let t, _):
            return .constant(try coerce(lit, to: .attribute(t), at: at), .attribute(t))
        case .array(let items):
            var typed: [TypedExpression] = []
            for item in items { typed.append(try inferred(item, at: at)) }
            var elementType: ValueType?
            for t in typed where t.type != .null {
                guard let current = elementType else { elementType = t.type; continue }
                if current == t.type { continue }
                guard current.isNumeric && t.type.isNumeric else { throw fail("array mixes \(current) and \(t.type) values", at) }
                elementType = .attribute(.double)
            }
            return .list(typed.compactMap(\.constantValue), .array(elementType))
        }
    }

    /// A literal converted to a type, with the same rules as object input.
    func coerce(_ lit: PredicateLiteral, to type: ValueType, at: SourceLocation) throws -> SQLValue {
        if lit == .null { return .null }
        switch type {
        case .null:
            return try inferred(lit, at: at).constantValue ?? .null
        case .attribute(let t):
            let json: JSONValue
            switch lit {
            case .null: return .null
            case .bool(let b): json = .bool(b)
            case .number(let n): json = .number(n)
            case .string(let s): json = .string(s)
            case .array: throw fail("expected a \(t.rawValue) value, found an array", at)
            case .typed(let lt, let inner):
                let compatible = lt == t || (t == .string && lt == .url) || (t == .url && lt == .string)
                guard compatible else { throw fail("type mismatch: expected \(t.rawValue), found a \(lt.rawValue) literal", at) }
                json = inner
            }
            if t == .bool, case .bool = json {} else if t == .bool {
                throw fail("type mismatch: expected bool, found \(json.typeName)", at)
            }
            if (t == .string || t == .url), case .string = json {} else if t == .string || t == .url {
                throw fail("type mismatch: expected \(t.rawValue), found \(json.typeName)", at)
            }
            if (t == .int || t == .double), case .number = json {} else if t == .int || t == .double {
                throw fail("type mismatch: expected \(t.rawValue), found \(json.typeName)", at)
            }
            if t == .int, case .number(let n) = json, Int64(n) == nil {
                // An int attribute compared with 2.5: compare as doubles.
                guard let d = Double(n), d.isFinite else { throw fail("number out of range", at) }
                return .double(d)
            }
            do { return try ValueCodec.convert(json, type: t) } catch let e as StrataError {
                throw fail("expected a \(t.rawValue) value: \(e.message)", at)
            }
        case .object(let entity):
            guard case .string(let text) = lit else { throw fail("expected an identifier like \"\(entity.name)/1\" or nil", at) }
            guard let parsed = ObjectID.parse(text), let named = schema.entity(named: parsed.entity), named.root === entity.root else {
                throw fail("the value is not an identifier of a \(entity.name) (like \"\(entity.name)/1\")", at)
            }
            return .int(parsed.pk)
        case .objects:
            throw fail("a to-many relationship cannot be compared with a literal", at)
        case .array:
            throw fail("expected an array", at)
        }
    }

    // MARK: Key paths

    /// Checks every key path and entity name of the tree against the model,
    /// including branches that constant folding later drops (a typo in the
    /// search part of `searchText.isEmpty ? true : …` must fail even while
    /// `searchText` is empty). Types are checked by ``check(_:)``.
    mutating func checkKeyPaths(_ p: Predicate) throws {
        switch p {
        case .constant: return
        case .value(let e): try checkKeyPaths(e)
        case .conjunction(let parts, _), .disjunction(let parts, _):
            for part in parts { try checkKeyPaths(part) }
        case .negation(let inner, _): try checkKeyPaths(inner)
        case .comparison(_, let a, let b, _, _), .string(_, let a, let b, _, _), .inCollection(let a, let b, _):
            try checkKeyPaths(a); try checkKeyPaths(b)
        case .between(let x, let lo, let hi, _):
            try checkKeyPaths(x); try checkKeyPaths(lo); try checkKeyPaths(hi)
        case .typeCheck(let scope, let name, let at):
            guard scope < scopes.count else { throw fail("'$\(scope)' is not in scope", at) }
            guard schema.entity(named: name) != nil else { throw fail("unknown entity '\(name)' in 'is'", at) }
        case .anySatisfy(let seq, let inner, _), .allSatisfy(let seq, let inner, _):
            try checkKeyPaths(seq)
            try checkKeyPaths(forObjectsOf: seq) { try $0.checkKeyPaths(inner) }
        case .isEmpty(let e, _): try checkKeyPaths(e)
        case .conditional(let t, let a, let b, _):
            try checkKeyPaths(t); try checkKeyPaths(a); try checkKeyPaths(b)
        case .orElse(let p, let d, _): try checkKeyPaths(p); try checkKeyPaths(d)
        case .evaluate: return  // checked when inlined (``bound(_:_:_:)``)
        }
    }

    /// `body` in the scope of the related objects of `source` (a to-many key path, or a filter of
    /// one); nothing when `source` is not one (checking it said why).
    private mutating func checkKeyPaths(forObjectsOf source: PredicateExpression, _ body: (inout PredicateChecker) throws -> Void) throws {
        var inner = source
        if case .filtered(let s, _, _) = source { inner = s }
        guard case .keyPath(let scope, let path, let at) = inner,
              case .toMany(let rel) = try resolve(scope: scope, path: path, at: at).end else { return }
        scopes.append(rel.destination)
        defer { scopes.removeLast() }
        try body(&self)
    }

    private mutating func checkKeyPaths(_ e: PredicateExpression) throws {
        switch e {
        case .keyPath(let scope, let path, let at): _ = try resolve(scope: scope, path: path, at: at)
        case .variable, .literal: return
        case .count(let inner, _): try checkKeyPaths(inner)
        case .conditional(let t, let a, let b, _):
            try checkKeyPaths(t); try checkKeyPaths(a); try checkKeyPaths(b)
        case .coalesce(let a, let b, _), .arithmetic(_, let a, let b, _): try checkKeyPaths(a); try checkKeyPaths(b)
        case .aggregate(_, let source, let v, _):
            try checkKeyPaths(source)
            try checkKeyPaths(forObjectsOf: source) { try $0.checkKeyPaths(v) }
        case .filtered(let source, let body, _):
            try checkKeyPaths(source)
            try checkKeyPaths(forObjectsOf: source) { try $0.checkKeyPaths(body) }
        }
    }

    /// Records the tables a key path joins in its scope (as ``PredicateCompiler/hopAlias(_:)``
    /// joins them: once per distinct hop path); more than ``maxJoins`` in one scope is `.invalid`.
    mutating func countJoins(_ ref: KeyPathRef, _ at: SourceLocation) throws {
        let index = joins.count - 1 - ref.scope
        guard index >= 0, index < joins.count else { return }
        var hops = ref.hops
        // A to-one whose link the other side holds is read through one more join.
        if case .toOne(let r) = ref.end, !r.isHeldInRow { hops.append(r) }
        var key = ""
        for r in hops {
            key += "." + r.name
            if case .inPairs = r.placement { joins[index][key] = 2 } else { joins[index][key] = 1 }
        }
        let total = joins[index].values.reduce(0, +)
        if total > PredicateChecker.maxJoins {
            throw fail("too many relationships followed: the key paths \(index == 0 ? "of this predicate and its sort keys" : "inside this closure") join \(total) tables, at most \(PredicateChecker.maxJoins) (SQLite joins at most 64 in one query)", at)
        }
    }

    /// The key path `path` from the object in `scope`; a component marked `!` (force-unwrapped)
    /// is noted in ``KeyPathRef/forced``.
    func resolve(scope: Int, path marked: [String], at: SourceLocation) throws -> KeyPathRef {
        var ref = try resolve(scope: scope, plain: marked.map(PredicateChecker.unmarked), at: at)
        ref.forced = marked.indices.filter { marked[$0].hasSuffix("!") }.map { $0 + 1 }
        return ref
    }

    /// A key path without marks (sort keys and fetched properties take none).
    func resolve(scope: Int, plain path: [String], at: SourceLocation) throws -> KeyPathRef {
        guard scope < scopes.count else { throw fail("no object in scope \(scope)", at) }
        var entity = scopes[scopes.count - 1 - scope]
        var hops: [Relationship] = []
        var casts: [(hops: Int, entity: Entity)] = []
        let text = path.joined(separator: ".")
        if path.isEmpty { return KeyPathRef(scope: scope, hops: [], end: .object, text: "$\(scope)") }
        func ref(_ end: KeyPathRef.End, _ hops: [Relationship]) -> KeyPathRef {
            var r = KeyPathRef(scope: scope, hops: hops, end: end, text: text)
            r.casts = casts
            return r
        }
        /// The object so far as an `e` (nil where it is another entity).
        func cast(to e: Entity) {
            if !entity.isKind(of: e) { casts.append((hops.count, e)) }
            entity = e
        }
        for (i, name) in path.enumerated() {
            let last = i == path.count - 1
            if let target = PredicateChecker.castTarget(name) {
                // `as?`: to a subentity (checked) or to the entity or an ancestor (nothing to check).
                guard let e = schema.entity(named: target) else { throw fail("unknown entity '\(target)' in 'as?' of key path '\(text)'", at) }
                guard e.isKind(of: entity) || entity.isKind(of: e) else {
                    throw fail("'\(entity.name)' objects can never be '\(target)' (not a subentity), in key path '\(text)'", at)
                }
                if e.isKind(of: entity) { cast(to: e) }
                guard last else { continue }
                // The object itself (its identity), nil where it is not one.
                guard let hop = hops.last else { return ref(.object, []) }
                return ref(.toOne(hop), Array(hops.dropLast()))
            }
            if last && name == PredicateChecker.identity && entity.attributeByName[name] == nil && entity.relationshipByName[name] == nil {
                // SwiftData's `persistentModelID`: the object the path reaches, compared by identity.
                guard let hop = hops.last else { return ref(.object, []) }
                return ref(.toOne(hop), Array(hops.dropLast()))
            }
            if entity.attributeByName[name] == nil && entity.relationshipByName[name] == nil, let e = try subentityDeclaring(name, of: entity, text, at) {
                // A member of one subentity: the key path is nil for the others (`$0.perdiem` of a Trip).
                cast(to: e)
            }
            if var a = entity.attributeByName[name] {
                if a.isComposite && !last {
                    // A composite's field: the attribute that stores it (`address.city`), its last component.
                    let field = path[i + 1]
                    guard let f = a.fields.first(where: { $0.fieldName == field }) else {
                        throw fail("unknown key path '\(text)': composite '\(entity.name).\(name)' has no field '\(field)' (its fields: \(a.fields.map(\.fieldName).joined(separator: ", ")))", at)
                    }
                    guard i + 2 == path.count else { throw fail("'\(name).\(field)' in key path '\(text)' is a field of a composite; it has no members", at) }
                    a = f
                } else if !last {
                    throw fail("'\(name)' in key path '\(text)' is an attribute; only to-one relationships can be followed", at)
                }
                if a.isTransient { throw fail("transient attribute '\(entity.name).\(name)' is not stored and cannot be used in a predicate", at) }
                return ref(.attribute(a), hops)
            }
            guard let r = entity.relationshipByName[name] else {
                throw fail("unknown key path '\(text)': '\(entity.name)' has no attribute or relationship '\(name)'", at)
            }
            if r.isToMany {
                guard last else { throw fail("key path '\(text)' goes through to-many '\(name)'; use contains(where:), allSatisfy, count or isEmpty", at) }
                guard casts.isEmpty else {
                    throw fail("key path '\(text)': a to-many relationship of a subentity is not supported after a cast; test the entity with 'is' and use a closure over the relationship of the subentity's own fetch", at)
                }
                return ref(.toMany(r), hops)
            }
            if last { return ref(.toOne(r), hops) }
            hops.append(r)
            entity = r.destination
        }
        throw fail("empty key path", at)
    }

    /// The entity named by a cast component of a key path (`as:BusinessTrip`), if it is one.
    static func castTarget(_ component: String) -> String? {
        component.hasPrefix("as:") ? String(component.dropFirst(3)) : nil
    }

    /// The one subentity of `entity` that declares a member `name` (nil when none does).
    /// - Throws: `.invalid` when several unrelated subentities declare one.
    private func subentityDeclaring(_ name: String, of entity: Entity, _ text: String, _ at: SourceLocation) throws -> Entity? {
        var declaring: [Entity] = []
        for d in entity.descendants where d !== entity {
            let owner = d.attributeByName[name]?.entity ?? d.relationshipByName[name]?.entity
            if let owner, !declaring.contains(where: { $0 === owner }) { declaring.append(owner) }
        }
        // A member declared by an entity and by its own subentity is the ancestor's.
        declaring = declaring.filter { e in !declaring.contains { $0 !== e && e.isKind(of: $0) } }
        guard declaring.count <= 1 else {
            throw fail("'\(name)' in key path '\(text)' belongs to several subentities of '\(entity.name)' (\(declaring.map(\.name).joined(separator: ", "))): say which with as?, e.g. ($0 as? \(declaring[0].name))?.\(name)", at)
        }
        return declaring.first
    }
}

extension SQLValue {
    var textValue: String? { if case .text(let s) = self { return s } else { return nil } }
    var isEmptyText: Bool {
        switch self {
        case .null: return true
        case .text(let s): return s.isEmpty
        default: return false
        }
    }
}

// MARK: Prepared fetches

extension PredicateChecker {
    /// The value a run of a prepared fetch binds to `slot`, checked as the same
    /// variable bound in a descriptor would be; nil when the value changes the
    /// shape of the check (nil, or an array): the run then checks the predicate
    /// with its values.
    func slotValue(_ slot: Slot, _ value: JSONValue) throws -> SQLValue? {
        switch value {
        case .null, .array: return nil
        default: break
        }
        // A scalar is its own literal; only a typed literal (an object) needs the path for its errors.
        let lit: PredicateLiteral
        switch value {
        case .bool(let b): lit = .bool(b)
        case .number(let n): lit = .number(n)
        case .string(let s): lit = .string(s)
        default: lit = try PredicateJSON.literal(value, JSONPath() / "bindings" / slot.name)
        }
        let v = try coerce(lit, to: slot.type, at: slot.at)
        if v.isNull { return nil }
        if let a = slot.enumAttribute { try checkEnumMember(a, v, slot.at, bound: slot.name) }
        return v
    }
}
