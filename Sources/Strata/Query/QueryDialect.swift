/// The SQL spelling the predicate and fetch compilers need from a store: the
/// compilers build the shape of a query in ISO SQL (SELECT, JOIN, EXISTS, CASE,
/// subqueries, nesting), the dialect spells everything an engine spells its own
/// way — identifiers, parameters, functions, collations, paging, the few whole
/// statements the compilers borrow — and the layout's names. Storage's
/// `SQLiteDialect` is the implementation of the SQLite store; a second store
/// provides its own (``DataStore/queryDialect``).
public protocol QueryDialect {
    /// An identifier (table, column) of the validated schema, quoted for SQL text.
    func quote(_ identifier: String) -> String

    // The store's layout: where entities and links are kept (names unquoted).

    /// The table holding the rows of `entity`'s hierarchy.
    func table(_ entity: Entity) -> String
    /// The column of a stored slot (an attribute, or a link held in the row).
    func column(_ slot: StoredColumn) -> String
    /// The table of a relationship kept in pairs (`LinkPlacement.inPairs`) and
    /// the columns holding its owner's and its target's keys.
    func pairTable(_ rel: Relationship) -> (table: String, ownerColumn: String, targetColumn: String)
    /// The key column of every entity table, spelled for SQL (after an alias and a dot).
    var keyColumn: String { get }
    /// The concrete-entity-name column of every entity table, spelled for SQL.
    var entityColumn: String { get }
    /// The placeholder of the `n`-th bound value (1-based).
    func parameter(_ n: Int) -> String
    /// A condition constant.
    func boolean(_ value: Bool) -> String
    /// A bool value (an integer 0 or 1, or NULL) used as a condition.
    func truth(_ expression: String) -> String
    /// One term of an ORDER BY: nil sorts before every value ascending, after them descending.
    func sortTerm(_ expression: String, descending: Bool) -> String
    /// `expression IN (…)` over the values of a JSON array bound as one parameter.
    func inJSONArray(_ expression: String, parameter: String) -> String
    /// `expression` compared and sorted with a collation.
    func collate(_ expression: String, _ collation: Collation) -> String
    /// The other operand of a comparison whose left operand is ``collate(_:_:)``'s (an engine
    /// that collates by converting both sides converts this one too).
    func collatedOperand(_ expression: String, _ collation: Collation) -> String
    /// Whether the entity check of a whole hierarchy goes into the paging clause of a paged
    /// read (``limit(_:offset:check:)``) rather than into its conditions (``checkedOnce(_:)``).
    var checksInPaging: Bool { get }
    /// How a prefetched relationship's rows are selected: nil, one owner's (`owner = ?1`, the
    /// statement run again per owner row, ``RowCursor/start(key:)``); else the condition of the
    /// rows of a batch of owners whose keys are bound as one parameter (`parameter`), the statement
    /// run once per batch (``RowCursor/load(owners:)``). A store whose every statement is a round
    /// trip batches; one that runs statements in process may not need to.
    func ownerBatch(_ owner: String, parameter: String) -> String?
    /// Whether a fetch read at once (not a cursor's batches) reads each prefetched relationship
    /// with one statement for all its owners: the owners' own query as a subquery
    /// (`owner IN (SELECT key FROM … WHERE … ORDER BY … LIMIT …)`, a nested relationship's owners
    /// the rows of its parent's such statement), the rows ordered by owner, bound with the
    /// fetch's arguments (``ObjectQueries/prefetchedOnceSQL``). Only with ``ownerBatch(_:parameter:)``
    /// (the cursor that finds an owner's rows among many is the batches').
    var readsPrefetchedOnce: Bool { get }
    /// Whether the concrete entity name of the row a to-one link names
    /// (``ObjectPlan/Selection/linkedEntity(_:)``) is read through a `LEFT JOIN` of the
    /// destination's table (one join for the statement) rather than a correlated scalar
    /// subquery (``entity(of:alias:key:)``, one subplan per row). SQLite joins at most 64 tables.
    var joinsLinkedEntities: Bool { get }
    /// Whether a fetch's `fetchLimit` and `fetchOffset` (integers of the descriptor, never the
    /// caller's text) are written into the statement as numbers rather than bound: a planner
    /// that cannot see a bound LIMIT plans for many rows, and a prepared statement whose
    /// plan would not fit is planned again at every run.
    var writesPaging: Bool { get }
    /// `expression` folded for case- and diacritic-insensitive comparison (``StringOptions`` raw value).
    func fold(_ expression: String, options: Int) -> String
    /// `text` folded with `options` (non-empty), then compared with `folded`, a value
    /// already folded with them: 0 or 1, never NULL (``Evaluation``: `nil == nil`,
    /// an ordering with nil is false).
    func foldedCompare(_ op: ComparisonOperator, _ text: String, _ folded: String, options: Int) -> String
    /// `text` folded with `options` (0: as is) contains, starts or ends with `folded`,
    /// a value already folded with them (not `.localizedStandardContains`): 0 or 1, 0 with a nil.
    func foldedTest(_ op: StringOperator, _ text: String, _ folded: String, options: Int) -> String
    /// `text.localizedStandardContains(needle)` as 0 or 1 (0 with a nil), `foldedNeedle`
    /// being the needle folded with both options.
    func localizedStandardContains(_ text: String, _ foldedNeedle: String) -> String
    /// The length of a string in characters, as ``Evaluation`` counts them.
    func length(_ expression: String) -> String
    /// The name (unquoted) of the full-text index of a searchable attribute, as the store's layout names it.
    func searchIndex(_ attribute: Attribute) -> String
    /// Full-text search (``TextSearch``): `text`, a searchable attribute's column of the row whose key
    /// is `key`, matches the search text `query` (a parameter), through the attribute's full-text
    /// index `index` (``searchIndex(_:)``): a condition that is true or false, never NULL
    /// (false with a nil `text`), usable under NOT.
    func matches(key: String, text: String, index: String, query: String) -> String
    /// The relevance of `text` for the search text `query` (``TextSearch/relevance(_:_:)``): a
    /// double, 0 for a nil `text`. By default the `strata_relevance` function every store installs.
    func relevance(_ text: String, query: String) -> String
    /// The first non-null value of `terms` (any number of them).
    func coalesce(_ terms: [String]) -> String
    /// Equality and inequality where NULL equals NULL.
    func isSame(_ a: String, _ b: String) -> String
    func isNotSame(_ a: String, _ b: String) -> String
    /// The paging clause (with a leading space), or "".
    func limit(_ limit: String?, offset: String?) -> String
    /// Text operands joined into one text (`a || b`).
    func concatenate(_ terms: [String]) -> String
    /// The aggregate of the texts of `column` over the rows of an ordered subquery, joined
    /// with commas in the subquery's order (NULL without rows).
    func joinedText(_ column: String) -> String
    /// The keys `rows` selects (one integer column named `v`, ordered), joined with commas in
    /// its order into one text, NULL without rows. By default ``joinedText(_:)`` over `rows`
    /// as the subquery `alias`.
    func joinedKeys(_ rows: String, alias: String) -> String
    /// The aggregate `@sum` or `@avg` (``AggregateFunction/isExact``) of `value` over the rows of
    /// a subquery, ints (`integer`) or doubles, exactly as ``ExactSum`` computes it
    /// (``Evaluation/exactAggregate(_:_:integer:)``): a sum is 0 without rows and NULL where it
    /// fails (an int sum outside Int64, a double sum that is not finite); an average is a
    /// double, NULL without non-NULL values and where the sum of doubles fails. By default the
    /// aggregates every store installs: `strata_isum`, `strata_fsum`, `strata_iavg`, `strata_favg`.
    func exactAggregate(_ f: AggregateFunction, integer: Bool, _ value: String) -> String
    /// The exact sum of decimal text `value` over the rows of a group or a subquery
    /// (``DecimalSum``), as decimal text: "0" without rows. By default the aggregate every
    /// store installs: `strata_dsum`.
    func decimalSum(_ value: String) -> String
    /// The mean of decimal text `sum` over `count` values (``DecimalSum/mean``), as decimal text;
    /// NULL when `count` is 0. By default `strata_dmean`.
    func decimalMean(sum: String, count: String) -> String
    /// The smallest (largest) decimal text `value` of the rows, by value, as decimal text.
    func decimalExtreme(_ f: AggregateFunction, _ value: String) -> String
    /// `sum` (an int or double total) divided by `count`, a double as ``ExactSum/intAverage``
    /// and ``ExactSum/doubleAverage`` divide; NULL when `count` is 0 or `sum` is NULL.
    func mean(sum: String, count: String, integer: Bool) -> String

    // Whole statements the fetch compiler borrows.

    /// `SELECT list FROM source [WHERE condition] [ORDER BY order]` then `paging` (a clause of ``limit(_:offset:)`` or "").
    func select(_ list: String, from source: String, where condition: String?, orderBy order: String?, paging: String) -> String
    /// The number of rows of `source` matching `condition`.
    func count(from source: String, where condition: String?) -> String
    /// The number of rows a query returns.
    func count(of query: String) -> String
    /// A scalar subquery: the entity name of the row of `table` (aliased `alias`) whose key is `key`.
    func entity(of table: String, alias: String, key: String) -> String

    // Guards against a damaged store (docs/JSON.md, "Damaged stores").

    /// A name of the validated schema (an identifier) as a text literal.
    func nameLiteral(_ name: String) -> String
    /// A condition that holds when `column` stores NULL or a value of `stored`'s storage
    /// classes, and otherwise fails the statement with `.corrupt` naming the object
    /// `entity/key` and `attribute` (both ``nameLiteral(_:)``s). A conjunct beside the condition
    /// that reads the column, never a wrapper around it: an index on the column stays usable,
    /// and covering (the guard reads nothing but the column and the key).
    func storedAs(_ column: String, _ stored: StoredClass, entity: String, attribute: String, key: String) -> String
    /// An expression that is NULL when every row of `table` names one of `entities` (its
    /// hierarchy's), and otherwise fails the statement with `.corrupt` naming the object
    /// `root/key` of such a row: index searches between the names, no scan.
    func unknownEntity(table: String, _ entities: [String], root: String) -> String
    /// The paging clause (with a leading space), with `check` (an ``unknownEntity(table:_:root:)``)
    /// evaluated once per statement, before its first row — also when no row matches.
    func limit(_ limit: String?, offset: String?, check: String?) -> String
    /// A condition that holds when `check` (an ``unknownEntity(table:_:root:)``) is NULL: a term
    /// of no table, evaluated once per statement before its first row. For a sorted read without
    /// paging, where a LIMIT would turn SQLite's sorter into a bounded b-tree (about 1.6 times
    /// slower on 50,000 sorted rows).
    func checkedOnce(_ check: String) -> String
}

// What every SQL engine of Strata spells alike: a store's dialect takes these unless its engine differs.
extension QueryDialect {
    func joinedKeys(_ rows: String, alias: String) -> String { "(SELECT \(joinedText("v")) FROM (\(rows)) \(alias))" }
    // Every store installs Strata's text functions under the same names and arguments
    // (SQLite's `SQLFunctions`, PostgreSQL's `PostgresFunctions`).
    func fold(_ expression: String, options: Int) -> String { "strata_fold(\(expression), \(options))" }
    func localizedStandardContains(_ text: String, _ foldedNeedle: String) -> String { "strata_lsc(\(text), \(foldedNeedle))" }
    func foldedCompare(_ op: ComparisonOperator, _ text: String, _ folded: String, options: Int) -> String {
        "strata_compare(\(text), \(folded), \(options & 3 | op.functionCode << 2))"
    }
    func foldedTest(_ op: StringOperator, _ text: String, _ folded: String, options: Int) -> String {
        switch op {
        case .contains: return "strata_contains(\(text), \(folded), \(options & 3))"
        case .hasPrefix: return "strata_has_prefix(\(text), \(folded), \(options & 3))"
        case .hasSuffix: return "strata_has_suffix(\(text), \(folded), \(options & 3))"
        case .localizedStandardContains: return localizedStandardContains(text, folded)
        case .matches: return boolean(false)  // compiled by ``matches(key:text:index:query:)``, never here
        }
    }
    func length(_ expression: String) -> String { "strata_length(\(expression))" }
    func relevance(_ text: String, query: String) -> String { "strata_relevance(\(text), \(query))" }
    func exactAggregate(_ f: AggregateFunction, integer: Bool, _ value: String) -> String {
        "strata_\(integer ? "i" : "f")\(f.rawValue)(\(value))"
    }
    func decimalSum(_ value: String) -> String { "strata_dsum(\(value))" }
    func decimalMean(sum: String, count: String) -> String { "strata_dmean(\(sum), \(count))" }
    /// `a op b` as ``Evaluation/arithmetic(_:_:_:integer:)`` computes it: NULL where it fails.
    func arithmetic(_ op: ArithmeticOperator, integer: Bool, _ a: String, _ b: String) -> String {
        "strata_\(integer ? "i" : "f")arith(\(a), \(b), \(op.functionCode))"
    }

    /// A standard SQL text literal (names are identifiers; a quote would still be doubled).
    func nameLiteral(_ name: String) -> String {
        // Byte by byte: a quote is one byte in UTF-8 and never part of another character's bytes,
        // so every quote is doubled, also one a combining mark follows (no grapheme breaking).
        var bytes: [UInt8] = [0x27]
        bytes.reserveCapacity(name.utf8.count + 2)
        for b in name.utf8 {
            bytes.append(b)
            if b == 0x27 { bytes.append(0x27) }
        }
        bytes.append(0x27)
        return String(decoding: bytes, as: UTF8.self)
    }

    func unknownEntity(table: String, _ entities: [String], root: String) -> String {
        entitySearch(table: table, entities, root: root)
    }

    /// `(SELECT strata_damaged('Root', '_entity', _pk) FROM "Root" WHERE _entity < 'A' OR _entity > 'A'
    /// AND _entity < 'B' OR … LIMIT 1)`: one index search (`_entity` is indexed in a hierarchy's
    /// table) per gap between the names in binary order. Every store installs `strata_damaged`.
    func entitySearch(table: String, _ entities: [String], root: String) -> String {
        let names = Junction.binaryOrder(entities).map(nameLiteral)
        guard let first = names.first, let last = names.last else { return "NULL" }
        let e = entityColumn, k = keyColumn
        var gaps = ["\(e) < \(first)"]
        for i in names.indices.dropFirst() { gaps.append("\(e) > \(names[i - 1]) AND \(e) < \(names[i])") }
        gaps.append("\(e) > \(last)")
        return "(SELECT strata_damaged(\(nameLiteral(root)), \(nameLiteral(e)), \(k)) FROM \(quote(table)) WHERE \(gaps.joined(separator: " OR ")) LIMIT 1)"
    }
}

/// The storage classes a stored slot may hold (besides NULL), by its type: what a read
/// checks before it compares or writes out a value (docs/JSON.md, "Damaged stores").
public enum StoredClass {
    /// int and links (a key); bool is an integer 0 or 1.
    case integer, boolean
    /// double and date: a real or an integer.
    case number
    /// string, url, uuid, decimal, json.
    case text
    /// data; external-storage data may also be text (a file name).
    case blob, blobOrText

    init(_ a: Attribute) {
        switch a.type {
        case .int, .composite: self = .integer
        case .bool: self = .boolean
        case .double, .date: self = .number
        case .string, .url, .uuid, .decimal, .json: self = .text
        case .data: self = a.externalStorage ? .blobOrText : .blob
        }
    }
}

/// Orderings that are not the store's plain binary one.
public enum Collation {
    /// Decimal text by numeric value.
    case decimal
    /// `localizedStandard` string order (Finder-like).
    case standard
}

/// `AND`/`OR` over many terms, as every compiler of conditions writes it (predicates,
/// history filters): SQL engines limit how deep an expression may nest.
enum Junction {
    /// Terms joined flat up to this many; longer lists nest as a balanced tree.
    static let flatTerms = 16

    /// Names in binary (UTF-8 byte) order, as the stores compare text.
    static func binaryOrder(_ names: [String]) -> [String] {
        names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Terms joined with `op` in parentheses, nested as a balanced tree past ``flatTerms``
    /// (history filters join their terms the same way).
    static func balanced(_ terms: [String], _ op: String) -> String {
        if terms.count <= flatTerms { return "(" + terms.joined(separator: " \(op) ") + ")" }
        let size = (terms.count + flatTerms - 1) / flatTerms
        var groups: [String] = []
        var i = 0
        while i < terms.count {
            groups.append(balanced(Array(terms[i..<min(i + size, terms.count)]), op))
            i += size
        }
        return balanced(groups, op)
    }

    /// `(p0 AND p1 …)`: the deepest part comes first and takes one unit (its
    /// opening parenthesis), every later one three (`(`, the left operand and the operator).
    static func depth(_ depths: [Int]) -> Int {
        guard let deepest = depths.max() else { return 1 }
        let second = depths.count > 1 ? depths.sorted(by: >)[1] : 0
        return balancedDepth(depths.count) + max(1 + deepest, 3 + second)
    }

    /// The extra levels of a balanced tree over `n` terms (``flatTerms`` per level).
    static func balancedDepth(_ n: Int) -> Int {
        var levels = 0
        var n = n
        while n > flatTerms { n = (n + flatTerms - 1) / flatTerms; levels += 1 }
        return 3 * levels
    }
}
