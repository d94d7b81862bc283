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

// MARK: - Tokens

struct PredicateToken {
    enum Kind: Equatable {
        /// An identifier or keyword.
        case ident
        /// A backquoted identifier: never a keyword, never a special member.
        case quotedIdent
        /// `$0`, `$12`: `text` holds the digits.
        case dollarNumber
        /// `$name`, `` $`name` ``: `text` holds the name.
        case dollarName
        case number
        /// `text` holds the decoded value.
        case string
        case punct
        case end
    }
    var kind: Kind
    var text: String
    /// 1-based character position of the first character.
    var pos: Int
    /// Whitespace or a comment (or the start of the text) comes right before.
    var spaceBefore: Bool

    func isPunct(_ p: String) -> Bool { kind == .punct && text == p }
    func isKeyword(_ k: String) -> Bool { kind == .ident && text == k }
    var isName: Bool { kind == .ident || kind == .quotedIdent }

    /// How the token reads after "found" in an error message: `'&&'`, `a string literal`, `the end of the predicate`.
    var quoted: String {
        switch kind {
        case .end: return "the end of the predicate"
        case .string: return "a string literal"
        default: return named
        }
    }

    /// How the token reads after "unexpected": `'&&'`, `string literal`, `end of predicate`.
    var named: String {
        switch kind {
        case .end: return "end of predicate"
        case .string: return "string literal"
        case .dollarNumber, .dollarName: return "'$\(text)'"
        case .quotedIdent: return "'`\(text)`'"
        default: return "'\(text)'"
        }
    }
}

/// Identifier classes shared by the parser and the renderer.
enum PredicateSyntax {
    static func isIdentStart(_ c: Unicode.Scalar) -> Bool {
        if c.isASCII {
            return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_"
        }
        return c.properties.isXIDStart
    }

    static func isIdentContinue(_ c: Unicode.Scalar) -> Bool {
        if c.isASCII { return isIdentStart(c) || isDigit(c) }
        return c.properties.isXIDContinue
    }

    static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

    /// Words the parser never reads as a variable or parameter name.
    static let reserved: Set<String> = [
        "true", "false", "nil", "in", "is", "as", "return", "let", "var", "if", "else", "guard",
        "switch", "case", "default", "for", "while", "repeat", "do", "try", "throw", "func", "class",
        "struct", "enum", "protocol", "extension", "import", "init", "deinit", "subscript",
        "typealias", "operator", "static", "public", "private", "fileprivate", "internal", "inout",
        "where", "break", "continue", "fallthrough", "defer", "catch", "self", "Self", "super", "_",
    ]

    /// A Swift identifier (not checked against keywords).
    static func isIdentifier(_ s: String) -> Bool {
        var first = true
        for c in s.unicodeScalars {
            if first ? !isIdentStart(c) : !isIdentContinue(c) { return false }
            first = false
        }
        return !first
    }

    static let specialMembers: Set<String> = ["count", "isEmpty"]
}

// MARK: - Lexer

struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    /// Scalar index → 1-based character position; one extra entry for the end.
    private let charPos: [Int]
    private var i = 0

    init(_ text: String) {
        var s: [Unicode.Scalar] = []
        var p: [Int] = []
        var ci = 0
        for ch in text {
            ci += 1
            for u in ch.unicodeScalars {
                s.append(u)
                p.append(ci)
            }
        }
        p.append(ci + 1)
        scalars = s
        charPos = p
    }

    private func pos(_ index: Int) -> Int { charPos[min(index, charPos.count - 1)] }

    private func peek(_ k: Int = 0) -> Unicode.Scalar? {
        let j = i + k
        return j < scalars.count ? scalars[j] : nil
    }

    private func fail(_ message: String, _ index: Int, _ detail: String? = nil) -> StrataError {
        predicateError(message, pos(index), detail)
    }

    mutating func tokenize() throws -> [PredicateToken] {
        var out: [PredicateToken] = []
        var space = true
        while true {
            if try skipTrivia() { space = true }
            let start = i
            guard let c = peek() else {
                out.append(PredicateToken(kind: .end, text: "", pos: pos(start), spaceBefore: space))
                return out
            }
            var kind = PredicateToken.Kind.punct
            var text = ""
            if PredicateSyntax.isIdentStart(c) {
                kind = .ident
                text = readIdentifier()
            } else if c == "`" {
                kind = .quotedIdent
                text = try readQuoted()
            } else if PredicateSyntax.isDigit(c) {
                kind = .number
                text = try readNumber()
            } else if c == "$" {
                i += 1
                if peek() == "`" {
                    kind = .dollarName
                    text = try readQuoted()
                } else if let d = peek(), PredicateSyntax.isIdentContinue(d) {
                    var name = ""
                    while let d = peek(), PredicateSyntax.isIdentContinue(d) {
                        name.unicodeScalars.append(d)
                        i += 1
                    }
                    text = name
                    kind = name.unicodeScalars.allSatisfy(PredicateSyntax.isDigit) ? .dollarNumber : .dollarName
                } else {
                    throw fail("expected a name after '$'", start)
                }
            } else if c == "\"" {
                kind = .string
                text = try readString()
            } else {
                text = try readPunct(spaceBefore: space)
            }
            out.append(PredicateToken(kind: kind, text: text, pos: pos(start), spaceBefore: space))
            space = false
        }
    }

    /// Skips whitespace and comments; true when it skipped anything.
    private mutating func skipTrivia() throws -> Bool {
        let start = i
        while let c = peek() {
            if c.properties.isWhitespace || c == "\u{FEFF}" {
                i += 1
            } else if c == "/" && peek(1) == "/" {
                while let d = peek(), d != "\n", d != "\r" { i += 1 }
            } else if c == "/" && peek(1) == "*" {
                let open = i
                var depth = 0
                while true {
                    guard let d = peek() else { throw fail("unterminated comment", open) }
                    if d == "/" && peek(1) == "*" {
                        depth += 1
                        i += 2
                    } else if d == "*" && peek(1) == "/" {
                        depth -= 1
                        i += 2
                        if depth == 0 { break }
                    } else {
                        i += 1
                    }
                }
            } else {
                break
            }
        }
        return i != start
    }

    private mutating func readIdentifier() -> String {
        var s = ""
        while let c = peek(), PredicateSyntax.isIdentContinue(c) {
            s.unicodeScalars.append(c)
            i += 1
        }
        return s
    }

    /// `` `name` ``, starting at the opening backquote.
    private mutating func readQuoted() throws -> String {
        let open = i
        i += 1
        var s = ""
        while true {
            guard let c = peek(), c != "\n", c != "\r" else { throw fail("unterminated backquoted name", open) }
            i += 1
            if c == "`" { break }
            s.unicodeScalars.append(c)
        }
        if s.isEmpty { throw fail("empty backquoted name", open) }
        return s
    }

    private mutating func readNumber() throws -> String {
        let start = i
        var s = ""
        func digits(_ lexer: inout PredicateLexer, _ s: inout String) {
            while let c = lexer.peek(), PredicateSyntax.isDigit(c) || c == "_" {
                if c != "_" { s.unicodeScalars.append(c) }
                lexer.i += 1
            }
        }
        digits(&self, &s)
        if peek() == ".", let d = peek(1), PredicateSyntax.isDigit(d) {
            s.append(".")
            i += 1
            digits(&self, &s)
        }
        if let e = peek(), e == "e" || e == "E" {
            let save = i
            var exp = String(Character(e))
            i += 1
            if let sign = peek(), sign == "+" || sign == "-" {
                exp.unicodeScalars.append(sign)
                i += 1
            }
            if let d = peek(), PredicateSyntax.isDigit(d) {
                s += exp
                digits(&self, &s)
            } else {
                i = save
            }
        }
        if let c = peek(), PredicateSyntax.isIdentContinue(c) {
            throw fail("invalid number literal", start, "only decimal numbers are supported")
        }
        return s
    }

    /// A `"..."` literal, starting at the quote; returns the decoded value.
    private mutating func readString() throws -> String {
        let open = i
        if peek(1) == "\"" && peek(2) == "\"" {
            throw fail("multi-line string literals are not supported", open)
        }
        i += 1
        var s = ""
        while true {
            guard let c = peek(), c != "\n", c != "\r" else { throw fail("unterminated string", open) }
            if c == "\"" {
                i += 1
                return s
            }
            if c != "\\" {
                s.unicodeScalars.append(c)
                i += 1
                continue
            }
            let escape = i
            i += 1
            guard let e = peek() else { throw fail("unterminated string", open) }
            i += 1
            switch e {
            case "n": s.append("\n")
            case "t": s.append("\t")
            case "r": s.append("\r")
            case "0": s.append("\0")
            case "\\": s.append("\\")
            case "\"": s.append("\"")
            case "'": s.append("'")
            case "(": throw fail("string interpolation is not supported", escape, "use a variable ($name) instead")
            case "u":
                guard peek() == "{" else { throw fail("invalid unicode escape", escape, "expected \\u{...}") }
                i += 1
                var value: UInt32 = 0
                var count = 0
                while let h = peek(), let v = hexValue(h) {
                    count += 1
                    if count > 8 { throw fail("invalid unicode escape", escape, "at most 8 hex digits") }
                    value = value * 16 + v
                    i += 1
                }
                guard count > 0, peek() == "}" else { throw fail("invalid unicode escape", escape, "expected \\u{...}") }
                i += 1
                guard let scalar = Unicode.Scalar(value) else {
                    throw fail("invalid unicode escape", escape, "not a Unicode scalar value")
                }
                s.unicodeScalars.append(scalar)
            default:
                throw fail("invalid escape sequence '\\\(Character(e))' in string", escape)
            }
        }
    }

    private func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": return c.value - 48
        case "a"..."f": return c.value - 87
        case "A"..."F": return c.value - 55
        default: return nil
        }
    }

    private mutating func readPunct(spaceBefore: Bool) throws -> String {
        let start = i
        let c = peek()!
        let n1 = peek(1), n2 = peek(2)
        func take(_ s: String) -> String {
            i += s.unicodeScalars.count
            return s
        }
        switch c {
        case "(", ")", "[", "]", "{", "}", ",", ":":
            return take(String(Character(c)))
        case "#":
            if n1 == "\"" { throw fail("raw string literals are not supported", start) }
            return take("#")
        case ".":
            if n1 == "." {
                if n2 == "." { return take("...") }
                if n2 == "<" { return take("..<") }
                throw fail("unexpected '..'", start)
            }
            return take(".")
        case "?":
            if n1 == "?" { return take("??") }
            if !spaceBefore && n1 == "." && n2 != "." { return take("?.") }
            return take("?")
        case "!":
            if n1 == "=" {
                if n2 == "=" { throw fail("unexpected '!=='", start, "identity comparison is not supported; use '!='") }
                return take("!=")
            }
            return take("!")
        case "=":
            if n1 == "=" {
                if n2 == "=" { throw fail("unexpected '==='", start, "identity comparison is not supported; use '=='") }
                return take("==")
            }
            throw fail("unexpected '='", start, "use '==' to compare")
        case "<": return take(n1 == "=" ? "<=" : "<")
        case ">": return take(n1 == "=" ? ">=" : ">")
        case "&":
            if n1 == "&" { return take("&&") }
            throw fail("unexpected '&'", start, "use '&&'")
        case "|":
            if n1 == "|" { return take("||") }
            throw fail("unexpected '|'", start, "use '||'")
        case "-":
            return take(n1 == ">" ? "->" : "-")
        case "'":
            throw fail("unexpected \"'\"", start, "strings use double quotes")
        default:
            throw fail("unexpected \(describe(c))", start)
        }
    }

    private func describe(_ c: Unicode.Scalar) -> String {
        let category = c.properties.generalCategory
        if c.value < 0x20 || c.value == 0x7F || category == .format || category == .unassigned
            || category == .privateUse || category == .nonspacingMark || category == .control {
            let hex = String(c.value, radix: 16, uppercase: true)
            return "character U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return "'\(Character(c))'"
    }
}

/// The error every parse failure throws.
func predicateError(_ message: String, _ position: Int, _ detail: String? = nil) -> StrataError {
    var m = "\(message) at position \(position)"
    if let detail { m += ": \(detail)" }
    return StrataError(.invalid, m, path: nil)
}

// MARK: - Parser

/// A parsed expression before its context decides whether it is a condition or a value.
private struct Node {
    indirect enum Kind {
        /// Certainly a condition.
        case pred(Predicate)
        /// A value (a condition only as `.value(...)`).
        case expr(PredicateExpression)
        /// `true` / `false`, at its position.
        case bool(Bool, Int)
        /// `c ? a : b`, at the `?`.
        case cond(Node, Node, Node, Int)
        /// `lo...hi` / `lo..<hi`: only a receiver of `contains`.
        case range(Node, Node, closed: Bool)
        /// `a.compare(b, options:)`: only an operand of `==`/`!=` with `.orderedX`.
        case compareResult(PredicateExpression, PredicateExpression, StringOptions)
    }
    var kind: Kind
    /// Position of the node's first character, for error messages.
    var start: Int
    /// Written in parentheses: `($0).count` is the count of the object, `$0.count` a key path.
    var grouped = false
}

private enum ArgValue {
    case node(Node)
    case closure(Predicate)
    case options(StringOptions)
}

private struct Arg {
    var label: String?
    var value: ArgValue
    var pos: Int
}

struct PredicateTextParser {
    private let tokens: [PredicateToken]
    private var i = 0
    /// Closure parameter names, innermost last; nil for an unnamed (`$0`) closure.
    private var scopes: [String?] = []
    private var depth = 0

    init(tokens: [PredicateToken]) { self.tokens = tokens }

    private var tok: PredicateToken { tokens[i] }
    private func peek(_ k: Int) -> PredicateToken { tokens[min(i + k, tokens.count - 1)] }
    private mutating func advance() { if i < tokens.count - 1 { i += 1 } }

    private func loc(_ pos: Int) -> SourceLocation { SourceLocation(textOffset: pos) }

    private func unexpected(_ t: PredicateToken) -> StrataError {
        return predicateError("unexpected \(t.named)", t.pos)
    }

    private mutating func expect(_ p: String) throws -> Int {
        guard tok.isPunct(p) else { throw predicateError("expected '\(p)'", tok.pos, "found \(tok.quoted)") }
        let pos = tok.pos
        advance()
        return pos
    }

    private mutating func enter() throws {
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
    private mutating func parseClosure() throws -> Predicate {
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
        return try asPredicate(body)
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
        }
    }

    private func asExpression(_ n: Node) throws -> PredicateExpression {
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
        }
    }

    // MARK: Operators

    private mutating func parseTernary() throws -> Node {
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
        case or = 1, and, comparison, coalesce, cast, range
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
        let e = PredicateExpression.coalesce(try asExpression(lhs), try asExpression(rhs), at: loc(op))
        return Node(kind: .expr(e), start: lhs.start)
    }

    private mutating func parseRange(_ lhs: Node) throws -> Node {
        let closed = tok.text == "..."
        advance()
        if tok.isPunct(")") || tok.isPunct("]") || tok.kind == .end {
            throw predicateError("one-sided ranges are not supported", tok.pos)
        }
        let rhs = try parsePrefix()
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
        if tok.text == "as" { throw predicateError("casts ('as') are not supported", tok.pos) }
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

    private mutating func parsePrefix() throws -> Node {
        if tok.isPunct("!") {
            try enter()
            defer { depth -= 1 }
            let bang = tok.pos
            advance()
            let operand = try parsePrefix()
            return Node(kind: .pred(.negation(try asPredicate(operand), at: loc(bang))), start: bang)
        }
        let primary = tok.isPunct("(") ? try parseParenthesized() : try parseAtom()
        return try parsePostfix(primary)
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
                default:
                    if PredicateSyntax.reserved.contains(t.text) { throw unexpected(t) }
                }
            }
            if let index = scopes.lastIndex(where: { $0 == t.text }) {
                advance()
                let scope = scopes.count - 1 - index
                return Node(kind: .expr(.keyPath(scope: scope, path: [], at: loc(t.pos))), start: t.pos)
            }
            if peek(1).isPunct("(") && !peek(1).spaceBefore {
                throw predicateError("unsupported function '\(t.text)'", t.pos, "only methods of values can be called")
            }
            advance()
            return Node(kind: .expr(.variable(t.text, at: loc(t.pos))), start: t.pos)
        case .punct:
            switch t.text {
            case "-":
                advance()
                guard tok.kind == .number else {
                    throw predicateError("unary minus is supported only before a number literal", t.pos)
                }
                let text = tok.text
                advance()
                return Node(kind: .expr(.literal(.number("-" + text), at: loc(t.pos))), start: t.pos)
            case "...", "..<":
                throw predicateError("one-sided ranges are not supported", t.pos)
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

    // MARK: Postfix

    private static let closureMethods: Set<String> = ["contains", "allSatisfy"]
    private static let unsupportedMethods: Set<String> = [
        "lowercased", "uppercased", "capitalized", "localizedLowercase", "localizedUppercase",
        "trimmingCharacters", "replacingOccurrences", "components", "split", "prefix", "suffix",
        "dropFirst", "dropLast", "filter", "map", "compactMap", "flatMap", "reduce", "first", "last",
        "min", "max", "sorted", "reversed", "count", "isEmpty", "firstIndex", "lastIndex", "range",
        "localizedCompare", "localizedStandardCompare", "localizedCaseInsensitiveCompare", "description",
        "distance", "addingTimeInterval", "timeIntervalSince", "isEqual", "elementsEqual", "hasPrefixes",
        "matches", "wholeMatch", "firstMatch", "evaluate",
    ]

    private mutating func parsePostfix(_ start: Node) throws -> Node {
        var n = start
        while true {
            if tok.isPunct(".") || tok.isPunct("?.") {
                advance()
                guard tok.isName else {
                    throw predicateError("expected a member name after '.'", tok.pos, "found \(tok.quoted)")
                }
                n = try member(n, tok)
            } else if tok.isPunct("!") && !tok.spaceBefore {
                guard case .expr = n.kind else { throw unexpected(tok) }
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
        "contains", "hasPrefix", "hasSuffix", "starts", "localizedStandardContains",
        "localizedCaseInsensitiveContains", "allSatisfy", "compare", "caseInsensitiveCompare",
    ]

    private func checkMethod(_ name: String, _ pos: Int) throws {
        if Self.knownMethods.contains(name) { return }
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
                let value = try asExpression(x), lower = try asExpression(lo), upper = try asExpression(hi)
                if closed { return Node(kind: .pred(.between(value, lower, upper, at: at)), start: start) }
                return Node(kind: .pred(.conjunction([
                    .comparison(.greaterOrEqual, value, lower, [], at: at),
                    .comparison(.less, value, upper, [], at: at),
                ], at: at)), start: start)
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
        case "localizedCaseInsensitiveContains":
            guard args.count == 1 else { throw wrong("localizedCaseInsensitiveContains(_:)") }
            return try stringTest(.contains, nil, .caseInsensitive)
        case "allSatisfy":
            guard let body = closureArgument(), args.first?.label == nil else { throw wrong("allSatisfy { ... }") }
            return Node(kind: .pred(.allSatisfy(try receiver(n), body, at: at)), start: start)
        case "compare", "caseInsensitiveCompare":
            guard let (x, o) = valueAndOptions(nil), name == "compare" || args.count == 1 else {
                throw wrong(name == "compare" ? "compare(_:) or compare(_:options:)" : "caseInsensitiveCompare(_:)")
            }
            let options = name == "compare" ? o : .caseInsensitive
            return Node(kind: .compareResult(try receiver(n), try asExpression(x), options), start: start)
        default:
            throw predicateError("unknown method '\(name)'", pos)
        }
    }
}
