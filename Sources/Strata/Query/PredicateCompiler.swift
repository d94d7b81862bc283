/// Compiles a typed predicate to SQLite SQL. Every value becomes a bound
/// parameter (`?N`); identifiers come from the validated schema only.
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
        init(alias: String, entity: Entity) { self.alias = alias; self.entity = entity }
    }

    private(set) var args: [SQLValue]
    /// Innermost last.
    private(set) var scopes: [Scope]
    private var counter = 0

    init(root: Entity, alias: String = "t", args: [SQLValue] = []) {
        self.args = args
        scopes = [Scope(alias: alias, entity: root)]
    }

    /// LEFT JOINs the outermost scope needs (add them to the FROM clause).
    var rootJoins: [String] { scopes[0].joins }

    mutating func bind(_ v: SQLValue) -> String {
        args.append(v)
        return "?\(args.count)"
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
            let dest = quote(r.destination.tableName)
            switch r.storage {
            case .foreignKey(let col):
                s.joins.append("LEFT JOIN \(dest) \(na) ON \(na)._pk = \(alias).\(quote(col))")
            case .inverseForeignKey(let col):
                s.joins.append("LEFT JOIN \(dest) \(na) ON \(na).\(quote(col)) = \(alias)._pk")
            case .joinTable(let table, let ownerCol, let targetCol):
                let jt = nextAlias("pj")
                s.joins.append("LEFT JOIN \(quote(table)) \(jt) ON \(jt).\(quote(ownerCol)) = \(alias)._pk LEFT JOIN \(dest) \(na) ON \(na)._pk = \(jt).\(quote(targetCol))")
            }
            s.joinAliases[key] = na
            alias = na
        }
        return alias
    }

    mutating func column(_ ref: KeyPathRef) -> String {
        let alias = hopAlias(ref)
        switch ref.end {
        case .attribute(let a): return "\(alias).\(quote(a.name))"
        case .object: return "\(alias)._pk"
        case .toOne(let r):
            switch r.storage {
            case .foreignKey(let col): return "\(alias).\(quote(col))"
            default:
                let extended = KeyPathRef(scope: ref.scope, hops: ref.hops + [r], end: .object, text: ref.text)
                return "\(hopAlias(extended))._pk"
            }
        case .toMany: return "NULL"
        }
    }

    /// `FROM … WHERE <link>` of a to-many key path's objects, with the element alias.
    private mutating func manySource(_ ref: KeyPathRef) -> (from: String, link: String, alias: String, entity: Entity)? {
        guard case .toMany(let rel) = ref.end else { return nil }
        let owner = hopAlias(ref)
        let e = nextAlias("s")
        let dest = quote(rel.destination.tableName)
        switch rel.storage {
        case .inverseForeignKey(let col):
            return ("\(dest) \(e)", "\(e).\(quote(col)) = \(owner)._pk", e, rel.destination)
        case .joinTable(let table, let ownerCol, let targetCol):
            let jt = nextAlias("sj")
            return ("\(quote(table)) \(jt) JOIN \(dest) \(e) ON \(e)._pk = \(jt).\(quote(targetCol))",
                    "\(jt).\(quote(ownerCol)) = \(owner)._pk", e, rel.destination)
        case .foreignKey(let col):
            return ("\(dest) \(e)", "\(e)._pk = \(owner).\(quote(col))", e, rel.destination)
        }
    }

    private mutating func subquery(_ ref: KeyPathRef, select: String, inner: ((inout PredicateCompiler) -> String)?) -> String {
        guard let src = manySource(ref) else { return "NULL" }
        var condition = src.link
        if let inner {
            scopes.append(Scope(alias: src.alias, entity: src.entity))
            let c = inner(&self)
            let s = scopes.removeLast()
            condition += " AND (\(c))"
            return "(SELECT \(select) FROM \(src.from)\(s.joins.isEmpty ? "" : " " + s.joins.joined(separator: " ")) WHERE \(condition))"
        }
        return "(SELECT \(select) FROM \(src.from) WHERE \(condition))"
    }

    // MARK: Predicates

    /// - Parameter safe: the result must be 0 or 1, never NULL.
    mutating func predicate(_ p: TypedPredicate, safe: Bool = false) -> String {
        switch p {
        case .constant(let b): return b ? "1" : "0"
        case .and(let parts): return "(" + parts.map { predicate($0, safe: safe) }.joined(separator: " AND ") + ")"
        case .or(let parts): return "(" + parts.map { predicate($0, safe: safe) }.joined(separator: " OR ") + ")"
        case .not(let inner): return "NOT (\(predicate(inner, safe: true)))"
        case .compare(let op, let a, let b, let domain, let options):
            let x = operand(a, options)
            let y = operand(b, options)
            // The collation goes on the left operand: SQLite 3.40 can answer a
            // right-hand COLLATE from a BINARY index and return wrong rows.
            let collate = domain == .attribute(.decimal) ? " COLLATE strata_decimal" : ""
            switch op {
            case .equal: return "(\(x)\(collate) IS \(y))"
            case .notEqual: return "(\(x)\(collate) IS NOT \(y))"
            default:
                let c = "\(x)\(collate) \(op.rawValue) \(y)"
                return safe ? "coalesce(\(c), 0)" : "(\(c))"
            }
        case .string(let op, let a, let b, let options):
            if op == .localizedStandardContains {
                return "strata_lsc(\(expression(a)), \(expression(b)))"
            }
            let x = operand(a, options)
            let y = operand(b, options)
            let c: String
            switch op {
            // Prefix and suffix compare bytes (SQLite's text length() stops at a NUL character;
            // substr of an empty blob is NULL, hence the test for an empty needle).
            case .contains: c = "instr(\(x), \(y)) > 0"
            case .hasPrefix:
                c = "(\(x) IS NOT NULL AND (length(CAST(\(y) AS BLOB)) = 0 OR substr(CAST(\(x) AS BLOB), 1, length(CAST(\(y) AS BLOB))) = CAST(\(y) AS BLOB)))"
            case .hasSuffix:
                c = "(\(x) IS NOT NULL AND (length(CAST(\(y) AS BLOB)) = 0 OR substr(CAST(\(x) AS BLOB), -length(CAST(\(y) AS BLOB))) = CAST(\(y) AS BLOB)))"
            case .localizedStandardContains: c = "0"
            }
            return safe ? "coalesce(\(c), 0)" : "(\(c))"
        case .inList(let e, let values, let domain):
            let x = expression(e)
            let nonNull = values.filter { !$0.isNull }
            let hasNull = nonNull.count != values.count
            var parts: [String] = []
            if !nonNull.isEmpty {
                if domain == .attribute(.decimal) {
                    parts.append("(" + nonNull.map { "\(x) COLLATE strata_decimal = \(bind($0))" }.joined(separator: " OR ") + ")")
                } else if nonNull.count <= 16 || nonNull.contains(where: { $0.textValue?.utf8.contains(0) ?? false }) {
                    // (json_each cuts text at a NUL character: such lists bind each value.)
                    parts.append("\(x) IN (\(nonNull.map { bind($0) }.joined(separator: ", ")))")
                } else {
                    parts.append("\(x) IN (SELECT value FROM json_each(\(bind(PredicateCompiler.jsonArray(nonNull)))))")
                }
            }
            if hasNull { parts.append("\(x) IS NULL") }
            if parts.isEmpty { return "0" }
            let c = parts.joined(separator: " OR ")
            return safe ? "coalesce(\(c), 0)" : "(\(c))"
        case .isA(let scopeIndex, let entities):
            let s = scopes[scopes.count - 1 - scopeIndex]
            return "\(s.alias)._entity IN (\(entities.map { bind(.text($0.name)) }.joined(separator: ", ")))"
        case .any(let ref, let inner):
            return "EXISTS " + subquery(ref, select: "1") { c in c.predicate(inner) }
        case .all(let ref, let inner):
            return "NOT EXISTS " + subquery(ref, select: "1") { c in "NOT (\(c.predicate(inner, safe: true)))" }
        case .isEmptyMany(let ref):
            return "NOT EXISTS " + subquery(ref, select: "1", inner: nil)
        case .isEmptyString(let e):
            return "(coalesce(\(expression(e)), '') = '')"
        case .conditional(let t, let a, let b):
            return "(CASE WHEN \(predicate(t)) THEN \(predicate(a, safe: true)) ELSE \(predicate(b, safe: true)) END)"
        case .boolValue(let e):
            let x = expression(e)
            return safe ? "coalesce(\(x), 0)" : x
        }
    }

    /// An operand, folded for string options (constants are folded here, not per row).
    private mutating func operand(_ e: TypedExpression, _ options: StringOptions) -> String {
        if options.isEmpty { return expression(e) }
        if case .constant(.text(let s), _) = e { return bind(.text(Evaluation.fold(s, options))) }
        return "strata_fold(\(expression(e)), \(options.rawValue))"
    }

    mutating func expression(_ e: TypedExpression) -> String {
        switch e {
        case .keyPath(let ref, _): return column(ref)
        case .constant(let v, _): return v.isNull ? "NULL" : bind(v)
        case .list(let values, _): return bind(PredicateCompiler.jsonArray(values))
        case .count(let ref): return subquery(ref, select: "count(*)", inner: nil)
        case .length(let inner): return "strata_length(\(expression(inner)))"
        case .conditional(let t, let a, let b, _):
            return "(CASE WHEN \(predicate(t)) THEN \(expression(a)) ELSE \(expression(b)) END)"
        case .coalesce(let a, let b, _):
            return "coalesce(\(expression(a)), \(expression(b)))"
        }
    }

    static func jsonArray(_ values: [SQLValue]) -> SQLValue {
        var w = JSONWriter()
        w.beginArray()
        for v in values {
            switch v {
            case .null: w.null()
            case .int(let i): w.int(i)
            case .double(let d): w.double(d)
            case .text(let s): w.string(s)
            case .blob: w.null()
            }
        }
        w.endArray()
        return .text(w.string)
    }
}
