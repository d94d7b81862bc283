/// SQL of persistent history: three tables beside the entity tables.
///
/// - `strata_history_name`: number → (entity, property) names; a migration renames
///   rows here, so older history reads under the new names.
/// - `strata_history_transaction`: one row per recorded save; `token` is an
///   AUTOINCREMENT key, so a sequence is never given twice, not even after pruning.
/// - `strata_history_change`: the changes of each transaction, clustered by token.
extension SQLiteDialect {
    /// The three tables, as `sqlite_master` keeps their text (`CREATE TABLE name (…)`).
    static let historyTables: [(name: String, sql: String)] = [
        ("strata_history_name", "CREATE TABLE strata_history_name (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, "
            + "property TEXT NOT NULL DEFAULT '', live INTEGER NOT NULL DEFAULT 1)"),
        ("strata_history_transaction", "CREATE TABLE strata_history_transaction (token INTEGER PRIMARY KEY AUTOINCREMENT, "
            + "timestamp REAL NOT NULL, author TEXT, context TEXT, entities TEXT NOT NULL, origin TEXT, unrecorded INTEGER NOT NULL DEFAULT 0)"),
        ("strata_history_change", "CREATE TABLE strata_history_change (token INTEGER NOT NULL, n INTEGER NOT NULL, kind INTEGER NOT NULL, "
            + "entity INTEGER NOT NULL, pk INTEGER NOT NULL, count INTEGER NOT NULL, keys TEXT, attributes TEXT, tombstone TEXT, "
            + "old TEXT, new TEXT, PRIMARY KEY (token, n)) WITHOUT ROWID"),
    ]
    static let historyDDL = [
        historyTables[0].sql,
        "CREATE UNIQUE INDEX strata_history_name_live ON strata_history_name (entity, property) WHERE live",
        historyTables[1].sql,
        "CREATE INDEX strata_history_transaction_timestamp ON strata_history_transaction (timestamp)",
        historyTables[2].sql,
    ]
    /// The schema objects named as the history's tables, whatever their type: (type, name, sql).
    static let historyObjects = "SELECT type, name, sql FROM sqlite_master WHERE name IN "
        + "('strata_history_name', 'strata_history_transaction', 'strata_history_change')"

    static let historyNameID = "SELECT id FROM strata_history_name WHERE entity = ?1 AND property = ?2 AND live"
    static let historyAddName = "INSERT INTO strata_history_name (entity, property) VALUES (?1, ?2) RETURNING id"
    static let historyNames = "SELECT id, entity, property FROM strata_history_name"
    static let historyLiveNames = "SELECT id, entity, property FROM strata_history_name WHERE live"
    static let historyRetireName = "UPDATE strata_history_name SET live = 0 WHERE id = ?1"
    static let historyRename = "UPDATE strata_history_name SET entity = ?2, property = ?3, live = 1 WHERE id = ?1"

    static let historyAppend = "INSERT INTO strata_history_transaction (timestamp, author, context, entities, origin, unrecorded) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING token"
    static let historyAppendChange = "INSERT INTO strata_history_change (token, n, kind, entity, pk, count, keys, attributes, tombstone, old, new) "
        + "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    static let historyChanges = "SELECT kind, entity, pk, count, attributes, tombstone, old, new, keys FROM strata_history_change WHERE token = ?1 ORDER BY n"

    /// The newest token ever given (AUTOINCREMENT keeps it after pruning).
    static let historyLatest = "SELECT seq FROM sqlite_sequence WHERE name = 'strata_history_transaction'"
    static let historyNewestToken = "SELECT max(token) FROM strata_history_transaction"
    /// Takes token `?1` for a save history does not record (no row: it reads as deleted).
    static let historyCompleteFromKey = "historyCompleteFrom"
    /// Raises the first complete token to `?1` (never lowers it).
    static let historyRaiseCompleteFrom = "INSERT INTO strata_metadata (key, value) VALUES ('historyCompleteFrom', ?1) "
        + "ON CONFLICT(key) DO UPDATE SET value = max(coalesce(value, 0), excluded.value)"

    static let historyTransactionColumns = "t.token, t.timestamp, t.author, t.context, t.entities, t.origin, t.unrecorded"

    static func historySelect(where condition: String, orderBy: String, limit: String?) -> String {
        "SELECT \(historyTransactionColumns) FROM strata_history_transaction t WHERE \(condition) ORDER BY \(orderBy)"
            + (limit.map { " LIMIT \($0)" } ?? "")
    }

    static func historyDeleteChanges(where condition: String) -> String {
        "DELETE FROM strata_history_change WHERE token IN (SELECT t.token FROM strata_history_transaction t WHERE \(condition))"
    }

    static func historyNewestMatching(where condition: String) -> String {
        "SELECT max(t.token) FROM strata_history_transaction t WHERE \(condition)"
    }

    static func historyDeleteTransactions(where condition: String) -> String {
        "DELETE FROM strata_history_transaction WHERE token IN (SELECT t.token FROM strata_history_transaction t WHERE \(condition))"
    }

    static func historyColumn(_ f: HistoryField) -> String {
        switch f {
        case .sequence: return "t.token"
        case .timestamp: return "t.timestamp"
        case .author: return "t.author"
        case .contextName: return "t.context"
        }
    }
}
