/// Compiles a typed predicate to SQL spelled by a ``QueryDialect``. Every value
/// becomes a bound parameter; identifiers come from the validated schema only.
/// The forms and their nesting are measured against SQLite's parser (``depth(_:safe:)``).
///
/// Null semantics follow ``Evaluation``: in a plain WHERE position SQL's
/// NULL-is-false is already right, and the compiler keeps expressions
/// index-friendly (`t."endDate" >= ?1`); under NOT, ALL and CASE it makes
/// every condition two-valued with `coalesce(…, 0)`.
struct PredicateCompiler {
    final class Scope {
        let alias: String
        let entity: Entity
        var joins: [String] = []
        var joinAliases: [String: String] = [:]
        /// Conditions that check the storage class of each column this scope's query reads
        /// (``QueryDialect/storedAs(_:_:entity:attribute:key:)``), one per column.
        var guards: [String] = []
        var guarded: Set<String> = []
        init(alias: String, entity: Entity) { self.alias = alias; self.entity = entity }
    }

    let dialect: any QueryDialect
    private(set) var args: [SQLValue]
    /// Innermost last.
    private(set) var scopes: [Scope]
    private var counter = 0

    init(root: Entity, dialect: any QueryDialect, alias: String = "t", args: [SQLValue] = []) {
        self.dialect = dialect
        self.args = args
        scopes = [Scope(alias: alias, entity: root)]
    }

    /// LEFT JOINs the outermost scope needs (add them to the FROM clause).
    var rootJoins: [String] { scopes[0].joins }

    /// The guards of the columns the outermost scope read (predicate and sort keys) as one
    /// condition, nil when there are none. Put it before the predicate: every row the query
    /// visits is checked, whatever the predicate answers for it (docs/JSON.md, "Damaged stores").
    var rootGuards: String? {
        let guards = scopes[0].guards
        return guards.count > 1 ? Junction.balanced(guards, "AND") : guards.first
    }

    /// Checks the storage class of `column`, read from the row `alias` of `ref`'s scope (a value compared,
    /// or a link followed).
    private mutating func guardColumn(_ ref: KeyPathRef, alias: String, _ column: String, _ stored: StoredClass,
                                      name: String, of entity: Entity) {
        guardColumn(scope(ref), alias: alias, column, stored, name: name, of: entity)
    }

    private func guardColumn(_ s: Scope, alias: String, _ column: String, _ stored: StoredClass, name: String, of entity: Entity) {
        guard s.guarded.insert(column).inserted else { return }
        // The declaring entity names the row, not the row's `_entity`: reading it would make an index
        // on the column no longer covering.
        s.guards.append(dialect.storedAs(column, stored, entity: dialect.nameLiteral(entity.name), attribute: dialect.nameLiteral(name),
                                         key: "\(alias).\(dialect.keyColumn)"))
    }

    mutating func bind(_ v: SQLValue) -> String {
        args.append(v)
        return dialect.parameter(args.count)
    }

    /// Where a prepared fetch's variables go: argument `index` takes slot `slot`'s value, folded with `options`.
    struct SlotArgument {
        let index: Int
        let slot: Int
        let options: StringOptions
    }

    /// The arguments that take variables' values (``TypedExpression/parameter``), filled at each run.
    private(set) var slotArguments: [SlotArgument] = []

    /// A placeholder argument for a variable's value, folded for string options when it is given.
    private mutating func bindSlot(_ slot: Int, _ options: StringOptions) -> String {
        slotArguments.append(SlotArgument(index: args.count, slot: slot, options: options))
        return bind(.null)
    }

    private mutating func nextAlias(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)\(counter)"
    }

    // MARK: Key paths

    private func scope(_ ref: KeyPathRef) -> Scope { scopes[scopes.count - 1 - ref.scope] }

    /// The alias of the row at the end of the to-one hops (joining as needed).
    mutating func hopAlias(_ ref: KeyPathRef) -> String {
        let s = scope(ref)
        var alias = s.alias
        var key = ""
        for r in ref.hops {
            key += "." + r.name
            if let a = s.joinAliases[key] { alias = a; continue }
            let na = nextAlias("p")
            let dest = dialect.quote(dialect.table(r.destination))
            switch r.placement {
            case .inRow:
                let link = "\(alias).\(dialect.quote(dialect.column(.link(r))))"
                s.joins.append("LEFT JOIN \(dest) \(na) ON \(na).\(dialect.keyColumn) = \(link)")
                guardColumn(s, alias: alias, link, .integer, name: r.name, of: r.entity)
            case .inInverseRows:
                s.joins.append("LEFT JOIN \(dest) \(na) ON \(na).\(dialect.quote(linkColumn(r))) = \(alias).\(dialect.keyColumn)")
            case .inPairs:
                let (table, ownerCol, targetCol) = dialect.pairTable(r)
                let jt = nextAlias("pj")
                s.joins.append("LEFT JOIN \(dialect.quote(table)) \(jt) ON \(jt).\(dialect.quote(ownerCol)) = \(alias).\(dialect.keyColumn) LEFT JOIN \(dest) \(na) ON \(na).\(dialect.keyColumn) = \(jt).\(dialect.quote(targetCol))")
            }
            s.joinAliases[key] = na
            alias = na
        }
        return alias
    }

    mutating func column(_ ref: KeyPathRef) -> String {
        let value = plainColumn(ref)
        guard !ref.casts.isEmpty else { return value }
        // Nil where an object on the way is not of the entity the key path casts it to.
        var checks: [String] = []
        let path = ref.path
        for cast in ref.casts {
            let prefix = KeyPathRef(scope: ref.scope, hops: Array(path[0..<min(cast.hops, path.count)]), end: .object, text: "")
            let alias = hopAlias(prefix)
            checks.append("\(alias).\(dialect.entityColumn) IN (\(cast.entity.descendants.map { bind(.text($0.name)) }.joined(separator: ", ")))")
        }
        return "CASE WHEN \(checks.joined(separator: " AND ")) THEN \(value) END"
    }

    private mutating func plainColumn(_ ref: KeyPathRef) -> String {
        let alias = hopAlias(ref)
        switch ref.end {
        case .attribute(let a):
            let c = "\(alias).\(dialect.quote(a.name))"
            guardColumn(ref, alias: alias, c, StoredClass(a), name: a.name, of: a.entity)
            return c
        case .object: return "\(alias).\(dialect.keyColumn)"
        case .toOne(let r):
            switch r.placement {
            case .inRow:
                let c = "\(alias).\(dialect.quote(dialect.column(.link(r))))"
                guardColumn(ref, alias: alias, c, .integer, name: r.name, of: r.entity)
                return c
            default:
                let extended = KeyPathRef(scope: ref.scope, hops: ref.hops + [r], end: .object, text: ref.text)
                return "\(hopAlias(extended)).\(dialect.keyColumn)"
            }
        case .toMany: return "NULL"
        }
    }

    /// `FROM … WHERE <link>` of a to-many key path's objects, with the element alias.
    private mutating func manySource(_ ref: KeyPathRef) -> (from: String, link: String, alias: String, entity: Entity)? {
        guard case .toMany(let rel) = ref.end else { return nil }
        let owner = hopAlias(ref)
        let e = nextAlias("s")
        let dest = dialect.quote(dialect.table(rel.destination))
        switch rel.placement {
        case .inInverseRows:
            return ("\(dest) \(e)", "\(e).\(dialect.quote(linkColumn(rel))) = \(owner).\(dialect.keyColumn)", e, rel.destination)
        case .inPairs:
            let (table, ownerCol, targetCol) = dialect.pairTable(rel)
            let jt = nextAlias("sj")
            return ("\(dialect.quote(table)) \(jt) JOIN \(dest) \(e) ON \(e).\(dialect.keyColumn) = \(jt).\(dialect.quote(targetCol))",
                    "\(jt).\(dialect.quote(ownerCol)) = \(owner).\(dialect.keyColumn)", e, rel.destination)
        case .inRow:
            return ("\(dest) \(e)", "\(e).\(dialect.keyColumn) = \(owner).\(dialect.quote(dialect.column(.link(rel))))", e, rel.destination)
        }
    }

    /// The column of the destination's rows that holds a link kept there (`.inInverseRows`: the inverse's).
    private func linkColumn(_ rel: Relationship) -> String {
        dialect.column(.link(rel.inverse ?? rel))
    }

    private mutating func subquery(_ ref: KeyPathRef, select: String, inner: ((inout PredicateCompiler) -> String)?) -> String {
        guard let src = manySource(ref) else { return "NULL" }
        var condition = src.link
        if let inner {
            scopes.append(Scope(alias: src.alias, entity: src.entity))
            let c = inner(&self)
            let s = scopes.removeLast()
            // The inner condition first: its nesting then starts at the bottom of the parser stack.
            // The guards of the element's columns follow it: an element is checked when it decides
            // the answer (it matches `any`'s condition, or fails `all`'s).
            let guards = s.guards.isEmpty ? "" : " AND " + Junction.balanced(s.guards, "AND")
            condition = "\(c)\(guards) AND \(condition)"
            return "(SELECT \(select) FROM \(src.from)\(s.joins.isEmpty ? "" : " " + s.joins.joined(separator: " ")) WHERE \(condition))"
        }
        return "(SELECT \(select) FROM \(src.from) WHERE \(condition))"
    }

    /// `(SELECT max(value) FROM related WHERE filter AND guards AND link)`: the value read in the
    /// related object's scope; every related row it reads is checked. `@sum` and `@avg` call the
    /// store's exact aggregates (``QueryDialect/exactAggregate(_:integer:_:)``).
    private mutating func aggregate(_ f: AggregateFunction, _ ref: KeyPathRef, _ filter: TypedPredicate?, _ value: TypedExpression) -> String {
        guard let src = manySource(ref) else { return "NULL" }
        scopes.append(Scope(alias: src.alias, entity: src.entity))
        let x = expression(value)
        // Decimals (an aggregation's, never a predicate's: the checker refuses them) by value, exactly.
        let decimal = value.type == .attribute(.decimal)
        let v = f.isExact ? (decimal ? dialect.decimalSum(x) : dialect.exactAggregate(f, integer: value.type == .attribute(.int), x))
                          : (decimal ? dialect.decimalExtreme(f, x) : "\(f.rawValue)(\(x))")
        let condition = filter.map { predicate($0) }
        let s = scopes.removeLast()
        let conditions = (condition.map { [$0] } ?? []) + s.guards + [src.link]
        let joins = s.joins.isEmpty ? "" : " " + s.joins.joined(separator: " ")
        return "(SELECT \(v) FROM \(src.from)\(joins) WHERE \(conditions.joined(separator: " AND ")))"
    }

    // MARK: Predicates

    /// - Parameter safe: the result must be 0 or 1, never NULL.
    ///
    /// The SQL is kept flat, because SQLite 3.40's parser holds at most 100
    /// pending symbols and an expression tree at most 1,000 levels: `NOT` takes
    /// no parentheses (every operand binds tighter), the deepest part of an
    /// `AND`/`OR` comes first (SQLite then reduces left to right and keeps
    /// only the opening parentheses), long lists nest as a balanced tree of
    /// at most ``flatTerms`` terms per level, and the innermost condition of
    /// a subquery comes first in its WHERE. ``PredicateCompiler/depth(_:safe:)``
    /// bounds what this needs, for the checker.
    mutating func predicate(_ p: TypedPredicate, safe: Bool = false) -> String {
        switch p {
        case .constant(let b): return dialect.boolean(b)
        case .and(let parts): return junction(parts, "AND", safe: safe)
        case .or(let parts): return junction(parts, "OR", safe: safe)
        case .not(let inner): return "NOT \(predicate(inner, safe: true))"
        case .compare(let op, let a, let b, let domain, let options):
            if let branched = PredicateCompiler.branched(op, a, b, domain) { return predicate(branched, safe: safe) }
            if !options.isEmpty && domain != .attribute(.decimal) {
                // One function call per row that folds `a` into a reused buffer; `b` folded once when constant.
                return "(\(dialect.foldedCompare(op, expression(a), operand(b, options), options: Int(options.rawValue))))"
            }
            let x = operand(a, options)
            let y = operand(b, options)
            // The collation goes on the left operand: SQLite 3.40 can answer a
            // right-hand COLLATE from a BINARY index and return wrong rows.
            let decimal = domain == .attribute(.decimal)
            let left = decimal ? dialect.collate(x, .decimal) : x
            let right = decimal && y != "NULL" ? dialect.collatedOperand(y, .decimal) : y
            switch op {
            case .equal: return "(\(dialect.isSame(left, right)))"
            case .notEqual: return "(\(dialect.isNotSame(left, right)))"
            default:
                return twoValued("\(left) \(op.rawValue) \(right)", safe)
            }
        case .string(.matches, .keyPath(let ref, let type), let b, _):
            guard case .attribute(let attribute) = ref.end else { return dialect.boolean(false) }  // the checker allows no other
            let text = expression(.keyPath(ref, type))
            let key = "\(hopAlias(ref)).\(dialect.keyColumn)"
            return "(\(dialect.matches(key: key, text: text, index: dialect.searchIndex(attribute), query: expression(b))))"
        case .string(let op, let a, let b, let options):
            if op == .localizedStandardContains {
                return dialect.localizedStandardContains(expression(a), operand(b, [.caseInsensitive, .diacriticInsensitive]))
            }
            // One function call per row, never NULL (no two-valued wrapper); it folds `a` into
            // a reused buffer, `b` is folded once when constant.
            return "(\(dialect.foldedTest(op, expression(a), operand(b, options), options: Int(options.rawValue))))"
        case .inList(let e, let values, let domain):
            let x = expression(e)
            let nonNull = values.filter { !$0.isNull }
            let hasNull = nonNull.count != values.count
            var parts: [String] = []
            if !nonNull.isEmpty {
                if domain == .attribute(.decimal) {
                    var terms: [String] = []
                    for v in nonNull { terms.append("\(dialect.collate(x, .decimal)) = \(dialect.collatedOperand(bind(v), .decimal))") }
                    parts.append(Junction.balanced(terms, "OR"))
                } else {
                    // Ints and doubles in separate lists: an engine that gives a mixed list one type
                    // (PostgreSQL: double precision) would round the ints past 2^53 and compare wrongly.
                    let ints = nonNull.filter { if case .int = $0 { return true } else { return false } }
                    let others = nonNull.filter { if case .int = $0 { return false } else { return true } }
                    for list in [ints, others] where !list.isEmpty {
                        if list.count <= PredicateCompiler.inlineListLimit || list.contains(where: { $0.textValue?.utf8.contains(0) ?? false }) {
                            // (json_each cuts text at a NUL character: such lists bind each value.)
                            parts.append("\(x) IN (\(list.map { bind($0) }.joined(separator: ", ")))")
                        } else {
                            parts.append(dialect.inJSONArray(x, parameter: bind(SQLValue.jsonArray(list))))
                        }
                    }
                }
            }
            if hasNull { parts.append("\(x) IS NULL") }
            if parts.isEmpty { return dialect.boolean(false) }
            return twoValued(parts.joined(separator: " OR "), safe)
        case .isA(let scopeIndex, let entities):
            let s = scopes[scopes.count - 1 - scopeIndex]
            return "\(s.alias).\(dialect.entityColumn) IN (\(entities.map { bind(.text($0.name)) }.joined(separator: ", ")))"
        case .any(let ref, let inner):
            return "EXISTS " + subquery(ref, select: "1") { c in c.predicate(inner) }
        case .all(let ref, let inner):
            return "NOT EXISTS " + subquery(ref, select: "1") { c in "NOT \(c.predicate(inner, safe: true))" }
        case .isEmptyMany(let ref):
            return "NOT EXISTS " + subquery(ref, select: "1", inner: nil)
        case .isEmptyString(let e):
            return "(\(dialect.coalesce([expression(e), "''"])) = '')"
        case .conditional(let t, let a, let b):
            return "CASE WHEN \(predicate(t)) THEN \(predicate(a, safe: true)) ELSE \(predicate(b, safe: true)) END"
        case .boolValue(let e):
            let x = dialect.truth(expression(e))
            return safe ? dialect.coalesce([x, dialect.boolean(false)]) : x
        case .guarded:
            // Fetches compile the lowered condition (``TypedPredicate/lowered``); as one condition, a
            // guard is its requirements and its condition.
            return predicate(p.whenTrue, safe: safe)
        }
    }

    /// `a op b` compared branch by branch where `a` or `b` is a `??` or `?:` of ints and doubles:
    /// each branch's value keeps its own type, as the evaluator keeps it (an engine that gives the
    /// pair one type, PostgreSQL's double precision, would round an int past 2^53). Nil otherwise.
    static func branched(_ op: ComparisonOperator, _ a: TypedExpression, _ b: TypedExpression, _ domain: ValueType) -> TypedPredicate? {
        /// Whether a value is an int or a double as stored (a constant by its value: `2.5` next to an int is a double).
        func isDouble(_ e: TypedExpression) -> Bool? {
            switch e {
            case .constant(.int, _): return false
            case .constant(.double, _): return true
            default: return e.type.isNumeric ? e.type == .attribute(.double) : nil
            }
        }
        func mixed(_ e: TypedExpression) -> Bool {
            switch e {
            case .coalesce(let x, let y, _), .conditional(_, let x, let y, _):
                if let dx = isDouble(x), let dy = isDouble(y), dx != dy { return true }
                return mixed(x) || mixed(y)
            default: return false
            }
        }
        func split(_ e: TypedExpression, _ compare: (TypedExpression) -> TypedPredicate) -> TypedPredicate? {
            switch e {
            case .coalesce(let x, let y, _) where mixed(e):
                return .conditional(.compare(.notEqual, x, .constant(.null, .null), domain: x.type, options: []), compare(x), compare(y))
            case .conditional(let t, let x, let y, _) where mixed(e):
                return .conditional(t, compare(x), compare(y))
            default: return nil
            }
        }
        guard domain.isNumeric else { return nil }
        if let p = split(a, { .compare(op, $0, b, domain: domain, options: []) }) { return p }
        return split(b, { .compare(op, a, $0, domain: domain, options: []) })
    }

    /// A condition that may be NULL: as is (in parentheses), or 0 for NULL when it must be two-valued.
    private func twoValued(_ c: String, _ safe: Bool) -> String {
        safe ? dialect.coalesce([c, dialect.boolean(false)]) : "(\(c))"
    }

    /// `IN` lists up to this many values bind each; longer ones bind one JSON array.
    static let inlineListLimit = 16

    /// `(a AND b AND …)`, the part with the deepest SQL first.
    private mutating func junction(_ parts: [TypedPredicate], _ op: String, safe: Bool) -> String {
        var ordered = parts
        if let deepest = parts.indices.max(by: { PredicateCompiler.depth(parts[$0], safe: safe) < PredicateCompiler.depth(parts[$1], safe: safe) }), deepest != 0 {
            ordered.swapAt(0, deepest)
        }
        var terms: [String] = []
        for part in ordered { terms.append(predicate(part, safe: safe)) }
        return Junction.balanced(terms, op)
    }

    /// An operand, folded for string options (constants are folded here, not per row).
    private mutating func operand(_ e: TypedExpression, _ options: StringOptions) -> String {
        if options.isEmpty { return expression(e) }
        if case .constant(.text(let s), _) = e { return bind(.text(Evaluation.fold(s, options))) }
        if case .parameter(let slot, _) = e { return bindSlot(slot, options) }
        return dialect.fold(expression(e), options: Int(options.rawValue))
    }

    mutating func expression(_ e: TypedExpression) -> String {
        switch e {
        case .keyPath(let ref, _): return column(ref)
        case .constant(let v, _): return v.isNull ? "NULL" : bind(v)
        case .parameter(let slot, _): return bindSlot(slot, [])
        case .list(let values, _): return bind(SQLValue.jsonArray(values))
        case .count(let ref): return subquery(ref, select: "count(*)", inner: nil)
        case .countWhere(let ref, let p): return subquery(ref, select: "count(*)") { c in c.predicate(p) }
        case .arithmetic(let op, let a, let b, _, let integer): return dialect.arithmetic(op, integer: integer, expression(a), expression(b))
        case .aggregate(let f, let ref, let filter, let value, _): return aggregate(f, ref, filter, value)
        case .length(let inner): return dialect.length(expression(inner))
        case .conditional(let t, let a, let b, _):
            return "CASE WHEN \(predicate(t)) THEN \(expression(a)) ELSE \(expression(b)) END"
        case .coalesce:
            // `a ?? (b ?? c)` and `(a ?? b) ?? c` are one call `coalesce(a, b, c)`.
            var terms: [String] = []
            for operand in PredicateCompiler.coalesceOperands(e) { terms.append(expression(operand)) }
            return dialect.coalesce(terms)
        }
    }
}

// MARK: - Nesting

extension PredicateCompiler {
    /// The operands of nested `??` in order: `a ?? (b ?? c)` gives a, b, c.
    static func coalesceOperands(_ e: TypedExpression) -> [TypedExpression] {
        guard case .coalesce(let a, let b, _) = e else { return [e] }
        return coalesceOperands(a) + coalesceOperands(b)
    }

    /// How much of SQLite's parser stack the SQL of `p` takes, an upper bound
    /// measured against SQLite 3.40 for each form ``predicate(_:safe:)`` emits
    /// (one unit per pending symbol). The checker rejects predicates that need
    /// more than ``PredicateChecker/maxSQLDepth``.
    static func depth(_ p: TypedPredicate, safe: Bool = false) -> Int {
        // A wrapper `coalesce(c, 0)` adds 3.
        let wrap = safe ? 3 : 0
        switch p {
        case .constant, .isA: return 3
        case .and(let parts), .or(let parts):
            return Junction.depth(parts.map { depth($0, safe: safe) })
        case .not(let inner): return 1 + depth(inner, safe: true)
        case .compare(let op, let a, let b, let domain, let options):
            if let branched = branched(op, a, b, domain) { return depth(branched, safe: safe) }
            if !options.isEmpty && domain != .attribute(.decimal) { return foldedCallDepth(a, b) }
            let fold = options.isEmpty ? 0 : 3
            return wrap + max(2 + fold + depth(a), 4 + fold + depth(b))
        case .string(let op, let a, let b, _):
            // `matches`: `(key IN (SELECT … WHERE … MATCH f(?) UNION ALL SELECT …) AND g(text, ?))`.
            return foldedCallDepth(a, b) + (op == .matches ? 8 : 0)
        case .inList(let e, let values, let domain):
            if domain == .attribute(.decimal) {
                // A balanced OR of `x COLLATE strata_decimal = ?`.
                return wrap + 8 + depth(e) + Junction.balancedDepth(values.count)
            }
            // `x IN (?1, ?2)` or `x IN (SELECT value FROM json_each(?1))`, for ints and for other values.
            return wrap + (values.count <= inlineListLimit ? 5 : 16) + depth(e) + 2
        case .any(_, let inner): return 9 + depth(inner)
        case .all(_, let inner): return 10 + depth(inner, safe: true)
        case .isEmptyMany: return 12
        case .isEmptyString(let e): return 5 + depth(e)
        case .conditional(let t, let a, let b):
            return max(3 + depth(t), 6 + depth(a, safe: true), 6 + depth(b, safe: true))
        case .boolValue(let e): return wrap + depth(e)
        case .guarded: return depth(p.whenTrue, safe: safe)
        }
    }

    /// `(strata_contains(a, b, 1))` and its kind (never NULL: no wrapper), `b` in
    /// `strata_fold(b, 1)` unless a constant (folded when compiled), a variable (folded
    /// when bound) or without options.
    static func foldedCallDepth(_ a: TypedExpression, _ b: TypedExpression) -> Int {
        let folded: Int
        switch b {
        case .constant, .parameter: folded = 1
        default: folded = 4 + depth(b)
        }
        return max(5 + depth(a), 7 + folded)
    }

    static func depth(_ e: TypedExpression) -> Int {
        switch e {
        case .keyPath(let ref, _): return ref.casts.isEmpty ? 1 : 6
        case .constant, .parameter, .list: return 1
        case .count: return 14
        case .countWhere(_, let p): return 14 + depth(p)
        case .arithmetic(_, let a, let b, _, _): return 5 + max(depth(a), depth(b))
        case .aggregate(_, _, let filter, let value, _): return 14 + max(depth(value), filter.map { depth($0) } ?? 0)
        case .length(let inner): return 3 + depth(inner)
        case .conditional(let t, let a, let b, _): return max(3 + depth(t), 6 + depth(a), 6 + depth(b))
        case .coalesce:
            let operands = coalesceOperands(e).map(depth)
            // Past 100 arguments the call nests once per 99 (a long list stays shallow).
            return 4 + (operands.max() ?? 0) + 4 * (operands.count / 99)
        }
    }
}

extension PredicateCompiler {
    /// An upper bound of the parameters the SQL of `p` binds.
    static func parameterCount(_ p: TypedPredicate) -> Int {
        switch p {
        case .constant, .isEmptyMany: return 0
        case .and(let parts), .or(let parts): return parts.reduce(0) { $0 + parameterCount($1) }
        case .not(let inner), .any(_, let inner), .all(_, let inner): return parameterCount(inner)
        case .compare(let op, let a, let b, let domain, _):
            if let branched = branched(op, a, b, domain) { return parameterCount(branched) }
            return parameterCount(a) + parameterCount(b)
        case .string(_, let a, let b, _): return parameterCount(a) + parameterCount(b)
        case .inList(let e, let values, let domain):
            let inline = domain == .attribute(.decimal) || values.count <= inlineListLimit
            return parameterCount(e) + (inline ? values.count : 2)
        case .isA(_, let entities): return entities.count
        case .isEmptyString(let e), .boolValue(let e): return parameterCount(e)
        case .conditional(let t, let a, let b): return parameterCount(t) + parameterCount(a) + parameterCount(b)
        case .guarded(let requires, let inner): return requires.reduce(parameterCount(inner)) { $0 + parameterCount($1) }
        }
    }

    static func parameterCount(_ e: TypedExpression) -> Int {
        switch e {
        case .keyPath(let ref, _): return ref.casts.reduce(0) { $0 + $1.entity.descendants.count }
        case .count: return 0
        case .countWhere(_, let p): return parameterCount(p)
        case .arithmetic(_, let a, let b, _, _): return parameterCount(a) + parameterCount(b)
        case .aggregate(_, _, let filter, let value, _): return parameterCount(value) + (filter.map { parameterCount($0) } ?? 0)
        case .constant, .parameter, .list: return 1
        case .length(let inner): return parameterCount(inner)
        case .conditional(let t, let a, let b, _): return parameterCount(t) + parameterCount(a) + parameterCount(b)
        case .coalesce(let a, let b, _): return parameterCount(a) + parameterCount(b)
        }
    }
}
