// Postfix forms of predicate text: member access (`.name`, `?.`, `!`),
// properties (`count`, `isEmpty`, `rawValue`), method calls and their
// arguments (`options:`, closures, trailing closures), and how each supported
// method (`contains`, `hasPrefix`, `allSatisfy`, `compare`, …) maps to a
// predicate node.

/// What a method-call argument holds.
private enum ArgValue {
    case node(PredicateTextParser.Node)
    case closure(Predicate)
    case options(StringOptions)
}

/// One argument of a method call, with its label and position.
private struct Arg {
    var label: String?
    var value: ArgValue
    var pos: Int
}

extension PredicateTextParser {
    private static let closureMethods: Set<String> = ["contains", "allSatisfy", "filter", "map"]
    private static let unsupportedMethods: Set<String> = [
        "lowercased", "uppercased", "capitalized", "localizedLowercase", "localizedUppercase",
        "trimmingCharacters", "replacingOccurrences", "components", "split", "prefix", "suffix",
        "dropFirst", "dropLast", "compactMap", "flatMap", "first", "last", "sorted", "reversed", "count", "isEmpty", "firstIndex", "lastIndex", "range",
        "localizedStandardCompare", "description",
        "distance", "addingTimeInterval", "timeIntervalSince", "isEqual", "elementsEqual", "hasPrefixes",
        "matches", "wholeMatch", "firstMatch",
    ]

    mutating func parsePostfix(_ start: Node) throws -> Node {
        var n = start
        while true {
            if tok.isPunct(".") || tok.isPunct("?.") {
                advance()
                guard tok.isName else {
                    throw predicateError("expected a member name after '.'", tok.pos, "found \(tok.quoted)")
                }
                n = try member(n, tok)
            } else if tok.isPunct("!") && !tok.spaceBefore {
                // A force unwrap: a key path component marked `!` (the evaluation fails where it is nil).
                guard case .expr(let e) = n.kind else { throw unexpected(tok) }
                guard case .keyPath(let scope, var path, let at) = e else {
                    throw predicateError("force unwrap ('!') applies to key paths here", tok.pos, "give a value for nil with ??")
                }
                // `$0!`: an object is never nil.
                if let last = path.indices.last, !path[last].hasSuffix("!") {
                    path[last] += "!"
                    n.kind = .expr(.keyPath(scope: scope, path: path, at: at))
                }
                advance()
            } else if tok.isPunct("[") && !tok.spaceBefore {
                throw predicateError("subscripts are not supported", tok.pos)
            } else {
                return n
            }
        }
    }

    /// `n.name...`, with `name` the current token.
    private mutating func member(_ n: Node, _ nameTok: PredicateToken) throws -> Node {
        let name = nameTok.text
        advance()
        let isCall = nameTok.kind == .ident
            && (tok.isPunct("(") || (tok.isPunct("{") && Self.closureMethods.contains(name)))
        if isCall && name == "map" {
            // `seq.map { value }` or `seq.map({ value })`: the receiver of max() or min().
            let parenthesized = tok.isPunct("(")
            if parenthesized { advance() }
            guard tok.isPunct("{") else { throw predicateError("expected '{'", tok.pos, "map takes a closure: map { $0.value }") }
            let value = try parseClosureValue()
            if parenthesized { _ = try expect(")") }
            return Node(kind: .mapped(try receiver(n), value), start: n.start)
        }
        if isCall && name == "reduce" { return try reduction(n, nameTok.pos) }
        if isCall {
            try checkMethod(name, nameTok.pos)
            let (args, trailing) = try parseArguments(name)
            return try method(n, name, nameTok.pos, args, trailing)
        }
        if nameTok.kind == .quotedIdent {
            if case .expr(.keyPath(let s, let path, let at)) = n.kind {
                return Node(kind: .expr(.keyPath(scope: s, path: path + [name], at: at)), start: n.start)
            }
            throw predicateError("unsupported member '\(name)'", nameTok.pos, "only key paths from $0 have members")
        }
        if case .expr(.keyPath(let s, let path, let at)) = n.kind,
           (path.isEmpty && !n.grouped) || !PredicateSyntax.specialMembers.contains(name) {
            return Node(kind: .expr(.keyPath(scope: s, path: path + [name], at: at)), start: n.start)
        }
        switch name {
        case "rawValue":
            // `.family.rawValue` is the same string as `.family`.
            if case .expr(.literal(.string, _)) = n.kind { return n }
            throw predicateError("unsupported member 'rawValue'", nameTok.pos, "only an enum case (.name) has a raw value here")
        case "count":
            return Node(kind: .expr(.count(try receiver(n), at: loc(nameTok.pos))), start: n.start)
        case "isEmpty":
            return Node(kind: .pred(.isEmpty(try receiver(n), at: loc(nameTok.pos))), start: n.start)
        default:
            throw predicateError("unsupported member '\(name)'", nameTok.pos,
                                 "only count and isEmpty apply here; key paths start at $0 or a closure parameter")
        }
    }

    /// `seq.map { value }.reduce(0, +)` (or `0.0`): the exact sum of the values (`@sum`), the one
    /// reduction Strata takes; `pos` is `reduce`'s, the current token its `(`.
    private mutating func reduction(_ n: Node, _ pos: Int) throws -> Node {
        let usage = "the sum of the values of map { } is reduce(0, +); no other reduction is supported"
        guard case .mapped(let source, let value) = n.kind else {
            throw predicateError("reduce(0, +) applies to the values of map { } over a to-many relationship", pos,
                                 "e.g. $0.bucketList.map { $0.priority }.reduce(0, +)")
        }
        _ = try expect("(")
        guard tok.kind == .number, let initial = Double(tok.text), initial == 0 else {
            throw predicateError("wrong arguments to 'reduce'", tok.pos, usage)
        }
        advance()
        _ = try expect(",")
        guard tok.isPunct("+") else { throw predicateError("wrong arguments to 'reduce'", tok.pos, usage) }
        advance()
        _ = try expect(")")
        return Node(kind: .expr(.aggregate(.sum, source, value, at: loc(pos))), start: n.start)
    }

    private func receiver(_ n: Node) throws -> PredicateExpression {
        if case .range = n.kind {
            throw predicateError("a range supports only contains(_:)", n.start)
        }
        return try asExpression(n)
    }

    private mutating func parseArguments(_ name: String) throws -> (args: [Arg], trailing: Predicate?) {
        var args: [Arg] = []
        if tok.isPunct("(") {
            try enter()
            defer { depth -= 1 }
            advance()
            while !tok.isPunct(")") {
                let argPos = tok.pos
                var label: String?
                if tok.isName && peek(1).isPunct(":") {
                    label = tok.text
                    advance()
                    advance()
                }
                let value: ArgValue
                if label == "options" {
                    value = .options(try parseOptions())
                } else if tok.isPunct("{") {
                    value = .closure(try parseClosure())
                } else {
                    value = .node(try parseTernary())
                }
                args.append(Arg(label: label, value: value, pos: argPos))
                if tok.isPunct(",") {
                    advance()
                } else if !tok.isPunct(")") {
                    throw predicateError("expected ',' or ')'", tok.pos, "found \(tok.quoted)")
                }
            }
            advance()
        }
        var trailing: Predicate?
        if tok.isPunct("{") && Self.closureMethods.contains(name) {
            trailing = try parseClosure()
        }
        return (args, trailing)
    }

    private mutating func parseOptions() throws -> StringOptions {
        func one(_ p: inout PredicateTextParser) throws -> StringOptions {
            let t = p.tok
            if t.kind == .string {
                guard let o = StringOptions(text: t.text) else {
                    throw predicateError("invalid string options \"\(t.text)\"", t.pos, "use \"c\", \"d\" or \"cd\"")
                }
                p.advance()
                return o
            }
            if t.isPunct(".") {
                p.advance()
                let m = p.tok
                let o: StringOptions
                switch (m.isName, m.text) {
                case (true, "caseInsensitive"): o = .caseInsensitive
                case (true, "diacriticInsensitive"): o = .diacriticInsensitive
                default:
                    guard m.isName else {
                        throw predicateError("expected a string option after '.'", m.pos, "found \(m.quoted); use .caseInsensitive or .diacriticInsensitive")
                    }
                    throw predicateError("unknown string option '.\(m.text)'", m.pos, "use .caseInsensitive or .diacriticInsensitive")
                }
                p.advance()
                return o
            }
            throw predicateError("expected string options", t.pos, "found \(t.quoted)")
        }
        guard tok.isPunct("[") else { return try one(&self) }
        advance()
        var o: StringOptions = []
        while !tok.isPunct("]") {
            o.formUnion(try one(&self))
            if tok.isPunct(",") {
                advance()
            } else if !tok.isPunct("]") {
                throw predicateError("expected ',' or ']'", tok.pos, "found \(tok.quoted)")
            }
        }
        advance()
        return o
    }

    private static let knownMethods: Set<String> = [
        "contains", "hasPrefix", "hasSuffix", "starts", "localizedStandardContains", "matches",
        "localizedCaseInsensitiveContains", "allSatisfy", "compare", "caseInsensitiveCompare",
        "localizedCompare", "localizedCaseInsensitiveCompare", "filter", "evaluate", "map", "max", "min", "average",
    ]

    private func checkMethod(_ name: String, _ pos: Int) throws {
        if Self.knownMethods.contains(name) { return }
        if name == "localizedStandardCompare" {
            throw predicateError("method 'localizedStandardCompare' is not supported in predicates", pos,
                                 "sort by the key with \"comparator\": \"localizedStandard\" instead; compare(_:) compares by code point")
        }
        if name == "sum" {
            throw predicateError("method 'sum' is not supported in predicates", pos, "the sum of the values of map { } is reduce(0, +)")
        }
        if name == "avg" || name == "mean" {
            throw predicateError("method '\(name)' is not supported in predicates", pos, "the average of the values of map { } is average()")
        }
        if Self.unsupportedMethods.contains(name) {
            throw predicateError("method '\(name)' is not supported in predicates", pos)
        }
        throw predicateError("unknown method '\(name)'", pos)
    }

    /// `n.name(args) { trailing }`; `pos` is the method name's.
    private func method(_ n: Node, _ name: String, _ pos: Int, _ args: [Arg], _ trailing: Predicate?) throws -> Node {
        let start = n.start
        let at = loc(pos)
        func wrong(_ expected: String) -> StrataError {
            predicateError("wrong arguments to '\(name)'", pos, "expected \(expected)")
        }
        /// Arguments `[label] x` and an optional `options:`.
        func valueAndOptions(_ label: String?) -> (Node, StringOptions)? {
            guard trailing == nil, args.count == 1 || args.count == 2, args[0].label == label,
                  case .node(let x) = args[0].value else { return nil }
            if args.count == 1 { return (x, []) }
            guard args[1].label == "options", case .options(let o) = args[1].value else { return nil }
            return (x, o)
        }
        func stringTest(_ op: StringOperator, _ label: String?, _ extra: StringOptions = []) throws -> Node {
            guard let (x, o) = valueAndOptions(label) else {
                throw wrong("\(name)(\(label.map { "\($0): " } ?? "")_:) with an optional options: argument")
            }
            let p = Predicate.string(op, try receiver(n), try asExpression(x), o.union(extra), at: at)
            return Node(kind: .pred(p), start: start)
        }
        func closureArgument() -> Predicate? {
            if let trailing { return args.isEmpty ? trailing : nil }
            if args.count == 1, args[0].label == nil || args[0].label == "where", case .closure(let p) = args[0].value {
                return p
            }
            return nil
        }
        switch name {
        case "contains":
            if let body = closureArgument() {
                return Node(kind: .pred(.anySatisfy(try receiver(n), body, at: at)), start: start)
            }
            if let (x, o) = valueAndOptions("element"), o.isEmpty {
                return Node(kind: .pred(.inCollection(try asExpression(x), try receiver(n), at: at)), start: start)
            }
            guard let (x, o) = valueAndOptions(nil) else {
                throw wrong("contains(_:), contains(_:options:), contains(where: { ... }) or contains { ... }")
            }
            switch n.kind {
            case .range(let lo, let hi, let closed):
                guard o.isEmpty else { throw wrong("contains(_:) on a range") }
                let value = try asExpression(x)
                let lower = try lo.map(asExpression), upper = try hi.map(asExpression)
                var bounds: [Predicate] = []
                if let lower, let upper, closed { return Node(kind: .pred(.between(value, lower, upper, at: at)), start: start) }
                if let lower { bounds.append(.comparison(.greaterOrEqual, value, lower, [], at: at)) }
                if let upper { bounds.append(.comparison(closed ? .lessOrEqual : .less, value, upper, [], at: at)) }
                if bounds.count == 1 { return Node(kind: .pred(bounds[0]), start: start) }
                return Node(kind: .pred(.conjunction(bounds, at: at)), start: start)
            case .expr(.literal(.array, _)):
                guard o.isEmpty else { throw wrong("contains(_:) on an array literal") }
                return Node(kind: .pred(.inCollection(try asExpression(x), try receiver(n), at: at)), start: start)
            default:
                return try stringTest(.contains, nil)
            }
        case "hasPrefix": return try stringTest(.hasPrefix, nil)
        case "starts": return try stringTest(.hasPrefix, "with")
        case "hasSuffix": return try stringTest(.hasSuffix, nil)
        case "localizedStandardContains": return try stringTest(.localizedStandardContains, nil)
        case "matches": return try stringTest(.matches, nil)
        case "localizedCaseInsensitiveContains":
            guard args.count == 1 else { throw wrong("localizedCaseInsensitiveContains(_:)") }
            return try stringTest(.contains, nil, .caseInsensitive)
        case "max", "min", "average":
            guard case .mapped(let source, let value) = n.kind, args.isEmpty, trailing == nil else {
                throw predicateError("\(name)() applies to the values of map { } over a to-many relationship", pos,
                                     "e.g. $0.bucketList.map { $0.priority }.\(name)()")
            }
            let f: AggregateFunction = name == "max" ? .max : name == "min" ? .min : .avg
            return Node(kind: .expr(.aggregate(f, source, value, at: at)), start: start)
        case "evaluate":
            // `tripFilter.evaluate($0)`: a predicate bound to a variable, for an object in scope.
            guard case .expr(.variable(let name, _)) = n.kind else {
                throw predicateError("evaluate(_:) applies to a variable bound to a predicate", pos)
            }
            guard args.count == 1, args[0].label == nil, case .node(let x) = args[0].value,
                  case .expr(.keyPath(let scope, let path, _)) = x.kind, path.isEmpty else {
                throw wrong("evaluate($0) or evaluate(parameter)")
            }
            return Node(kind: .pred(.evaluate(name, scope: scope, at: at)), start: start)
        case "filter":
            guard let body = closureArgument(), args.first?.label == nil else { throw wrong("filter { ... }") }
            return Node(kind: .expr(.filtered(try receiver(n), body, at: at)), start: start)
        case "allSatisfy":
            guard let body = closureArgument(), args.first?.label == nil else { throw wrong("allSatisfy { ... }") }
            return Node(kind: .pred(.allSatisfy(try receiver(n), body, at: at)), start: start)
        case "compare", "caseInsensitiveCompare", "localizedCompare", "localizedCaseInsensitiveCompare":
            // The localized forms compare as every Strata string comparison does, by Unicode scalar
            // values (folded for case): no locale's collation (docs/predicates.md).
            guard let (x, o) = valueAndOptions(nil), name == "compare" || args.count == 1 else {
                throw wrong(name == "compare" ? "compare(_:) or compare(_:options:)" : "\(name)(_:)")
            }
            let options = name == "compare" ? o : name == "localizedCompare" ? [] : .caseInsensitive
            return Node(kind: .compareResult(try receiver(n), try asExpression(x), options), start: start)
        default:
            throw predicateError("unknown method '\(name)'", pos)
        }
    }
}
