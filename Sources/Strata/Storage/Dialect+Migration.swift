/// What SQLite spells its own way in migration steps (``StorageMigration``; the
/// ISO statements are ``MigrationDialect``'s): entity lists bound as JSON
/// (`json_each`), renames read with `json_extract`, `INSERT OR IGNORE`, the
/// `strata_sequence` table, external-storage files. Values are always bound
/// (`?n` is the statement's n-th argument). A column dropped in place would
/// rewrite the table (the planner rebuilds such a table once instead), and an
/// index kept in place keeps its name.
extension SQLiteDialect: MigrationDialect {
    private func q(_ identifier: String) -> String { quote(identifier) }

    var dropsColumnsInPlace: Bool { false }

    /// The name a table is built under before it takes its final name (`_strata_new_Trip`).
    func buildingName(_ table: String) -> String { "_strata_new_" + table }
    func storedIndexName(_ name: String) -> String { name }
    /// Names as a JSON array, bound where SQL takes a list of entities (`json_each`), as the
    /// predicate compiler binds its lists.
    func nameList(_ names: [String]) -> SQLValue { SQLiteDialect.nameList(names) }
    static func nameList(_ names: [String]) -> SQLValue { SQLValue.jsonArray(names.map { .text($0) }) }

    /// `?n` holds a JSON array of entity names (the list binding of `QueryDialect.inJSONArray`).
    func isOneOf(_ expression: String, names n: Int) -> String { SQLiteDialect.entityIn(expression, n) }
    static func entityIn(_ column: String, _ n: Int) -> String { SQLiteDialect().inJSONArray(column, parameter: "?\(n)") }
    /// `?n` holds a JSON object old name → new name.
    func renamed(_ expression: String, through n: Int) -> String {
        "coalesce(json_extract(?\(n), '$.\"' || \(expression) || '\"'), \(expression))"
    }

    func renameTable(_ from: String, to: String) -> [String] { ["ALTER TABLE \(q(from)) RENAME TO \(q(to))"] }
    func addColumn(_ table: String, _ column: StoreLayout.Column) -> String {
        "ALTER TABLE \(q(table)) ADD COLUMN \(q(column.name)) \(SQLiteDialect.columnType(column))"
    }
    func dropIndex(_ i: StoreLayout.Index, on table: String) -> String { "DROP INDEX \(q(i.name))" }
    func createSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> [String] {
        [SQLiteDialect.createSearchTable(s.name), SQLiteDialect.fillSearchTable(s.name, table: table, column: s.column)]
    }
    func dropSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> String { "DROP TABLE \(q(s.name))" }
    /// SQLite renames no index: an index kept in place keeps its name.
    func renameIndex(_ i: StoreLayout.Index, to name: String, on table: String) -> String? { nil }

    /// Copies a link set's (owner, target) pairs into a set of pairs.
    func copyPairs(into: String, from table: String, owner: String, target: String) -> String {
        "INSERT OR IGNORE INTO \(q(into)) (\(q(StoreLayout.source)), \(q(StoreLayout.target))) SELECT p.\(q(owner)), p.\(q(target)) FROM \(q(table)) AS p "
            + "WHERE p.\(q(owner)) IS NOT NULL AND p.\(q(target)) IS NOT NULL"
    }

    /// Renames the entities of rows through `?1` (a JSON object old → new name).
    func renameEntities(_ table: String) -> String {
        "UPDATE \(q(table)) SET \(q(StoreLayout.entity)) = json_extract(?1, '$.\"' || \(q(StoreLayout.entity)) || '\"') "
            + "WHERE \(q(StoreLayout.entity)) IN (SELECT key FROM json_each(?1))"
    }
    /// The indexes of table `?1` made by CREATE INDEX (not SQLite's automatic ones): name and uniqueness.
    static let indexList = "SELECT name, \"unique\" FROM pragma_index_list(?1) WHERE origin = 'c'"
    /// The columns of index `?1`, in order.
    static let indexColumns = "SELECT name FROM pragma_index_info(?1) ORDER BY seqno"

    /// Starts (or moves past `from`'s keys) the key sequence of root table `table` (`?1`): the
    /// next key is past every row of the table and past the sequence of old root `from` (`?2`).
    func continueSequence(_ table: String, from: String) -> [(sql: String, args: [SQLValue])] {
        [("INSERT INTO strata_sequence (entity, next) VALUES (?1, max((SELECT coalesce(max(\(q(StoreLayout.key))), 0) + 1 FROM \(q(table))), "
            + "coalesce((SELECT next FROM strata_sequence WHERE entity = ?2), 1))) ON CONFLICT(entity) DO UPDATE SET next = max(next, excluded.next)",
          [.text(table), .text(from)])]
    }
    func dropSequence(_ table: String) -> [(sql: String, args: [SQLValue])] {
        [("DELETE FROM strata_sequence WHERE entity = ?1", [.text(table)])]
    }
    /// The rows of `column` of `table` naming external-storage files.
    func externalRows(_ table: String, _ column: String) -> String? {
        "SELECT \(q(StoreLayout.key)), \(q(column)) FROM \(q(table)) WHERE typeof(\(q(column))) = 'text'"
    }
    func setColumn(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = ?1 WHERE \(q(StoreLayout.key)) = ?2"
    }
}
