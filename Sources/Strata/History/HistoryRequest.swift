/// A history descriptor (SwiftData's HistoryDescriptor), decoded:
///
///     {"predicate": "$0.token > lastToken && $0.changes.contains { entityNames.contains($0.changedPersistentIdentifier.entityName) }",
///      "bindings": {"lastToken": "41@5f0c9a1e", "entityNames": ["Trip", "LivingAccommodation"]},
///      "sortBy": [{"key": "transactionIdentifier", "order": "reverse"}],
///      "fetchLimit": 1}
///
/// The predicate is over transactions: `token` (or `transactionIdentifier`) compared with
/// tokens, `timestamp` with dates, `author` and `contextName` with strings or nil, and
/// `changes.contains { … }` / `changes.allSatisfy { … }` / `changes.isEmpty` testing a change's
/// `changedPersistentIdentifier.entityName` (or `entityName`). An entity name matches the
/// entity and its subentities, as fetch descriptors do; a name the schema does not know
/// (an entity a migration removed) matches itself.
public struct HistoryRequest {
    var predicate: Predicate?
    var bindings: [String: JSONValue] = [:]
    var sort: [(field: HistoryField, ascending: Bool)] = []
    var limit: Int64?
    /// Whether the descriptor has "sortBy" (even empty): strata_delete_history refuses it.
    var hasSortBy = false

    static let keys = ["predicate", "bindings", "sortBy", "fetchLimit"]

    /// Decodes a descriptor (an empty object or `null` selects every transaction).
    ///
    /// - Throws: `.invalid` naming the JSON path of a malformed or unknown key.
    public static func decode(_ json: UnsafeBufferPointer<UInt8>?) throws -> HistoryRequest {
        guard let json, !json.isEmpty else { return HistoryRequest() }
        return try decode(JSONValue.parse(json))
    }

    static func decode(_ value: JSONValue) throws -> HistoryRequest {
        var r = HistoryRequest()
        if value == .null { return r }
        var o = try ObjectReader(value, path: JSONPath(), what: "history descriptor")
        if let b = o.value("bindings"), b != .null {
            guard case .object(let members) = b else {
                throw StrataError(.invalid, "'bindings' must be an object of variable names to values", path: "/bindings")
            }
            for (k, v) in members { r.bindings[k] = v }
        }
        if let p = o.value("predicate"), p != .null {
            r.predicate = try PredicateJSON.predicate(p, JSONPath() / "predicate")
        }
        let sortBy = try o.array("sortBy")
        r.hasSortBy = sortBy != nil
        for (i, item) in (sortBy ?? []).enumerated() {
            let p = JSONPath() / "sortBy" / i
            var so = try ObjectReader(item, path: p, what: "sort key")
            guard let key = try so.string("key") else { throw StrataError(.invalid, "sort key is missing 'key'", path: (p / "key").description) }
            let order = try so.string("order") ?? "forward"
            try so.finish()
            guard order == "forward" || order == "reverse" else {
                throw StrataError(.invalid, "'order' must be \"forward\" or \"reverse\", not '\(order)'", path: (p / "order").description)
            }
            let field: HistoryField
            switch key {
            case "transactionIdentifier", "token": field = .sequence
            case "timestamp": field = .timestamp
            case "author": field = .author
            case "contextName": field = .contextName
            default:
                throw StrataError(.invalid, "history transactions sort by transactionIdentifier, token, timestamp, author or contextName, not '\(key)'",
                                  path: (p / "key").description)
            }
            r.sort.append((field, order == "forward"))
        }
        if let limit = try o.int("fetchLimit") {
            guard limit >= 0 else { throw StrataError(.invalid, "'fetchLimit' must not be negative", path: "/fetchLimit") }
            r.limit = limit
        }
        do { try o.finish() } catch var e as StrataError {
            e.message += " (a history descriptor takes: \(keys.joined(separator: ", ")))"
            throw e
        }
        return r
    }

    public init() {}

    /// The store query, and the sequences after which the predicate asks for every
    /// transaction (`token > t`: t; `token >= t`: t - 1), each with the JSON path of its
    /// token, for the expiry check. With `anyStore` (explaining), a token of another store
    /// is taken by its sequence instead of failing as expired.
    ///
    /// - Throws: `.invalid` for a predicate `storage` cannot run in one query (too deep, too
    ///   many values), naming the predicate's path.
    func query(names: HistoryNameTable, schema: Schema, storage: HistoryStorage, store: String,
               anyStore: Bool = false) throws -> (HistoryQuery, after: [HistoryPredicateTranslator.After]) {
        var t = HistoryPredicateTranslator(names: names, schema: schema, store: store, bindings: bindings)
        t.anyStore = anyStore
        var q = HistoryQuery()
        if let p = predicate {
            q.filter = try t.transaction(p)
            if let problem = storage.historyFilterProblem(q.filter) { throw t.fail(problem, p.location) }
        }
        q.sort = sort
        q.limit = limit
        return (q, t.after)
    }
}

/// Turns a predicate over transactions into a store filter.
struct HistoryPredicateTranslator {
    let names: HistoryNameTable
    let schema: Schema
    let store: String
    let bindings: [String: JSONValue]
    /// Accept tokens of other stores (by their sequence): explaining never fails as expired.
    var anyStore = false
    /// A sequence after which the predicate asks for every transaction, and where its token is.
    struct After { let sequence: Int64; let path: String }
    private(set) var after: [After] = []

    init(names: HistoryNameTable, schema: Schema, store: String, bindings: [String: JSONValue]) {
        self.names = names
        self.schema = schema
        self.store = store
        self.bindings = bindings
    }

    static let help = "history predicates test token (or transactionIdentifier), timestamp, author, contextName, "
        + "and changes.contains { $0.changedPersistentIdentifier.entityName … }"

    func fail(_ message: String, _ at: SourceLocation) -> StrataError {
        StrataError(.invalid, "\(message) at \(at) (\(HistoryPredicateTranslator.help))", path: at.jsonPath ?? "/predicate")
    }

    /// `names.contains(x)` with `names` an array (bound or literal) is membership, as in
    /// fetch predicates; the parser cannot tell it from a string's `contains`.
    private func membership(_ p: Predicate) -> Predicate {
        guard case .string(.contains, let a, let b, let options, let at) = p, options == [] else { return p }
        if case .variable(let name, _) = a, case .array? = bindings[name] { return .inCollection(b, a, at: at) }
        if case .literal(.array, _) = a { return .inCollection(b, a, at: at) }
        return p
    }

    mutating func transaction(_ p: Predicate) throws -> HistoryFilter {
        switch membership(p) {
        case .constant(let b, _): return .constant(b)
        case .conjunction(let parts, _): return .and(try parts.map { try transaction($0) })
        case .disjunction(let parts, _): return .or(try parts.map { try transaction($0) })
        case .negation(let inner, _): return .not(try transaction(inner))
        case .value(let e):
            if case .variable(let name, let at) = e, case .bool(let b) = try binding(name, at) { return .constant(b) }
            throw fail("a history predicate cannot use this value as a condition", e.location)
        case .comparison(let op, let lhs, let rhs, let options, let at):
            guard options == [] else { throw fail("string options do not apply to history predicates", at) }
            if let field = try field(lhs) {
                return try compare(field, op, rhs, at)
            }
            if let field = try field(rhs) {
                return try compare(field, op.flipped, lhs, at)
            }
            throw fail("a comparison needs a field of the transaction on one side", at)
        case .string(.contains, let collection, let element, [], let at) where isCollection(collection):
            // `tokens.contains($0.token)`: membership, as `in`.
            return try transaction(.inCollection(element, collection, at: at))
        case .inCollection(let element, let collection, let at):
            guard let field = try field(element) else { throw fail("'in' needs a field of the transaction on its left", at) }
            let items = try list(collection, at)
            return .isIn(field, try items.map { try fieldValue(field, $0.value, at, path: $0.path, op: .equal) })
        case .anySatisfy(let seq, let inner, let at), .allSatisfy(let seq, let inner, let at):
            guard case .keyPath(0, ["changes"], _) = seq else { throw fail("'contains { }' and 'allSatisfy { }' apply to $0.changes", at) }
            let all: Bool
            if case .allSatisfy = p { all = true } else { all = false }
            return .changes(all: all, try change(inner))
        case .isEmpty(let seq, let at):
            guard case .keyPath(0, ["changes"], _) = seq else { throw fail("'isEmpty' applies to $0.changes", at) }
            return .not(.changes(all: false, .constant(true)))
        default:
            throw fail("this predicate form is not supported over history", p.location)
        }
    }

    /// The transaction field a key path names (nil for a value that is not a key path).
    private func field(_ e: PredicateExpression) throws -> HistoryField? {
        guard case .keyPath(let scope, let path, let at) = e else { return nil }
        guard scope == 0, path.count == 1 else { throw fail("unknown key path '\(path.joined(separator: "."))'", at) }
        switch path[0] {
        case "token", "transactionIdentifier": return .sequence
        case "timestamp": return .timestamp
        case "author": return .author
        case "contextName": return .contextName
        default: throw fail("history transactions have no field '\(path[0])'", at)
        }
    }

    private mutating func compare(_ f: HistoryField, _ op: ComparisonOperator, _ e: PredicateExpression, _ at: SourceLocation) throws -> HistoryFilter {
        let (json, path) = try value(e)
        let v = try fieldValue(f, json, e.location, path: path, op: op)
        if f == .sequence, case .int(let n) = v {
            // A parsed token's sequence is at least 1: n - 1 does not overflow.
            if op == .greater { after.append(After(sequence: n, path: path)) } else if op == .greaterOrEqual { after.append(After(sequence: n - 1, path: path)) }
        }
        if v == .null, op != .equal, op != .notEqual { throw fail("nil compares only with == and !=", at) }
        return .compare(f, op, v)
    }

    /// Whether `e` is an array: a literal, or a variable bound to one.
    private func isCollection(_ e: PredicateExpression) -> Bool {
        switch e {
        case .literal(.array, _): return true
        case .variable(let name, _): if case .array? = bindings[name] { return true } else { return false }
        default: return false
        }
    }

    private func binding(_ name: String, _ at: SourceLocation) throws -> JSONValue {
        guard let v = bindings[name] else { throw fail("no binding for variable '\(name)' (give it in \"bindings\")", at) }
        return v
    }

    /// A literal or bound value, as JSON, and the JSON path of where it is: the binding
    /// (`/bindings/name`) or the predicate.
    private func value(_ e: PredicateExpression) throws -> (value: JSONValue, path: String) {
        switch e {
        case .variable(let name, let at): return (try binding(name, at), (JSONPath() / "bindings" / name).description)
        case .literal(let l, let at): return (try json(l, at), at.jsonPath ?? "/predicate")
        default: throw fail("expected a value (a literal or a variable)", e.location)
        }
    }

    private func json(_ l: PredicateLiteral, _ at: SourceLocation) throws -> JSONValue {
        switch l {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(n)
        case .string(let s): return .string(s)
        case .typed(.date, let v): return .object([("date", v)])
        case .typed: throw fail("history fields are tokens, dates and strings", at)
        case .array(let items): return .array(try items.map { try json($0, at) })
        }
    }

    /// The items of an array, each with its path (`/bindings/list/2`; a literal's, the literal's).
    private func list(_ e: PredicateExpression, _ at: SourceLocation) throws -> [(value: JSONValue, path: String)] {
        let (v, path) = try value(e)
        guard case .array(let items) = v else { throw fail("'in' needs an array (a literal or a variable bound to one)", at) }
        if case .variable = e { return items.enumerated().map { ($1, path + "/\($0)") } }
        return items.map { ($0, path) }
    }

    private func fieldValue(_ f: HistoryField, _ v: JSONValue, _ at: SourceLocation, path: String, op: ComparisonOperator) throws -> HistoryFieldValue {
        switch f {
        case .sequence:
            guard case .string(let text) = v else { throw fail("a token compares with a token string (as strata_fetch_history returns it)", at) }
            // The caller's text stays out of the message: the path says where it is.
            guard let t = HistoryToken.parse(text) else {
                throw StrataError(.invalid, "the value at \(path) is not a history token (tokens look like \"42@\(store)\", as strata_fetch_history returns them)",
                                  path: path)
            }
            if anyStore { return .int(t.sequence) }
            return .int(try HistoryToken.sequence(of: text, store: store, path: path))
        case .timestamp:
            var d = v
            if case .object(let m) = v, m.count == 1, m[0].0 == "date" { d = m[0].1 }
            do {
                guard case .double(let s) = try ValueCodec.convert(d, type: .date) else { throw fail("not a date", at) }
                return .double(s)
            } catch let e as StrataError where e.code == .validation || e.code == .invalid {
                throw fail("timestamp compares with a date (ISO-8601 text or seconds since 1970): \(e.message)", at)
            }
        case .author, .contextName:
            switch v {
            case .null: return .null
            case .string(let s): return .text(s)
            default: throw fail("\(f.rawValue) compares with a string or nil", at)
            }
        }
    }

    // MARK: Changes

    private func change(_ p: Predicate) throws -> HistoryEntityTest {
        switch membership(p) {
        case .constant(let b, _): return .constant(b)
        case .conjunction(let parts, _): return .and(try parts.map(change))
        case .disjunction(let parts, _): return .or(try parts.map(change))
        case .negation(let inner, _): return .not(try change(inner))
        case .comparison(let op, let lhs, let rhs, let options, let at):
            guard options == [], op == .equal || op == .notEqual else { throw fail("an entity name compares with == or !=", at) }
            let other: PredicateExpression
            if try isEntityName(lhs) { other = rhs } else if try isEntityName(rhs) { other = lhs } else {
                throw fail("a change's test compares $0.changedPersistentIdentifier.entityName", at)
            }
            guard case .string(let name) = try value(other).value else { throw fail("an entity name compares with a string", at) }
            let test = HistoryEntityTest.isIn(ids([name]))
            return op == .equal ? test : .not(test)
        case .string(.contains, let collection, let element, [], let at) where isCollection(collection):
            // `entityNames.contains($0.changedPersistentIdentifier.entityName)`: membership, as `in`.
            return try change(.inCollection(element, collection, at: at))
        case .inCollection(let element, let collection, let at):
            guard try isEntityName(element) else { throw fail("'in' over changes tests $0.changedPersistentIdentifier.entityName", at) }
            return .isIn(ids(try entityNames(collection, at)))
        default:
            throw fail("a change's test compares $0.changedPersistentIdentifier.entityName", p.location)
        }
    }

    private func entityNames(_ collection: PredicateExpression, _ at: SourceLocation) throws -> [String] {
        try list(collection, at).map { item -> String in
            guard case .string(let s) = item.value else { throw fail("entity names are strings", at) }
            return s
        }
    }

    private func isEntityName(_ e: PredicateExpression) throws -> Bool {
        guard case .keyPath(let scope, let path, let at) = e else { return false }
        guard scope == 0, path == ["changedPersistentIdentifier", "entityName"] || path == ["entityName"] else {
            throw fail("a change has changedPersistentIdentifier.entityName, not '\(path.joined(separator: "."))'", at)
        }
        return true
    }

    /// Name numbers of entities and their subentities.
    private func ids(_ list: [String]) -> [Int64] {
        var all: Set<String> = []
        for n in list {
            all.insert(n)
            if let e = schema.entity(named: n) { for d in e.descendants { all.insert(d.name) } }
        }
        return names.entityIDs(all)
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    var flipped: ComparisonOperator {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        }
    }
}
