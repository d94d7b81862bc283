/// The one place SQL text is spelled: queries (the compilers' `QueryDialect`),
/// DDL from a layout, and the statements the store reuses
/// (`Dialect+Statements.swift`). A PostgreSQL store would provide its own.
protocol SQLDialect: QueryDialect {
    func createSchema(_ layout: StoreLayout) -> [String]
}

struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { "\"" + identifier + "\"" }

    func createTable(_ t: StoreLayout.Table) -> String {
        var text = DDLText()
        createTable(t, into: &text)
        return text.text
    }

    /// `createTable(t)`, piece by piece into `out` (written, or compared with a stored definition).
    func createTable<Out: DDLOutput>(_ t: StoreLayout.Table, into out: inout Out) {
        out.put("CREATE TABLE "); quote(t.name, into: &out); out.put(" (\n  ")
        let rowidKey = t.primaryKey.count == 1 && !t.withoutRowID ? t.primaryKey[0] : nil
        for (n, c) in t.columns.enumerated() {
            if n > 0 { out.put(",\n  ") }
            quote(c.name, into: &out)
            if c.name == rowidKey { out.put(" INTEGER PRIMARY KEY") } else { out.put(" "); out.put(SQLiteDialect.columnType(c)) }
        }
        if t.primaryKey.count > 1 || t.withoutRowID {
            if !t.columns.isEmpty { out.put(",\n  ") }
            out.put("PRIMARY KEY (")
            quoteList(t.primaryKey, into: &out)
            out.put(")")
        }
        out.put("\n)")
        if t.withoutRowID { out.put(" WITHOUT ROWID") }
    }

    func createIndex(_ i: StoreLayout.Index, on table: String) -> String {
        var text = DDLText()
        createIndex(i, on: table, into: &text)
        return text.text
    }

    /// `createIndex(i, on: table)`, piece by piece into `out`.
    func createIndex<Out: DDLOutput>(_ i: StoreLayout.Index, on table: String, into out: inout Out) {
        out.put(i.isUnique ? "CREATE UNIQUE INDEX " : "CREATE INDEX "); quote(i.name, into: &out)
        out.put(" ON "); quote(table, into: &out); out.put(" (")
        quoteList(i.columns, into: &out)
        out.put(")")
    }

    private func quote<Out: DDLOutput>(_ identifier: String, into out: inout Out) {
        out.put("\""); out.put(identifier); out.put("\"")
    }

    /// The identifiers quoted, joined by ", ".
    private func quoteList<Out: DDLOutput>(_ identifiers: [String], into out: inout Out) {
        for (n, identifier) in identifiers.enumerated() {
            if n > 0 { out.put(", ") }
            quote(identifier, into: &out)
        }
    }

    /// SQLite's column type of what a column of the layout holds.
    static func columnType(_ c: StoreLayout.Column) -> String {
        switch c.content {
        case .key, .link: return "INTEGER"
        case .entityName: return "TEXT NOT NULL"
        case .pairEnd: return "INTEGER NOT NULL"
        case .value(let type):
            switch type {
            case .string, .uuid, .url, .decimal, .json: return "TEXT"
            case .int, .bool, .composite: return "INTEGER"
            case .double, .date: return "REAL"
            case .data: return "BLOB"
            }
        }
    }

    /// The complete DDL of a layout: each table, then its indexes and full-text tables.
    func createSchema(_ layout: StoreLayout) -> [String] {
        var out: [String] = []
        for t in layout.tables {
            out.append(createTable(t))
            for i in t.indexes { out.append(createIndex(i, on: t.name)) }
            for s in t.searchIndexes { out.append(SQLiteDialect.createSearchTable(s.name)) }
        }
        return out
    }

    // MARK: Full-text tables

    /// A searchable column's full-text table: FTS5 with its own content, one column `tokens`
    /// holding the value's tokens joined by spaces (``TextSearch``), its rowid the row's key. The
    /// `ascii` tokenizer splits at ASCII spaces and punctuation only, so it indexes exactly
    /// Strata's tokens. `StoredSchemaCheck` accepts exactly this declaration and its shadow tables.
    static func createSearchTable(_ name: String) -> String {
        "CREATE VIRTUAL TABLE \(q(name)) USING fts5(tokens, tokenize = 'ascii')"
    }

    /// The shadow tables FTS5 keeps for ``createSearchTable(_:)``, as SQLite records them.
    static func searchShadowTables(_ name: String) -> [(name: String, sql: String)] {
        // SQLite names each table with a string literal (``nameLiteral(_:)``: a quote doubled).
        let dialect = SQLiteDialect()
        return [("_data", "(id INTEGER PRIMARY KEY, block BLOB)"),
                ("_idx", "(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID"),
                ("_content", "(id INTEGER PRIMARY KEY, c0)"),
                ("_docsize", "(id INTEGER PRIMARY KEY, sz BLOB)"),
                ("_config", "(k PRIMARY KEY, v) WITHOUT ROWID")]
            .map { suffix, columns in (name + suffix, "CREATE TABLE " + dialect.nameLiteral(name + suffix) + columns) }
    }

    /// Fills a new full-text table from the column of its table.
    static func fillSearchTable(_ name: String, table: String, column: String) -> String {
        "INSERT INTO \(q(name)) (rowid, tokens) SELECT _pk, strata_index_text(\(q(column))) FROM \(q(table)) WHERE \(q(column)) IS NOT NULL"
    }
    /// The row `?1`'s entry: added with the text `?2`, removed.
    static func insertSearchRow(_ name: String) -> String { "INSERT INTO \(q(name)) (rowid, tokens) VALUES (?1, strata_index_text(?2))" }
    static func deleteSearchRow(_ name: String) -> String { "DELETE FROM \(q(name)) WHERE rowid = ?1" }
    /// ``insertSearchRow(_:)`` for a caller that computed the value's index text
    /// (``TextSearch/indexText(utf8:into:)``, what `strata_index_text` returns) and binds it as ?2.
    static func insertSearchTokens(_ name: String) -> String { "INSERT INTO \(q(name)) (rowid, tokens) VALUES (?1, ?2)" }
    /// The set forms: the keys are the JSON array ?1 (``SQLiteDialect/keyIn(_:)``).
    static func insertSearchRows(_ name: String) -> String {
        "INSERT INTO \(q(name)) (rowid, tokens) SELECT value, strata_index_text(?2) FROM json_each(?1)"
    }
    static func deleteSearchRows(_ name: String) -> String { "DELETE FROM \(q(name)) WHERE rowid IN (SELECT value FROM json_each(?1))" }

    /// Keys of rows the read overlay wrote with a searchable value: `matches` takes them as
    /// candidates beside its full-text table's (which holds the saved values only). A TEMP table
    /// a connection makes before its first transaction or its first statement reading it
    /// (`Connection.readsSearchPending`); empty but on the overlay, whose rollback empties it.
    static let searchPending = "temp.\"\(searchPendingName)\""
    /// The table's name, as every statement that reads or writes it spells it (quoted).
    static let searchPendingName = "strata.searchPending"
    static let createSearchPending = "CREATE TEMP TABLE IF NOT EXISTS \"\(searchPendingName)\" (_pk INTEGER PRIMARY KEY)"
    static let addSearchPending = "INSERT OR IGNORE INTO \(searchPending) (_pk) VALUES (?1)"
    static let addSearchPendingRows = "INSERT OR IGNORE INTO \(searchPending) (_pk) SELECT value FROM json_each(?1)"
}

// MARK: - Query spelling (predicate and fetch compilers)

extension SQLiteDialect: QueryDialect {
    func parameter(_ n: Int) -> String { "?\(n)" }
    /// Bare: `_pk` and `_entity` need no quotes (the layout's names, `StoreLayout`).
    var keyColumn: String { StoreLayout.key }
    var entityColumn: String { StoreLayout.entity }
    func concatenate(_ terms: [String]) -> String { terms.joined(separator: " || ") }
    /// group_concat keeps the order of its ordered subquery (SQLite does not flatten it into an aggregate).
    func joinedText(_ column: String) -> String { "group_concat(\(column), ',')" }

    func table(_ entity: Entity) -> String { StoreLayout.tableName(entity) }
    func column(_ slot: StoredColumn) -> String { StoreLayout.columnName(slot) }
    func pairTable(_ rel: Relationship) -> (table: String, ownerColumn: String, targetColumn: String) { StoreLayout.pairTable(rel) }
    func boolean(_ value: Bool) -> String { value ? "1" : "0" }
    func searchIndex(_ attribute: Attribute) -> String { StoreLayout.searchIndexName(attribute) }

    /// The keys the full-text table finds (a superset of the matching saved rows) and the rows the
    /// overlay wrote with a searchable value, each checked by `strata_matches`, which decides: an
    /// updated saved row whose old text the table still finds, and any written row, are answered
    /// as ``TextSearch`` answers.
    func matches(key: String, text: String, index: String, query: String) -> String {
        "\(key) IN (SELECT rowid FROM \(quote(index)) WHERE \(quote(index)) MATCH strata_fts_query(\(query))"
            + " UNION ALL SELECT _pk FROM \(SQLiteDialect.searchPending)) AND strata_matches(\(text), \(query))"
    }
    func truth(_ expression: String) -> String { expression }
    /// SQLite sorts NULL first ascending and last descending.
    func sortTerm(_ expression: String, descending: Bool) -> String { expression + (descending ? " DESC" : " ASC") }

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

    /// `min`/`max` take the collation of their argument: the stored text of the extreme value.
    func decimalExtreme(_ f: AggregateFunction, _ value: String) -> String { "\(f.rawValue)(\(collate(value, .decimal)))" }
    /// SQLite divides a REAL by an INTEGER in IEEE 754 doubles, and a division by NULL is NULL.
    func mean(sum: String, count: String, integer: Bool) -> String { "(CAST(\(sum) AS REAL) / NULLIF(\(count), 0))" }

    /// A collation on the left operand decides the comparison.
    func collatedOperand(_ expression: String, _ collation: Collation) -> String { expression }
    /// In the LIMIT: SQLite computes it once, and a WHERE term would cost `count(*)` its fast path.
    var checksInPaging: Bool { true }
    /// Per owner: a cached statement re-bound in process costs less than collecting a batch.
    func ownerBatch(_ owner: String, parameter: String) -> String? { nil }
    /// Per owner too (a fetch is no cursor of batches there).
    var readsPrefetchedOnce: Bool { false }
    /// A subquery per link: an entity may hold more links than SQLite joins tables.
    var joinsLinkedEntities: Bool { false }
    /// Bound: SQLite plans a statement once, whatever its LIMIT.
    var writesPaging: Bool { false }

    /// `coalesce(a, b, …)`, nested after every 100 arguments (SQLite takes at most 127).
    func coalesce(_ terms: [String]) -> String {
        if terms.count <= 100 { return "coalesce(" + terms.joined(separator: ", ") + ")" }
        return "coalesce(" + terms[0..<99].joined(separator: ", ") + ", " + coalesce(Array(terms[99...])) + ")"
    }

    func isSame(_ a: String, _ b: String) -> String { "\(a) IS \(b)" }
    func isNotSame(_ a: String, _ b: String) -> String { "\(a) IS NOT \(b)" }

    /// The entity search (``entitySearch(table:_:root:)``), run only when this connection has not
    /// found the hierarchy's rows clean on the file as it is: `strata_entities_known(k)` is true
    /// when a search of this connection found no row outside the hierarchy and the file's data
    /// version (``SQLFunctions``: changed by every commit, this connection's or another's) is the
    /// same; `strata_entities_checked(k, search)` notes a search that found none. A repeated read
    /// of an unchanged store searches once.
    func unknownEntity(table: String, _ entities: [String], root: String) -> String {
        let key = nameLiteral(Junction.binaryOrder(entities).joined(separator: " "))
        // A subquery of no table: SQLite runs it once per run of the statement (not per row) and keeps its answer.
        return "(SELECT CASE WHEN strata_entities_known(\(key)) THEN NULL ELSE strata_entities_checked(\(key), "
            + entitySearch(table: table, entities, root: root) + ") END)"
    }

    /// `(typeof(c) = 'integer' OR c IS NULL OR strata_damaged(…))`: typeof() reads the type from
    /// the record header without loading the value (SQLite's OPFLAG_TYPEOFARG); equalities with the
    /// likeliest class first measured a quarter cheaper than `typeof(c) IN (…)`.
    func storedAs(_ column: String, _ stored: StoredClass, entity: String, attribute: String, key: String) -> String {
        let classes: [String]
        switch stored {
        case .integer: classes = ["integer"]
        case .boolean: return "(\(column) IN (0, 1) OR \(column) IS NULL OR strata_damaged(\(entity), \(attribute), \(key)))"
        case .number: classes = ["real", "integer"]
        case .text: classes = ["text"]
        case .blob: classes = ["blob"]
        case .blobOrText: classes = ["blob", "text"]
        }
        let tests = classes.map { "typeof(\(column)) = '\($0)'" }.joined(separator: " OR ")
        return "(\(tests) OR \(column) IS NULL OR strata_damaged(\(entity), \(attribute), \(key)))"
    }

    /// `LIMIT coalesce(check, limit)`: SQLite computes a LIMIT once, before the first row (and a
    /// subquery there does not count as a fixed limit, so plans do not change); a WHERE term
    /// would be tested on every row and cost `count(*)` its fast path.
    func limit(_ limit: String?, offset: String?, check: String?) -> String {
        guard let check else { return self.limit(limit, offset: offset) }
        return self.limit(coalesce([check, limit ?? "-1"]), offset: offset)
    }

    /// `(check IS NULL)`: SQLite codes a WHERE term that reads no table of the loop once, before it.
    func checkedOnce(_ check: String) -> String { "(\(check) IS NULL)" }

    /// SQLite needs a LIMIT before an OFFSET: `LIMIT -1` is no limit.
    func limit(_ limit: String?, offset: String?) -> String {
        var sql = ""
        if let limit { sql = " LIMIT \(limit)" } else if offset != nil { sql = " LIMIT -1" }
        if let offset { sql += " OFFSET \(offset)" }
        return sql
    }
}
