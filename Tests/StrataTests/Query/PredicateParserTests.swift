import XCTest
@testable import Strata

// MARK: - Tree helpers (locations are compared separately)

// XCTest brings Foundation, whose Predicate and PredicateExpression clash with Strata's.
private typealias Pred = Strata.Predicate
private typealias Expr = Strata.PredicateExpression

private let U = SourceLocation.unknown

private func kp(_ path: String..., scope: Int = 0) -> Expr { .keyPath(scope: scope, path: path, at: U) }
private func kp(scope: Int, _ path: [String]) -> Expr { .keyPath(scope: scope, path: path, at: U) }
private func obj(_ scope: Int = 0) -> Expr { .keyPath(scope: scope, path: [], at: U) }
private func v(_ name: String) -> Expr { .variable(name, at: U) }
private func str(_ s: String) -> Expr { .literal(.string(s), at: U) }
private func num(_ n: String) -> Expr { .literal(.number(n), at: U) }
private func lit(_ l: PredicateLiteral) -> Expr { .literal(l, at: U) }
private func count(_ e: Expr) -> Expr { .count(e, at: U) }
private func cmp(_ op: ComparisonOperator, _ a: Expr, _ b: Expr,
                 _ o: StringOptions = []) -> Pred { .comparison(op, a, b, o, at: U) }
private func and(_ items: Pred...) -> Pred { .conjunction(items, at: U) }
private func or(_ items: Pred...) -> Pred { .disjunction(items, at: U) }
private func not(_ p: Pred) -> Pred { .negation(p, at: U) }
private func stringTest(_ op: StringOperator, _ a: Expr, _ b: Expr,
                        _ o: StringOptions = []) -> Pred { .string(op, a, b, o, at: U) }

private func strip(_ p: Pred) -> Pred {
    switch p {
    case .constant(let b, _): return .constant(b, at: U)
    case .value(let e): return .value(strip(e))
    case .conjunction(let items, _): return .conjunction(items.map(strip), at: U)
    case .disjunction(let items, _): return .disjunction(items.map(strip), at: U)
    case .negation(let q, _): return .negation(strip(q), at: U)
    case .comparison(let op, let a, let b, let o, _): return .comparison(op, strip(a), strip(b), o, at: U)
    case .string(let op, let a, let b, let o, _): return .string(op, strip(a), strip(b), o, at: U)
    case .inCollection(let a, let b, _): return .inCollection(strip(a), strip(b), at: U)
    case .between(let a, let b, let c, _): return .between(strip(a), strip(b), strip(c), at: U)
    case .typeCheck(let s, let e, _): return .typeCheck(scope: s, entity: e, at: U)
    case .anySatisfy(let c, let q, _): return .anySatisfy(strip(c), strip(q), at: U)
    case .allSatisfy(let c, let q, _): return .allSatisfy(strip(c), strip(q), at: U)
    case .isEmpty(let e, _): return .isEmpty(strip(e), at: U)
    case .conditional(let a, let b, let c, _): return .conditional(strip(a), strip(b), strip(c), at: U)
    case .orElse(let a, let b, _): return .orElse(strip(a), strip(b), at: U)
    case .evaluate(let n, let s, _): return .evaluate(n, scope: s, at: U)
    }
}

private func strip(_ e: Expr) -> Expr {
    switch e {
    case .keyPath(let s, let path, _): return .keyPath(scope: s, path: path, at: U)
    case .variable(let n, _): return .variable(n, at: U)
    case .literal(let l, _): return .literal(l, at: U)
    case .count(let x, _): return .count(strip(x), at: U)
    case .conditional(let t, let a, let b, _): return .conditional(strip(t), strip(a), strip(b), at: U)
    case .coalesce(let a, let b, _): return .coalesce(strip(a), strip(b), at: U)
    case .filtered(let c, let q, _): return .filtered(strip(c), strip(q), at: U)
    case .arithmetic(let op, let a, let b, _): return .arithmetic(op, strip(a), strip(b), at: U)
    case .aggregate(let f, let c, let v, _): return .aggregate(f, strip(c), strip(v), at: U)
    }
}

/// Every location in the tree, for checking that all nodes have one.
private func offsets(_ p: Pred) -> [Int?] {
    switch p {
    case .constant, .typeCheck: return [p.location.textOffset]
    case .value(let e): return offsets(e)
    case .conjunction(let items, _), .disjunction(let items, _): return [p.location.textOffset] + items.flatMap(offsets)
    case .negation(let q, _): return [p.location.textOffset] + offsets(q)
    case .comparison(_, let a, let b, _, _), .string(_, let a, let b, _, _), .inCollection(let a, let b, _):
        return [p.location.textOffset] + offsets(a) + offsets(b)
    case .between(let a, let b, let c, _): return [p.location.textOffset] + offsets(a) + offsets(b) + offsets(c)
    case .anySatisfy(let c, let q, _), .allSatisfy(let c, let q, _): return [p.location.textOffset] + offsets(c) + offsets(q)
    case .isEmpty(let e, _): return [p.location.textOffset] + offsets(e)
    case .conditional(let a, let b, let c, _): return [p.location.textOffset] + offsets(a) + offsets(b) + offsets(c)
    case .orElse(let a, let b, _): return [p.location.textOffset] + offsets(a) + offsets(b)
    case .evaluate: return [p.location.textOffset]
    }
}

private func offsets(_ e: Expr) -> [Int?] {
    switch e {
    case .keyPath, .variable, .literal: return [e.location.textOffset]
    case .count(let x, _): return [e.location.textOffset] + offsets(x)
    case .conditional(let t, let a, let b, _): return [e.location.textOffset] + offsets(t) + offsets(a) + offsets(b)
    case .coalesce(let a, let b, _): return [e.location.textOffset] + offsets(a) + offsets(b)
    case .filtered(let c, let q, _): return [e.location.textOffset] + offsets(c) + offsets(q)
    case .arithmetic(_, let a, let b, _): return [e.location.textOffset] + offsets(a) + offsets(b)
    case .aggregate(_, let c, let v, _): return [e.location.textOffset] + offsets(c) + offsets(v)
    }
}

/// A deterministic generator for the robustness loop.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

final class PredicateParserTests: XCTestCase {
    /// Parses `text`, compares with `expected` ignoring locations, checks that
    /// every node has a location inside the text, and that the rendering
    /// parses back to the same tree.
    private func check(_ text: String, _ expected: Pred, renders rendering: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) {
        do {
            let p = try PredicateParser.parse(text)
            XCTAssertEqual(strip(p), strip(expected), "parsing \(text)", file: file, line: line)
            for o in offsets(p) {
                guard let o else { XCTFail("node without a text offset in \(text)", file: file, line: line); continue }
                XCTAssert(o >= 1 && o <= text.count, "offset \(o) outside \(text)", file: file, line: line)
            }
            let rendered = p.text
            if let rendering { XCTAssertEqual(rendered, rendering, file: file, line: line) }
            let again = try PredicateParser.parse(rendered)
            XCTAssertEqual(strip(again), strip(p), "round trip of \(text) via \(rendered)", file: file, line: line)
            XCTAssertEqual(again.text, rendered, "rendering is stable", file: file, line: line)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
        }
    }

    private func fails(_ text: String, _ fragment: String, at position: Int,
                       file: StaticString = #filePath, line: UInt = #line) {
        do {
            let p = try PredicateParser.parse(text)
            XCTFail("\(text) parsed as \(p.text)", file: file, line: line)
        } catch let e as StrataError {
            XCTAssertEqual(e.code, .invalid, file: file, line: line)
            XCTAssertNil(e.path, file: file, line: line)
            XCTAssert(e.message.contains(fragment), "'\(e.message)' lacks '\(fragment)'", file: file, line: line)
            XCTAssert(e.message.contains("at position \(position)"), "'\(e.message)' is not at position \(position)",
                      file: file, line: line)
        } catch {
            XCTFail("\(text): unexpected error \(error)", file: file, line: line)
        }
    }

    // MARK: The SwiftData session examples

    func testTypeCheck() {
        check("$0 is PersonalTrip", .typeCheck(scope: 0, entity: "PersonalTrip", at: U), renders: "$0 is PersonalTrip")
        check("trip in trip is PersonalTrip", .typeCheck(scope: 0, entity: "PersonalTrip", at: U))
        check("!($0 is PersonalTrip)", not(.typeCheck(scope: 0, entity: "PersonalTrip", at: U)),
              renders: "!($0 is PersonalTrip)")
        check("{ trip in trip.bucketList.contains { _ in trip is PersonalTrip } }",
              .anySatisfy(kp("bucketList"), .typeCheck(scope: 1, entity: "PersonalTrip", at: U), at: U),
              renders: "{ x0 in x0.bucketList.contains { x0 is PersonalTrip } }")
    }

    func testComparisonWithVariable() throws {
        check("$0.endDate >= currentDate", cmp(.greaterOrEqual, kp("endDate"), v("currentDate")),
              renders: "$0.endDate >= currentDate")
        // Locations: the operator for a comparison, the first character for operands.
        let p = try PredicateParser.parse("$0.endDate >= currentDate")
        guard case .comparison(_, let a, let b, _, let at) = p else { return XCTFail("\(p)") }
        XCTAssertEqual(at.textOffset, 12)
        XCTAssertEqual(a.location.textOffset, 1)
        XCTAssertEqual(b.location.textOffset, 15)
    }

    func testSearchConditional() throws {
        let text = "searchText.isEmpty ? true : $0.name.localizedStandardContains(searchText) || $0.destination.localizedStandardContains(searchText)"
        check(text, .conditional(
            .isEmpty(v("searchText"), at: U),
            .constant(true, at: U),
            or(stringTest(.localizedStandardContains, kp("name"), v("searchText")),
               stringTest(.localizedStandardContains, kp("destination"), v("searchText"))),
            at: U),
              renders: "(searchText.isEmpty ? true : ($0.name.localizedStandardContains(searchText) || $0.destination.localizedStandardContains(searchText)))")
        let p = try PredicateParser.parse(text)
        guard case .conditional(let t, _, let b, let at) = p else { return XCTFail("\(p)") }
        XCTAssertEqual(at.textOffset, 20)
        XCTAssertEqual(t.location.textOffset, 12)
        XCTAssertEqual(b.location.textOffset, 75)
    }

    func testComposition() {
        check("($0 is PersonalTrip) && ($0.endDate >= currentDate)",
              and(.typeCheck(scope: 0, entity: "PersonalTrip", at: U), cmp(.greaterOrEqual, kp("endDate"), v("currentDate"))),
              renders: "$0 is PersonalTrip && $0.endDate >= currentDate")
        // A chain is one conjunction; parentheses keep nesting.
        check("$0.a && $0.b && $0.c", and(.value(kp("a")), .value(kp("b")), .value(kp("c"))))
        check("($0.a && $0.b) && $0.c", and(and(.value(kp("a")), .value(kp("b"))), .value(kp("c"))),
              renders: "($0.a && $0.b) && $0.c")
        check("$0.a || $0.b && $0.c", or(.value(kp("a")), and(.value(kp("b")), .value(kp("c")))),
              renders: "$0.a || $0.b && $0.c")
        check("($0.a || $0.b) && !$0.c", and(or(.value(kp("a")), .value(kp("b"))), not(.value(kp("c")))),
              renders: "($0.a || $0.b) && !$0.c")
    }

    func testAnySatisfy() {
        let expected = Pred.anySatisfy(kp("bucketList"), .value(kp("isInPlan")), at: U)
        check("$0.bucketList.contains { $0.isInPlan }", expected, renders: "$0.bucketList.contains { $0.isInPlan }")
        check("$0.bucketList.contains(where: { $0.isInPlan })", expected)
        check("$0.bucketList.contains(where: { item in item.isInPlan })", expected)
        check("$0.bucketList.contains { item in return item.isInPlan }", expected)
        check("$0.bucketList.allSatisfy { $0.isInPlan }",
              .allSatisfy(kp("bucketList"), .value(kp("isInPlan")), at: U), renders: "$0.bucketList.allSatisfy { $0.isInPlan }")
        check("$0.bucketList.allSatisfy({ !$0.isInPlan })",
              .allSatisfy(kp("bucketList"), not(.value(kp("isInPlan"))), at: U))
    }

    func testNestedScopes() {
        let expected = Pred.anySatisfy(kp("bucketList"), cmp(.equal, kp("title"), kp("name", scope: 1)), at: U)
        check("{ trip in trip.bucketList.contains { item in item.title == trip.name } }", expected,
              renders: "{ x0 in x0.bucketList.contains { $0.title == x0.name } }")
        check("trip in trip.bucketList.contains { $0.title == trip.name }", expected)
        check("#Predicate<Trip> { trip in trip.bucketList.contains(where: { item in item.title == trip.name }) }", expected)
        check("{ (trip: Trip) -> Bool in return trip.bucketList.contains { (item: BucketListItem) in item.title == trip.name } }",
              expected)
        // Two levels: the innermost `$0` is the innermost element.
        check("{ t in t.bucketList.contains { i in i.tags.contains { $0.name == i.title && $0.name == t.name } } }",
              .anySatisfy(kp("bucketList"), .anySatisfy(kp("tags"), and(
                cmp(.equal, kp("name"), kp("title", scope: 1)),
                cmp(.equal, kp("name"), kp("name", scope: 2))), at: U), at: U),
              renders: "{ x0 in x0.bucketList.contains { x1 in x1.tags.contains { $0.name == x1.title && $0.name == x0.name } } }")
        // Nested `$0` without names: each is the innermost.
        check("$0.bucketList.contains { $0.tags.contains { $0.isEmpty } }",
              .anySatisfy(kp("bucketList"), .anySatisfy(kp("tags"), .value(kp("isEmpty")), at: U), at: U))
        // A named parameter shadows an outer one of the same name.
        check("{ x in x.items.contains { x in x.done } }", .anySatisfy(kp("items"), .value(kp("done")), at: U))
    }

    func testOptionalChainingAndLiterals() {
        check("$0.livingAccommodation?.placeName == \"Hotel\"",
              cmp(.equal, kp("livingAccommodation", "placeName"), str("Hotel")),
              renders: "$0.livingAccommodation.placeName == \"Hotel\"")
        // A force unwrap marks its component: the evaluation fails where it is nil.
        check("$0.livingAccommodation!.placeName == \"Hotel\"",
              cmp(.equal, kp("livingAccommodation!", "placeName"), str("Hotel")),
              renders: "$0.livingAccommodation!.placeName == \"Hotel\"")
        check("$0.website!.contains(\"x\") && $0!.name == \"y\"",
              and(.string(.contains, kp("website!"), str("x"), [], at: U), cmp(.equal, kp("name"), str("y"))))
        fails("searchText!.isEmpty", "force unwrap ('!') applies to key paths here", at: 11)
        check("$0.trip?.persistentModelID == id", cmp(.equal, kp("trip", "persistentModelID"), v("id")))
        // Optional chains as Swift forces them: `?? false`, `== true`.
        let lsc = Pred.string(.localizedStandardContains, kp("livingAccommodation", "address"), v("q"), [], at: U)
        check("$0.livingAccommodation?.address.localizedStandardContains(q) ?? false", .orElse(lsc, .constant(false, at: U), at: U),
              renders: "$0.livingAccommodation.address.localizedStandardContains(q) ?? false")
        check("$0.livingAccommodation?.address.localizedStandardContains(q) == true", .orElse(lsc, .constant(false, at: U), at: U))
        check("false != $0.livingAccommodation?.address.localizedStandardContains(q)", .orElse(lsc, .constant(true, at: U), at: U))
        check("$0.livingAccommodation?.address.localizedStandardContains(q) == false", .orElse(not(lsc), .constant(false, at: U), at: U))
        // filter { } as SwiftData writes it: counted, tested for emptiness, or searched.
        check("$0.bucketList.filter { !$0.isInPlan }.count > 0",
              cmp(.greater, count(.filtered(kp("bucketList"), not(.value(kp("isInPlan"))), at: U)), num("0")),
              renders: "$0.bucketList.filter { !$0.isInPlan }.count > 0")
        check("$0.bucketList.filter({ $0.isInPlan }).isEmpty", .isEmpty(.filtered(kp("bucketList"), .value(kp("isInPlan")), at: U), at: U),
              renders: "$0.bucketList.filter { $0.isInPlan }.isEmpty")
        fails("$0.bucketList.filter(\"x\").isEmpty", "filter { ... }", at: 15)
        check("$0.livingAccommodation == nil", cmp(.equal, kp("livingAccommodation"), lit(.null)),
              renders: "$0.livingAccommodation == nil")
        check("$0.livingAccommodation != nil", cmp(.notEqual, kp("livingAccommodation"), lit(.null)))
        check("$0.reason == .family", cmp(.equal, kp("reason"), str("family")), renders: "$0.reason == \"family\"")
        check("$0.isInPlan == true", cmp(.equal, kp("isInPlan"), lit(.bool(true))))
        check("$0.isInPlan", .value(kp("isInPlan")))
        check("flag", .value(v("flag")))
        check("true", .constant(true, at: U))
        check("{ false }", .constant(false, at: U))
    }

    func testMembership() {
        check("[\"family\", \"reunion\"].contains($0.reason)",
              .inCollection(kp("reason"), lit(.array([.string("family"), .string("reunion")])), at: U),
              renders: "[\"family\", \"reunion\"].contains($0.reason)")
        check("[.family, .reunion].contains($0.reason)",
              .inCollection(kp("reason"), lit(.array([.string("family"), .string("reunion")])), at: U))
        check("[1, -2, 3.5, nil, true, [],].contains($0.n)",
              .inCollection(kp("n"), lit(.array([.number("1"), .number("-2"), .number("3.5"), .null, .bool(true), .array([])])), at: U))
        // A variable receiver is a string test here (the type checker decides).
        check("names.contains($0.name)", stringTest(.contains, v("names"), kp("name")))
        check("$names.contains(element: $0.name)", .inCollection(kp("name"), v("names"), at: U),
              renders: "names.contains(element: $0.name)")
    }

    func testRanges() {
        check("(1...5).contains($0.bucketList.count)", .between(count(kp("bucketList")), num("1"), num("5"), at: U),
              renders: "(1...5).contains($0.bucketList.count)")
        check("(-2.5...$max).contains($0.score)", .between(kp("score"), num("-2.5"), v("max"), at: U))
        check("(1..<5).contains($0.n)", and(cmp(.greaterOrEqual, kp("n"), num("1")), cmp(.less, kp("n"), num("5"))),
              renders: "$0.n >= 1 && $0.n < 5")
        // One-sided ranges: `lo...`, `...hi`, `..<hi`.
        check("(now...).contains($0.startDate)", cmp(.greaterOrEqual, kp("startDate"), v("now")), renders: "$0.startDate >= now")
        check("(...5).contains($0.n)", cmp(.lessOrEqual, kp("n"), num("5")), renders: "$0.n <= 5")
        check("(..<5).contains($0.n)", cmp(.less, kp("n"), num("5")), renders: "$0.n < 5")
        check("(..<(lo ?? 2)).contains($0.n)", cmp(.less, kp("n"), .coalesce(v("lo"), num("2"), at: U)))
        check("(-1...).contains($0.n) && (...$0.m).contains(3)",
              and(cmp(.greaterOrEqual, kp("n"), num("-1")), cmp(.lessOrEqual, num("3"), kp("m"))))
        fails("(1..<).contains($0.n)", "a range 'lo..<' needs an upper bound", at: 3)
        fails("(...).contains($0.n)", "unexpected ')'", at: 5)
        fails("(...5) == 3", "a range can only be the receiver of contains", at: 1)
    }

    func testIsEmptyCountCoalesce() {
        check("!$0.bucketList.isEmpty", not(.isEmpty(kp("bucketList"), at: U)), renders: "!$0.bucketList.isEmpty")
        check("$0.bucketList.count > 2", cmp(.greater, count(kp("bucketList")), num("2")))
        check("$0.name.count.count == 1", cmp(.equal, count(count(kp("name"))), num("1")))
        check("($0.destination ?? \"\") == \"\"", cmp(.equal, .coalesce(kp("destination"), str(""), at: U), str("")),
              renders: "($0.destination ?? \"\") == \"\"")
        check("$0.a ?? $0.b ?? \"x\" == \"y\"",
              cmp(.equal, .coalesce(kp("a"), .coalesce(kp("b"), str("x"), at: U), at: U), str("y")),
              renders: "($0.a ?? $0.b ?? \"x\") == \"y\"")
        check("($0.a ?? $0.b) ?? \"x\" == \"y\"",
              cmp(.equal, .coalesce(.coalesce(kp("a"), kp("b"), at: U), str("x"), at: U), str("y")))
        check("$0.flag ?? false", .value(.coalesce(kp("flag"), lit(.bool(false)), at: U)), renders: "$0.flag ?? false")
        // Directly on the object, count and isEmpty are attribute names; backquotes force a key path.
        check("$0.count == 3", cmp(.equal, kp("count"), num("3")), renders: "$0.`count` == 3")
        check("$0.trip.`isEmpty`", .value(kp("trip", "isEmpty")), renders: "$0.trip.`isEmpty`")
        check("($0).count == 3", cmp(.equal, count(obj()), num("3")), renders: "($0).count == 3")
        check("searchText.count >= 2", cmp(.greaterOrEqual, count(v("searchText")), num("2")))
    }

    func testBindings() {
        check("$0.endDate >= $now && $0.name.localizedStandardContains($q)",
              and(cmp(.greaterOrEqual, kp("endDate"), v("now")), stringTest(.localizedStandardContains, kp("name"), v("q"))),
              renders: "$0.endDate >= now && $0.name.localizedStandardContains(q)")
        // The design document's example.
        check("$0.endDate >= $now && ($0.name.localizedStandardContains($q)\n|| $0.destination.localizedStandardContains($q))",
              and(cmp(.greaterOrEqual, kp("endDate"), v("now")),
                  or(stringTest(.localizedStandardContains, kp("name"), v("q")),
                     stringTest(.localizedStandardContains, kp("destination"), v("q")))),
              renders: "$0.endDate >= now && ($0.name.localizedStandardContains(q) || $0.destination.localizedStandardContains(q))")
        check("$0.reason == .family.rawValue", cmp(.equal, kp("reason"), str("family")))
        check("$`my var` == 1 && $x0 == 2 && $in == 3 && $`7` == 4",
              and(cmp(.equal, v("my var"), num("1")), cmp(.equal, v("x0"), num("2")), cmp(.equal, v("in"), num("3")),
                  cmp(.equal, v("7"), num("4"))),
              renders: "$`my var` == 1 && $x0 == 2 && $in == 3 && $`7` == 4")
    }

    func testNumbers() {
        check("$0.a == -3", cmp(.equal, kp("a"), num("-3")), renders: "$0.a == -3")
        check("$0.a > 2.5", cmp(.greater, kp("a"), num("2.5")))
        check("$0.a < 1e3", cmp(.less, kp("a"), num("1e3")), renders: "$0.a < 1e3")
        check("$0.a <= -1.25E-7", cmp(.lessOrEqual, kp("a"), num("-1.25E-7")))
        check("$0.a != 1_000_000", cmp(.notEqual, kp("a"), num("1000000")), renders: "$0.a != 1000000")
        check("$0.a == 0", cmp(.equal, kp("a"), num("0")))
        check("-3 < $0.a", cmp(.less, num("-3"), kp("a")))
    }

    func testStrings() {
        check(#"$0.name == "a\"b\\c\nd\te\r\0\u{1F600}'\'""#,
              cmp(.equal, kp("name"), str("a\"b\\c\nd\te\r\0😀''")),
              renders: #"$0.name == "a\"b\\c\nd\te\r\0😀''""#)
        check("$0.name == \"héllo 🎉 日本\"", cmp(.equal, kp("name"), str("héllo 🎉 日本")))
        check("$0.name == \"\\u{7}\"", cmp(.equal, kp("name"), str("\u{7}")), renders: "$0.name == \"\\u{7}\"")
        check("$0.name == \"\"", cmp(.equal, kp("name"), str("")))
        check("$0.name.hasPrefix(\"a\") || $0.name.starts(with: \"b\") || $0.name.hasSuffix(\"c\")",
              or(stringTest(.hasPrefix, kp("name"), str("a")), stringTest(.hasPrefix, kp("name"), str("b")),
                 stringTest(.hasSuffix, kp("name"), str("c"))))
        check("\"abc\".contains($0.name)", stringTest(.contains, str("abc"), kp("name")))
    }

    func testStringOptions() {
        check("$0.name.contains(\"a\", options: .caseInsensitive)",
              stringTest(.contains, kp("name"), str("a"), .caseInsensitive),
              renders: "$0.name.contains(\"a\", options: .caseInsensitive)")
        check("$0.name.hasPrefix(\"a\", options: \"cd\")",
              stringTest(.hasPrefix, kp("name"), str("a"), [.caseInsensitive, .diacriticInsensitive]),
              renders: "$0.name.hasPrefix(\"a\", options: [.caseInsensitive, .diacriticInsensitive])")
        check("$0.name.hasSuffix(q, options: [.diacriticInsensitive])",
              stringTest(.hasSuffix, kp("name"), v("q"), .diacriticInsensitive))
        check("$0.name.localizedCaseInsensitiveContains(q)", stringTest(.contains, kp("name"), v("q"), .caseInsensitive))
        check("$0.name.contains(q, options: [])", stringTest(.contains, kp("name"), v("q")))
        let ops: [(String, ComparisonOperator)] = [
            ("== .orderedSame", .equal), ("!= .orderedSame", .notEqual), ("== .orderedAscending", .less),
            ("!= .orderedDescending", .lessOrEqual), ("== .orderedDescending", .greater),
            ("!= .orderedAscending", .greaterOrEqual),
        ]
        for (suffix, op) in ops {
            check("$0.name.compare(q, options: .caseInsensitive) \(suffix)", cmp(op, kp("name"), v("q"), .caseInsensitive),
                  renders: "$0.name.compare(q, options: .caseInsensitive) \(suffix)")
        }
        check(".orderedSame == $0.name.caseInsensitiveCompare(\"x\")", cmp(.equal, kp("name"), str("x"), .caseInsensitive))
        check("$0.name.compare(\"x\") == .orderedAscending", cmp(.less, kp("name"), str("x")), renders: "$0.name < \"x\"")
        // The localized forms compare by code point (folded for case), as every Strata string comparison.
        check("$0.name.localizedCompare(\"x\") == .orderedAscending", cmp(.less, kp("name"), str("x")), renders: "$0.name < \"x\"")
        check("$0.name.localizedCaseInsensitiveCompare(q) != .orderedDescending", cmp(.lessOrEqual, kp("name"), v("q"), .caseInsensitive))
        fails("$0.name.localizedCompare(\"x\", options: .caseInsensitive) == .orderedSame", "localizedCompare(_:)", at: 9)
        fails("$0.name.localizedStandardCompare(\"x\") == .orderedSame", "method 'localizedStandardCompare' is not supported", at: 9)
    }

    func testConditionalAsValue() {
        check("($0.flag ? $0.a : $0.b) == 3",
              cmp(.equal, .conditional(.value(kp("flag")), kp("a"), kp("b"), at: U), num("3")),
              renders: "($0.flag ? $0.a : $0.b) == 3")
        check("$0.x > (c ? 1 : c2 ? 2 : 3)",
              cmp(.greater, kp("x"), .conditional(.value(v("c")), num("1"),
                                                  .conditional(.value(v("c2")), num("2"), num("3"), at: U), at: U)))
        check("$0.a == 1 ? $0.b : false",
              .conditional(cmp(.equal, kp("a"), num("1")), .value(kp("b")), .constant(false, at: U), at: U),
              renders: "($0.a == 1 ? $0.b : false)")
    }

    func testWrappersAndTrivia() {
        let expected = cmp(.equal, kp("name"), str("x"))
        check("{ $0.name == \"x\" }", expected)
        check("{ trip in trip.name == \"x\" }", expected)
        check("trip in trip.name == \"x\"", expected)
        check("(trip) in trip.name == \"x\"", expected)
        check("#Predicate<Trip> { $0.name == \"x\" }", expected)
        check("#Predicate { $0.name == \"x\" }", expected)
        check("  {\n  trip in // the trip\n  trip.name /* a /* nested */ comment */ ==\n \"x\"\n}\n", expected)
        check("{ trip in `trip`.`name` == \"x\" }", expected)
    }

    // MARK: Locations

    func testLocations() throws {
        // Positions count characters (graphemes), not bytes or scalars.
        let p = try PredicateParser.parse("\"e\u{301}🎉\" == $0.name && !$0.tags.isEmpty")
        guard case .conjunction(let items, let at) = p, items.count == 2,
              case .comparison(_, let l, let r, _, let cmpAt) = items[0],
              case .negation(.isEmpty(let tags, let emptyAt), let bangAt) = items[1] else { return XCTFail("\(p)") }
        XCTAssertEqual(at.textOffset, 17)
        XCTAssertEqual(l.location.textOffset, 1)
        XCTAssertEqual(cmpAt.textOffset, 6)
        XCTAssertEqual(r.location.textOffset, 9)
        XCTAssertEqual(bangAt.textOffset, 20)
        XCTAssertEqual(tags.location.textOffset, 21)
        XCTAssertEqual(emptyAt.textOffset, 29)

        let q = try PredicateParser.parse("$0.items.contains { $0.done } && (1...3).contains($0.n)")
        guard case .conjunction(let qs, _) = q, case .anySatisfy(_, let body, let anyAt) = qs[0],
              case .between(_, let lo, _, let betweenAt) = qs[1] else { return XCTFail("\(q)") }
        XCTAssertEqual(anyAt.textOffset, 10)
        XCTAssertEqual(body.location.textOffset, 21)
        XCTAssertEqual(betweenAt.textOffset, 42)
        XCTAssertEqual(lo.location.textOffset, 35)
    }

    // MARK: Errors

    func testErrors() {
        fails("$0.name == \"abc", "unterminated string", at: 12)
        fails("$0.a & $0.b", "unexpected '&'", at: 6)
        fails("($0.a == 1", "expected ')'", at: 11)
        fails("($0.a == 1 $0.b)", "expected ')'", at: 12)
        fails("$0.name.foo(1)", "unknown method 'foo'", at: 9)
        fails("$0.name.lowercased() == \"x\"", "method 'lowercased' is not supported", at: 9)
        fails("$0.a == 1 == 2", "cannot be chained", at: 11)
        fails("$0.a = 1", "unexpected '='", at: 6)
        fails("$1.a == 2", "'$1' is not supported", at: 1)
        fails("$0.a == ", "unexpected end of predicate", at: 9)
        fails("", "unexpected end of predicate", at: 1)
        fails("$0.a && 5", "expected a condition", at: 9)
        fails("$0.a && \"x\"", "expected a condition", at: 9)
        fails("$0 || $0.a", "expected a condition", at: 1)
        // A condition compared with a bool is itself (a comparison is never nil).
        check("($0.a > 1) == true", .orElse(cmp(.greater, kp("a"), num("1")), .constant(false, at: U), at: U))
        fails("($0.a > 1) == 1", "expected a value", at: 1)
        fails("$0.a ? 1", "expected ':'", at: 9)
        fails("\"a\\qb\" == $0.x", "invalid escape", at: 3)
        fails("$0.x == \"\\(y)\"", "string interpolation", at: 10)
        fails("$0.tags.contains { $0 == 1 ", "expected '}'", at: 28)
        // Arithmetic, with Swift's precedence.
        let a = kp("a"), b = kp("b")
        func ar(_ op: ArithmeticOperator, _ x: Expr, _ y: Expr) -> Expr { .arithmetic(op, x, y, at: U) }
        check("-$0.a > 1", cmp(.greater, ar(.subtract, num("0"), a), num("1")), renders: "-$0.a > 1")
        check("$0.a + $0.b * 2 - 1 == 0", cmp(.equal, ar(.subtract, ar(.add, a, ar(.multiply, b, num("2"))), num("1")), num("0")),
              renders: "$0.a + $0.b * 2 - 1 == 0")
        check("($0.a + 1) % 3 != 0", cmp(.notEqual, ar(.remainder, ar(.add, a, num("1")), num("3")), num("0")),
              renders: "($0.a + 1) % 3 != 0")
        check("$0.a ?? 0 + 1 > 2", cmp(.greater, .coalesce(a, ar(.add, num("0"), num("1")), at: U), num("2")))
        check("$0.end > $0.start + 86400", cmp(.greater, kp("end"), ar(.add, kp("start"), num("86400"))))
        check("(lo...hi + 1).contains($0.a - -1)", .between(ar(.subtract, a, num("-1")), v("lo"), ar(.add, v("hi"), num("1")), at: U))
        check("abs($0.a) < 2", cmp(.less, .conditional(cmp(.less, a, num("0")), ar(.subtract, num("0"), a), a, at: U), num("2")))
        fails("$0.a + ($0.b > 1) == 2", "arithmetic on conditions is not supported", at: 6)
        fails("$0.a ^ 2 == 4", "unexpected '^'", at: 6)
        fails("$0.trip is PersonalTrip", "'is' applies only", at: 1)
        fails("Date() > $0.d", "unsupported function 'Date'", at: 1)
        fails("$0.a == 0x1F", "invalid number literal", at: 9)
        fails("$0.a == 1 )", "unexpected ')'", at: 11)
        fails("\"e\u{301}🎉\" == $0.name &", "unexpected '&'", at: 17)
        fails("$0.a.contains(where: $0.b)", "wrong arguments to 'contains'", at: 6)
        fails("$0.name.contains(\"a\", options: \"x\")", "invalid string options", at: 32)
        fails("$0.name.contains(\"a\", options: .foo)", "unknown string option '.foo'", at: 33)
        fails("[$0.a].contains(1)", "array literal elements must be literals", at: 2)
        fails("$0.a.contains { $0.b } extra", "unexpected 'extra'", at: 24)
        // Token names read as English: no "unexpected a string literal".
        fails("$0.name == \"a\" \"b\"", "unexpected string literal at position 16", at: 16)
        fails("($0.name == \"a\"", "expected ')' at position 16: found the end of the predicate", at: 16)
        fails("$0.name.contains(\"a\" \"b\")", "expected ',' or ')' at position 22: found a string literal", at: 22)
        fails("$0.name.contains(\"a\", options: .\"c\")", "expected a string option after '.' at position 33: found a string literal", at: 33)
        fails("searchText.foo", "unsupported member 'foo'", at: 12)
        fails("(1...5) == 3", "expected a value", at: 1)
        fails("$0.a.compare(\"x\") < .orderedSame", "unsupported use of compare", at: 19)
        fails("$0.name == 'x'", "strings use double quotes", at: 12)
        fails("$0.a == \"\"\"x\"\"\"", "multi-line string", at: 9)
        fails("$0.a == #\"x\"#", "raw string", at: 9)
        fails("$0.a[0] == 1", "subscripts are not supported", at: 5)
        fails("$0.a == \"\\u{D800}\"", "invalid unicode escape", at: 10)
        fails("$0.a /* open", "unterminated comment", at: 6)
        fails("$0.a == 1 ===", "unexpected '==='", at: 11)
        fails("{ $0.a }.b", "unexpected '.'", at: 9)
        fails("$0.a == \u{7}", "unexpected character U+0007", at: 9)
        // Aggregates over a to-many relationship's values.
        check("$0.bucketList.map { $0.priority }.max() ?? 0 > 2",
              cmp(.greater, .coalesce(.aggregate(.max, kp("bucketList"), kp("priority"), at: U), num("0"), at: U), num("2")),
              renders: "($0.bucketList.map { $0.priority }.max() ?? 0) > 2")
        check("$0.bucketList.filter { $0.isInPlan }.map({ $0.title }).min() == \"a\"",
              cmp(.equal, .aggregate(.min, .filtered(kp("bucketList"), .value(kp("isInPlan")), at: U), kp("title"), at: U), str("a")))
        fails("$0.bucketList.max() == 1", "max() applies to the values of map { }", at: 15)
        fails("$0.bucketList.map { $0.priority } == 1", "map { } gives values", at: 1)
        // Sums (Swift's reduce(0, +), the one reduction taken) and averages (Strata's average()).
        check("$0.bucketList.map { $0.priority }.reduce(0, +) > 2",
              cmp(.greater, .aggregate(.sum, kp("bucketList"), kp("priority"), at: U), num("2")),
              renders: "$0.bucketList.map { $0.priority }.reduce(0, +) > 2")
        check("$0.bucketList.map({ $0.priority }).reduce(0.0, +) > 2",
              cmp(.greater, .aggregate(.sum, kp("bucketList"), kp("priority"), at: U), num("2")),
              renders: "$0.bucketList.map { $0.priority }.reduce(0, +) > 2")
        check("$0.bucketList.filter { $0.isInPlan }.map { $0.priority }.average() ?? 0 >= 1.5",
              cmp(.greaterOrEqual, .coalesce(.aggregate(.avg, .filtered(kp("bucketList"), .value(kp("isInPlan")), at: U), kp("priority"), at: U),
                                             num("0"), at: U), num("1.5")),
              renders: "($0.bucketList.filter { $0.isInPlan }.map { $0.priority }.average() ?? 0) >= 1.5")
        fails("$0.bucketList.map { $0.priority }.reduce(1, +) == 1", "wrong arguments to 'reduce'", at: 42)
        fails("$0.bucketList.map { $0.priority }.reduce(0, -) == 1", "wrong arguments to 'reduce'", at: 45)
        fails("$0.bucketList.map { $0.priority }.reduce(0, +, 1) == 1", "expected ')'", at: 46)
        fails("$0.bucketList.map { $0.priority }.reduce(into: 0) { $0 += $1 } == 1", "wrong arguments to 'reduce'", at: 42)
        fails("$0.name.reduce(0, +) == 1", "reduce(0, +) applies to the values of map { }", at: 9)
        fails("$0.bucketList.map { $0.priority }.sum() == 1", "the sum of the values of map { } is reduce(0, +)", at: 35)
        fails("$0.bucketList.map { $0.priority }.avg() == 1", "average()", at: 35)
        fails("$0.bucketList.map { $0.priority }.average(1) == 1", "average() applies to the values of map { }", at: 35)
        // Composition: a predicate bound to a variable, evaluated for an object in scope.
        check("searchPredicate.evaluate($0) && tripFilter.evaluate($0)",
              and(.evaluate("searchPredicate", scope: 0, at: U), .evaluate("tripFilter", scope: 0, at: U)),
              renders: "searchPredicate.evaluate($0) && tripFilter.evaluate($0)")
        check("{ trip in trip.bucketList.contains { f.evaluate(trip) } }",
              .anySatisfy(kp("bucketList"), .evaluate("f", scope: 1, at: U), at: U))
        fails("$0.name.evaluate($0)", "evaluate(_:) applies to a variable bound to a predicate", at: 9)
        fails("f.evaluate($0.name)", "evaluate($0) or evaluate(parameter)", at: 3)
        // if let, as Swift's #Predicate writes it.
        check("if let b = $0 as? BusinessTrip { b.perdiem > 50 } else { false }",
              .conditional(cmp(.notEqual, kp("as:BusinessTrip"), lit(.null)), cmp(.greater, kp("as:BusinessTrip", "perdiem"), num("50")),
                           .constant(false, at: U), at: U))
        check("if let a = $0.livingAccommodation { return a.placeName == \"x\" } else if let t = $0.bucketList.first { true } else { $0.flag }",
              .conditional(cmp(.notEqual, kp("livingAccommodation"), lit(.null)), cmp(.equal, kp("livingAccommodation", "placeName"), str("x")),
                           .conditional(cmp(.notEqual, kp("bucketList", "first"), lit(.null)), .constant(true, at: U), .value(kp("flag")), at: U), at: U))
        // A name bound outside a closure, used inside it, reaches the outer object.
        check("if let a = $0.livingAccommodation { $0.tags.contains { $0.name == a.placeName } } else { false }",
              .conditional(cmp(.notEqual, kp("livingAccommodation"), lit(.null)),
                           .anySatisfy(kp("tags"), cmp(.equal, kp("name"), .keyPath(scope: 1, path: ["livingAccommodation", "placeName"], at: U)), at: U),
                           .constant(false, at: U), at: U))
        fails("if $0.flag { true } else { false }", "only 'if let name = value { … } else { … }' is supported", at: 1)
        fails("if let a = $0.livingAccommodation { a.placeName == \"x\" }", "expected 'else'", at: 57)
        fails("if let a = 3 { true } else { false }", "'if let' binds a key path", at: 12)
        fails("$0.a as! Trip", "forced casts ('as!') are not supported", at: 6)
        fails("$0.a as Trip", "expected 'as?'", at: 6)
        fails("($0.a > 1) as? Trip", "'as?' applies to $0, a closure parameter or a key path", at: 1)
        check("($0 as? BusinessTrip)?.perdiem ?? 0 > 50",
              cmp(.greater, .coalesce(kp("as:BusinessTrip", "perdiem"), num("0"), at: U), num("50")),
              renders: "(($0 as? BusinessTrip)?.perdiem ?? 0) > 50")
        fails("$0.a.contains { }", "unexpected '}'", at: 17)
    }

    func testDeepNestingIsAnError() {
        let limit = PredicateParser.maxDepth
        fails(String(repeating: "(", count: 5000) + "$0.a", "nested too deeply", at: limit + 1)
        fails(String(repeating: "!", count: 5000) + "$0.a", "nested too deeply", at: limit + 1)
        fails(String(repeating: "[", count: 5000), "nested too deeply", at: limit + 1)
        fails(String(repeating: "$0.a ?? ", count: 3000) + "$0.b", "nested too deeply", at: 8 * limit + 6)
        fails(String(repeating: "$0.a ? $0.b : ", count: 3000) + "$0.c", "nested too deeply", at: 14 * limit + 6)
        fails(String(repeating: "$0.a.contains { ", count: 3000), "nested too deeply", at: 16 * limit + 15)
        let deepest = String(repeating: "(", count: limit) + "$0.a" + String(repeating: ")", count: limit)
        XCTAssertNoThrow(try PredicateParser.parse(deepest))
        // Long flat chains are not recursive.
        let chain = (0..<5000).map { "$0.a\($0)" }.joined(separator: " && ")
        XCTAssertNoThrow(try PredicateParser.parse(chain))
    }

    func testMaximumNestingFitsASmallStack() {
        // The parser may run on a C caller's thread. Release builds use about
        // 2.5 KiB of stack per nesting level; debug builds up to 10 KiB. The
        // deepest accepted inputs, and the renderer on their trees, must fit
        // in 2 MiB even in a debug build.
        let limit = PredicateParser.maxDepth
        let inputs = [
            String(repeating: "(", count: limit) + "$0.a" + String(repeating: ")", count: limit),
            String(repeating: "!", count: limit) + "$0.a",
            String(repeating: "$0.a.contains { ", count: limit) + "$0.b" + String(repeating: " }", count: limit),
            String(repeating: "$0.a.contains(where: { ", count: limit / 2) + "$0.b" + String(repeating: " })", count: limit / 2),
            String(repeating: "$0.a ? ", count: limit) + "$0.b" + String(repeating: " : $0.c", count: limit),
            String(repeating: "$0.a ?? ", count: limit) + "$0.b",
        ]
        let done = expectation(description: "parsed on a small stack")
        let thread = Thread {
            for text in inputs {
                do {
                    // (The rendering may nest deeper than the text, e.g. with
                    // parenthesized ternaries, so it is not parsed back here.)
                    let p = try PredicateParser.parse(text)
                    XCTAssertFalse(p.text.isEmpty)
                } catch {
                    XCTFail("\(error)")
                }
            }
            done.fulfill()
        }
        thread.stackSize = 2 << 20
        thread.start()
        wait(for: [done], timeout: 60)
    }

    // MARK: Rendering trees the parser does not produce

    func testRenderingBuiltTrees() throws {
        let cases: [Pred] = [
            .inCollection(kp("tag"), v("tags"), at: U),
            .inCollection(kp("n"), kp("numbers"), at: U),
            .string(.localizedStandardContains, kp("name"), v("q"), [.diacriticInsensitive], at: U),
            .isEmpty(obj(), at: U),
            .comparison(.equal, count(obj()), num("1"), [], at: U),
            .value(kp("in")),
            .value(kp("my attribute")),
            .typeCheck(scope: 0, entity: "class", at: U),
            .comparison(.equal, v("x1"), v("true"), [], at: U),
            .negation(.negation(.constant(false, at: U), at: U), at: U),
            .comparison(.equal, .coalesce(.conditional(.constant(true, at: U), kp("a"), kp("b"), at: U), str("z"), at: U),
                        str("q"), [.caseInsensitive], at: U),
            .between(kp("n"), .coalesce(kp("lo"), num("0"), at: U), num("-1"), at: U),
            .string(.hasPrefix, .literal(.number("-5"), at: U), str("x"), [], at: U),
            .allSatisfy(kp("items"), .anySatisfy(kp("tags"), .typeCheck(scope: 2, entity: "Trip", at: U), at: U), at: U),
        ]
        for p in cases {
            let text = p.text
            do {
                let again = try PredicateParser.parse(text)
                XCTAssertEqual(strip(again), strip(p), "round trip via \(text)")
            } catch {
                XCTFail("\(text): \(error)")
            }
        }
        XCTAssertEqual(Pred.inCollection(kp("tag"), v("tags"), at: U).text, "tags.contains(element: $0.tag)")
        XCTAssertEqual(Pred.isEmpty(obj(), at: U).text, "($0).isEmpty")
        XCTAssertEqual(Pred.comparison(.equal, v("x1"), v("true"), [], at: U).text, "$x1 == $true")
        XCTAssertEqual(Pred.string(.hasPrefix, .literal(.number("-5"), at: U), str("x"), [], at: U).text,
                       "(-5).hasPrefix(\"x\")")

        // Typed literals read back untyped; empty chains become constants.
        let date = Pred.comparison(.greaterOrEqual, kp("endDate"),
                                        .literal(.typed(.date, .string("2026-11-22T00:00:00Z")), at: U), [], at: U)
        XCTAssertEqual(date.text, "$0.endDate >= \"2026-11-22T00:00:00Z\"")
        XCTAssertEqual(Pred.conjunction([], at: U).text, "true")
        XCTAssertEqual(Pred.disjunction([], at: U).text, "false")
        XCTAssertEqual(Expr.coalesce(kp("a"), num("1"), at: U).text, "$0.a ?? 1")
    }

    // MARK: Robustness

    func testRandomInputsNeverTrap() {
        var rng = SplitMix64(state: 0x5EED)
        let pieces = [
            "$0", "$1", "$q", "$`a b`", "trip", "in", "is", "as", ".", "?.", "!", "?", ":", "??", "&&", "||", "==", "!=",
            "<", "<=", ">", ">=", "(", ")", "[", "]", "{", "}", ",", "...", "..<", "-", "#Predicate", "<Trip>",
            "contains", "allSatisfy", "hasPrefix", "starts", "with:", "where:", "options:", "element:", "count",
            "isEmpty", "compare", ".orderedSame", ".caseInsensitive", "\"cd\"", "\"x\"", "\"\\u{1F600}\"", "\"\\(",
            "\"", "\\", "1", "-2.5", "1e3", "0x1", "1_0", "true", "false", "nil", ".family", "name", "bucketList",
            "PersonalTrip", "localizedStandardContains", "lowercased", "`count`", "//", "/*", "*/", " ", "\n", "é",
            "\u{301}", "🎉", "\u{0}", "&", "|", "=", "'", "return", "_",
        ]
        var parsed = 0
        for iteration in 0..<5000 {
            var text = ""
            let length = Int.random(in: 0...24, using: &rng)
            for _ in 0..<length {
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    // A random byte, decoded leniently.
                    let byte = UInt8.random(in: 0...255, using: &rng)
                    text += String(decoding: [byte], as: UTF8.self)
                } else {
                    text += pieces[Int.random(in: 0..<pieces.count, using: &rng)]
                    if Bool.random(using: &rng) { text += " " }
                }
            }
            do {
                let p = try PredicateParser.parse(text)
                parsed += 1
                let rendered = p.text
                do {
                    let again = try PredicateParser.parse(rendered)
                    if strip(again) != strip(p) {
                        XCTFail("iteration \(iteration): \(text) renders \(rendered), which parses differently")
                    }
                } catch {
                    XCTFail("iteration \(iteration): \(text) renders \(rendered), which fails: \(error)")
                }
            } catch let e as StrataError {
                XCTAssertEqual(e.code, .invalid)
                XCTAssert(e.message.contains("at position "), e.message)
            } catch {
                XCTFail("iteration \(iteration): unexpected error \(error)")
            }
        }
        XCTAssertGreaterThan(parsed, 0)
    }

    /// Random trees of the shapes the parser produces: rendering then parsing
    /// gives the same tree back.
    func testRandomTreesRoundTrip() {
        var rng = SplitMix64(state: 7)
        let names = ["a", "count", "isEmpty", "in", "my attr", "é", "contains", "self", "x0", "rawValue", "0a"]
        let variables = ["q", "x0", "x12", "true", "in", "my var", "7", "_", "Predicate", "searchText", "é", "self"]
        let entities = ["Trip", "PersonalTrip", "class", "Any"]
        let strings = ["", "x", "a\"b", "\\", "line\nbreak", "tab\t", "\u{0}", "😀", "e\u{301}", "\u{7F}", "`", "$0"]
        let numbers = ["0", "1", "-3", "2.5", "-1.25E-7", "1e3", "007"]

        func literal(_ d: Int, _ r: inout SplitMix64) -> PredicateLiteral {
            switch Int.random(in: 0..<(d > 0 ? 6 : 5), using: &r) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &r))
            case 2: return .number(numbers.randomElement(using: &r)!)
            case 3, 4: return .string(strings.randomElement(using: &r)!)
            default: return .array((0..<Int.random(in: 0...3, using: &r)).map { _ in literal(d - 1, &r) })
            }
        }
        func keyPath(_ scopes: Int, _ r: inout SplitMix64, allowEmpty: Bool = true) -> Expr {
            let n = Int.random(in: (allowEmpty ? 0 : 1)...3, using: &r)
            return kp(scope: Int.random(in: 0..<scopes, using: &r), (0..<n).map { _ in names.randomElement(using: &r)! })
        }
        func expr(_ d: Int, _ scopes: Int, _ r: inout SplitMix64) -> Expr {
            let choice = Int.random(in: 0..<(d > 0 ? 7 : 3), using: &r)
            switch choice {
            case 0: return keyPath(scopes, &r)
            case 1: return v(variables.randomElement(using: &r)!)
            case 2: return lit(literal(2, &r))
            case 3: return count(expr(d - 1, scopes, &r))
            case 4: return .conditional(pred(d - 1, scopes, &r), expr(d - 1, scopes, &r), expr(d - 1, scopes, &r), at: U)
            default: return .coalesce(expr(d - 1, scopes, &r), expr(d - 1, scopes, &r), at: U)
            }
        }
        func condition(_ d: Int, _ scopes: Int, _ r: inout SplitMix64) -> Pred {
            // A value usable as a condition.
            switch Int.random(in: 0..<3, using: &r) {
            case 0: return .value(keyPath(scopes, &r, allowEmpty: false))
            case 1: return .value(v(variables.randomElement(using: &r)!))
            default: return .value(.coalesce(expr(max(d - 1, 0), scopes, &r), expr(max(d - 1, 0), scopes, &r), at: U))
            }
        }
        func options(_ r: inout SplitMix64) -> StringOptions { StringOptions(rawValue: Int.random(in: 0...3, using: &r)) }
        func pred(_ d: Int, _ scopes: Int, _ r: inout SplitMix64) -> Pred {
            if d == 0 {
                switch Int.random(in: 0..<3, using: &r) {
                case 0: return .constant(Bool.random(using: &r), at: U)
                case 1: return .typeCheck(scope: Int.random(in: 0..<scopes, using: &r), entity: entities.randomElement(using: &r)!, at: U)
                default: return condition(0, scopes, &r)
                }
            }
            let e = { (r: inout SplitMix64) in expr(d - 1, scopes, &r) }
            let p = { (r: inout SplitMix64) in pred(d - 1, scopes, &r) }
            switch Int.random(in: 0..<13, using: &r) {
            case 0: return .conjunction((0..<Int.random(in: 2...3, using: &r)).map { _ in p(&r) }, at: U)
            case 1: return .disjunction((0..<Int.random(in: 2...3, using: &r)).map { _ in p(&r) }, at: U)
            case 2: return .negation(p(&r), at: U)
            case 3: return .comparison(ComparisonOperator.allCases.randomElement(using: &r)!, e(&r), e(&r), options(&r), at: U)
            case 4:
                var receiver = e(&r)
                if case .literal(.array, _) = receiver { receiver = v("s") }
                return .string(StringOperator.allCases.randomElement(using: &r)!, receiver, e(&r), options(&r), at: U)
            case 5:
                let collection = Bool.random(using: &r) ? lit(.array([literal(1, &r), literal(1, &r)])) : e(&r)
                return .inCollection(e(&r), collection, at: U)
            case 6: return .between(e(&r), e(&r), e(&r), at: U)
            case 7: return .anySatisfy(e(&r), pred(d - 1, scopes + 1, &r), at: U)
            case 8: return .allSatisfy(e(&r), pred(d - 1, scopes + 1, &r), at: U)
            case 9: return .isEmpty(e(&r), at: U)
            case 10: return .conditional(p(&r), p(&r), p(&r), at: U)
            case 11: return condition(d, scopes, &r)
            default: return .typeCheck(scope: Int.random(in: 0..<scopes, using: &r), entity: entities.randomElement(using: &r)!, at: U)
            }
        }
        /// The documented exceptions: a `.value(.conditional)` reads back as a
        /// predicate conditional; avoid generating it.
        func valid(_ p: Pred) -> Bool {
            switch p {
            case .value(.conditional): return false
            case .value(let e): return valid(e)
            case .constant, .typeCheck: return true
            case .conjunction(let items, _), .disjunction(let items, _): return items.allSatisfy(valid)
            case .negation(let q, _): return valid(q)
            case .comparison(_, let a, let b, _, _), .string(_, let a, let b, _, _), .inCollection(let a, let b, _):
                return valid(a) && valid(b)
            case .between(let a, let b, let c, _): return valid(a) && valid(b) && valid(c)
            case .anySatisfy(let c, let q, _), .allSatisfy(let c, let q, _): return valid(c) && valid(q)
            case .isEmpty(let e, _): return valid(e)
            case .conditional(let a, let b, let c, _): return valid(a) && valid(b) && valid(c)
            case .orElse(let a, let b, _): return valid(a) && valid(b)
            case .evaluate: return true
            }
        }
        func valid(_ e: Expr) -> Bool {
            switch e {
            case .keyPath, .variable, .literal: return true
            case .count(let x, _): return valid(x)
            case .conditional(let t, let a, let b, _): return valid(t) && valid(a) && valid(b)
            case .coalesce(let a, let b, _): return valid(a) && valid(b)
            case .filtered(let c, let q, _): return valid(c) && valid(q)
            case .arithmetic(_, let a, let b, _): return valid(a) && valid(b)
            case .aggregate(_, let c, let v, _): return valid(c) && valid(v)
            }
        }
        var checked = 0
        for _ in 0..<3000 {
            let tree = pred(Int.random(in: 0...4, using: &rng), 1, &rng)
            guard valid(tree) else { continue }
            checked += 1
            let text = tree.text
            do {
                let again = try PredicateParser.parse(text)
                if strip(again) != strip(tree) {
                    XCTFail("\(text) parses as \(again.text)\n\(strip(tree))\n\(strip(again))")
                    return
                }
            } catch {
                XCTFail("\(text): \(error)\n\(tree)")
                return
            }
        }
        XCTAssertGreaterThan(checked, 2000)
    }

    func testStructuredRandomPredicatesRoundTrip() {
        // Random well-formed predicates built from a small grammar.
        var rng = SplitMix64(state: 42)
        func value(_ d: Int, _ r: inout SplitMix64) -> String {
            let leaves = ["$0.a", "$0.b?.c", "q", "$now", "1", "-2.5", "\"s\"", "nil", ".family", "$0.items.count", "true"]
            if d == 0 || Int.random(in: 0..<3, using: &r) > 0 { return leaves[Int.random(in: 0..<leaves.count, using: &r)] }
            switch Int.random(in: 0..<2, using: &r) {
            case 0: return "(\(value(d - 1, &r)) ?? \(value(d - 1, &r)))"
            default: return "(\(cond(d - 1, &r)) ? \(value(d - 1, &r)) : \(value(d - 1, &r)))"
            }
        }
        func cond(_ d: Int, _ r: inout SplitMix64) -> String {
            if d == 0 { return ["$0.flag", "true", "$0 is T", "flag"][Int.random(in: 0..<4, using: &r)] }
            switch Int.random(in: 0..<9, using: &r) {
            case 0: return "\(cond(d - 1, &r)) && \(cond(d - 1, &r))"
            case 1: return "(\(cond(d - 1, &r)) || \(cond(d - 1, &r)))"
            case 2: return "!(\(cond(d - 1, &r)))"
            case 3: return "\(value(d - 1, &r)) \(["==", "!=", "<", "<=", ">", ">="].randomElement(using: &r)!) \(value(d - 1, &r))"
            case 4: return "$0.items.contains { \(cond(d - 1, &r)) }"
            case 5: return "o.items.allSatisfy { e in e.x == o.y && \(cond(d - 1, &r)) }"
            case 6: return "$0.name.contains(\(value(d - 1, &r)), options: \"c\")"
            case 7: return "(1...3).contains(\(value(d - 1, &r)))"
            default: return "(\(cond(d - 1, &r)) ? \(cond(d - 1, &r)) : \(cond(d - 1, &r)))"
            }
        }
        for _ in 0..<500 {
            let text = "{ o in \(cond(4, &rng)) }"
            do {
                let p = try PredicateParser.parse(text)
                let again = try PredicateParser.parse(p.text)
                XCTAssertEqual(strip(again), strip(p), "\(text) → \(p.text)")
            } catch {
                XCTFail("\(text): \(error)")
            }
        }
    }
}
