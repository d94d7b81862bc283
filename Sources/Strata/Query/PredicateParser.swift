// The entry point of predicate text parsing and its language reference (the
// doc comment of `PredicateParser`), the error every parse failure throws, and
// the recursive-descent parser: closure wrappers and scopes, condition/value
// conversion, operators by precedence and primary expressions. Tokens are in
// PredicateLexer.swift; member access and methods in PredicateParser+Methods.swift.

/// Parses SwiftData `#Predicate` text into a ``Predicate`` tree.
///
/// The accepted language is the Swift expression syntax of a `#Predicate`
/// closure body, as in Apple's SwiftData sessions; whitespace, newlines and
/// `//` / `/* */` comments are free.
///
/// Wrappers: `$0.name == "x"`, `trip in trip.name == "x"`,
/// `{ trip in ... }`, `{ (trip: Trip) -> Bool in return ... }`, `{ $0.name == "x" }`
/// and `#Predicate<Trip> { trip in ... }`. A named parameter means the same as `$0`.
///
/// Scopes: the closures of `contains { ... }`, `contains(where: { ... })` and
/// `allSatisfy { ... }` start a new scope: inside, `$0` (or the closure's
/// parameter) is the element (scope 0), a named parameter of the enclosing
/// closure is scope 1, two levels up scope 2, and so on. `$0` always means the
/// innermost closure's object; `$1`... are errors (name outer parameters).
///
/// Values:
/// - key paths `$0.a.b`, `$0.a?.b`, `$0.a!.b` → `.keyPath(scope:, path:)`; `$0`
///   alone is the key path with an empty path (the object itself, compared by
///   identity). `count` and `isEmpty` after a value are Swift's properties
///   (``PredicateExpression/count(_:at:)``, ``Predicate/isEmpty(_:at:)``),
///   except directly after `$0` (the object has no count: they are attribute
///   names there). A backquoted member (`` $0.trip.`count` ``) is always a
///   key path component.
/// - variables: `$name` (also `` $`any name` ``) or a bare identifier that is
///   not a closure parameter (`searchText`) → `.variable(name)`.
/// - literals: strings with Swift escapes (`\" \\ \n \r \t \0 \' \u{1F600}`;
///   no interpolation, raw or multi-line strings), integers and decimals with
///   optional exponent and `_` separators (the text is kept, `_` removed),
///   `-` before a number literal, `true`, `false`, `nil`, array literals of
///   literals `["a", "b"]`, implicit enum members `.family` → the string
///   `"family"` (enum raw values; `.family.rawValue` is the same).
///
/// Operators, loosest first: `c ? a : b` (right associative) < `||` < `&&`
/// < `== != < <= > >=` (not chainable) < `??` (right associative) < `is` <
/// `...`/`..<` < prefix `!` and `-` < postfix member access and calls.
/// `a && b && c` is one conjunction of three; parentheses group (and keep
/// `(a && b) && c` as a nested conjunction).
///
/// Methods:
/// - `s.contains(x)`, `s.hasPrefix(x)`, `s.starts(with: x)`, `s.hasSuffix(x)`,
///   `s.localizedStandardContains(x)` → ``Predicate/string(_:_:_:_:at:)``;
///   `s.localizedCaseInsensitiveContains(x)` → `contains` with `.caseInsensitive`.
///   A variable or key path receiver of `contains(x)` is a string test here;
///   the type checker reads it as membership when the receiver is an array.
/// - `["a", "b"].contains(x)` (array literal receiver) → `.inCollection(x, array)`;
///   `c.contains(element: x)` (a Strata extension) is membership for any receiver.
/// - `(lo...hi).contains(x)` → `.between(x, lo, hi)`; `(lo..<hi).contains(x)`
///   → `.conjunction([x >= lo, x < hi])`.
/// - `c.contains { p }`, `c.contains(where: { p })` → `.anySatisfy`;
///   `c.allSatisfy { p }`, `c.allSatisfy({ p })` → `.allSatisfy`.
/// - `x.isEmpty` → `.isEmpty`, `x.count` → `.count`, `a ?? b` → `.coalesce`.
/// - `c.map { v }.max()`, `.min()` → `.aggregate(.max/.min, c, v)`; `c.map { v }.reduce(0, +)`
///   (or `reduce(0.0, +)`; no other reduction) → `.aggregate(.sum, c, v)`; `c.map { v }.average()`
///   (a Strata extension: Swift's standard library has no average) → `.aggregate(.avg, c, v)`.
/// - `$0 is PersonalTrip` → `.typeCheck` (only on `$0` or a closure parameter).
///
/// String options (``StringOptions``) have no plain Swift spelling. Strata
/// accepts, and ``Predicate/text`` renders, an `options:` argument on the
/// string tests (`s.contains(x, options: .caseInsensitive)`,
/// `s.hasPrefix(x, options: [.caseInsensitive, .diacriticInsensitive])`; the
/// option may also be written `"c"`, `"d"`, `"cd"`) and, for comparisons,
/// Foundation's `compare`: `a.compare(b, options: O) == .orderedSame` is `==`,
/// `!= .orderedSame` is `!=`, `== .orderedAscending` is `<`,
/// `!= .orderedDescending` is `<=`, `== .orderedDescending` is `>`,
/// `!= .orderedAscending` is `>=`. `a.caseInsensitiveCompare(b)` is `compare`
/// with `.caseInsensitive`.
///
/// Conditions and values: `?:`, `true`/`false` and parenthesized expressions
/// are parsed into a neutral node and converted by context: where a condition
/// is expected `c ? a : b` is ``Predicate/conditional(_:_:_:at:)``, a bare
/// value (`$0.isInPlan`, `flag`) is ``Predicate/value(_:)`` and `true` is
/// ``Predicate/constant(_:at:)``; where a value is expected (an operand of a
/// comparison, `??`, a method) `c ? a : b` is
/// ``PredicateExpression/conditional(_:_:_:at:)``.
///
/// Locations: every node's `SourceLocation(textOffset:)` is a 1-based
/// character (grapheme) offset into the text:
/// - key paths, variables and literals: their first character (`$`, the
///   identifier, `"`, `-`, `[`, the `.` of `.family`);
/// - infix and ternary operators: the operator (`&&` — the first one of a
///   chain —, `||`, `==`, `??`, `is`, `?`); a `compare(...) == .orderedSame`
///   comparison: its `==`/`!=`;
/// - prefix `!`: the `!`;
/// - member properties and methods (`count`, `isEmpty`, `contains`, `hasPrefix`,
///   `allSatisfy`, ...): the member name; the comparisons made from
///   `(lo..<hi).contains(x)` share the `contains` position.
/// Parentheses are transparent.
///
/// Errors are ``StrataError`` `.invalid` with messages like
/// `expected ')' at position 17: found '&&'`, `unexpected '&' at position 12`,
/// `unknown method 'foo' at position 20`, `unterminated string at position 5`.
public enum PredicateParser {
    /// How deeply parentheses, brackets, closures, argument lists, `!`, `??`
    /// and `?:` may nest (the parser is recursive; this bounds its stack use).
    static let maxDepth = 100

    /// Parses predicate text.
    public static func parse(_ text: String) throws -> Predicate {
        var lexer = PredicateLexer(text)
        let tokens = try lexer.tokenize()
        var parser = PredicateTextParser(tokens: tokens)
        return try parser.parseTopLevel()
    }
}

/// The error every parse failure throws.
func predicateError(_ message: String, _ position: Int, _ detail: String? = nil) -> StrataError {
    var m = "\(message) at position \(position)"
    if let detail { m += ": \(detail)" }
    return StrataError(.invalid, m, path: nil)
}

// MARK: - Parser

struct PredicateTextParser {
    /// A parsed expression before its context decides whether it is a condition or a value.
    struct Node {
        indirect enum Kind {
            /// Certainly a condition.
            case pred(Predicate)
            /// A value (a condition only as `.value(...)`).
            case expr(PredicateExpression)
            /// `true` / `false`, at its position.
            case bool(Bool, Int)
            /// `c ? a : b`, at the `?`.
            case cond(Node, Node, Node, Int)
            /// `lo...hi` / `lo..<hi`, or one-sided `lo...`, `...hi`, `..<hi`: only a receiver of `contains`.
            case range(Node?, Node?, closed: Bool)
            /// `a.compare(b, options:)`: only an operand of `==`/`!=` with `.orderedX`.
            case compareResult(PredicateExpression, PredicateExpression, StringOptions)
            /// `seq.map { value }`: only the receiver of `max()`, `min()`, `reduce(0, +)` and `average()`.
            case mapped(PredicateExpression, PredicateExpression)
        }
        var kind: Kind
        /// Position of the node's first character, for error messages.
        var start: Int
        /// Written in parentheses: `($0).count` is the count of the object, `$0.count` a key path.
        var grouped = false
    }

    private let tokens: [PredicateToken]
    private var i = 0
    /// Closure parameter names, innermost last; nil for an unnamed (`$0`) closure.
    private var scopes: [String?] = []
    /// Names `if let` binds, innermost last: the key path each stands for, in the scope of the
    /// closure nesting (`scopes.count`) where it was bound.
    private var aliases: [(name: String, scope: Int, path: [String], nesting: Int)] = []
    var depth = 0

    init(tokens: [PredicateToken]) { self.tokens = tokens }

    var tok: PredicateToken { tokens[i] }
    func peek(_ k: Int) -> PredicateToken { tokens[min(i + k, tokens.count - 1)] }
    mutating func advance() { if i < tokens.count - 1 { i += 1 } }

    func loc(_ pos: Int) -> SourceLocation { SourceLocation(textOffset: pos) }

    func unexpected(_ t: PredicateToken) -> StrataError {
        if t.isPunct("=") { return predicateError("unexpected '='", t.pos, "use '==' to compare") }
        return predicateError("unexpected \(t.named)", t.pos)
    }

    mutating func expect(_ p: String) throws -> Int {
        guard tok.isPunct(p) else { throw predicateError("expected '\(p)'", tok.pos, "found \(tok.quoted)") }
        let pos = tok.pos
        advance()
        return pos
    }

    mutating func enter() throws {
        depth += 1
        if depth > PredicateParser.maxDepth {
            throw predicateError("predicate nested too deeply", tok.pos, "at most \(PredicateParser.maxDepth) levels")
        }
    }

    // MARK: Top level

    mutating func parseTopLevel() throws -> Predicate {
        let result: Predicate
        if tok.isPunct("#") {
            advance()
            guard tok.isKeyword("Predicate"), !tok.spaceBefore else {
                throw predicateError("expected 'Predicate' after '#'", tok.pos, "found \(tok.quoted)")
            }
            advance()
            if tok.isPunct("<") && !tok.spaceBefore {
                advance()
                var nesting = 1
                while nesting > 0 {
                    if tok.isPunct("<") { nesting += 1 } else if tok.isPunct(">") { nesting -= 1 } else if tok.kind == .end || tok.isPunct("{") {
                        throw predicateError("expected '>'", tok.pos, "found \(tok.quoted)")
                    }
                    advance()
                }
            }
            guard tok.isPunct("{") else { throw predicateError("expected '{'", tok.pos, "found \(tok.quoted)") }
            result = try parseClosure()
        } else if tok.isPunct("{") {
            result = try parseClosure()
        } else {
            var name: String?
            if let (n, skip) = closureParameter(at: i) {
                name = n
                i += skip
            }
            scopes.append(name)
            let body = try parseTernary()
            scopes.removeLast()
            result = try asPredicate(body)
        }
        guard tok.kind == .end else { throw unexpected(tok) }
        return result
    }

    /// A closure head `name in`, `_ in`, `(name) in`, `(name: Type) -> Bool in`
    /// starting at token `j`: the name (nil for `_`) and the tokens it takes.
    private func closureParameter(at j: Int) -> (String?, Int)? {
        func t(_ k: Int) -> PredicateToken { tokens[min(k, tokens.count - 1)] }
        func paramName(_ x: PredicateToken) -> String?? {
            if x.kind == .quotedIdent { return .some(x.text) }
            if x.kind == .ident {
                if x.text == "_" { return .some(nil) }
                if !PredicateSyntax.reserved.contains(x.text) { return .some(x.text) }
            }
            return nil
        }
        if let name = paramName(t(j)), t(j + 1).isKeyword("in") { return (name, 2) }
        guard t(j).isPunct("("), let name = paramName(t(j + 1)) else { return nil }
        var k = j + 2
        func skipType(_ k: inout Int) {
            while t(k).isName || t(k).isPunct(".") || t(k).isPunct("?") || t(k).isPunct("!")
                || t(k).isPunct("<") || t(k).isPunct(">") || t(k).isPunct("[") || t(k).isPunct("]") {
                if t(k).isKeyword("in") { return }
                k += 1
            }
        }
        if t(k).isPunct(":") {
            k += 1
            skipType(&k)
        }
        guard t(k).isPunct(")") else { return nil }
        k += 1
        if t(k).isPunct("->") {
            k += 1
            skipType(&k)
        }
        guard t(k).isKeyword("in") else { return nil }
        return (name, k + 1 - j)
    }

    /// `{ [param in] [return] body }`, at the `{`: a new scope.
    mutating func parseClosure() throws -> Predicate {
        try asPredicate(try parseClosureNode())
    }

    /// `{ value }` of `map`.
    mutating func parseClosureValue() throws -> PredicateExpression {
        try asExpression(try parseClosureNode())
    }

    private mutating func parseClosureNode() throws -> Node {
        try enter()
        defer { depth -= 1 }
        _ = try expect("{")
        var name: String?
        if let (n, skip) = closureParameter(at: i) {
            name = n
            i += skip
        }
        if tok.isKeyword("return") { advance() }
        scopes.append(name)
        let body = try parseTernary()
        scopes.removeLast()
        if !tok.isPunct("}") {
            throw predicateError("expected '}'", tok.pos, "found \(tok.quoted)")
        }
        advance()
        return body
    }

    /// `if let name = keyPath { … } else { … }` (also `else if let …`): the body where the key path
    /// (an optional relationship, attribute or cast) is not nil, with `name` standing for it.
    private mutating func parseIfLet() throws -> Node {
        let ifPos = tok.pos
        try enter()
        defer { depth -= 1 }
        advance()
        guard tok.isKeyword("let") else {
            throw predicateError("only 'if let name = value { … } else { … }' is supported", ifPos, "use '? :' for other conditions")
        }
        advance()
        guard tok.kind == .ident, !PredicateSyntax.reserved.contains(tok.text) else {
            throw predicateError("expected a name after 'if let'", tok.pos, "found \(tok.quoted)")
        }
        let name = tok.text
        advance()
        _ = try expect("=")
        let bound = try parseTernary()
        guard case .expr(.keyPath(let scope, let path, let at)) = bound.kind, !path.isEmpty else {
            throw predicateError("'if let' binds a key path or a cast of one here", bound.start, "e.g. if let a = $0.livingAccommodation { … }")
        }
        aliases.append((name, scope, path, scopes.count))
        let body = try parseBraced()
        aliases.removeLast()
        guard tok.isKeyword("else") else {
            throw predicateError("expected 'else'", tok.pos, "an 'if let' in a predicate needs an else branch")
        }
        advance()
        let other = tok.isKeyword("if") ? try parseIfLet() : try parseBraced()
        let test = Predicate.comparison(.notEqual, .keyPath(scope: scope, path: path, at: at), .literal(.null, at: loc(ifPos)), [], at: loc(ifPos))
        return Node(kind: .cond(Node(kind: .pred(test), start: ifPos), body, other, ifPos), start: ifPos)
    }

    /// `{ value }` or `{ return value }` of an `if let`.
    private mutating func parseBraced() throws -> Node {
        _ = try expect("{")
        if tok.isKeyword("return") { advance() }
        let body = try parseTernary()
        _ = try expect("}")
        return body
    }

    // MARK: Context conversion

    private func asPredicate(_ n: Node) throws -> Predicate {
        switch n.kind {
        case .pred(let p): return p
        case .bool(let b, let at): return .constant(b, at: loc(at))
        case .cond(let c, let a, let b, let q):
            return .conditional(try asPredicate(c), try asPredicate(a), try asPredicate(b), at: loc(q))
        case .expr(let e):
            switch e {
            case .keyPath(_, let path, _) where path.isEmpty:
                throw predicateError("expected a condition", n.start, "found the object itself")
            case .literal(let l, _):
                if case .bool(let b) = l { return .constant(b, at: e.location) }
                throw predicateError("expected a condition", n.start, "found a literal")
            case .count:
                throw predicateError("expected a condition", n.start, "found a count")
            default:
                return .value(e)
            }
        case .range:
            throw predicateError("expected a condition", n.start, "a range can only be the receiver of contains")
        case .compareResult:
            throw predicateError("expected a condition", n.start,
                                 "compare(...) must be compared with .orderedSame, .orderedAscending or .orderedDescending")
        case .mapped:
            throw predicateError("expected a condition", n.start, "map { } gives values: take their max(), min(), reduce(0, +) or average()")
        }
    }

    func asExpression(_ n: Node) throws -> PredicateExpression {
        switch n.kind {
        case .expr(let e): return e
        case .bool(let b, let at): return .literal(.bool(b), at: loc(at))
        case .cond(let c, let a, let b, let q):
            return .conditional(try asPredicate(c), try asExpression(a), try asExpression(b), at: loc(q))
        case .pred:
            throw predicateError("expected a value", n.start, "found a condition")
        case .range:
            throw predicateError("expected a value", n.start, "a range can only be the receiver of contains")
        case .compareResult:
            throw predicateError("expected a value", n.start,
                                 "compare(...) must be compared with .orderedSame, .orderedAscending or .orderedDescending")
        case .mapped:
            throw predicateError("expected a value", n.start, "map { } gives values: take their max(), min(), reduce(0, +) or average()")
        }
    }

    // MARK: Operators

    mutating func parseTernary() throws -> Node {
        let c = try parseBinary(.or)
        guard tok.isPunct("?") else { return c }
        let q = tok.pos
        try enter()
        defer { depth -= 1 }
        advance()
        let a = try parseTernary()
        guard tok.isPunct(":") else { throw predicateError("expected ':'", tok.pos, "found \(tok.quoted)") }
        advance()
        let b = try parseTernary()
        return Node(kind: .cond(c, a, b, q), start: c.start)
    }

    /// Binary operator precedence levels, loosest first.
    private enum Level: Int, Comparable {
        case or = 1, and, comparison, coalesce, cast, range, addition, multiplication
        static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    private var binaryLevel: Level? {
        switch tok.kind {
        case .punct:
            switch tok.text {
            case "||": return .or
            case "&&": return .and
            case "==", "!=", "<", "<=", ">", ">=": return .comparison
            case "??": return .coalesce
            case "...", "..<": return .range
            case "+", "-": return .addition
            case "*", "/", "%": return .multiplication
            default: return nil
            }
        case .ident:
            return tok.text == "is" || tok.text == "as" ? .cast : nil
        default:
            return nil
        }
    }

    /// Operators at `minimum` or tighter (precedence climbing: one frame per
    /// nesting level, whatever the number of precedence levels; each operator's
    /// work is in its own function to keep this recursive frame small).
    private mutating func parseBinary(_ minimum: Level) throws -> Node {
        var lhs = try parsePrefix()
        while let level = binaryLevel, level >= minimum {
            switch level {
            case .or, .and: lhs = try parseChain(lhs, level)
            case .comparison: lhs = try parseComparison(lhs)
            case .coalesce: lhs = try parseCoalesce(lhs)
            case .cast: lhs = try typeCheck(lhs)
            case .range: lhs = try parseRange(lhs)
            case .addition, .multiplication: lhs = try parseArithmetic(lhs, level)
            }
        }
        return lhs
    }

    /// `lhs && b && c` / `lhs || b || c`, at the first operator.
    private mutating func parseChain(_ lhs: Node, _ level: Level) throws -> Node {
        let op = tok.pos
        var items = [try asPredicate(lhs)]
        let text = tok.text
        while tok.isPunct(text) {
            advance()
            items.append(try asPredicate(try parseBinary(level == .or ? .and : .comparison)))
        }
        let p: Predicate = level == .or ? .disjunction(items, at: loc(op)) : .conjunction(items, at: loc(op))
        return Node(kind: .pred(p), start: lhs.start)
    }

    private mutating func parseComparison(_ lhs: Node) throws -> Node {
        let op = tok.pos
        let operatorText = tok.text
        advance()
        let rhs = try parseBinary(.coalesce)
        if binaryLevel == .comparison {
            throw predicateError("comparison operators cannot be chained", tok.pos, "add parentheses or use '&&'")
        }
        let p = try comparison(ComparisonOperator(rawValue: operatorText)!, lhs, rhs, op)
        return Node(kind: .pred(p), start: lhs.start)
    }

    private mutating func parseCoalesce(_ lhs: Node) throws -> Node {
        let op = tok.pos
        try enter()
        defer { depth -= 1 }
        advance()
        let rhs = try parseBinary(.coalesce)
        if case .pred(let p) = lhs.kind {
            // `$0.livingAccommodation?.address.localizedStandardContains(q) ?? false`
            return Node(kind: .pred(.orElse(p, try asPredicate(rhs), at: loc(op))), start: lhs.start)
        }
        let e = PredicateExpression.coalesce(try asExpression(lhs), try asExpression(rhs), at: loc(op))
        return Node(kind: .expr(e), start: lhs.start)
    }

    /// `lhs + b` (and `-`, `*`, `/`, `%`), left-associative, at the operator.
    private mutating func parseArithmetic(_ lhs: Node, _ level: Level) throws -> Node {
        let opPos = tok.pos
        let op = ArithmeticOperator(rawValue: tok.text)!
        try enter()
        defer { depth -= 1 }
        advance()
        let rhs = level == .multiplication ? try parsePrefix() : try parseBinary(.multiplication)
        let e = PredicateExpression.arithmetic(op, try arithmeticOperand(lhs, op, opPos), try arithmeticOperand(rhs, op, opPos), at: loc(opPos))
        return Node(kind: .expr(e), start: lhs.start)
    }

    private func arithmeticOperand(_ n: Node, _ op: ArithmeticOperator, _ opPos: Int) throws -> PredicateExpression {
        if case .pred = n.kind { throw predicateError("arithmetic on conditions is not supported", opPos, "'\(op.rawValue)' takes numbers and dates") }
        return try asExpression(n)
    }

    private mutating func parseRange(_ lhs: Node) throws -> Node {
        let closed = tok.text == "..."
        let opPos = tok.pos
        advance()
        if tok.isPunct(")") || tok.isPunct("]") || tok.kind == .end {
            // `lo...`: Swift has no `lo..<`.
            guard closed else { throw predicateError("a range 'lo..<' needs an upper bound (one-sided: 'lo...', '...hi', '..<hi')", opPos) }
            return Node(kind: .range(lhs, nil, closed: true), start: lhs.start)
        }
        let rhs = try parseBinary(.addition)
        if binaryLevel == .range { throw unexpected(tok) }
        return Node(kind: .range(lhs, rhs, closed: closed), start: lhs.start)
    }

    private func comparison(_ op: ComparisonOperator, _ lhs: Node, _ rhs: Node, _ opPos: Int) throws -> Predicate {
        var result: (PredicateExpression, PredicateExpression, StringOptions)?
        var other: Node?
        if case .compareResult(let a, let b, let o) = lhs.kind {
            result = (a, b, o)
            other = rhs
        } else if case .compareResult(let a, let b, let o) = rhs.kind {
            result = (a, b, o)
            other = lhs
        }
        guard let (a, b, options) = result, let other else {
            // A condition on an optional chain compared with a bool: `… .contains(q) == true` is
            // `… ?? false`; `== false` is `!… ?? false`; `!= true` is `!… ?? true`; `!= false` is `… ?? true`.
            for (condition, value) in [(lhs, rhs), (rhs, lhs)] {
                guard case .pred(let p) = condition.kind, case .bool(let b, _) = value.kind, op == .equal || op == .notEqual else { continue }
                let matches = (op == .equal) == b
                let test: Predicate = matches ? p : .negation(p, at: loc(opPos))
                return .orElse(test, .constant(op == .notEqual, at: loc(opPos)), at: loc(opPos))
            }
            return .comparison(op, try asExpression(lhs), try asExpression(rhs), [], at: loc(opPos))
        }
        var order: String?
        if case .expr(.literal(.string(let s), _)) = other.kind { order = s }
        let mapped: ComparisonOperator?
        switch (op, order) {
        case (.equal, "orderedSame"): mapped = .equal
        case (.notEqual, "orderedSame"): mapped = .notEqual
        case (.equal, "orderedAscending"): mapped = .less
        case (.notEqual, "orderedDescending"): mapped = .lessOrEqual
        case (.equal, "orderedDescending"): mapped = .greater
        case (.notEqual, "orderedAscending"): mapped = .greaterOrEqual
        default: mapped = nil
        }
        guard let mapped else {
            throw predicateError("unsupported use of compare(...)", opPos,
                                 "compare its result with '==' or '!=' and .orderedSame, .orderedAscending or .orderedDescending")
        }
        return .comparison(mapped, a, b, options, at: loc(opPos))
    }

    /// `n is Entity`, at `is` (or `as`).
    private mutating func typeCheck(_ n: Node) throws -> Node {
        if tok.text == "as" { return try cast(n) }
        let isPos = tok.pos
        advance()
        guard tok.isName, tok.kind == .quotedIdent || !PredicateSyntax.reserved.contains(tok.text) else {
            throw predicateError("expected an entity name after 'is'", tok.pos, "found \(tok.quoted)")
        }
        let entity = tok.text
        advance()
        guard case .expr(.keyPath(let scope, let path, _)) = n.kind, path.isEmpty else {
            throw predicateError("'is' applies only to $0 or a closure parameter", n.start)
        }
        return Node(kind: .pred(.typeCheck(scope: scope, entity: entity, at: loc(isPos))), start: n.start)
    }

    /// `n as? Entity`: a key path component `as:Entity` (nil where the object is another entity).
    private mutating func cast(_ n: Node) throws -> Node {
        let asPos = tok.pos
        advance()
        guard tok.isPunct("?"), !tok.spaceBefore else {
            if tok.isPunct("!") { throw predicateError("forced casts ('as!') are not supported", asPos, "use 'as?' with '?.' and '??', or test with 'is'") }
            throw predicateError("expected 'as?'", asPos, "a cast to an entity is 'as? Entity'")
        }
        advance()
        guard tok.isName, tok.kind == .quotedIdent || !PredicateSyntax.reserved.contains(tok.text) else {
            throw predicateError("expected an entity name after 'as?'", tok.pos, "found \(tok.quoted)")
        }
        let entity = tok.text
        advance()
        guard case .expr(.keyPath(let scope, let path, let at)) = n.kind else {
            throw predicateError("'as?' applies to $0, a closure parameter or a key path", n.start)
        }
        return Node(kind: .expr(.keyPath(scope: scope, path: path + ["as:" + entity], at: at)), start: n.start)
    }

    private mutating func parsePrefix() throws -> Node {
        if tok.isPunct("!") {
            try enter()
            defer { depth -= 1 }
            let bang = tok.pos
            advance()
            let operand = try parsePrefix()
            return Node(kind: .pred(.negation(try asPredicate(operand), at: loc(bang))), start: bang)
        }
        return try parsePostfix(try parseAtomOrParenthesized())
    }

    private mutating func parseAtomOrParenthesized() throws -> Node {
        tok.isPunct("(") ? try parseParenthesized() : try parseAtom()
    }

    /// `( expression )`: parentheses only group.
    private mutating func parseParenthesized() throws -> Node {
        try enter()
        defer { depth -= 1 }
        let open = tok.pos
        advance()
        var n = try parseTernary()
        if tok.isPunct(",") { throw predicateError("expected ')'", tok.pos, "tuples are not supported") }
        _ = try expect(")")
        n.start = open
        n.grouped = true
        return n
    }

    // MARK: Primary

    /// A primary expression other than a parenthesized one.
    private mutating func parseAtom() throws -> Node {
        let t = tok
        switch t.kind {
        case .number:
            advance()
            return Node(kind: .expr(.literal(.number(t.text), at: loc(t.pos))), start: t.pos)
        case .string:
            advance()
            return Node(kind: .expr(.literal(.string(t.text), at: loc(t.pos))), start: t.pos)
        case .dollarNumber:
            guard t.text == "0" else {
                throw predicateError("'$\(t.text)' is not supported", t.pos,
                                     "$0 is the innermost closure's object; name an outer closure's parameter to refer to it")
            }
            advance()
            return Node(kind: .expr(.keyPath(scope: 0, path: [], at: loc(t.pos))), start: t.pos)
        case .dollarName:
            advance()
            return Node(kind: .expr(.variable(t.text, at: loc(t.pos))), start: t.pos)
        case .ident, .quotedIdent:
            if t.kind == .ident {
                switch t.text {
                case "true", "false":
                    advance()
                    return Node(kind: .bool(t.text == "true", t.pos), start: t.pos)
                case "nil":
                    advance()
                    return Node(kind: .expr(.literal(.null, at: loc(t.pos))), start: t.pos)
                case "if":
                    return try parseIfLet()
                default:
                    if PredicateSyntax.reserved.contains(t.text) { throw unexpected(t) }
                }
            }
            let parameter = scopes.lastIndex(where: { $0 == t.text })
            // An `if let` name, unless a closure inside its body declares a parameter of that name.
            if let alias = aliases.last(where: { $0.name == t.text }), (parameter ?? -1) < alias.nesting {
                advance()
                let scope = alias.scope + scopes.count - alias.nesting
                return Node(kind: .expr(.keyPath(scope: scope, path: alias.path, at: loc(t.pos))), start: t.pos)
            }
            if let index = parameter {
                advance()
                let scope = scopes.count - 1 - index
                return Node(kind: .expr(.keyPath(scope: scope, path: [], at: loc(t.pos))), start: t.pos)
            }
            if t.text == "abs" && peek(1).isPunct("(") && !peek(1).spaceBefore {
                // `abs(x)` is `x < 0 ? 0 - x : x` (abs of the least int overflows, as in Swift).
                try enter()
                defer { depth -= 1 }
                advance()
                advance()
                let x = try arithmeticOperand(try parseTernary(), .subtract, t.pos)
                _ = try expect(")")
                let at = loc(t.pos)
                let e = PredicateExpression.conditional(.comparison(.less, x, .literal(.number("0"), at: at), [], at: at),
                                                        .arithmetic(.subtract, .literal(.number("0"), at: at), x, at: at), x, at: at)
                return Node(kind: .expr(e), start: t.pos)
            }
            if peek(1).isPunct("(") && !peek(1).spaceBefore {
                throw predicateError("unsupported function '\(t.text)'", t.pos, "only methods of values and abs(_:) can be called")
            }
            advance()
            return Node(kind: .expr(.variable(t.text, at: loc(t.pos))), start: t.pos)
        case .punct:
            switch t.text {
            case "-":
                advance()
                if tok.kind == .number {
                    let text = tok.text
                    advance()
                    return Node(kind: .expr(.literal(.number("-" + text), at: loc(t.pos))), start: t.pos)
                }
                // `-x` is `0 - x` (the least int negated overflows, as in Swift).
                try enter()
                defer { depth -= 1 }
                let operand = try parsePostfix(try parseAtomOrParenthesized())
                let e = PredicateExpression.arithmetic(.subtract, .literal(.number("0"), at: loc(t.pos)),
                                                       try arithmeticOperand(operand, .subtract, t.pos), at: loc(t.pos))
                return Node(kind: .expr(e), start: t.pos)
            case "...", "..<":
                // `...hi`, `..<hi`
                try enter()
                defer { depth -= 1 }
                advance()
                let upper = try parseBinary(.addition)
                return Node(kind: .range(nil, upper, closed: t.text == "..."), start: t.pos)
            case "[":
                return try parseArrayLiteral()
            case ".":
                advance()
                guard tok.isName else { throw predicateError("expected a member name after '.'", tok.pos, "found \(tok.quoted)") }
                let name = tok.text
                if peek(1).isPunct("(") {
                    throw predicateError("unsupported enum case '.\(name)(...)'", t.pos)
                }
                advance()
                return Node(kind: .expr(.literal(.string(name), at: loc(t.pos))), start: t.pos)
            case "{":
                throw predicateError("unexpected '{'", t.pos, "closures are supported only as arguments of contains and allSatisfy")
            default:
                throw unexpected(t)
            }
        case .end:
            throw unexpected(t)
        }
    }

    private mutating func parseArrayLiteral() throws -> Node {
        try enter()
        defer { depth -= 1 }
        let open = tok.pos
        advance()
        var items: [PredicateLiteral] = []
        while !tok.isPunct("]") {
            let element = try parseTernary()
            switch element.kind {
            case .bool(let b, _): items.append(.bool(b))
            case .expr(.literal(let l, _)): items.append(l)
            default:
                throw predicateError("array literal elements must be literals", element.start)
            }
            if tok.isPunct(",") {
                advance()
            } else if !tok.isPunct("]") {
                throw predicateError("expected ',' or ']'", tok.pos, "found \(tok.quoted)")
            }
        }
        advance()
        return Node(kind: .expr(.literal(.array(items), at: loc(open))), start: open)
    }
}
