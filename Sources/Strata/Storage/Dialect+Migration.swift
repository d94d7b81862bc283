/// The SQL of migration steps (``StorageMigration``) on SQLite. Identifiers are
/// quoted here; values — defaults, entity names, key ranges — are always bound
/// (`?n` is the statement's n-th argument). A column dropped in place would
/// rewrite the table (the planner rebuilds such a table once instead), and an
/// index kept in place keeps its name.
extension SQLiteDialect: MigrationDialect {
    private func q(_ identifier: String) -> String { quote(identifier) }

    var dropsColumnsInPlace: Bool { false }

    /// The name a table is built under before it takes its final name (`_strata_new_Trip`).
    func buildingName(_ table: String) -> String { "_strata_new_" + table }
    /// A column's name between two renames (swaps and chains of renames go through one).
    func renamingName(_ index: Int) -> String { "_strata_renaming_\(index)" }
    func storedIndexName(_ name: String) -> String { name }
    /// Names as a JSON array, bound where SQL takes a list of entities (`json_each`), as the
    /// predicate compiler binds its lists.
    func nameList(_ names: [String]) -> SQLValue { SQLiteDialect.nameList(names) }
    static func nameList(_ names: [String]) -> SQLValue { SQLValue.jsonArray(names.map { .text($0) }) }
    /// A JSON object old name → new name (read with `json_extract`).
    func nameMap(_ renames: [(String, String)]) -> SQLValue {
        var w = JSONWriter()
        w.beginObject()
        for (k, v) in renames { w.key(k); w.string(v) }
        w.endObject()
        return .text(w.string)
    }

    func renameTable(_ from: String, to: String) -> [String] { ["ALTER TABLE \(q(from)) RENAME TO \(q(to))"] }
    func renameColumn(_ table: String, from: String, to: String) -> String {
        "ALTER TABLE \(q(table)) RENAME COLUMN \(q(from)) TO \(q(to))"
    }
    func addColumn(_ table: String, _ column: StoreLayout.Column) -> String {
        "ALTER TABLE \(q(table)) ADD COLUMN \(q(column.name)) \(SQLiteDialect.columnType(column))"
    }
    /// Never planned (``dropsColumnsInPlace`` is false: SQLite rewrites the table for it).
    func dropColumn(_ table: String, _ column: String) -> String { "ALTER TABLE \(q(table)) DROP COLUMN \(q(column))" }
    func dropTable(_ table: String) -> String { "DROP TABLE \(q(table))" }
    func dropIndex(_ i: StoreLayout.Index, on table: String) -> String { "DROP INDEX \(q(i.name))" }
    /// SQLite renames no index: an index kept in place keeps its name.
    func renameIndex(_ i: StoreLayout.Index, to name: String, on table: String) -> String? { nil }

    /// `?n` holds a JSON array of entity names (the list binding of `QueryDialect.inJSONArray`).
    static func entityIn(_ column: String, _ n: Int) -> String { SQLiteDialect().inJSONArray(column, parameter: "?\(n)") }
    private func entityIn(_ column: String, _ n: Int) -> String { SQLiteDialect.entityIn(column, n) }

    /// Copies the rows of entities `?3` (a JSON array) of `from` whose keys are in (`?1`, `?2`]
    /// into `into`; the entity of each row is renamed through `?4` (a JSON object old → new name).
    /// `values` are the expressions of `columns` over the source row `s`.
    func copyRows(into: String, columns: [String], from: String, values: [String]) -> String {
        "INSERT INTO \(q(into)) (\(q(StoreLayout.key)), \(q(StoreLayout.entity))\(columns.map { ", " + q($0) }.joined())) "
            + "SELECT s.\(q(StoreLayout.key)), coalesce(json_extract(?4, '$.\"' || s.\(q(StoreLayout.entity)) || '\"'), s.\(q(StoreLayout.entity)))"
            + values.map { ", " + $0 }.joined()
            + " FROM \(q(from)) AS s WHERE \(entityIn("s." + q(StoreLayout.entity), 3)) AND s.\(q(StoreLayout.key)) > ?1 AND s.\(q(StoreLayout.key)) <= ?2"
    }
    /// The key range and row count of the rows of entities `?1` (a JSON array) of `table`.
    func keyRange(_ table: String) -> String {
        "SELECT min(\(q(StoreLayout.key))), max(\(q(StoreLayout.key))), count(*) FROM \(q(table)) WHERE \(entityIn(q(StoreLayout.entity), 1))"
    }
    /// A column of the source row `s` of a copy.
    func sourceColumn(_ column: String) -> String { "s.\(q(column))" }
    /// The (smallest) target a link set (`table`, `owner`, `target`) holds for the source row `s`.
    func linkTarget(_ table: String, owner: String, target: String) -> String {
        "(SELECT min(p.\(q(target))) FROM \(q(table)) AS p WHERE p.\(q(owner)) = s.\(q(StoreLayout.key)))"
    }
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
    /// Deletes the rows whose entity is not one of `?1` (a JSON array).
    func deleteRowsOutside(_ table: String) -> String {
        "DELETE FROM \(q(table)) WHERE NOT \(entityIn(q(StoreLayout.entity), 1))"
    }
    /// Sets `column` to `?1` where it is null, in rows of entities `?2`.
    func fillDefault(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = ?1 WHERE \(q(column)) IS NULL AND \(entityIn(q(StoreLayout.entity), 2))"
    }
    /// One row of entities `?1` without a value in `column`.
    func rowWithoutValue(_ table: String, _ column: String) -> String {
        "SELECT \(q(StoreLayout.key)), \(q(StoreLayout.entity)) FROM \(q(table)) WHERE \(q(column)) IS NULL AND \(entityIn(q(StoreLayout.entity), 1)) LIMIT 1"
    }
    /// Clears `column` in rows whose entity is not one of `?1`.
    func clearOutside(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(column)) IS NOT NULL AND NOT \(entityIn(q(StoreLayout.entity), 1))"
    }
    /// Clears links of `column` whose target is not a row of entities `?1` of `target`.
    func clearDanglingLinks(_ table: String, _ column: String, target: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(column)) IS NOT NULL AND \(q(column)) NOT IN "
            + "(SELECT \(q(StoreLayout.key)) FROM \(q(target)) WHERE \(entityIn(q(StoreLayout.entity), 1)))"
    }
    /// Clears links of `column` held by a row when a row with a smaller key links to the same object.
    func keepFirstLinks(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(column)) IS NOT NULL AND \(q(StoreLayout.key)) > "
            + "(SELECT min(o.\(q(StoreLayout.key))) FROM \(q(table)) AS o WHERE o.\(q(column)) = \(q(table)).\(q(column)))"
    }
    /// Deletes pairs whose first end is not a row of entities `?1` of `first`, or whose second
    /// end is not a row of entities `?2` of `second`.
    func deleteDanglingPairs(_ table: String, first: String, second: String) -> String {
        "DELETE FROM \(q(table)) WHERE \(q(StoreLayout.source)) NOT IN (SELECT \(q(StoreLayout.key)) FROM \(q(first)) WHERE \(entityIn(q(StoreLayout.entity), 1))) "
            + "OR \(q(StoreLayout.target)) NOT IN (SELECT \(q(StoreLayout.key)) FROM \(q(second)) WHERE \(entityIn(q(StoreLayout.entity), 2)))"
    }
    /// One group of rows sharing values of `columns` (none null), with its size.
    func duplicateGroup(_ table: String, _ columns: [String]) -> String {
        let cols = columns.map(q).joined(separator: ", ")
        return "SELECT \(cols), count(*) FROM \(q(table)) WHERE " + columns.map { "\(q($0)) IS NOT NULL" }.joined(separator: " AND ")
            + " GROUP BY \(cols) HAVING count(*) > 1 LIMIT 1"
    }
    /// Two rows whose `columns` equal `?1`, `?2`, ….
    func rowsWithValues(_ table: String, _ columns: [String]) -> String {
        "SELECT \(q(StoreLayout.key)), \(q(StoreLayout.entity)) FROM \(q(table)) WHERE "
            + columns.enumerated().map { "\(q($0.element)) = ?\($0.offset + 1)" }.joined(separator: " AND ") + " ORDER BY \(q(StoreLayout.key)) LIMIT 2"
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
