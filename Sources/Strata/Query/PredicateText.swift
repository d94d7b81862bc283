/// Renders predicate trees as `#Predicate`-style text (the language
/// ``PredicateParser`` reads; see its documentation for the syntax).
///
/// The text is canonical: one space around infix operators, parentheses only
/// where precedence needs them, except that `c ? a : b` is always
/// parenthesized (with `&&`/`||` operands of it parenthesized too) and a `??`
/// operand of a comparison is parenthesized for readability.
///
/// Closures: the top level and each `contains { }` / `allSatisfy { }` closure
/// use `$0` unless a closure nested inside refers to them; then they are named
/// by depth: `{ x0 in x0.bucketList.contains { $0.title == x0.name } }`.
/// Variables render as bare identifiers (`searchText`) unless the name is a
/// keyword, is not an identifier or looks like a generated parameter (`x0`,
/// `x1`, ...); then `$name` or `` $`name` ``. Key path components named
/// `count` or `isEmpty`, or that are not identifiers, are backquoted.
///
/// `parse(p.text)` equals `p` ignoring locations, with these exceptions (trees
/// a parser never produces, or that Swift syntax cannot tell apart):
/// - a typed literal (`{"date": ...}`) renders as its JSON string/number/array
///   (an object as a string of its JSON text) and reads back untyped;
/// - an empty conjunction renders `true`, an empty disjunction `false`, and a
///   one-operand conjunction/disjunction as its operand;
/// - `.value(.literal(.bool(b)))` reads back as `.constant(b)`, and
///   `.value(.conditional(...))` as ``Predicate/conditional(_:_:_:at:)``;
/// - a `.string(.contains, ...)` whose receiver is an array literal reads back
///   as `.inCollection`;
/// - trees the parser rejects stay rejected: `.value` of a non-boolean
///   literal, of a count or of `$0` itself, a scope with no enclosing closure
///   (rendered `$N`), names containing a backquote or a line break.
extension Predicate {
    /// `#Predicate`-style text that parses back to an equal tree (ignoring locations).
    public var text: String {
        var r = PredicateRenderer()
        let name = PredicateRenderer.forcesName(self, 0) ? "x0" : nil
        r.names = [name]
        let body = r.predicate(self).text
        if let name { return "{ \(name) in \(body) }" }
        return body
    }
}

extension PredicateExpression {
    /// `#Predicate`-style text of a value, with `$0` the object in scope.
    public var text: String {
        var r = PredicateRenderer()
        r.names = [PredicateRenderer.forcesName(self, 0) ? "x0" : nil]
        return r.expression(self).text
    }
}

struct PredicateRenderer {
    /// Names of the closures in scope, innermost last (nil: `$0`).
    var names: [String?] = []

    /// Text and its precedence: 0 `?:`, 1 `||`, 2 `&&`, 3 comparison, 4 `??`,
    /// 5 `is`, 6 range, 7 prefix, 8 postfix and primary.
    typealias Rendered = (text: String, level: Int)

    private func wrap(_ r: Rendered, _ minimum: Int) -> String {
        r.level < minimum ? "(\(r.text))" : r.text
    }

    // MARK: Scopes

    /// Whether a closure nested inside `p` (at nesting `level` below the
    /// closure being named) refers to that closure.
    static func forcesName(_ p: Predicate, _ level: Int) -> Bool {
        switch p {
        case .constant: return false
        case .value(let e): return forcesName(e, level)
        case .conjunction(let items, _), .disjunction(let items, _):
            return items.contains { forcesName($0, level) }
        case .negation(let q, _): return forcesName(q, level)
        case .comparison(_, let a, let b, _, _), .string(_, let a, let b, _, _), .inCollection(let a, let b, _):
            return forcesName(a, level) || forcesName(b, level)
        case .between(let a, let b, let c, _):
            return forcesName(a, level) || forcesName(b, level) || forcesName(c, level)
        case .typeCheck(let scope, _, _): return level >= 1 && scope == level
        case .anySatisfy(let c, let body, _), .allSatisfy(let c, let body, _):
            return forcesName(c, level) || forcesName(body, level + 1)
        case .isEmpty(let e, _): return forcesName(e, level)
        case .conditional(let a, let b, let c, _):
            return forcesName(a, level) || forcesName(b, level) || forcesName(c, level)
        case .orElse(let a, let b, _): return forcesName(a, level) || forcesName(b, level)
        case .evaluate(_, let scope, _): return level >= 1 && scope == level
        }
    }

    static func forcesName(_ e: PredicateExpression, _ level: Int) -> Bool {
        switch e {
        case .keyPath(let scope, _, _): return level >= 1 && scope == level
        case .variable, .literal: return false
        case .count(let x, _): return forcesName(x, level)
        case .conditional(let t, let a, let b, _):
            return forcesName(t, level) || forcesName(a, level) || forcesName(b, level)
        case .coalesce(let a, let b, _): return forcesName(a, level) || forcesName(b, level)
        case .filtered(let c, let body, _): return forcesName(c, level) || forcesName(body, level + 1)
        case .arithmetic(_, let a, let b, _): return forcesName(a, level) || forcesName(b, level)
        case .aggregate(_, let c, let v, _): return forcesName(c, level) || forcesName(v, level + 1)
        }
    }

    private func reference(_ scope: Int) -> String {
        let index = names.count - 1 - scope
        guard scope >= 0, index >= 0 else { return "$\(scope)" }
        if let name = names[index] { return name }
        return scope == 0 ? "$0" : "$\(scope)"
    }

    private mutating func closure(_ value: PredicateExpression) -> String {
        closure(named: Self.forcesName(value, 0)) { $0.expression(value).text }
    }

    private mutating func closure(_ body: Predicate) -> String {
        closure(named: Self.forcesName(body, 0)) { $0.predicate(body).text }
    }

    /// `{ text }`, or `{ x1 in text }` when the body names its parameter.
    private mutating func closure(named: Bool, _ render: (inout PredicateRenderer) -> String) -> String {
        let name = named ? "x\(names.count)" : nil
        names.append(name)
        defer { names.removeLast() }
        let text = render(&self)
        if let name { return "{ \(name) in \(text) }" }
        return "{ \(text) }"
    }

    // MARK: Predicates

    mutating func predicate(_ p: Predicate) -> Rendered {
        switch p {
        case .constant(let b, _):
            return (b ? "true" : "false", 8)
        case .value(let e):
            return expression(e)
        case .conjunction(let items, _):
            if items.isEmpty { return ("true", 8) }
            if items.count == 1 { return predicate(items[0]) }
            var parts: [String] = []
            for item in items { parts.append(wrap(predicate(item), 3)) }
            return (parts.joined(separator: " && "), 2)
        case .disjunction(let items, _):
            if items.isEmpty { return ("false", 8) }
            if items.count == 1 { return predicate(items[0]) }
            var parts: [String] = []
            for item in items { parts.append(wrap(predicate(item), 2)) }
            return (parts.joined(separator: " || "), 1)
        case .negation(let q, _):
            return ("!" + wrap(predicate(q), 7), 7)
        case .comparison(let op, let a, let b, let options, _):
            if options.isEmpty {
                return ("\(wrap(expression(a), 5)) \(op.rawValue) \(wrap(expression(b), 5))", 3)
            }
            let suffix: String
            switch op {
            case .equal: suffix = "== .orderedSame"
            case .notEqual: suffix = "!= .orderedSame"
            case .less: suffix = "== .orderedAscending"
            case .lessOrEqual: suffix = "!= .orderedDescending"
            case .greater: suffix = "== .orderedDescending"
            case .greaterOrEqual: suffix = "!= .orderedAscending"
            }
            return ("\(receiver(a)).compare(\(expression(b).text), options: \(Self.options(options))) \(suffix)", 3)
        case .string(let op, let a, let b, let options, _):
            let extra = options.isEmpty ? "" : ", options: \(Self.options(options))"
            return ("\(receiver(a)).\(op.rawValue)(\(expression(b).text)\(extra))", 8)
        case .inCollection(let x, let c, _):
            var isArrayLiteral = false
            switch c {
            case .literal(.array, _), .literal(.typed(_, .array), _): isArrayLiteral = true
            default: break
            }
            let label = isArrayLiteral ? "" : "element: "
            return ("\(receiver(c)).contains(\(label)\(expression(x).text))", 8)
        case .between(let x, let lo, let hi, _):
            return ("(\(wrap(expression(lo), 7))...\(wrap(expression(hi), 7))).contains(\(expression(x).text))", 8)
        case .typeCheck(let scope, let entity, _):
            return ("\(reference(scope)) is \(Self.name(entity))", 5)
        case .anySatisfy(let c, let body, _):
            return ("\(receiver(c)).contains \(closure(body))", 8)
        case .allSatisfy(let c, let body, _):
            return ("\(receiver(c)).allSatisfy \(closure(body))", 8)
        case .isEmpty(let e, _):
            return ("\(receiver(e, property: true)).isEmpty", 8)
        case .conditional(let t, let a, let b, _):
            return ("(\(wrap(predicate(t), 3)) ? \(wrap(predicate(a), 3)) : \(wrap(predicate(b), 3)))", 8)
        case .orElse(let p, let d, _):
            return ("\(wrap(predicate(p), 5)) ?? \(wrap(predicate(d), 4))", 4)
        case .evaluate(let name, let scope, _):
            return ("\(Self.variable(name)).evaluate(\(reference(scope)))", 8)
        }
    }

    // MARK: Values

    mutating func expression(_ e: PredicateExpression) -> Rendered {
        switch e {
        case .keyPath(let scope, let path, _):
            var s = reference(scope)
            var afterCast = false
            for component in path {
                if let target = PredicateChecker.castTarget(PredicateChecker.unmarked(component)) {
                    let forced = component.hasSuffix("!")
                    s = "(\(s) as? \(Self.name(target)))" + (forced ? "!" : "")
                    afterCast = !forced
                    continue
                }
                s += afterCast ? "?." : "."
                afterCast = false
                s += Self.pathComponent(component)
            }
            return (s, 8)
        case .variable(let name, _):
            return (Self.variable(name), 8)
        case .literal(let l, _):
            let s = Self.literal(l)
            return (s, s.hasPrefix("-") ? 7 : 8)
        case .count(let x, _):
            return ("\(receiver(x, property: true)).count", 8)
        case .conditional(let t, let a, let b, _):
            return ("(\(wrap(predicate(t), 3)) ? \(wrap(expression(a), 3)) : \(wrap(expression(b), 3)))", 8)
        case .coalesce(let a, let b, _):
            return ("\(wrap(expression(a), 5)) ?? \(wrap(expression(b), 4))", 4)
        case .filtered(let c, let body, _):
            return ("\(receiver(c)).filter \(closure(body))", 8)
        case .aggregate(let f, let c, let v, _):
            return ("\(receiver(c)).map \(closure(v)).\(f.textCall)", 8)
        case .arithmetic(let op, let a, let b, _):
            // `0 - x` is `-x`; operands of * / % and the right of + - in parentheses unless primary.
            if op == .subtract, case .literal(.number("0"), _) = a { return ("-" + wrap(expression(b), 7), 7) }
            return ("\(operand(a, of: op, right: false)) \(op.rawValue) \(operand(b, of: op, right: true))", 6)
        }
    }

    /// An operand of `op`, in parentheses where Swift's precedence and left associativity need them.
    private mutating func operand(_ e: PredicateExpression, of op: ArithmeticOperator, right: Bool) -> String {
        let rendered = expression(e)
        guard case .arithmetic(let inner, let a, _, _) = e else { return wrap(rendered, 7) }
        if inner == .subtract, case .literal(.number("0"), _) = a { return rendered.text }  // `-x`
        func multiplicative(_ o: ArithmeticOperator) -> Bool { o == .multiply || o == .divide || o == .remainder }
        let needed = multiplicative(op) ? (right || !multiplicative(inner)) : (right && !multiplicative(inner))
        return needed ? "(\(rendered.text))" : rendered.text
    }

    /// A receiver of a member; `$0.count` would be a key path, so the object
    /// itself is parenthesized before `count` and `isEmpty`.
    private mutating func receiver(_ e: PredicateExpression, property: Bool = false) -> String {
        if property, case .keyPath(_, let path, _) = e, path.isEmpty {
            return "(\(expression(e).text))"
        }
        return wrap(expression(e), 8)
    }

    // MARK: Names and literals

    static func pathComponent(_ name: String) -> String {
        // A component unwrapped with `!` (``PredicateChecker/unmarked(_:)``).
        if name.hasSuffix("!"), name.count > 1 { return pathComponent(String(name.dropLast())) + "!" }
        if PredicateSyntax.isIdentifier(name) && !PredicateSyntax.specialMembers.contains(name) { return name }
        return "`\(name)`"
    }

    static func name(_ name: String) -> String {
        if PredicateSyntax.isIdentifier(name) && !PredicateSyntax.reserved.contains(name) { return name }
        return "`\(name)`"
    }

    /// Words rendered as `$name` though the parser would read them as variables.
    private static let cautious: Set<String> = [
        "any", "some", "Any", "async", "await", "throws", "rethrows", "associatedtype", "open",
        "Predicate", "Type", "Protocol",
    ]

    private static func isGeneratedName(_ name: String) -> Bool {
        let u = Array(name.unicodeScalars)
        return u.count >= 2 && u[0] == "x" && u.dropFirst().allSatisfy(PredicateSyntax.isDigit)
    }

    static func variable(_ name: String) -> String {
        if PredicateSyntax.isIdentifier(name) && !PredicateSyntax.reserved.contains(name)
            && !cautious.contains(name) && !isGeneratedName(name) {
            return name
        }
        let scalars = name.unicodeScalars
        if !scalars.isEmpty && scalars.allSatisfy(PredicateSyntax.isIdentContinue)
            && !scalars.allSatisfy(PredicateSyntax.isDigit) {
            return "$" + name
        }
        return "$`\(name)`"
    }

    static func options(_ o: StringOptions) -> String {
        switch (o.contains(.caseInsensitive), o.contains(.diacriticInsensitive)) {
        case (true, true): return "[.caseInsensitive, .diacriticInsensitive]"
        case (true, false): return ".caseInsensitive"
        case (false, true): return ".diacriticInsensitive"
        case (false, false): return "[]"
        }
    }

    static func literal(_ l: PredicateLiteral) -> String {
        switch l {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s): return quoteLiteral(s)
        case .typed(_, let j): return json(j)
        case .array(let items): return "[" + items.map(literal).joined(separator: ", ") + "]"
        }
    }

    private static func json(_ j: JSONValue) -> String {
        switch j {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return n
        case .string(let s): return quoteLiteral(s)
        case .array(let items): return "[" + items.map(json).joined(separator: ", ") + "]"
        case .object: return quoteLiteral(j.text)
        }
    }

    /// A Swift string literal.
    static func quoteLiteral(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\0": out += "\\0"
            default:
                if u.value < 0x20 || u.value == 0x7F {
                    out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}
