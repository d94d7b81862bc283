/// How the PostgreSQL store spells SQL: DDL from the shared ``StoreLayout``, the
/// query spelling the compilers use (``QueryDialect``), and the store's own
/// statements. Every connection's `search_path` is the store's schema alone, so
/// names stay unqualified (PostgreSQL's built-ins come from `pg_catalog`).
///
/// Types follow SQLite's storage classes, so that one compiled predicate means the
/// same on both stores: keys, links, ints and bools `bigint` (a bool 0 or 1), doubles
/// and dates `double precision`, data `bytea`, every text `text COLLATE "C"` (code-point
/// order, like SQLite's BINARY). Text functions and orders are SQL functions the store
/// installs (`PostgresFunctions`), the twins of SQLite's.
struct PostgresDialect {
    /// PostgreSQL's longest identifier, in bytes (NAMEDATALEN - 1).
    static let maxIdentifierBytes = 63

    func quote(_ identifier: String) -> String {
        var out = "\""
        for c in identifier { if c == "\"" { out += "\"\"" } else { out.append(c) } }
        return out + "\""
    }

    /// An index or constraint name within PostgreSQL's limit: the layout's name when it fits,
    /// else its start and a hash (names are the store's own, never shown to users).
    static func indexName(_ name: String) -> String { identifier(name) }

    /// The primary key constraint of a table (`Trip_pkey`, PostgreSQL's own spelling when it
    /// fits): named by Strata, so that a migration renames it with its table.
    static func primaryKeyName(_ table: String) -> String { identifier(table + "_pkey") }

    /// A name of the store's own (an index, a constraint, a table being built) within
    /// PostgreSQL's limit: the name itself when it fits, else its start and a hash.
    static func identifier(_ name: String) -> String {
        if name.utf8.count <= maxIdentifierBytes { return name }
        let hash = SHA256.hex(name).prefix(16)
        var prefix = ""
        for c in name {
            if prefix.utf8.count + String(c).utf8.count > maxIdentifierBytes - 17 { break }
            prefix.append(c)
        }
        return prefix + "~" + hash
    }

    /// A column's type and constraints (the key's primary key is the table's constraint).
    static func storedType(_ c: StoreLayout.Column) -> String {
        switch c.content {
        case .key: return "bigint NOT NULL"
        case .link: return "bigint"
        case .entityName: return "text COLLATE \"C\" NOT NULL"
        case .pairEnd: return "bigint NOT NULL"
        case .value(let type):
            let t = valueType(type)
            return t == "text" ? t + " COLLATE \"C\"" : t
        }
    }

    /// The type of the column of an attribute of `type` (its text without its collation).
    static func valueType(_ type: AttributeType) -> String {
        switch type {
        case .string, .uuid, .url, .decimal, .json: return "text"
        case .int, .bool, .composite: return "bigint"
        case .double, .date: return "double precision"
        case .data: return "bytea"
        }
    }

    /// The type of a stored slot's column, without constraints or collation.
    static func valueType(_ slot: StoredColumn) -> String {
        switch slot {
        case .attribute(let a): return valueType(a.type)
        case .link: return "bigint"
        }
    }

    /// The primary key is a constraint named after the table (``primaryKeyName(_:)``); a
    /// hierarchy's table carries its entity check (``entityCheck(_:)``).
    func createTable(_ t: StoreLayout.Table) -> String {
        var parts = t.columns.map { c in "\(quote(c.name)) \(PostgresDialect.storedType(c))" }
        parts.append("CONSTRAINT \(quote(PostgresDialect.primaryKeyName(t.name))) PRIMARY KEY (\(t.primaryKey.map(quote).joined(separator: ", ")))")
        if !t.entities.isEmpty { parts.append(entityCheck(t.entities)) }
        return "CREATE TABLE \(quote(t.name)) (\n  " + parts.joined(separator: ",\n  ") + "\n)"
    }

    /// The name of a hierarchy table's entity check (a table's own: every table has one of that name).
    static let entityCheckName = "strata_entities"

    /// `CONSTRAINT "strata_entities" CHECK ("_entity" IN ('A', 'B'))`, the hierarchy's names in
    /// binary order: the server refuses any other name from any client, and a validated check is
    /// what the planner reads to leave out a read's search for other names (every connection sets
    /// `constraint_exclusion`, ``PostgresStore/sessionSettings``): the search of a table that
    /// lacks it, or holds it `NOT VALID` or wider, still runs, at every run of the statement's plan,
    /// which PostgreSQL makes again whenever the table's constraints change.
    func entityCheck(_ entities: [String]) -> String {
        "CONSTRAINT \(quote(PostgresDialect.entityCheckName)) CHECK (\(quote(StoreLayout.entity)) IN ("
            + Junction.binaryOrder(entities).map(nameLiteral).joined(separator: ", ") + "))"
    }

    /// A unique index is a deferrable constraint (checked after each statement): a read that
    /// includes pending changes writes them in a transaction it rolls back, with the
    /// constraints deferred, so that it shows pending changes as they are, collisions
    /// included, as on SQLite's overlay; the save refuses them.
    func createIndex(_ i: StoreLayout.Index, on table: String) -> String {
        let name = quote(PostgresDialect.indexName(i.name))
        let cols = i.columns.map(quote).joined(separator: ", ")
        if i.isUnique { return "ALTER TABLE \(quote(table)) ADD CONSTRAINT \(name) UNIQUE (\(cols)) DEFERRABLE INITIALLY IMMEDIATE" }
        // NULLS FIRST: the order reads sort in (nil first ascending, last descending, as SQLite).
        return "CREATE INDEX \(name) ON \(quote(table)) (\(i.columns.map { quote($0) + " NULLS FIRST" }.joined(separator: ", ")))"
    }

    /// A searchable column's full-text index: a GIN index over its tokens (``PostgresFunctions``' `strata_tokens`).
    func createSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> String {
        "CREATE INDEX \(quote(PostgresDialect.indexName(s.name))) ON \(quote(table)) USING gin (strata_tokens(\(quote(s.column))))"
    }

    /// The key sequence of a hierarchy's table.
    static func sequenceName(_ table: String) -> String { table + ".keys" }

    func createSchema(_ layout: StoreLayout) -> [String] {
        var out: [String] = []
        for t in layout.tables {
            out.append(createTable(t))
            for i in t.indexes { out.append(createIndex(i, on: t.name)) }
            for s in t.searchIndexes { out.append(createSearchIndex(s, on: t.name)) }
            if t.primaryKey == [StoreLayout.key] { out.append("CREATE SEQUENCE \(quote(PostgresDialect.sequenceName(t.name)))") }
        }
        return out
    }

    // MARK: The store's own statements

    static let metadataDDL = [
        "CREATE TABLE strata_metadata (key text COLLATE \"C\" PRIMARY KEY, value text)",
    ]
    static let readMetadata = "SELECT value FROM strata_metadata WHERE key = $1"
    static let allMetadata = "SELECT key, value FROM strata_metadata"
    static let writeMetadata = "INSERT INTO strata_metadata (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    /// The OID of the connection's schema (the store's), for catalog reads: its name quoted first,
    /// as the cast reads SQL text (a name of capitals, a space or a quote is found as it is).
    static let currentNamespace = "CAST(quote_ident(current_schema()) AS regnamespace)"
    /// Everything the schema holds (tables, indexes, sequences, views…) and its functions.
    static let objectCount = "SELECT (SELECT count(*) FROM pg_catalog.pg_class WHERE relnamespace = \(PostgresDialect.currentNamespace))"
        + " + (SELECT count(*) FROM pg_catalog.pg_proc WHERE pronamespace = \(PostgresDialect.currentNamespace))"
    /// Reserves `$2` consecutive keys from sequence `$1` (under an advisory lock of the sequence), returning the first.
    /// Moves the sequence `sequence` (quoted) past key `$2` unless it is past it already (the
    /// sequence's text name is `$1`); `setval` is not transactional.
    static func keepKeys(_ sequence: String) -> String {
        "SELECT setval(CAST($1 AS regclass), $2) FROM \(sequence) WHERE (CASE WHEN is_called THEN last_value + 1 ELSE last_value END) <= $2"
    }
    static let reserveKeys = "SELECT setval(CAST($1 AS regclass), nextval(CAST($1 AS regclass)) + $2 - 1) - $2 + 1"

    // Rows: the key is always $1.
    func insertRow(_ table: String, columns: [String]) -> String {
        let cols = [StoreLayout.key, StoreLayout.entity] + columns
        return "INSERT INTO \(quote(table)) (\(cols.map(quote).joined(separator: ", "))) VALUES (\((1...cols.count).map { "$\($0)" }.joined(separator: ", ")))"
    }
    /// Inserts one row per element of the arrays `$1` (keys), `$2` (entity names), `$3`… (one per
    /// column, of `types`), each bound as an array literal: a batch of rows in one statement.
    /// A row whose key is in use is left out; the keys of the rows written are returned.
    func insertRows(_ table: String, columns: [String], types: [String]) -> String {
        let cols = [StoreLayout.key, StoreLayout.entity] + columns
        let arrays = (["bigint", "text"] + types).enumerated().map { "CAST($\($0 + 1) AS \($1)[])" }
        return "INSERT INTO \(quote(table)) (\(cols.map(quote).joined(separator: ", "))) SELECT * FROM unnest(\(arrays.joined(separator: ", ")))"
            + " ON CONFLICT (_pk) DO NOTHING RETURNING _pk"
    }
    func updateRow(_ table: String, columns: [String]) -> String {
        "UPDATE \(quote(table)) SET \(columns.enumerated().map { "\(quote($1)) = $\($0 + 2)" }.joined(separator: ", ")) WHERE _pk = $1"
    }
    func deleteRow(_ table: String) -> String { "DELETE FROM \(quote(table)) WHERE _pk = $1" }
    /// Sets `columns` to $2, $3… in the rows whose keys are in the array $1.
    func updateRows(_ table: String, columns: [String]) -> String {
        "UPDATE \(quote(table)) SET \(columns.enumerated().map { "\(quote($1)) = $\($0 + 2)" }.joined(separator: ", ")) WHERE _pk = ANY(CAST($1 AS bigint[]))"
    }
    func deleteRows(_ table: String) -> String { "DELETE FROM \(quote(table)) WHERE _pk = ANY(CAST($1 AS bigint[]))" }
    func selectRow(_ table: String, columns: [String]) -> String {
        "SELECT \(columns.map(quote).joined(separator: ", ")) FROM \(quote(table)) WHERE _pk = $1"
    }
    func rowEntity(_ table: String) -> String { "SELECT _entity FROM \(quote(table)) WHERE _pk = $1" }
    func findUnique(_ table: String, columns: [String]) -> String {
        "SELECT _pk, _entity FROM \(quote(table)) WHERE \(columns.enumerated().map { "\(quote($1)) = $\($0 + 1)" }.joined(separator: " AND ")) LIMIT 1"
    }
    func uniqueHolder(_ table: String, columns: [String]) -> String {
        "SELECT 1 FROM \(quote(table)) WHERE \(columns.enumerated().map { "\(quote($1)) = $\($0 + 1)" }.joined(separator: " AND ")) AND _pk <> $\(columns.count + 1) LIMIT 1"
    }
    /// Rows of entities `$1` (an array literal) sharing the values of `columns` (none null) with another.
    func duplicateObjects(_ table: String, _ columns: [String]) -> String {
        let cols = columns.map(quote).joined(separator: ", ")
        let kinds = "_entity = ANY(CAST($1 AS text[]))"
        let notNull = columns.map { "\(quote($0)) IS NOT NULL" }.joined(separator: " AND ")
        let tuple = columns.count == 1 ? cols : "(\(cols))"
        return "SELECT _pk, _entity, \(cols) FROM \(quote(table)) WHERE \(kinds) AND \(notNull) AND \(tuple) IN "
            + "(SELECT \(cols) FROM \(quote(table)) WHERE \(kinds) AND \(notNull) GROUP BY \(cols) HAVING count(*) > 1) ORDER BY \(cols), _pk"
    }

    // Links: key arrays are bound as PostgreSQL array literals (`keyArray`).
    func setLinks(_ table: String, _ column: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = $2 WHERE _pk = ANY(CAST($1 AS bigint[]))"
    }
    func clearLinks(_ table: String, _ column: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = NULL WHERE \(quote(column)) = $1 AND NOT (_pk = ANY(CAST($2 AS bigint[]))) RETURNING _pk, _entity"
    }
    func linkOfRow(_ table: String, _ column: String) -> String { "SELECT \(quote(column)) FROM \(quote(table)) WHERE _pk = $1" }
    func deletePairs(_ table: String, side: String, returning other: String) -> String {
        "DELETE FROM \(quote(table)) WHERE \(quote(side)) = $1 RETURNING \(quote(other))"
    }
    func insertPairs(_ table: String, _ owner: String, _ target: String) -> String {
        "INSERT INTO \(quote(table)) (\(quote(owner)), \(quote(target))) SELECT $1, t FROM unnest(CAST($2 AS bigint[])) AS t ON CONFLICT DO NOTHING"
    }

    /// A PostgreSQL array literal of keys, bound as text.
    static func keyArray(_ keys: [Int64]) -> SQLValue {
        .text("{" + keys.map(String.init).joined(separator: ",") + "}")
    }
    /// A PostgreSQL array literal of names (quoted elements), bound as text.
    static func nameArray(_ names: [String]) -> SQLValue {
        .text("{" + names.map { n in
            var e = "\""
            for c in n { if c == "\"" || c == "\\" { e.append("\\") }; e.append(c) }
            return e + "\""
        }.joined(separator: ",") + "}")
    }
}

// MARK: - Query spelling (predicate and fetch compilers)

extension PostgresDialect: QueryDialect {
    func table(_ entity: Entity) -> String { StoreLayout.tableName(entity) }
    func column(_ slot: StoredColumn) -> String { StoreLayout.columnName(slot) }
    func pairTable(_ rel: Relationship) -> (table: String, ownerColumn: String, targetColumn: String) { StoreLayout.pairTable(rel) }
    var keyColumn: String { StoreLayout.key }
    var entityColumn: String { StoreLayout.entity }
    func parameter(_ n: Int) -> String { "$\(n)" }
    func boolean(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
    func searchIndex(_ attribute: Attribute) -> String { StoreLayout.searchIndexName(attribute) }
    /// `strata_tokens(text) @> words` is what the column's GIN index (``createSearchIndex(_:on:)``)
    /// answers; `strata_search_match` decides (prefixes, a search text without tokens). Never NULL:
    /// with a NULL `text` the first is NULL and the second false.
    func matches(key: String, text: String, index: String, query: String) -> String {
        "strata_tokens(\(text)) @> strata_search_words(\(query)) AND strata_search_match(\(text), \(query))"
    }
    func truth(_ expression: String) -> String { "(\(expression) <> 0)" }
    /// PostgreSQL sorts NULL last ascending by default: spelled as SQLite sorts.
    func sortTerm(_ expression: String, descending: Bool) -> String {
        expression + (descending ? " DESC NULLS LAST" : " ASC NULLS FIRST")
    }

    /// Compared as JSON values: numbers by value, text exactly (the array's element type is not known here).
    func inJSONArray(_ expression: String, parameter: String) -> String {
        "to_jsonb(\(expression)) IN (SELECT jsonb_array_elements(CAST(\(parameter) AS jsonb)))"
    }

    func collate(_ expression: String, _ collation: Collation) -> String {
        switch collation {
        case .decimal: return "strata_decimal(\(expression))"
        case .standard:
            // A column (a sort term): ASCII text without digits takes the function's path in the statement.
            return PostgresDialect.isColumn(expression) ? PostgresFunctions.standardKey(column: expression) : "strata_standard_key(\(expression))"
        }
    }
    /// Both sides convert: `strata_decimal(a) = strata_decimal(b)` (a text column, a bound value or a number).
    func collatedOperand(_ expression: String, _ collation: Collation) -> String {
        collate("CAST(\(expression) AS text)", collation)
    }
    /// In the conditions: PostgreSQL runs an uncorrelated condition once (a one-time filter) and
    /// reads the LIMIT for its plan, which a check inside it would hide.
    var checksInPaging: Bool { false }
    /// `strata_contains` and its kind spelled out in the statement when `text` is a column and
    /// `folded` a bound value: the folding function (PL/pgSQL, one call per row) runs only for a
    /// value that is not ASCII, and only when `options` fold; otherwise the server's own functions
    /// test it, as the functions' ASCII path does (``PostgresFunctions``: the same answers, false
    /// with a NULL, true for an empty `folded`). Anything else calls the functions.
    func foldedTest(_ op: StringOperator, _ text: String, _ folded: String, options: Int) -> String {
        let m = options & 3
        guard op == .contains || op == .hasPrefix || op == .hasSuffix, PostgresDialect.isColumn(text), PostgresDialect.isParameter(folded) else {
            switch op {
            case .contains: return "strata_contains(\(text), \(folded), \(m))"
            case .hasPrefix: return "strata_has_prefix(\(text), \(folded), \(m))"
            case .hasSuffix: return "strata_has_suffix(\(text), \(folded), \(m))"
            case .localizedStandardContains: return localizedStandardContains(text, folded)
            case .matches: return boolean(false)  // compiled by ``matches(key:text:index:query:)``, never here
            }
        }
        let x = "\(text) COLLATE \"C\"", y = "CAST(\(folded) AS text) COLLATE \"C\""
        let f = m == 0 ? x
            : "CASE WHEN octet_length(\(text)) = char_length(\(text)) THEN \(m & 1 == 1 ? "lower(\(x))" : x) ELSE strata_fold(\(text), \(m)) COLLATE \"C\" END"
        switch op {
        case .contains: return "coalesce(strpos(\(f), \(y)) > 0, false)"
        case .hasPrefix: return "coalesce(starts_with(\(f), \(y)), false)"
        default: return "coalesce(right(\(f), char_length(\(y))) = \(y), false)"
        }
    }

    /// Whether `sql` is a column of an alias (`t."name"`), cheap to read more than once.
    static func isColumn(_ sql: String) -> Bool {
        let b = Array(sql.utf8)
        var i = 0
        while i < b.count, b[i] == UInt8(ascii: "_") || (b[i] | 0x20 >= UInt8(ascii: "a") && b[i] | 0x20 <= UInt8(ascii: "z")) || (b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9")) {
            i += 1
        }
        guard i > 0, i + 3 < b.count, b[i] == UInt8(ascii: "."), b[i + 1] == UInt8(ascii: "\""), b[b.count - 1] == UInt8(ascii: "\"") else { return false }
        // Inside the quotes, a quote only doubled.
        var j = i + 2
        while j < b.count - 1 {
            if b[j] == UInt8(ascii: "\"") { guard j + 1 < b.count - 1, b[j + 1] == UInt8(ascii: "\"") else { return false }; j += 1 }
            j += 1
        }
        return true
    }

    /// Whether `sql` is a bound value (`$3`).
    static func isParameter(_ sql: String) -> Bool {
        let b = Array(sql.utf8)
        return b.count > 1 && b[0] == UInt8(ascii: "$") && b.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// Per batch of owners, their keys as one `bigint[]`: each statement is a round trip.
    func ownerBatch(_ owner: String, parameter: String) -> String? { "\(owner) = ANY(CAST(\(parameter) AS bigint[]))" }
    /// One statement per relationship: a batch of 1,000 owners cost about 1.4 ms of the server's
    /// time (its `= ANY` probes and sort), where the owners' query as a subquery is one join.
    var readsPrefetchedOnce: Bool { true }
    /// A join: the planner runs a correlated subquery once per row, a join once per statement.
    var joinsLinkedEntities: Bool { true }
    /// Written: PostgreSQL plans a bound LIMIT for a tenth of the rows, so a prepared statement's
    /// generic plan never fits a small limit and every run would be planned again (about 80 µs
    /// for the widget query of `make bench-postgres`, more than running it).
    var writesPaging: Bool { true }

    func coalesce(_ terms: [String]) -> String { "coalesce(" + terms.joined(separator: ", ") + ")" }
    func isSame(_ a: String, _ b: String) -> String { "\(a) IS NOT DISTINCT FROM \(b)" }
    func isNotSame(_ a: String, _ b: String) -> String { "\(a) IS DISTINCT FROM \(b)" }
    func limit(_ limit: String?, offset: String?) -> String {
        (limit.map { " LIMIT \($0)" } ?? "") + (offset.map { " OFFSET \($0)" } ?? "")
    }
    func concatenate(_ terms: [String]) -> String { "(" + terms.map { "CAST(\($0) AS text)" }.joined(separator: " || ") + ")" }
    func joinedText(_ column: String) -> String { "string_agg(CAST(\(column) AS text), ',')" }
    /// The keys as an array made by the subquery itself, written out as text: no aggregate over a
    /// scan of the subquery (a widget's row about 2 µs less on the server); NULL without rows, as
    /// `string_agg`'s (an empty text is no key list).
    func joinedKeys(_ rows: String, alias: String) -> String { "NULLIF(array_to_string(ARRAY(\(rows)), ','), '')" }
    /// Int sums through PostgreSQL's exact `sum(bigint)` (a numeric), checked by `strata_int_total`;
    /// double sums through Strata's exact aggregate `strata_fsum`; averages are the sum over
    /// `count` (``PostgresFunctions``).
    func exactAggregate(_ f: AggregateFunction, integer: Bool, _ value: String) -> String {
        let x = "CAST(\(value) AS \(integer ? "bigint" : "double precision"))"
        switch (f, integer) {
        case (.avg, true): return "strata_int_mean(sum(\(x)), count(\(x)))"
        case (.avg, false): return "strata_float_mean(strata_fsum(\(x)), count(\(x)))"
        case (_, true): return "strata_int_total(sum(\(x)))"
        case (_, false): return "strata_fsum(\(x))"
        }
    }

    /// `numeric` sums exactly (within its range; beyond, the statement fails); as text, which
    /// the result writer writes in canonical form.
    func decimalSum(_ value: String) -> String { "coalesce(CAST(sum(strata_decimal(\(value))) AS text), '0')" }
    /// ``DecimalSum/mean`` in `numeric`: the sum times 10^20 divided by the count truncates
    /// (`div`), and the remainder decides the rounding, half to even; the result is exact.
    func decimalMean(sum: String, count: String) -> String {
        let v = "(strata_decimal(\(sum)) * 1e\(DecimalSum.meanDigits))", n = "CAST(\(count) AS numeric)"
        let q = "div(\(v), \(n))", r = "mod(\(v), \(n))"
        let up = "CASE WHEN 2 * abs(\(r)) > \(n) OR (2 * abs(\(r)) = \(n) AND mod(\(q), 2) <> 0) THEN sign(\(r)) ELSE 0 END"
        return "CASE WHEN \(n) = 0 THEN NULL ELSE CAST((\(q) + \(up)) * 1e-\(DecimalSum.meanDigits) AS text) END"
    }
    func decimalExtreme(_ f: AggregateFunction, _ value: String) -> String { "CAST(\(f.rawValue)(strata_decimal(\(value))) AS text)" }
    func mean(sum: String, count: String, integer: Bool) -> String {
        integer ? "strata_int_mean(CAST(\(sum) AS numeric), \(count))" : "strata_float_mean(\(sum), \(count))"
    }

    func select(_ list: String, from source: String, where condition: String?, orderBy order: String?, paging: String) -> String {
        "SELECT \(list) FROM \(source)" + (condition.map { " WHERE \($0)" } ?? "") + (order.map { " ORDER BY \($0)" } ?? "") + paging
    }
    func count(from source: String, where condition: String?) -> String {
        select("count(*)", from: source, where: condition, orderBy: nil, paging: "")
    }
    func count(of query: String) -> String { "SELECT count(*) FROM (\(query)) AS counted" }
    func entity(of table: String, alias: String, key: String) -> String {
        "(SELECT \(alias)._entity FROM \(quote(table)) \(alias) WHERE \(alias)._pk = \(key))"
    }

    /// Columns are typed: only a bool's integer can be out of its range.
    func storedAs(_ column: String, _ stored: StoredClass, entity: String, attribute: String, key: String) -> String {
        guard case .boolean = stored else { return "TRUE" }
        return "(\(column) IN (0, 1) OR \(column) IS NULL OR strata_damaged(\(entity), \(attribute), \(key)) = 0)"
    }

    func limit(_ limit: String?, offset: String?, check: String?) -> String {
        guard let check else { return self.limit(limit, offset: offset) }
        return self.limit(coalesce([check, limit.map { "CAST(\($0) AS bigint)" } ?? "CAST(NULL AS bigint)"]), offset: offset)
    }

    func checkedOnce(_ check: String) -> String { "(\(check) IS NULL)" }
}
