/// The one place SQL text is generated from a schema (DDL and the statements
/// the store reuses). A PostgreSQL store would provide its own dialect.
protocol SQLDialect {
    func quote(_ identifier: String) -> String
    func createTable(for root: Entity) -> String
    func createIndexes(for root: Entity) -> [String]
    func createJoinTable(_ table: String) -> [String]
}

struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { "\"" + identifier + "\"" }

    /// Every column of a hierarchy's table: root attributes first, then each subentity's.
    func columns(of root: Entity) -> [(name: String, type: String)] {
        var cols: [(String, String)] = []
        for e in root.descendants {
            for a in e.ownAttributes where !a.isTransient { cols.append((a.name, a.type.columnType)) }
            for r in e.ownRelationships {
                if let c = r.foreignKeyColumn { cols.append((c, "INTEGER")) }
            }
        }
        return cols
    }

    func createTable(for root: Entity) -> String {
        var parts = ["\(quote("_pk")) INTEGER PRIMARY KEY", "\(quote("_entity")) TEXT NOT NULL"]
        for (name, type) in columns(of: root) { parts.append("\(quote(name)) \(type)") }
        return "CREATE TABLE \(quote(root.name)) (\n  " + parts.joined(separator: ",\n  ") + "\n)"
    }

    func createIndexes(for root: Entity) -> [String] {
        var out: [String] = []
        var seen: Set<String> = []
        func add(_ kind: String, _ cols: [String]) {
            let key = kind + ":" + cols.joined(separator: ",")
            // A plain index on exactly the columns of a unique index would only cost writes.
            guard !seen.contains(key), !(kind != "unique" && seen.contains("unique:" + cols.joined(separator: ","))) else { return }
            seen.insert(key)
            let name = SQLiteDialect.indexName(root.name, kind, cols)
            let unique = kind == "unique" ? "UNIQUE " : ""
            out.append("CREATE \(unique)INDEX \(quote(name)) ON \(quote(root.name)) (\(cols.map(quote).joined(separator: ", ")))")
        }
        if root.isInHierarchy { add("index", ["_entity"]) }
        for e in root.descendants {
            for a in e.ownAttributes where a.isUnique { add("unique", [a.name]) }
            for u in e.uniqueConstraints { add("unique", u.map { e.relationshipByName[$0]?.foreignKeyColumn ?? $0 }) }
        }
        for e in root.descendants {
            for a in e.ownAttributes where a.isIndexed && !a.isUnique { add("index", [a.name]) }
            for i in e.indexes { add("index", i.map { e.relationshipByName[$0]?.foreignKeyColumn ?? $0 }) }
            for r in e.ownRelationships { if let c = r.foreignKeyColumn { add("fk", [c]) } }
        }
        return out
    }

    func createJoinTable(_ table: String) -> [String] {
        ["CREATE TABLE \(quote(table)) (\(quote("_source")) INTEGER NOT NULL, \(quote("_target")) INTEGER NOT NULL, PRIMARY KEY (\(quote("_source")), \(quote("_target")))) WITHOUT ROWID",
         "CREATE INDEX \(quote(SQLiteDialect.indexName(table, "index", ["_target", "_source"]))) ON \(quote(table)) (\(quote("_target")), \(quote("_source")))"]
    }

    /// `Trip.unique(name,startDate,endDate)`: '.', '(' and ',' cannot occur in entity,
    /// attribute or relationship names, so a generated index name never collides with a
    /// table (entity or join table) or with another index.
    static func indexName(_ table: String, _ kind: String, _ columns: [String]) -> String {
        "\(table).\(kind)(\(columns.joined(separator: ",")))"
    }

    /// The complete DDL of a schema.
    func createSchema(_ schema: Schema) -> [String] {
        var out: [String] = []
        for root in schema.rootEntities {
            out.append(createTable(for: root))
            out += createIndexes(for: root)
        }
        for (table, _) in schema.joinTables { out += createJoinTable(table) }
        return out
    }

    static let metadataDDL = [
        "CREATE TABLE IF NOT EXISTS strata_metadata (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS strata_sequence (entity TEXT PRIMARY KEY, next INTEGER NOT NULL) WITHOUT ROWID",
    ]
}

// MARK: - Query spelling (predicate and fetch compilers)

extension SQLiteDialect: QueryDialect {
    func parameter(_ n: Int) -> String { "?\(n)" }
    func boolean(_ value: Bool) -> String { value ? "1" : "0" }

    /// (json_each cuts text at a NUL character: the compiler binds such lists value by value.)
    func inJSONArray(_ expression: String, parameter: String) -> String {
        "\(expression) IN (SELECT value FROM json_each(\(parameter)))"
    }

    func collate(_ expression: String, _ collation: Collation) -> String {
        switch collation {
        case .decimal: return "\(expression) COLLATE strata_decimal"
        case .standard: return "\(expression) COLLATE strata_standard"
        }
    }

    func fold(_ expression: String, options: Int) -> String { "strata_fold(\(expression), \(options))" }
    func localizedStandardContains(_ text: String, _ needle: String) -> String { "strata_lsc(\(text), \(needle))" }
    func length(_ expression: String) -> String { "strata_length(\(expression))" }

    // Prefix and suffix compare bytes (SQLite's text length() stops at a NUL character;
    // substr of an empty blob is NULL, hence the test for an empty needle).
    func contains(_ text: String, _ needle: String) -> String { "instr(\(text), \(needle)) > 0" }
    func hasPrefix(_ x: String, _ y: String) -> String {
        "(\(x) IS NOT NULL AND (length(CAST(\(y) AS BLOB)) = 0 OR substr(CAST(\(x) AS BLOB), 1, length(CAST(\(y) AS BLOB))) = CAST(\(y) AS BLOB)))"
    }
    func hasSuffix(_ x: String, _ y: String) -> String {
        "(\(x) IS NOT NULL AND (length(CAST(\(y) AS BLOB)) = 0 OR substr(CAST(\(x) AS BLOB), -length(CAST(\(y) AS BLOB))) = CAST(\(y) AS BLOB)))"
    }

    /// `coalesce(a, b, …)`, nested after every 100 arguments (SQLite takes at most 127).
    func coalesce(_ terms: [String]) -> String {
        if terms.count <= 100 { return "coalesce(" + terms.joined(separator: ", ") + ")" }
        return "coalesce(" + terms[0..<99].joined(separator: ", ") + ", " + coalesce(Array(terms[99...])) + ")"
    }

    func isSame(_ a: String, _ b: String) -> String { "\(a) IS \(b)" }
    func isNotSame(_ a: String, _ b: String) -> String { "\(a) IS NOT \(b)" }

    /// SQLite needs a LIMIT before an OFFSET: `LIMIT -1` is no limit.
    func limit(_ limit: String?, offset: String?) -> String {
        var sql = ""
        if let limit { sql = " LIMIT \(limit)" } else if offset != nil { sql = " LIMIT -1" }
        if let offset { sql += " OFFSET \(offset)" }
        return sql
    }
}
