/// Decodes the JSON form of predicates (docs/predicates.md) into the tree.
///
///     {"and": [{"is": "PersonalTrip"},
///              {">=": [{"key": "endDate"}, {"var": "now"}]}]}
///
/// A predicate given as a JSON string is `#Predicate` text, parsed by
/// ``PredicateParser``. Errors are `.invalid` and name the JSON path.
enum PredicateJSON {
    static let typedLiteralKeys: [String: AttributeType] = [
        "date": .date, "uuid": .uuid, "decimal": .decimal, "data": .data, "url": .url,
    ]

    static func fail(_ message: String, _ path: JSONPath) -> StrataError {
        StrataError(.invalid, "\(message) at \(path)", path: path.description)
    }

    static func loc(_ path: JSONPath) -> SourceLocation { SourceLocation(jsonPath: path.description) }

    /// The single key of an operator object, plus the optional "options".
    private static func operatorObject(_ members: [(String, JSONValue)], _ path: JSONPath) throws -> (String, JSONValue, StringOptions) {
        var op: (String, JSONValue)?
        var options: StringOptions = []
        for (k, v) in members {
            if k == "options" {
                guard case .string(let s) = v, let o = StringOptions(text: s) else {
                    throw fail("'options' must be a string of the letters c (case-insensitive) and d (diacritic-insensitive)", path / "options")
                }
                options = o
            } else if op == nil {
                op = (k, v)
            } else {
                throw fail("an operator object has exactly one operator key, found '\(op?.0 ?? "")' and '\(k)'", path / k)
            }
        }
        guard let (k, v) = op else { throw fail("empty operator object", path) }
        return (k, v, options)
    }

    private static func operands(_ v: JSONValue, _ count: Int, _ op: String, _ path: JSONPath) throws -> [JSONValue] {
        guard case .array(let items) = v, items.count == count else {
            throw fail("'\(op)' takes an array of \(count) operands", path)
        }
        return items
    }

    static func predicate(_ v: JSONValue, _ path: JSONPath) throws -> Predicate {
        switch v {
        case .bool(let b): return .constant(b, at: loc(path))
        case .string(let text):
            do { return try PredicateParser.parse(text) } catch var e as StrataError {
                e.path = path.description
                throw e
            }
        case .object(let members):
            // A boolean attribute (with an optional "scope") or variable used as a condition.
            if members.contains(where: { $0.0 == "key" || $0.0 == "var" }) { return .value(try expression(v, path)) }
            let (op, arg, options) = try operatorObject(members, path)
            let p = path / op
            if options != [] && ComparisonOperator(rawValue: op) == nil && StringOperator(rawValue: op) == nil {
                throw fail("'options' applies to comparisons and string operators only", path / "options")
            }
            switch op {
            case "and", "or":
                guard case .array(let items) = arg else { throw fail("'\(op)' takes an array of predicates", p) }
                let parts = try items.enumerated().map { try predicate($1, p / $0) }
                return op == "and" ? .conjunction(parts, at: loc(path)) : .disjunction(parts, at: loc(path))
            case "not":
                return .negation(try predicate(arg, p), at: loc(path))
            case "is":
                guard case .string(let name) = arg else { throw fail("'is' takes an entity name", p) }
                return .typeCheck(scope: 0, entity: name, at: loc(path))
            case "any", "all":
                let ops = try operands(arg, 2, op, p)
                let seq = try expression(ops[0], p / 0)
                let inner = try predicate(ops[1], p / 1)
                return op == "any" ? .anySatisfy(seq, inner, at: loc(path)) : .allSatisfy(seq, inner, at: loc(path))
            case "isEmpty":
                return .isEmpty(try expression(arg, p), at: loc(path))
            case "in":
                let ops = try operands(arg, 2, op, p)
                return .inCollection(try expression(ops[0], p / 0), try expression(ops[1], p / 1), at: loc(path))
            case "between":
                let ops = try operands(arg, 3, op, p)
                return .between(try expression(ops[0], p / 0), try expression(ops[1], p / 1), try expression(ops[2], p / 2), at: loc(path))
            case "cond":
                let ops = try operands(arg, 3, op, p)
                return .conditional(try predicate(ops[0], p / 0), try predicate(ops[1], p / 1), try predicate(ops[2], p / 2), at: loc(path))
            case "value":
                return .value(try expression(arg, p))
            case "??":
                let ops = try operands(arg, 2, op, p)
                return .orElse(try predicate(ops[0], p / 0), try predicate(ops[1], p / 1), at: loc(path))
            case "evaluate":
                // `"tripFilter"` for the object in scope, `["f", 1]` for the enclosing one.
                if case .string(let name) = arg { return .evaluate(name, scope: 0, at: loc(path)) }
                guard case .array(let items) = arg, items.count == 2, case .string(let name) = items[0],
                      case .number(let n) = items[1], let scope = Int(n), scope >= 0, scope < 64 else {
                    throw fail("'evaluate' takes the name of a variable bound to a predicate, or [name, scope]", p)
                }
                return .evaluate(name, scope: scope, at: loc(path))
            default:
                if let c = ComparisonOperator(rawValue: op) {
                    let ops = try operands(arg, 2, op, p)
                    return .comparison(c, try expression(ops[0], p / 0), try expression(ops[1], p / 1), options, at: loc(path))
                }
                if let s = StringOperator(rawValue: op) {
                    let ops = try operands(arg, 2, op, p)
                    return .string(s, try expression(ops[0], p / 0), try expression(ops[1], p / 1), options, at: loc(path))
                }
                throw fail("unknown predicate operator '\(op)' (known: and or not == != < <= > >= in between contains hasPrefix hasSuffix localizedStandardContains matches is any all isEmpty cond value ?? evaluate)", p)
            }
        default:
            throw fail("expected a predicate (an operator object, true/false, or #Predicate text), found \(v.typeName)", path)
        }
    }

    static func literal(_ v: JSONValue, _ path: JSONPath) throws -> PredicateLiteral {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .array(let items): return .array(try items.enumerated().map { try literal($1, path / $0) })
        case .object(let members):
            guard members.count == 1, let (k, inner) = members.first, let t = typedLiteralKeys[k] else {
                throw fail("expected a literal value", path)
            }
            return .typed(t, inner)
        }
    }

    static func expression(_ v: JSONValue, _ path: JSONPath) throws -> PredicateExpression {
        guard case .object(let members) = v else { return .literal(try literal(v, path), at: loc(path)) }
        if members.count == 1, let (k, _) = members.first, typedLiteralKeys[k] != nil {
            return .literal(try literal(v, path), at: loc(path))
        }
        var o = try ObjectReader(v, path: path, what: "expression")
        if let key = try o.string("key") {
            let scope = try o.int("scope") ?? 0
            try o.finish()
            guard scope >= 0, scope < 64 else { throw fail("'scope' must be 0 or more", path / "scope") }
            let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !parts.contains(where: \.isEmpty) else { throw fail("malformed key path '\(key)'", path / "key") }
            return .keyPath(scope: Int(scope), path: parts, at: loc(path / "key"))
        }
        if let name = try o.string("var") {
            try o.finish()
            return .variable(name, at: loc(path / "var"))
        }
        if let arg = o.value("count") {
            try o.finish()
            return .count(try expression(arg, path / "count"), at: loc(path))
        }
        if let arg = o.value("cond") {
            try o.finish()
            let ops = try operands(arg, 3, "cond", path / "cond")
            return .conditional(try predicate(ops[0], path / "cond" / 0), try expression(ops[1], path / "cond" / 1),
                                try expression(ops[2], path / "cond" / 2), at: loc(path))
        }
        for op in ArithmeticOperator.allCases {
            guard let arg = o.value(op.rawValue) else { continue }
            try o.finish()
            // `{"-": [a]}` is `-a`.
            if op == .subtract, case .array(let items) = arg, items.count == 1 {
                return .arithmetic(.subtract, .literal(.number("0"), at: loc(path)), try expression(items[0], path / op.rawValue / 0), at: loc(path))
            }
            let ops = try operands(arg, 2, op.rawValue, path / op.rawValue)
            return .arithmetic(op, try expression(ops[0], path / op.rawValue / 0), try expression(ops[1], path / op.rawValue / 1), at: loc(path))
        }
        for f in AggregateFunction.allCases {
            // `{"@max": [{"key": "bucketList"}, {"key": "priority"}]}` (the value's keys are the element's);
            // `@min`, `@sum` and `@avg` alike.
            guard let arg = o.value("@" + f.rawValue) else { continue }
            try o.finish()
            let ops = try operands(arg, 2, "@" + f.rawValue, path / ("@" + f.rawValue))
            return .aggregate(f, try expression(ops[0], path / ("@" + f.rawValue) / 0), try expression(ops[1], path / ("@" + f.rawValue) / 1), at: loc(path))
        }
        if let arg = o.value("abs") {
            // `abs(x)` is `x < 0 ? 0 - x : x` (abs of the least int overflows, as in Swift).
            try o.finish()
            let x = try expression(arg, path / "abs")
            let at = loc(path)
            return .conditional(.comparison(.less, x, .literal(.number("0"), at: at), [], at: at),
                                .arithmetic(.subtract, .literal(.number("0"), at: at), x, at: at), x, at: at)
        }
        if let arg = o.value("filter") {
            try o.finish()
            let ops = try operands(arg, 2, "filter", path / "filter")
            return .filtered(try expression(ops[0], path / "filter" / 0), try predicate(ops[1], path / "filter" / 1), at: loc(path))
        }
        if let arg = o.value("??") {
            try o.finish()
            let ops = try operands(arg, 2, "??", path / "??")
            return .coalesce(try expression(ops[0], path / "??" / 0), try expression(ops[1], path / "??" / 1), at: loc(path))
        }
        let first = members.first?.0 ?? ""
        throw fail("unknown expression '\(first)' (known: key, var, count, cond, ??, filter, + - * / %, abs, @max, @min, @sum, @avg, date, uuid, decimal, data, url, or a literal)", path / first)
    }
}
