// The lexical layer of predicate text: tokens (`PredicateToken`), the
// identifier and keyword rules shared with rendering (`PredicateSyntax`), and
// the lexer that turns text into tokens with 1-based character positions.
// The grammar is in PredicateParser.swift.

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
            // Only `if let name = …` takes one (the parser says "use '=='" anywhere else).
            return take("=")
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
        case "+", "*", "/", "%":
            return take(String(Character(c)))
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
