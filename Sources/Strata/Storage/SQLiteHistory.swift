import CSQLite

/// Persistent history in SQLite (`Dialect+History.swift` has the tables).
///
/// The tables are made by the first recorded save, inside its transaction;
/// a store that never recorded one has none, and reads of it find nothing.
/// Everything read back is checked: a damaged history row is `.corrupt`.
extension SQLiteSession: HistoryStorage {
    /// The tag of the store's UUID. Inside a migration (the store reads its UUID once open)
    /// the UUID is read from the file; a store without one tags its tokens "0".
    public var historyStoreTag: String {
        var uuid = sqliteStore.storeUUID
        if uuid.isEmpty, case .text(let stored)? = locked({ try? SQLiteStore.metadata(connection, "storeUUID") }) { uuid = stored }
        return HistoryName.storeTag(uuid)
    }

    /// Makes the history tables inside the caller's transaction (a rolled-back save undoes them
    /// too). A save numbers its names first (`historyNameIDs`), so that call makes them.
    private func ensureHistoryTables() throws {
        if try !storeKeepsHistory() {
            for sql in SQLiteDialect.historyDDL { try connection.execute(script: sql) }
        }
    }

    /// Whether the store keeps history (`SQLiteHistoryTables.present`).
    func storeKeepsHistory() throws -> Bool { try SQLiteHistoryTables.present(connection) }

    public func historyNameIDs(_ names: [HistoryName]) throws -> [Int64] {
        try locked {
            try SQLiteHistorySnapshot.damaged {
                try ensureHistoryTables()
                return try names.map { n in
                    let args: [SQLValue] = [.text(n.entity), .text(n.property)]
                    if case .int(let id)? = try connection.statement(SQLiteDialect.historyNameID).scalar(args) { return id }
                    guard case .int(let id)? = try connection.statement(SQLiteDialect.historyAddName).scalar(args) else {
                        throw StrataError(.corrupt, "the store's history tables are damaged: a new name was given no number")
                    }
                    return id
                }
            }
        }
    }

    public func appendHistory(_ t: HistoryTransactionRow, changes: [HistoryChangeRow]) throws -> Int64 {
        try locked {
            try SQLiteHistorySnapshot.damaged {
                let token = try appendTransaction(t)
                let insert = try connection.statement(SQLiteDialect.historyAppendChange)
                for (n, c) in changes.enumerated() {
                    let attributes = c.attributes.isEmpty ? .null : SQLiteHistory.jsonArray(c.attributes)
                    let keys = c.keys.map(SQLiteHistory.jsonArray) ?? .null
                    try insert.execute([.int(token), .int(Int64(n)), .int(c.kind.rawValue), .int(c.entity), .int(c.pk), .int(c.count), keys, attributes,
                                        c.tombstone.map(SQLValue.text) ?? .null, c.old.map(SQLValue.text) ?? .null, c.new.map(SQLValue.text) ?? .null])
                }
                return token
            }
        }
    }

    private func appendTransaction(_ t: HistoryTransactionRow) throws -> Int64 {
        let row: SQLValue?
        do {
            row = try connection.statement(SQLiteDialect.historyAppend)
                .scalar([.double(t.timestamp), t.author.map(SQLValue.text) ?? .null, t.contextName.map(SQLValue.text) ?? .null,
                         SQLiteHistory.jsonArray(t.entities),
                         t.origin.map(SQLValue.text) ?? .null, .int(t.unrecorded ? 1 : 0)])
        } catch let e as StrataError where (e.sqliteCode ?? 0) & 0xFF == SQLITE_FULL {
            // SQLite gives no key past the largest: a sequence at it is an edited file, not a full disk.
            let latest = try? connection.statement(SQLiteDialect.historyLatest).scalar()
            let newest = try? connection.statement(SQLiteDialect.historyNewestToken).scalar()
            if latest == .int(.max) || newest == .int(.max) {
                throw StrataError(.corrupt, "the store's history sequence (sqlite_sequence 'strata_history_transaction') is at its largest value, "
                                  + "\(Int64.max): no token is left for this save (the file was edited: a store gives one token per save)")
            }
            switch latest {
            case .int?, .null?, nil: throw e
            default:
                // A real or text sequence (an edited file) leaves SQLite no key to give either.
                throw StrataError(.corrupt, "the store's history sequence (sqlite_sequence 'strata_history_transaction') is not an integer")
            }
        }
        // The token is an INTEGER PRIMARY KEY: always an integer.
        guard case .int(let token)? = row, token > 0 else {
            throw StrataError(.corrupt, "the store's history tables are damaged: a recorded save was given no token")
        }
        return token
    }

    public func noteUnrecordedSave(_ t: HistoryTransactionRow) throws -> Int64? {
        try locked {
            try SQLiteHistorySnapshot.damaged {
                guard try storeKeepsHistory() else { return nil }
                var marker = t
                marker.unrecorded = true
                marker.entities = []
                let token = try appendTransaction(marker)
                try connection.execute(SQLiteDialect.historyRaiseCompleteFrom, [.int(token)])
                return token
            }
        }
    }

    public func readHistory<T>(_ body: (HistorySnapshot) throws -> T) throws -> T {
        try read(nil) {
            try SQLiteHistorySnapshot.damaged { try body(SQLiteHistorySnapshot(self)) }
        }
    }

    public func deleteHistory(_ select: (HistorySnapshot) throws -> HistoryFilter) throws -> Int64 {
        try locked {
            // Inside a transaction (a migration stage's hooks): part of it, in a savepoint.
            try inTransaction("strata_delete_history") {
                try SQLiteHistorySnapshot.damaged {
                    guard try storeKeepsHistory() else { return 0 }
                    let snapshot = SQLiteHistorySnapshot(self)
                    var sql = SQLiteHistoryFilter()
                    let condition = sql.condition(try select(snapshot))
                    guard case .int(let newest)? = try connection.statement(SQLiteDialect.historyNewestMatching(where: condition)).scalar(sql.args) else {
                        return 0
                    }
                    try connection.execute(SQLiteDialect.historyDeleteChanges(where: condition), sql.args)
                    try connection.execute(SQLiteDialect.historyDeleteTransactions(where: condition), sql.args)
                    let deleted = Int64(connection.changes)
                    try connection.execute(SQLiteDialect.historyRaiseCompleteFrom, [.int(newest)])
                    return deleted
                }
            }
        }
    }

    public func historyFilterProblem(_ filter: HistoryFilter) -> String? { SQLiteHistoryFilter.problem(filter) }

    /// Runs `body` in a transaction of its own, or in a savepoint of the caller's.
    private func inTransaction<T>(_ savepoint: String, _ body: () throws -> T) throws -> T {
        guard connection.isInTransaction else { return try connection.transaction(body) }
        return try connection.savepoint(savepoint, body)
    }
}

/// Which history tables a store holds: none (it never recorded a save) or all three, each
/// as Strata made it (`sqlite_master` keeps the text it was made with); anything else,
/// such as a missing table or column, is damage.
enum SQLiteHistoryTables {
    static func present(_ c: Connection) throws -> Bool {
        var found: [(type: String, name: String, sql: String)] = []
        try c.statement(SQLiteDialect.historyObjects).query { s in found.append((s.text(0), s.text(1), s.text(2))) }
        if found.isEmpty { return false }
        for (name, sql) in SQLiteDialect.historyTables {
            guard let f = found.first(where: { $0.name == name }) else {
                throw StrataError(.corrupt, "the store's history tables are damaged: table '\(name)' is missing")
            }
            guard f.type == "table", f.sql == sql else {
                throw StrataError(.corrupt, "the store's history tables are damaged: '\(name)' is not the table Strata made "
                                  + "(a \(f.type.prefix(16)) with other columns or constraints)")
            }
        }
        return true
    }
}

/// A migration's renames in the history's name table: every current name follows its
/// entity or property into the new schema, or retires (keeping its old name) when the
/// new schema has no successor. Older history then reads under the new names.
enum SQLiteHistoryNames {
    static func rename(_ c: Connection, _ mapping: SchemaMapping) throws {
        guard try SQLiteHistorySnapshot.damaged({ try SQLiteHistoryTables.present(c) }) else { return }
        var rows: [(Int64, HistoryName)] = []
        try c.statement(SQLiteDialect.historyLiveNames).query { s in rows.append((s.int64(0), HistoryName(entity: s.text(1), property: s.text(2)))) }
        var moves: [(Int64, HistoryName?)] = []
        for (id, name) in rows {
            let next = name.successor(in: mapping)
            if next != name { moves.append((id, next)) }
        }
        // Retire every moving name first, so that two names may swap.
        for (id, _) in moves { try c.execute(SQLiteDialect.historyRetireName, [.int(id)]) }
        for case let (id, next?) in moves { try c.execute(SQLiteDialect.historyRename, [.int(id), .text(next.entity), .text(next.property)]) }
    }
}

/// One read of the history, on the session's snapshot (inside `read`).
struct SQLiteHistorySnapshot: HistorySnapshot {
    let session: SQLiteSession
    init(_ session: SQLiteSession) { self.session = session }
    var connection: Connection { session.connection }

    /// Runs `body`; SQL errors of the history tables (once `SQLiteHistoryTables` found them
    /// as Strata made them, and its requests within SQLite's limits) mean a damaged store,
    /// not a bug: rows an edit added that break the tables' keys, values of the wrong type.
    static func damaged<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch var e as StrataError where (e.code == .internal || e.code == .constraint) && e.sqliteCode != nil {
            e.code = .corrupt
            e.message = "the store's history tables are damaged: " + e.message
            throw e
        }
    }

    func names() throws -> HistoryNameTable {
        var table = HistoryNameTable()
        guard try session.storeKeepsHistory() else { return table }
        try connection.statement(SQLiteDialect.historyNames).query { s in
            table.byID[s.int64(0)] = HistoryName(entity: s.text(1), property: s.text(2))
        }
        return table
    }

    func bounds() throws -> (latest: Int64, completeFrom: Int64) {
        guard try session.storeKeepsHistory() else { return (0, 0) }
        var latest: Int64 = 0
        switch try connection.statement(SQLiteDialect.historyLatest).scalar() {
        case .int(let n)? where n >= 0: latest = n
        case .int?: throw StrataError(.corrupt, "the store's history sequence (sqlite_sequence 'strata_history_transaction') is negative")
        case nil, .null?: latest = 0
        default: throw StrataError(.corrupt, "the store's history sequence (sqlite_sequence 'strata_history_transaction') is not a number")
        }
        var from: Int64 = 0
        switch try SQLiteStore.metadata(connection, SQLiteDialect.historyCompleteFromKey) {
        case .int(let n)?: from = n
        case nil, .null?: from = 0
        default: throw StrataError(.corrupt, "the store's metadata 'historyCompleteFrom' is not a number")
        }
        return (latest, from)
    }

    private func select(_ query: HistoryQuery) -> (String, [SQLValue]) {
        var sql = SQLiteHistoryFilter()
        var condition = sql.condition(query.filter)
        var order: [String] = []
        for (field, ascending) in query.sort { order.append(SQLiteDialect.historyColumn(field) + (ascending ? " ASC" : " DESC")) }
        if query.sort.first?.field != .sequence { order.append("t.token ASC") }
        if query.sort.isEmpty || query.sort.first?.field == .sequence {
            // Tokens start at 1: the range lets SQLite walk the primary key from either end (no sort).
            condition = "t.token > 0 AND (\(condition))"
        }
        var limit: String?
        if let n = query.limit { limit = "?"; sql.args.append(.int(n)) }
        return (SQLiteDialect.historySelect(where: condition, orderBy: order.joined(separator: ", "), limit: limit), sql.args)
    }

    func transactions(_ query: HistoryQuery, _ each: (HistoryTransactionRow, [HistoryChangeRow]) throws -> Void) throws {
        guard try session.storeKeepsHistory() else { return }
        let (sql, args) = select(query)
        var rows: [HistoryTransactionRow] = []
        try connection.statement(sql).query(args) { s in
            // Read by the SQL filters only (json_each): not checked here.
            let entities = SQLiteHistory.integers(s.text(4)) ?? []
            let author: String? = s.columnType(2) == SQLITE_NULL ? nil : s.text(2)
            let context: String? = s.columnType(3) == SQLITE_NULL ? nil : s.text(3)
            let origin: String? = s.columnType(5) == SQLITE_NULL ? nil : s.text(5)
            let token = s.int64(0)
            guard token > 0 else {
                throw StrataError(.corrupt, "the store's history has a transaction numbered \(token) (tokens start at 1)")
            }
            // (A REAL column keeps text that is not a number as text: it would read as 1970.)
            let timeType = s.columnType(1)
            guard timeType == SQLITE_FLOAT || timeType == SQLITE_INTEGER, s.double(1).isFinite else {
                throw StrataError(.corrupt, "the store's history has a transaction whose timestamp is not a number (transaction \(token))")
            }
            rows.append(HistoryTransactionRow(sequence: token, timestamp: s.double(1), author: author, contextName: context,
                                              entities: entities, origin: origin, unrecorded: s.int64(6) != 0))
        }
        for t in rows { try each(t, try changes(t.sequence)) }
    }

    private func changes(_ token: Int64) throws -> [HistoryChangeRow] {
        var out: [HistoryChangeRow] = []
        try connection.statement(SQLiteDialect.historyChanges).query([.int(token)]) { s in
            guard let kind = HistoryChangeRow.Kind(rawValue: s.int64(0)), s.columnType(0) == SQLITE_INTEGER else {
                throw StrataError(.corrupt, "the store's history has a change of unknown kind \(s.int64(0)) (transaction \(token))")
            }
            // Integers, not text that SQLite would read as 0 (an entity's key 0 that no object has).
            guard s.columnType(1) == SQLITE_INTEGER, s.columnType(2) == SQLITE_INTEGER, s.columnType(3) == SQLITE_INTEGER else {
                throw StrataError(.corrupt, "the store's history has a change whose entity, key or count is not an integer (transaction \(token))")
            }
            // A row describes at most `maxObjects` objects (the recorder's rows), and one when it holds values;
            // a run without a list of keys ends at the largest key or before.
            let pk = s.int64(2), count = s.int64(3)
            guard count >= 1, count <= HistoryChangeRow.maxObjects, s.columnType(8) != SQLITE_NULL || pk <= Int64.max - (count - 1) else {
                throw StrataError(.corrupt, "the store's history has a change run of \(count) objects from key \(pk) (transaction \(token); "
                                  + "a change row describes 1 to \(HistoryChangeRow.maxObjects) objects)")
            }
            func text(_ i: Int32) -> String? { s.columnType(i) == SQLITE_NULL ? nil : s.text(i) }
            if count > 1, s.columnType(5) != SQLITE_NULL || s.columnType(6) != SQLITE_NULL || s.columnType(7) != SQLITE_NULL {
                throw StrataError(.corrupt, "the store's history has a change of \(count) objects with values (transaction \(token); "
                                  + "a change with values describes one object)")
            }
            var attributes: [Int64] = []
            if let list = text(4) {
                guard let numbers = SQLiteHistory.integers(list) else {
                    throw StrataError(.corrupt, "the store's history has changed attributes that are not a JSON array of name numbers (transaction \(token))")
                }
                attributes = numbers
            }
            var keys: [Int64]?
            if let list = text(8) {
                guard let numbers = SQLiteHistory.integers(list), numbers.count == Int(count) else {
                    throw StrataError(.corrupt, "the store's history has a key list that is not a JSON array of \(count) integer keys (transaction \(token))")
                }
                keys = numbers
            }
            out.append(HistoryChangeRow(kind: kind, entity: s.int64(1), pk: pk, count: count, keys: keys, attributes: attributes,
                                        tombstone: text(5), old: text(6), new: text(7)))
        }
        return out
    }

    func explain(_ query: HistoryQuery) throws -> [UInt8] {
        guard try session.storeKeepsHistory() else { return ExplainedQuery.nothing }
        let (sql, args) = select(query)
        return try connection.explainJSON(sql, args)
    }
}

/// JSON arrays of integers, as history rows keep name numbers and keys.
enum SQLiteHistory {
    static func jsonArray(_ numbers: [Int64]) -> SQLValue { SQLValue.jsonArray(numbers.map(SQLValue.int)) }

    /// The integers of a JSON array, or nil when the text is not one.
    static func integers(_ text: String) -> [Int64]? {
        guard case .array(let items)? = try? JSONValue.parse(text) else { return nil }
        var out: [Int64] = []
        out.reserveCapacity(items.count)
        for i in items {
            guard case .number(let n) = i, let v = Int64(n) else { return nil }
            out.append(v)
        }
        return out
    }
}

/// A history filter as a SQL condition over `strata_history_transaction t`, every value bound.
///
/// Kept as flat as the predicate compiler keeps fetch predicates (SQLite's parser holds
/// at most 100 pending symbols): `NOT` takes no parentheses, the deepest part of an
/// `AND`/`OR` comes first, and long lists nest as a balanced tree of at most
/// ``Junction/flatTerms`` terms per level. ``depth(_:)`` bounds what a filter needs;
/// the history's requests are refused (`.invalid`) past ``maxDepth`` or ``maxParameters``.
struct SQLiteHistoryFilter {
    var args: [SQLValue] = []

    /// Parser stack a filter may take: the statements around it (a select after a token,
    /// a delete's subquery) take the rest of SQLite's 100.
    static let maxDepth = 78
    /// Values one filter may bind (SQLite's default limit is 32,766).
    static let maxParameters = 30_000

    /// Why SQLite cannot run `f` in one statement, or nil when it can.
    static func problem(_ f: HistoryFilter) -> String? {
        let parameters = f.parameterCount
        if parameters > maxParameters {
            return "predicate too large: it compares with \(parameters) values, at most \(maxParameters) (a list given to 'in' counts as one)"
        }
        if depth(f) > maxDepth {
            return "predicate nested too deeply: it exceeds the nesting SQLite can parse (about 70 levels of alternating !, && and ||, "
                + "about 60 inside changes.contains { })"
        }
        return nil
    }

    private mutating func bind(_ v: HistoryFieldValue) -> String {
        args.append(v.sqlValue)
        return "?"
    }

    /// `expression IN` the values, bound as one JSON array.
    private mutating func inList(_ expression: String, _ values: [SQLValue]) -> String {
        args.append(SQLValue.jsonArray(values))
        return SQLiteDialect().inJSONArray(expression, parameter: "?")
    }

    mutating func condition(_ f: HistoryFilter) -> String {
        switch f {
        case .constant(let b): return b ? "1" : "0"
        case .and(let parts): return parts.isEmpty ? "1" : junction(parts, "AND", depth: SQLiteHistoryFilter.depth) { $0.condition($1) }
        case .or(let parts): return parts.isEmpty ? "0" : junction(parts, "OR", depth: SQLiteHistoryFilter.depth) { $0.condition($1) }
        case .not(let inner): return "NOT " + condition(inner)
        case .compare(let field, let op, let value):
            let column = SQLiteDialect.historyColumn(field)
            switch op {
            case .equal: return "(\(column) IS \(bind(value)))"
            case .notEqual: return "(\(column) IS NOT \(bind(value)))"
            default: return "(\(column) \(op.rawValue) \(bind(value)))"
            }
        case .isIn(let field, let values):
            let column = SQLiteDialect.historyColumn(field)
            let test = inList(column, values.filter { $0 != .null }.map(\.sqlValue))
            return values.contains(.null) ? "(\(test) OR \(column) IS NULL)" : "(\(test))"
        case .changes(let all, let test):
            // The innermost condition first in the subquery's WHERE.
            let inner = entityCondition(test)
            return all ? "NOT EXISTS (SELECT 1 FROM json_each(t.entities) e WHERE NOT \(inner))"
                : "EXISTS (SELECT 1 FROM json_each(t.entities) e WHERE \(inner))"
        }
    }

    private mutating func entityCondition(_ test: HistoryEntityTest) -> String {
        switch test {
        case .constant(let b): return b ? "1" : "0"
        case .isIn(let ids): return "(" + inList("e.value", ids.map(SQLValue.int)) + ")"
        case .and(let parts): return parts.isEmpty ? "1" : junction(parts, "AND", depth: SQLiteHistoryFilter.depth) { $0.entityCondition($1) }
        case .or(let parts): return parts.isEmpty ? "0" : junction(parts, "OR", depth: SQLiteHistoryFilter.depth) { $0.entityCondition($1) }
        case .not(let inner): return "NOT " + entityCondition(inner)
        }
    }

    /// `(a AND b AND …)`, the part with the deepest SQL first, as a balanced tree.
    private mutating func junction<Part>(_ parts: [Part], _ op: String, depth: (Part) -> Int,
                                         _ compile: (inout SQLiteHistoryFilter, Part) -> String) -> String {
        var ordered = parts
        if let deepest = parts.indices.max(by: { depth(parts[$0]) < depth(parts[$1]) }), deepest != 0 { ordered.swapAt(0, deepest) }
        var terms: [String] = []
        terms.reserveCapacity(ordered.count)
        for part in ordered { terms.append(compile(&self, part)) }
        return Junction.balanced(terms, op)
    }

    // MARK: Limits

    /// The parser stack the SQL of `f` takes, in ``PredicateCompiler/depth(_:safe:)``'s units.
    static func depth(_ f: HistoryFilter) -> Int {
        switch f {
        case .constant: return 3
        case .and(let parts), .or(let parts): return Junction.depth(parts.map(depth))
        case .not(let inner): return 1 + depth(inner)
        // `(column op ?)`
        case .compare: return 5
        // `(column IN (SELECT value FROM json_each(?)))`, maybe `OR column IS NULL`.
        case .isIn(_, let values): return values.contains(.null) ? 20 : 17
        // `EXISTS (SELECT 1 FROM json_each(t.entities) e WHERE [NOT] …)`
        case .changes(_, let test): return 10 + depth(test)
        }
    }

    static func depth(_ t: HistoryEntityTest) -> Int {
        switch t {
        case .constant: return 3
        case .isIn: return 17
        case .and(let parts), .or(let parts): return Junction.depth(parts.map(depth))
        case .not(let inner): return 1 + depth(inner)
        }
    }
}
