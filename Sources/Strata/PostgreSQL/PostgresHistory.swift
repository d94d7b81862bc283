/// Persistent history on PostgreSQL (`PostgresDialect+History.swift` has the SQL): the same
/// transactions, changes, names, tokens and expiry as on SQLite, for writers on any number
/// of connections and hosts.
///
/// Tokens are given in commit order (see `PostgresDialect.historyAppend`): the history
/// participant runs last in a save's transaction, and its one statement takes the next
/// number from the counter row, whose lock is held until COMMIT. A reader that has seen
/// token n has seen every transaction numbered below it, and a later read after n finds
/// every transaction committed since, each once.
///
/// The tables are made by the first recorded save, in a transaction of their own on another
/// connection (a save that fails leaves them empty, which reads as no history: the store
/// keeps history once a save was recorded, its counter above 0). Everything read back is
/// checked: a damaged history is `.corrupt`.
extension PostgresSession: HistoryStorage {
    /// The tag of the store's UUID; inside a migration (before the store read its UUID) read
    /// from the metadata. A store without one tags its tokens "0".
    public var historyStoreTag: String {
        var uuid = pgStore.storeUUID
        if uuid.isEmpty, case .text(let stored)? = locked({ try? connection.scalar(PostgresDialect.readMetadata, [.text("storeUUID")]) }) {
            uuid = stored
        }
        return HistoryName.storeTag(uuid)
    }

    /// Whether the store has its history tables (each as Strata makes them, else `.corrupt`):
    /// checked by every call but a recorded save's, whose statements use every table and column.
    func historyTablesPresent() throws -> Bool {
        guard try PostgresHistoryTables.check(connection) else { return false }
        pgStore.historyTables.markSeen()
        return true
    }

    /// Makes the history tables when the store has none, committed on a connection of their
    /// own under a transaction lock (two first saves make them once): the saving transaction,
    /// at READ COMMITTED, sees them in its next statement. Once seen, a save does not look for
    /// them again: a table or column gone since fails its statements, as damage.
    private func ensureHistoryTables() throws {
        if pgStore.historyTables.seen { return }
        if try historyTablesPresent() { return }
        let side = try pgStore.connect()
        try side.execute(script: "BEGIN")
        do {
            try side.execute(PostgresDialect.historyCreationLock)
            if try !PostgresHistoryTables.check(side) {
                for sql in PostgresDialect.historyDDL { try side.execute(script: sql) }
            }
            try side.execute(script: "COMMIT")
        } catch {
            _ = try? side.execute(script: "ROLLBACK")
            throw error
        }
        pgStore.historyTables.markSeen()
    }

    public func historyNameIDs(_ names: [HistoryName]) throws -> [Int64] {
        try locked {
            try PostgresHistory.damaged {
                try ensureHistoryTables()
                if names.isEmpty { return [] }
                var ids = [Int64?](repeating: nil, count: names.count)
                func lookUp() throws {
                    let rows = try connection.query(PostgresDialect.historyNameIDs, [PostgresDialect.nameArray(names.map(\.entity)),
                                                                                     PostgresDialect.nameArray(names.map(\.property))])
                    for r in 0..<rows.count {
                        let i = Int(rows.int64(r, 0)) - 1
                        if ids.indices.contains(i) { ids[i] = rows.int64(r, 1) }
                    }
                }
                try lookUp()
                let missing = names.indices.filter { ids[$0] == nil }
                if !missing.isEmpty {
                    try connection.execute(PostgresDialect.historyAddNames, [PostgresDialect.nameArray(missing.map { names[$0].entity }),
                                                                             PostgresDialect.nameArray(missing.map { names[$0].property })])
                    try lookUp()
                }
                return try ids.map { id in
                    guard let id else { throw StrataError(.corrupt, "the store's history tables are damaged: a new name was given no number") }
                    return id
                }
            }
        }
    }

    public func appendHistory(_ t: HistoryTransactionRow, changes: [HistoryChangeRow]) throws -> Int64 {
        try locked {
            try PostgresHistory.damaged {
                guard let token = try append(t, changes: changes, unrecorded: false) else {
                    throw StrataError(.corrupt, "the store's history tables are damaged: the counter row (strata_history_counter) is missing")
                }
                return token
            }
        }
    }

    public func noteUnrecordedSave(_ t: HistoryTransactionRow) throws -> Int64? {
        try locked {
            try PostgresHistory.damaged {
                guard try historyTablesPresent() else { return nil }
                var marker = t
                marker.entities = []
                if let token = try append(marker, changes: [], unrecorded: true) { return token }
                // No row: the store never recorded a save (the counter at 0), or the counter row is gone.
                guard try connection.scalar(PostgresDialect.historyBounds) != nil else {
                    throw StrataError(.corrupt, "the store's history tables are damaged: the counter row (strata_history_counter) is missing")
                }
                return nil
            }
        }
    }

    /// The save's history in one statement (the save's last before COMMIT); nil when it
    /// wrote nothing (no counter row, or for `unrecorded`, a store that never recorded a save).
    private func append(_ t: HistoryTransactionRow, changes: [HistoryChangeRow], unrecorded: Bool) throws -> Int64? {
        let args: [SQLValue] = [.double(t.timestamp), t.author.map(SQLValue.text) ?? .null, t.contextName.map(SQLValue.text) ?? .null,
                                PostgresDialect.keyArray(t.entities), t.origin.map(SQLValue.text) ?? .null, .int(unrecorded ? 1 : 0),
                                .text(PostgresHistory.changesJSON(changes))]
        let rows: PGRows
        do {
            rows = try connection.query(PostgresDialect.historyAppend(unrecorded: unrecorded), args)
        } catch let e as StrataError where e.postgresState == "22003" {
            throw StrataError(.corrupt, "the store's history sequence (strata_history_counter) is at its largest value, \(Int64.max): "
                              + "no token is left for this save (the store was edited: a store gives one token per save)")
        }
        guard rows.count > 0 else { return nil }
        let token = rows.int64(0, 0)
        guard token > 0 else { throw StrataError(.corrupt, "the store's history tables are damaged: a recorded save was given token \(token)") }
        return token
    }

    public func readHistory<T>(_ body: (HistorySnapshot) throws -> T) throws -> T {
        try read(nil) {
            try PostgresHistory.damaged { try body(PostgresHistorySnapshot(self, present: try historyTablesPresent())) }
        }
    }

    public func deleteHistory(_ select: (HistorySnapshot) throws -> HistoryFilter) throws -> Int64 {
        try locked {
            let nested = connection.isInTransaction
            var attempt = 0
            while true {
                // Inside a transaction (a migration stage's hooks): part of it, in a savepoint.
                try connection.execute(script: nested ? "SAVEPOINT strata_delete_history" : "BEGIN")
                do {
                    let deleted = try PostgresHistory.damaged { () throws -> Int64 in
                        if !nested && watchesVersion { try checkStoredVersion(lock: true) }
                        guard try historyTablesPresent() else { return 0 }
                        var sql = PostgresHistoryFilter()
                        let condition = sql.condition(try select(PostgresHistorySnapshot(self, present: true)))
                        // One statement, one snapshot: the newest deleted is the newest of those deleted.
                        let rows = try connection.query(PostgresDialect.historyDelete(where: condition), sql.args)
                        guard rows.count > 0, !rows.isNull(0, 1) else { return 0 }
                        try connection.execute(PostgresDialect.historyRaiseCompleteFrom, [.int(rows.int64(0, 1))])
                        return rows.int64(0, 0)
                    }
                    try connection.execute(script: nested ? "RELEASE SAVEPOINT strata_delete_history" : "COMMIT")
                    return deleted
                } catch {
                    if nested {
                        _ = try? connection.execute(script: "ROLLBACK TO SAVEPOINT strata_delete_history")
                        _ = try? connection.execute(script: "RELEASE SAVEPOINT strata_delete_history")
                    } else if connection.isInTransaction {
                        _ = try? connection.execute(script: "ROLLBACK")
                    }
                    if !nested, attempt < PostgresSession.retries, PostgresSession.isRetryable(error) {
                        attempt += 1
                        continue
                    }
                    throw PostgresSession.finalError(error)
                }
            }
        }
    }

    public func historyFilterProblem(_ filter: HistoryFilter) -> String? { PostgresHistoryFilter.problem(filter) }
}

/// What the store knows of its history tables: seen (as Strata makes them) once, they stay.
final class PostgresHistoryTables: @unchecked Sendable {
    private let lock = Lock()
    private var isSeen = false
    var seen: Bool { lock.withLock { isSeen } }
    func markSeen() { lock.withLock { isSeen = true } }

    /// Whether the current schema has the history tables: none (no save was recorded) or all
    /// four, tables with Strata's columns and types; anything else is `.corrupt`.
    static func check(_ c: PGConnection) throws -> Bool {
        let rows = try c.query(PostgresDialect.historyObjects)
        if rows.count == 0 { return false }
        var found: [String: (kind: String, columns: [(String, String)])] = [:]
        for r in 0..<rows.count {
            let name = rows.string(r, 0)
            var entry = found[name] ?? (rows.string(r, 1), [])
            if !rows.isNull(r, 2) { entry.columns.append((rows.string(r, 2), rows.string(r, 3))) }
            found[name] = entry
        }
        try verify(found.mapValues { $0.kind == "r" ? $0.columns : nil }) { what in
            StrataError(.corrupt, "the store's history tables are damaged: " + what)
        }
        return true
    }

    /// Checks the history tables among a schema's tables (name → columns and types, nil for an
    /// object that is not a table): none or all, each with exactly Strata's columns.
    static func verify(_ found: [String: [(String, String)]?], _ damaged: (String) -> StrataError) throws {
        let present = PostgresDialect.historyTableNames.filter { found[$0] != nil }
        if present.isEmpty { return }
        for name in PostgresDialect.historyTableNames {
            guard let entry = found[name] else { throw damaged("table '\(name)' is missing") }
            guard let columns = entry else { throw damaged("'\(name)' is not a table") }
            let want = PostgresDialect.historyColumns[name] ?? []
            guard columns.count == want.count, zip(columns, want).allSatisfy({ $0.0 == $1.name && $0.1 == $1.type }) else {
                throw damaged("'\(name)' is not the table Strata made (columns \(columns.map { "\($0.0) \($0.1)" }.joined(separator: ", ")); "
                              + "Strata makes \(want.map { "\($0.name) \($0.type)" }.joined(separator: ", ")))")
            }
        }
    }
}

/// A migration's renames in the history's name table (the PostgreSQL store's migration calls
/// it inside the stage's transaction, after changing the tables): every current name follows
/// its entity or property into the new schema (`HistoryName.successor(in:)`), or retires,
/// keeping its old name, when the new schema has none. Older history then reads under the
/// new names.
enum PostgresHistoryNames {
    static func rename(_ c: PGConnection, _ mapping: SchemaMapping) throws {
        try PostgresHistory.damaged {
            guard try PostgresHistoryTables.check(c) else { return }
            let rows = try c.query(PostgresDialect.historyLiveNames)
            var moves: [(Int64, HistoryName?)] = []
            for r in 0..<rows.count {
                let name = HistoryName(entity: rows.string(r, 1), property: rows.string(r, 2))
                let next = name.successor(in: mapping)
                if next != name { moves.append((rows.int64(r, 0), next)) }
            }
            // Retire every moving name first, so that two names may swap.
            for (id, _) in moves { try c.execute(PostgresDialect.historyRetireName, [.int(id)]) }
            for case let (id, next?) in moves { try c.execute(PostgresDialect.historyRename, [.int(id), .text(next.entity), .text(next.property)]) }
        }
    }
}

/// One read of the history, on the session's snapshot (inside `read`).
struct PostgresHistorySnapshot: HistorySnapshot {
    let session: PostgresSession
    /// Whether the store has its history tables (none: no history).
    let present: Bool
    init(_ session: PostgresSession, present: Bool) { self.session = session; self.present = present }
    var connection: PGConnection { session.connection }

    func names() throws -> HistoryNameTable {
        var table = HistoryNameTable()
        guard present else { return table }
        let rows = try connection.query(PostgresDialect.historyNames)
        for r in 0..<rows.count { table.byID[rows.int64(r, 0)] = HistoryName(entity: rows.string(r, 1), property: rows.string(r, 2)) }
        return table
    }

    func bounds() throws -> (latest: Int64, completeFrom: Int64) {
        guard present else { return (0, 0) }
        let rows = try connection.query(PostgresDialect.historyBounds)
        guard rows.count > 0 else {
            throw StrataError(.corrupt, "the store's history tables are damaged: the counter row (strata_history_counter) is missing")
        }
        let latest = rows.int64(0, 0)
        guard latest >= 0 else { throw StrataError(.corrupt, "the store's history sequence (strata_history_counter) is negative") }
        return (latest, rows.int64(0, 1))
    }

    private func select(_ query: HistoryQuery) -> (String, [SQLValue]) {
        var sql = PostgresHistoryFilter()
        let condition = sql.condition(query.filter)
        var order: [String] = []
        for (field, ascending) in query.sort {
            let column = PostgresDialect.historyColumn(field)
            switch field {
            // Never null: in the index's order, which it reads from either end.
            case .sequence, .timestamp: order.append(column + (ascending ? " ASC" : " DESC"))
            // Nulls first, as SQLite sorts them.
            case .author, .contextName: order.append(session.dialect.sortTerm(column, descending: !ascending))
            }
        }
        if query.sort.first?.field != .sequence { order.append("t.token ASC") }
        var limit: String?
        if let n = query.limit {
            sql.args.append(.int(n))
            limit = "$\(sql.args.count)"
        }
        return (PostgresDialect.historySelect(where: condition, orderBy: order.joined(separator: ", "), limit: limit), sql.args)
    }

    func transactions(_ query: HistoryQuery, _ each: (HistoryTransactionRow, [HistoryChangeRow]) throws -> Void) throws {
        guard present else { return }
        let (sql, args) = select(query)
        let rows = try connection.query(sql, args)
        var list: [HistoryTransactionRow] = []
        list.reserveCapacity(Int(rows.count))
        for r in 0..<rows.count {
            let token = rows.int64(r, 0)
            guard token > 0 else { throw StrataError(.corrupt, "the store's history has a transaction numbered \(token) (tokens start at 1)") }
            let timestamp = rows.double(r, 1)
            guard timestamp.isFinite else {
                throw StrataError(.corrupt, "the store's history has a transaction whose timestamp is not a number (transaction \(token))")
            }
            func text(_ c: Int32) -> String? { rows.isNull(r, c) ? nil : rows.string(r, c) }
            // (The entity numbers are read by the SQL filters only.)
            list.append(HistoryTransactionRow(sequence: token, timestamp: timestamp, author: text(2), contextName: text(3), entities: [],
                                              origin: text(4), unrecorded: !rows.isNull(r, 5) && rows.int64(r, 5) != 0))
        }
        var changes: [Int64: [HistoryChangeRow]] = [:]
        var start = 0
        while start < list.count {
            let end = min(start + PostgresHistory.tokensPerRead, list.count)
            try self.changes(list[start..<end].map(\.sequence), into: &changes)
            start = end
        }
        for t in list { try each(t, changes[t.sequence] ?? []) }
    }

    /// The change rows of `tokens`, checked as SQLite's are: what the recorder writes, or `.corrupt`.
    private func changes(_ tokens: [Int64], into out: inout [Int64: [HistoryChangeRow]]) throws {
        let rows = try connection.query(PostgresDialect.historyChanges, [PostgresDialect.keyArray(tokens)])
        for r in 0..<rows.count {
            let token = rows.int64(r, 0)
            guard let kind = HistoryChangeRow.Kind(rawValue: rows.int64(r, 1)), !rows.isNull(r, 1) else {
                throw StrataError(.corrupt, "the store's history has a change of unknown kind \(rows.int64(r, 1)) (transaction \(token))")
            }
            guard !rows.isNull(r, 2), !rows.isNull(r, 3), !rows.isNull(r, 4) else {
                throw StrataError(.corrupt, "the store's history has a change without its entity, key or count (transaction \(token))")
            }
            // A row describes at most `maxObjects` objects, and one when it holds values; a run
            // without a list of keys ends at the largest key or before.
            let pk = rows.int64(r, 3), count = rows.int64(r, 4)
            let listed = !rows.isNull(r, 9)
            guard count >= 1, count <= HistoryChangeRow.maxObjects, listed || pk <= Int64.max - (count - 1) else {
                throw StrataError(.corrupt, "the store's history has a change run of \(count) objects from key \(pk) (transaction \(token); "
                                  + "a change row describes 1 to \(HistoryChangeRow.maxObjects) objects)")
            }
            func text(_ c: Int32) -> String? { rows.isNull(r, c) ? nil : rows.string(r, c) }
            if count > 1, !rows.isNull(r, 6) || !rows.isNull(r, 7) || !rows.isNull(r, 8) {
                throw StrataError(.corrupt, "the store's history has a change of \(count) objects with values (transaction \(token); "
                                  + "a change with values describes one object)")
            }
            var attributes: [Int64] = []
            if !rows.isNull(r, 5) {
                guard let numbers = PostgresHistory.integers(rows, r, 5) else {
                    throw StrataError(.corrupt, "the store's history has changed attributes that are not a list of name numbers (transaction \(token))")
                }
                attributes = numbers
            }
            var keys: [Int64]?
            if listed {
                guard let numbers = PostgresHistory.integers(rows, r, 9), numbers.count == Int(count) else {
                    throw StrataError(.corrupt, "the store's history has a key list that is not a list of \(count) keys (transaction \(token))")
                }
                keys = numbers
            }
            out[token, default: []].append(HistoryChangeRow(kind: kind, entity: rows.int64(r, 2), pk: pk, count: count, keys: keys,
                                                            attributes: attributes, tombstone: text(6), old: text(7), new: text(8)))
        }
    }

    /// The SQL of a request, its parameter count and PostgreSQL's plan (EXPLAIN's lines), as JSON.
    func explain(_ query: HistoryQuery) throws -> [UInt8] {
        guard present else { return ExplainedQuery.nothing }
        let (sql, args) = select(query)
        return try connection.explainJSON(sql, args)
    }
}

enum PostgresHistory {
    /// Transactions whose changes one statement reads.
    static let tokensPerRead = 1_000

    /// Runs `body`; errors PostgreSQL raises on the history tables once they were found as
    /// Strata makes them (a value out of range, a broken key or constraint, a column or table
    /// gone since) mean a damaged store, not a bug. Conflicts, read-only refusals and lost
    /// connections stay what they are.
    static func damaged<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch var e as StrataError where (e.code == .internal || e.code == .constraint)
            && ["22", "23", "42"].contains(e.postgresState?.prefix(2) ?? "") && e.postgresState != "42501" {
            e.code = .corrupt
            e.message = "the store's history tables are damaged: " + e.message
            throw e
        }
    }

    /// The change rows as the JSON records `historyAppend` inserts (`$7`).
    static func changesJSON(_ changes: [HistoryChangeRow]) -> String {
        var w = JSONWriter()
        w.beginArray()
        for (n, c) in changes.enumerated() {
            w.beginObject()
            w.key("n"); w.int(Int64(n))
            w.key("kind"); w.int(c.kind.rawValue)
            w.key("entity"); w.int(c.entity)
            w.key("pk"); w.int(c.pk)
            w.key("count"); w.int(c.count)
            if let keys = c.keys { w.key("keys"); w.beginArray(); for k in keys { w.int(k) }; w.endArray() }
            if !c.attributes.isEmpty { w.key("attributes"); w.beginArray(); for a in c.attributes { w.int(a) }; w.endArray() }
            if let t = c.tombstone { w.key("tombstone"); w.string(t) }
            if let o = c.old { w.key("old"); w.string(o) }
            if let v = c.new { w.key("new"); w.string(v) }
            w.endObject()
        }
        w.endArray()
        return w.string
    }

    /// The elements of a one-dimensional `bigint[]` without nulls (binary format: dimensions,
    /// null flag, element type, per dimension its length and lower bound, then each element's
    /// length and bytes); nil for anything else.
    static func integers(_ rows: PGRows, _ r: Int32, _ c: Int32) -> [Int64]? {
        guard rows.types[Int(c)] == 1016 else { return nil }  // int8[]
        let b = rows.bytes(r, c)
        func int32(_ at: Int) -> Int32? {
            guard at >= 0, at + 4 <= b.count else { return nil }
            return Int32(bigEndian: b.loadUnaligned(fromByteOffset: at, as: Int32.self))
        }
        guard let dimensions = int32(0) else { return nil }
        if dimensions == 0 { return [] }
        guard dimensions == 1, let elementType = int32(8), elementType == 20, let length = int32(12), length >= 0 else { return nil }
        var out: [Int64] = []
        out.reserveCapacity(Int(length))
        var at = 20
        for _ in 0..<length {
            guard let size = int32(at), size == 8, at + 12 <= b.count else { return nil }
            out.append(Int64(bigEndian: b.loadUnaligned(fromByteOffset: at + 4, as: Int64.self)))
            at += 12
        }
        return at == b.count ? out : nil
    }
}
