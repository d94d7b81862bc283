@testable import Strata

/// Generates random, well-typed JSON predicates over the `QuerySchemas.trips`
/// model: every operator, options, key paths through to-one relationships,
/// quantifiers with references to outer scopes, conditionals, coalesce,
/// variables (collected in `bindings`), typed and plain literals.
struct PredicateGenerator {
    /// What the object in a scope is.
    enum Kind: Equatable {
        case trip(String)
        case item
        case tag
    }

    /// The type of a generated value.
    enum T: Equatable {
        case string, int, double, decimal, date, uuid, url, data, bool
        /// A string attribute with an enum: compared only with its members (others are an error).
        case reason
        case object(String)

        var isOrdered: Bool {
            switch self {
            case .string, .int, .double, .decimal, .date, .url, .reason: return true
            default: return false
            }
        }
        var isNumeric: Bool { self == .int || self == .double }
    }

    struct Key {
        let path: String
        let type: T
        let optional: Bool
    }

    var rng: SeededRNG
    /// Identifiers of existing objects by root entity, for object literals.
    let identifiers: [String: [String]]
    /// Innermost last.
    private(set) var scopes: [Kind] = []
    private(set) var bindings: [(String, JSONValue)] = []
    private var depth = 0
    private var quantifierDepth = 0

    init(rng: SeededRNG, identifiers: [String: [String]]) {
        self.rng = rng
        self.identifiers = identifiers
    }

    // MARK: Model

    static func keys(_ k: Kind) -> [Key] {
        switch k {
        case .trip(let e):
            var keys: [Key] = [
                Key(path: "name", type: .string, optional: false),
                Key(path: "destination", type: .string, optional: false),
                Key(path: "startDate", type: .date, optional: false),
                Key(path: "endDate", type: .date, optional: false),
                Key(path: "rating", type: .int, optional: true),
                Key(path: "score", type: .double, optional: true),
                Key(path: "budget", type: .decimal, optional: true),
                Key(path: "code", type: .uuid, optional: true),
                Key(path: "website", type: .url, optional: true),
                Key(path: "photo", type: .data, optional: true),
                Key(path: "flag", type: .bool, optional: false),
                Key(path: "livingAccommodation.placeName", type: .string, optional: true),
                Key(path: "livingAccommodation.address", type: .string, optional: true),
                Key(path: "livingAccommodation", type: .object("LivingAccommodation"), optional: true),
                Key(path: "livingAccommodation.trip.name", type: .string, optional: true),
                // A composite's fields: nil where the composite is.
                Key(path: "home.city", type: .string, optional: true),
                Key(path: "home.zip", type: .int, optional: true),
            ]
            if e == "PersonalTrip" { keys.append(Key(path: "reason", type: .reason, optional: false)) }
            if e == "BusinessTrip" { keys.append(Key(path: "perdiem", type: .double, optional: false)) }
            if e == "Trip" {
                // A subentity's attribute on a Trip: nil for the other trips, implied or cast with as?.
                keys.append(Key(path: "perdiem", type: .double, optional: true))
                keys.append(Key(path: "as:BusinessTrip.perdiem", type: .double, optional: true))
                keys.append(Key(path: "as:PersonalTrip.reason", type: .reason, optional: true))
            }
            return keys
        case .item:
            return [
                Key(path: "title", type: .string, optional: false),
                Key(path: "isInPlan", type: .bool, optional: false),
                Key(path: "priority", type: .int, optional: true),
                Key(path: "trip.name", type: .string, optional: true),
                Key(path: "trip.rating", type: .int, optional: true),
                Key(path: "trip.startDate", type: .date, optional: true),
                Key(path: "trip.flag", type: .bool, optional: true),
                Key(path: "trip.budget", type: .decimal, optional: true),
                Key(path: "trip.livingAccommodation.placeName", type: .string, optional: true),
                Key(path: "trip", type: .object("Trip"), optional: true),
                Key(path: "trip.perdiem", type: .double, optional: true),
                Key(path: "trip.as:PersonalTrip.reason", type: .reason, optional: true),
                Key(path: "trip.home.zip", type: .int, optional: true),
            ]
        case .tag:
            return [Key(path: "name", type: .string, optional: false)]
        }
    }

    static func toMany(_ k: Kind) -> [(String, Kind)] {
        switch k {
        case .trip: return [("bucketList", .item), ("tags", .tag)]
        case .item: return [("trip.bucketList", .item), ("trip.tags", .tag)]
        case .tag: return [("trips", .trip("Trip"))]
        }
    }

    // MARK: Entry

    /// A predicate for objects of `kind`; bindings start empty.
    mutating func predicate(for kind: Kind) -> JSONValue {
        scopes = [kind]
        bindings = []
        depth = 0
        quantifierDepth = 0
        return predicate()
    }

    // MARK: JSON helpers

    private func obj(_ k: String, _ v: JSONValue) -> JSONValue { .object([(k, v)]) }
    private func op(_ name: String, _ operands: [JSONValue], options: String = "") -> JSONValue {
        options.isEmpty ? .object([(name, .array(operands))]) : .object([(name, .array(operands)), ("options", .string(options))])
    }

    private mutating func bind(_ v: JSONValue) -> JSONValue {
        let name = "v\(bindings.count)"
        bindings.append((name, v))
        return obj("var", .string(name))
    }

    // MARK: Predicates

    mutating func predicate() -> JSONValue {
        depth += 1
        defer { depth -= 1 }
        let leafOnly = depth > 3
        let r = rng.int(0...99)
        if leafOnly || r < 45 { return leaf() }
        switch r {
        case 45..<57:
            let n = rng.int(0...3)
            var parts: [JSONValue] = []
            for _ in 0..<n { parts.append(predicate()) }
            return obj("and", .array(parts))
        case 57..<69:
            let n = rng.int(0...3)
            var parts: [JSONValue] = []
            for _ in 0..<n { parts.append(predicate()) }
            return obj("or", .array(parts))
        case 69..<77:
            return obj("not", predicate())
        case 77..<82:
            let a = predicate(), b = predicate(), c = predicate()
            return obj("cond", .array([a, b, c]))
        default:
            return quantifier() ?? leaf()
        }
    }

    /// A to-many key path, or (one in three, while nesting allows) the objects of it a closure keeps.
    private mutating func manySource(_ path: String, _ kind: Kind) -> JSONValue {
        guard quantifierDepth < 2, rng.chance(0.33) else { return obj("key", .string(path)) }
        quantifierDepth += 1
        scopes.append(kind)
        let inner = predicate()
        scopes.removeLast()
        quantifierDepth -= 1
        return obj("filter", .array([obj("key", .string(path)), inner]))
    }

    private mutating func quantifier() -> JSONValue? {
        guard quantifierDepth < 2 else { return nil }
        let (path, kind) = rng.pick(Self.toMany(scopes.last!))
        let source = manySource(path, kind)
        quantifierDepth += 1
        scopes.append(kind)
        let inner = predicate()
        scopes.removeLast()
        quantifierDepth -= 1
        let name = rng.chance(0.6) ? "any" : "all"
        return obj(name, .array([source, inner]))
    }

    private mutating func leaf() -> JSONValue {
        let r = rng.int(0...99)
        switch r {
        case 0..<38: return comparison()
        case 38..<52: return stringTest()
        case 52..<62: return membership()
        case 62..<67: return between()
        case 67..<72: return nilTest()
        case 72..<78: return isEmpty()
        case 78..<81: return countTest()
        case 81..<84: return aggregateComparison()
        case 84..<89: return typeCheck() ?? comparison()
        case 89..<96: return boolValue()
        case 96..<98: return .bool(rng.chance(0.5))
        default: return quantifier() ?? comparison()
        }
    }

    /// Keys of a type reachable from the scopes, with their scope index.
    private func candidates(_ filter: (T) -> Bool) -> [(Key, Int)] {
        var out: [(Key, Int)] = []
        for (i, k) in scopes.reversed().enumerated() {
            for key in Self.keys(k) where filter(key.type) {
                // The innermost scope is the usual one: list it three times.
                let weight = i == 0 ? 3 : 1
                for _ in 0..<weight { out.append((key, i)) }
            }
        }
        return out
    }

    /// A key path; one in eight that can be nil is force-unwrapped (`!`) at its first hop or its end,
    /// so that the evaluation fails where it is nil (in the nil tests too: `$0.a! == nil` fails, never true).
    private mutating func keyJSON(_ key: Key, _ scope: Int) -> JSONValue {
        var path = key.path
        if key.optional && rng.chance(0.125) {
            if let dot = path.firstIndex(of: ".") { path.insert("!", at: dot) } else { path += "!" }
        }
        return scope == 0 ? obj("key", .string(path)) : .object([("key", .string(path)), ("scope", .number(String(scope)))])
    }

    private mutating func randomKey(_ type: T, optionalOnly: Bool = false) -> (JSONValue, Key)? {
        let c = candidates { $0 == type }.filter { !optionalOnly || $0.0.optional }
        guard !c.isEmpty else { return nil }
        let (k, s) = rng.pick(c)
        return (keyJSON(k, s), k)
    }

    private mutating func someType(ordered: Bool = false, excluding: [T] = []) -> T {
        let types = candidates { t in (!ordered || t.isOrdered) && !excluding.contains(t) }.map(\.0.type)
        return rng.pick(types)
    }

    private static let optionChoices = ["", "", "c", "d", "cd"]

    private mutating func comparison() -> JSONValue {
        let t = someType()
        let lhs = anchored(t)
        let ops = t.isOrdered ? ["==", "!=", "<", "<=", ">", ">="] : ["==", "!="]
        let o = rng.pick(ops)
        var rhs: JSONValue
        if (o == "==" || o == "!=") && rng.chance(0.1) {
            rhs = .null
        } else if t.isNumeric && rng.chance(0.15), let (k, _) = randomKey(t == .int ? .double : .int) {
            rhs = k
        } else {
            rhs = operand(t)
        }
        let options = (t == .string || t == .url) ? rng.pick(Self.optionChoices) : ""
        return rng.chance(0.2) ? op(o, [rhs, lhs], options: options) : op(o, [lhs, rhs], options: options)
    }

    private mutating func stringTest() -> JSONValue {
        let name = rng.pick(["contains", "hasPrefix", "hasSuffix", "localizedStandardContains", "contains"])
        let recvType: T = rng.chance(0.85) ? .string : .url
        var receiver = anchored(recvType)
        var needle: JSONValue
        switch rng.int(0...9) {
        case 0..<6: needle = .string(rng.pick(Pools.needles))
        case 6..<8: needle = bind(.string(rng.pick(Pools.needles)))
        default: needle = randomKey(.string)?.0 ?? .string("a")
        }
        if rng.chance(0.1) { swap(&receiver, &needle) }
        let options = name == "localizedStandardContains" ? "" : rng.pick(Self.optionChoices)
        let test = op(name, [receiver, needle], options: options)
        // `$0.livingAccommodation?.address.contains(x) ?? true`: the default where the chain is nil.
        return rng.chance(0.12) ? obj("??", .array([test, .bool(rng.chance(0.5))])) : test
    }

    private mutating func membership() -> JSONValue {
        let t = someType(excluding: [.data])
        let element = anchored(t)
        var items: [JSONValue] = []
        // Past 16 values the SQL reads one JSON array with json_each.
        let n = rng.chance(0.15) ? rng.int(15...24) : rng.int(0...5)
        for _ in 0..<n { items.append(rng.chance(0.15) ? .null : literal(t)) }
        switch rng.int(0...2) {
        case 0: return op("in", [element, .array(items)])
        case 1: return op("in", [element, bind(.array(items))])
        default: return op("contains", [bind(.array(items)), element])
        }
    }

    private mutating func between() -> JSONValue {
        let t = someType(ordered: true)
        return op("between", [anchored(t), literal(t), operand(t)])
    }

    private mutating func nilTest() -> JSONValue {
        let c = candidates { _ in true }.filter { $0.0.optional }
        guard !c.isEmpty else { return comparison() }
        let (k, s) = rng.pick(c)
        let o = rng.chance(0.5) ? "==" : "!="
        return rng.chance(0.3) ? op(o, [.null, keyJSON(k, s)]) : op(o, [keyJSON(k, s), .null])
    }

    private mutating func isEmpty() -> JSONValue {
        switch rng.int(0...5) {
        case 0, 1:
            let (path, kind) = rng.pick(Self.toMany(scopes.last!))
            let test = obj("isEmpty", manySource(path, kind))
            return rng.chance(0.15) ? obj("??", .array([test, .bool(rng.chance(0.5))])) : test
        case 2:
            return obj("isEmpty", bind(.string(rng.pick(["", "x", "Zürich"]))))
        case 3:
            return obj("isEmpty", obj("??", .array([randomKey(.string)!.0, .string(rng.pick(["", "x"]))])))
        default:
            return obj("isEmpty", randomKey(.string)!.0)
        }
    }

    private mutating func countTest() -> JSONValue {
        let o = rng.pick(["==", "!=", "<", "<=", ">", ">="])
        let counted: JSONValue
        if rng.chance(0.6) {
            let (path, kind) = rng.pick(Self.toMany(scopes.last!))
            counted = obj("count", manySource(path, kind))
        } else {
            counted = obj("count", randomKey(.string)!.0)
        }
        let rhs: JSONValue = rng.chance(0.2) ? bind(.number(String(rng.int(0...7)))) : .number(String(rng.int(0...7)))
        return op(o, [counted, rhs])
    }

    /// `@sum` or `@avg` of a number of the related objects (of a filter of them, at times) compared
    /// with a literal that tells an exact sum from a running one, or that only an overflow reaches.
    private mutating func aggregateComparison() -> JSONValue {
        guard quantifierDepth < 2 else { return countTest() }
        let (agg, integer) = exactAggregate()
        let o = rng.pick(["==", "!=", "<", "<=", ">", ">="])
        let pool = integer ? ["0", "1", "3", "5", "-1", "9007199254740993", "9223372036854775807", "2.5"]
            : ["0", "0.5", "1", "1.5", "3", "0.6", "0.30000000000000004", "9007199254740993", "9007199254740994", "1e308", "-1e308"]
        var rhs: JSONValue = .number(rng.pick(pool))
        if rng.chance(0.2) { rhs = bind(rhs) }
        // An average is nil without values: a default now and then.
        let lhs = rng.chance(0.2) ? obj("??", .array([agg, .number(rng.pick(["0", "-1"]))])) : agg
        return rng.chance(0.2) ? op(o, [rhs, lhs]) : op(o, [lhs, rhs])
    }

    /// `{"@sum": [source, value]}` or `@avg` over a to-many key path of the innermost scope, and
    /// whether its values are ints (an average is a double either way).
    private mutating func exactAggregate() -> (JSONValue, Bool) {
        let (path, kind) = rng.pick(Self.toMany(scopes.last!))
        let (value, integer) = summand(kind)
        let source = manySource(path, kind)
        let average = rng.chance(0.35)
        return (obj(average ? "@avg" : "@sum", .array([source, value])), integer && !average)
    }

    /// A number of an object of `kind` to add up, and whether it is an int: attributes, counts, and
    /// arithmetic that makes values whose sum overflows, cancels, or fails for one of them.
    private mutating func summand(_ kind: Kind) -> (JSONValue, Bool) {
        func key(_ path: String) -> JSONValue { obj("key", .string(path)) }
        switch kind {
        case .item:
            switch rng.int(0...8) {
            case 0, 1: return (key("priority"), true)
            case 2: return (key("trip.rating"), true)
            case 3: return (op("*", [key("priority"), .number("2305843009213693952")]), true)
            case 4: return (obj("count", key("title")), true)
            case 5: return (key("trip.perdiem"), false)
            case 6: return (op("*", [key("priority"), key("trip.perdiem")]), false)
            case 7: return (op("*", [key("trip.perdiem"), .number(rng.pick(["1e307", "0.1", "6e307"]))]), false)
            default: return (obj("??", .array([key("priority!"), .number("0")])), true)
            }
        case .tag:
            return rng.chance(0.5) ? (obj("count", key("trips")), true) : (obj("count", key("name")), true)
        case .trip:
            switch rng.int(0...6) {
            case 0, 1: return (key("rating"), true)
            case 2: return (op("*", [key("rating"), .number("1024")]), true)
            case 3, 4: return (key("score"), false)
            case 5: return (op("+", [key("score"), .number(rng.pick(["0.1", "1e308", "-9007199254740992"]))]), false)
            default: return (key("perdiem"), false)
            }
        }
    }

    private mutating func typeCheck() -> JSONValue? {
        guard case .trip(let e) = scopes.last! else { return nil }
        let choices = e == "Trip" ? ["PersonalTrip", "BusinessTrip", "Trip"] : [e, "Trip"]
        return obj("is", .string(rng.pick(choices)))
    }

    private mutating func boolValue() -> JSONValue {
        switch rng.int(0...5) {
        case 0, 1: return randomKey(.bool)!.0
        case 2: return bind(.bool(rng.chance(0.5)))
        case 3: return obj("value", randomKey(.bool)!.0)
        case 4:
            let test = predicate()
            return obj("value", obj("cond", .array([test, randomKey(.bool)!.0, operand(.bool)])))
        default: return op(rng.pick(["==", "!="]), [randomKey(.bool)!.0, operand(.bool)])
        }
    }

    // MARK: Values

    /// A value whose type comes from the model (a key path, a count, a
    /// conditional or coalesce whose first branch is a key path).
    private mutating func anchored(_ t: T) -> JSONValue {
        let r = rng.int(0...99)
        if t == .int && r < 10 {
            if rng.chance(0.5) {
                let (path, _) = rng.pick(Self.toMany(scopes.last!))
                return obj("count", obj("key", .string(path)))
            }
            return obj("count", randomKey(.string)!.0)
        }
        if r < 18 && depth < 4 {
            let test = predicate()
            return obj("cond", .array([test, randomKey(t)!.0, operand(t)]))
        }
        if r < 28, let (k, _) = randomKey(t, optionalOnly: true) {
            return obj("??", .array([k, operand(t)]))
        }
        if r >= 36 && r < 42 && (t == .int || t == .date || t == .string) && quantifierDepth < 2 {
            // The largest or smallest value of the related objects (nil when there are none).
            let (path, kind) = rng.pick(Self.toMany(scopes.last!))
            let values = Self.keys(kind).filter { $0.type == t && !$0.path.contains("as:") }
            if !values.isEmpty {
                let source = manySource(path, kind)
                return obj(rng.chance(0.5) ? "@max" : "@min", .array([source, obj("key", .string(rng.pick(values).path))]))
            }
        }
        if r >= 42 && r < 47 && (t == .int || t == .double) && quantifierDepth < 2 {
            // An exact sum or average of numbers of the related objects (an average is a double).
            let (agg, integer) = exactAggregate()
            if integer == (t == .int) { return agg }
        }
        if r < 36 && (t == .int || t == .double || t == .date) && depth < 4 {
            // Arithmetic, with the literals that make it fail (zero divisors, overflow, infinity).
            let ops = t == .int ? ["+", "-", "*", "/", "%"] : t == .double ? ["+", "-", "*", "/"] : ["+", "-"]
            let o = rng.pick(ops)
            let number: JSONValue
            switch t {
            case .int: number = .number(rng.pick(["0", "1", "-1", "2", "3", "9223372036854775807", "-9223372036854775808"]))
            case .double: number = .number(rng.pick(["0", "0.5", "-2.5", "1e308", "1e-308", "3"]))
            default: number = .number(rng.pick(["86400", "-3600.5", "0"]))
            }
            let k = randomKey(t)!.0
            return obj(o, .array(rng.chance(0.7) || t == .date ? [k, number] : [number, k]))
        }
        return randomKey(t)!.0
    }

    /// Any value of a type: a key path, a literal, a variable, ...
    private mutating func operand(_ t: T) -> JSONValue {
        switch rng.int(0...99) {
        case 0..<30: return randomKey(t)!.0
        case 30..<75: return literal(t)
        case 75..<92: return bind(literal(t))
        default: return depth < 4 ? anchored(t) : literal(t)
        }
    }

    /// A literal of a type, in one of its accepted spellings.
    mutating func literal(_ t: T) -> JSONValue {
        switch t {
        case .string:
            return .string(rng.pick(rng.pick([Pools.names, Pools.needles, Pools.destinations, Pools.titles, Pools.places, Pools.tags,
                                               ["family", "reunion", "wellness", "unknown"]])))
        case .reason:
            return .string(rng.pick(["family", "reunion", "wellness", "unknown"]))
        case .int:
            if rng.chance(0.15) { return .number(rng.pick(["2.5", "-0.5", "9007199254740992", "9007199254740992.0", "9.007199254740994e15", "1e1"])) }
            return .number(rng.chance(0.7) ? String(rng.int(-2...6)) : rng.pick(Pools.ratings))
        case .double:
            return .number(rng.chance(0.5) ? rng.pick(Pools.scores) : String(rng.int(-1...4)))
        case .decimal:
            let d = rng.pick(Pools.budgets + ["1.500", "2.0", "-3.250", "1e1"])
            switch rng.int(0...2) {
            case 0: return d.contains("e") ? .string("10") : .number(d)
            case 1: return .string(d)
            default: return obj("decimal", .string(d))
            }
        case .date:
            let seconds = Pools.epoch + Int64(rng.int(-10...420)) * 86_400 + Int64(rng.pick([0, 0, 3600, 43_200, 86_399]))
            switch rng.int(0...3) {
            case 0: return .string(Pools.iso(seconds))
            case 1: return obj("date", .string(Pools.iso(seconds)))
            case 2: return .number(String(seconds))
            default: return .string(Pools.iso(seconds).replacingSuffix("Z", with: "+00:00"))
            }
        case .uuid:
            let u = rng.pick(Pools.uuids + ["9A3E0F10-0000-4000-8000-000000000001"])
            let text = rng.chance(0.5) ? u.lowercased() : u
            return rng.chance(0.3) ? obj("uuid", .string(text)) : .string(text)
        case .url:
            let u = rng.pick(Pools.urls + ["https://example.com/zurich", "https://a"])
            return rng.chance(0.3) ? obj("url", .string(u)) : .string(u)
        case .data:
            let d = rng.pick(Pools.photos + ["AAE="])
            return rng.chance(0.3) ? obj("data", .string(d)) : .string(d)
        case .bool:
            return .bool(rng.chance(0.5))
        case .object(let e):
            let root = e == "LivingAccommodation" ? "LivingAccommodation" : "Trip"
            let ids = identifiers[root] ?? []
            if ids.isEmpty || rng.chance(0.05) { return .string("\(root)/999999") }
            return .string(rng.pick(ids))
        }
    }
}

extension String {
    func replacingSuffix(_ suffix: String, with replacement: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) + replacement : self
    }
}

extension JSONValue {
    /// Whether the tree holds a typed literal object (`{"date": …}`, …).
    var containsTypedLiteral: Bool {
        switch self {
        case .object(let members):
            if members.count == 1, PredicateJSON.typedLiteralKeys[members[0].0] != nil { return true }
            return members.contains { $0.1.containsTypedLiteral }
        case .array(let items): return items.contains { $0.containsTypedLiteral }
        default: return false
        }
    }
}
