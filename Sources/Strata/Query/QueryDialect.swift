/// The SQL spelling the predicate and fetch compilers need from a store: the
/// compilers build the shape of a query (joins, subqueries, nesting), the
/// dialect spells identifiers, parameters, functions, collations and paging.
/// Storage's `SQLiteDialect` is the implementation of the SQLite store.
protocol QueryDialect {
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
    /// The placeholder of the `n`-th bound value (1-based).
    func parameter(_ n: Int) -> String
    /// A condition constant.
    func boolean(_ value: Bool) -> String
    /// `expression IN (…)` over the values of a JSON array bound as one parameter.
    func inJSONArray(_ expression: String, parameter: String) -> String
    /// `expression` compared and sorted with a collation.
    func collate(_ expression: String, _ collation: Collation) -> String
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
    /// The first non-null value of `terms` (any number of them).
    func coalesce(_ terms: [String]) -> String
    /// Equality and inequality where NULL equals NULL.
    func isSame(_ a: String, _ b: String) -> String
    func isNotSame(_ a: String, _ b: String) -> String
    /// The paging clause (with a leading space), or "".
    func limit(_ limit: String?, offset: String?) -> String
}

/// Orderings that are not the store's plain binary one.
enum Collation {
    /// Decimal text by numeric value.
    case decimal
    /// `localizedStandard` string order (Finder-like).
    case standard
}
