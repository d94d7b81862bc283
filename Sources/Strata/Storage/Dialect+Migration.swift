/// The SQL of migration steps (`SQLiteMigration`). Identifiers are quoted
/// here; values — defaults, entity names, key ranges — are always bound.
extension SQLiteDialect {
    private static func q(_ identifier: String) -> String { SQLiteDialect().quote(identifier) }

    /// The name a table is built under before it takes its final name (`_strata_new_Trip`).
    static func buildingName(_ table: String) -> String { "_strata_new_" + table }
    /// A column's name between two renames (swaps and chains of renames go through one).
    static func renamingName(_ index: Int) -> String { "_strata_renaming_\(index)" }

    static func renameTable(_ from: String, to: String) -> String { "ALTER TABLE \(q(from)) RENAME TO \(q(to))" }
    static func renameColumn(_ table: String, from: String, to: String) -> String {
        "ALTER TABLE \(q(table)) RENAME COLUMN \(q(from)) TO \(q(to))"
    }
    static func addColumn(_ table: String, _ column: StoreLayout.Column) -> String {
        "ALTER TABLE \(q(table)) ADD COLUMN \(q(column.name)) \(SQLiteDialect.columnType(column))"
    }
    static func dropTable(_ table: String) -> String { "DROP TABLE \(q(table))" }
    static func dropIndex(_ index: String) -> String { "DROP INDEX \(q(index))" }

    /// `?n` holds a JSON array of entity names (the list binding of `QueryDialect.inJSONArray`).
    static func entityIn(_ column: String, _ n: Int) -> String { SQLiteDialect().inJSONArray(column, parameter: "?\(n)") }

    /// Copies the rows of entities `?3` (a JSON array) of `from` whose keys are in (`?1`, `?2`]
    /// into `into`; the entity of each row is renamed through `?4` (a JSON object old → new name).
    /// `values` are the expressions of `columns` over the source row `s`.
    static func copyRows(into: String, columns: [String], from: String, values: [String]) -> String {
        "INSERT INTO \(q(into)) (\(q(StoreLayout.key)), \(q(StoreLayout.entity))\(columns.map { ", " + q($0) }.joined())) "
            + "SELECT s.\(q(StoreLayout.key)), coalesce(json_extract(?4, '$.\"' || s.\(q(StoreLayout.entity)) || '\"'), s.\(q(StoreLayout.entity)))"
            + values.map { ", " + $0 }.joined()
            + " FROM \(q(from)) AS s WHERE \(entityIn("s." + q(StoreLayout.entity), 3)) AND s.\(q(StoreLayout.key)) > ?1 AND s.\(q(StoreLayout.key)) <= ?2"
    }
    /// The key range and row count of the rows of entities `?1` (a JSON array) of `table`.
    static func keyRange(_ table: String) -> String {
        "SELECT min(\(q(StoreLayout.key))), max(\(q(StoreLayout.key))), count(*) FROM \(q(table)) WHERE \(entityIn(q(StoreLayout.entity), 1))"
    }
    /// A column of the source row `s` of a copy.
    static func sourceColumn(_ column: String) -> String { "s.\(q(column))" }
    /// The (smallest) target a link set (`table`, `owner`, `target`) holds for the source row `s`.
    static func linkTarget(_ table: String, owner: String, target: String) -> String {
        "(SELECT min(p.\(q(target))) FROM \(q(table)) AS p WHERE p.\(q(owner)) = s.\(q(StoreLayout.key)))"
    }
    /// Copies a link set's (owner, target) pairs into a set of pairs.
    static func copyPairs(into: String, from table: String, owner: String, target: String) -> String {
        "INSERT OR IGNORE INTO \(q(into)) (\(q(StoreLayout.source)), \(q(StoreLayout.target))) SELECT p.\(q(owner)), p.\(q(target)) FROM \(q(table)) AS p "
            + "WHERE p.\(q(owner)) IS NOT NULL AND p.\(q(target)) IS NOT NULL"
    }

    /// Renames the entities of rows through `?1` (a JSON object old → new name).
    static func renameEntities(_ table: String) -> String {
        "UPDATE \(q(table)) SET \(q(StoreLayout.entity)) = json_extract(?1, '$.\"' || \(q(StoreLayout.entity)) || '\"') "
            + "WHERE \(q(StoreLayout.entity)) IN (SELECT key FROM json_each(?1))"
    }
    /// Deletes the rows whose entity is not one of `?1` (a JSON array).
    static func deleteRowsOutside(_ table: String) -> String {
        "DELETE FROM \(q(table)) WHERE NOT \(entityIn(q(StoreLayout.entity), 1))"
    }
    /// Sets `column` to `?1` where it is null, in rows of entities `?2`.
    static func fillDefault(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = ?1 WHERE \(q(column)) IS NULL AND \(entityIn(q(StoreLayout.entity), 2))"
    }
    /// One row of entities `?1` without a value in `column`.
    static func rowWithoutValue(_ table: String, _ column: String) -> String {
        "SELECT \(q(StoreLayout.key)), \(q(StoreLayout.entity)) FROM \(q(table)) WHERE \(q(column)) IS NULL AND \(entityIn(q(StoreLayout.entity), 1)) LIMIT 1"
    }
    /// Clears `column` in rows whose entity is not one of `?1`.
    static func clearOutside(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(column)) IS NOT NULL AND NOT \(entityIn(q(StoreLayout.entity), 1))"
    }
    /// Clears links of `column` whose target is not a row of entities `?1` of `target`.
    static func clearDanglingLinks(_ table: String, _ column: String, target: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(column)) IS NOT NULL AND \(q(column)) NOT IN "
            + "(SELECT \(q(StoreLayout.key)) FROM \(q(target)) WHERE \(entityIn(q(StoreLayout.entity), 1)))"
    }
    /// Clears links of `column` held by a row when a row with a smaller key links to the same object.
    static func keepFirstLinks(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = NULL WHERE \(q(column)) IS NOT NULL AND \(q(StoreLayout.key)) > "
            + "(SELECT min(o.\(q(StoreLayout.key))) FROM \(q(table)) AS o WHERE o.\(q(column)) = \(q(table)).\(q(column)))"
    }
    /// Deletes pairs whose first end is not a row of entities `?1` of `first`, or whose second
    /// end is not a row of entities `?2` of `second`.
    static func deleteDanglingPairs(_ table: String, first: String, second: String) -> String {
        "DELETE FROM \(q(table)) WHERE \(q(StoreLayout.source)) NOT IN (SELECT \(q(StoreLayout.key)) FROM \(q(first)) WHERE \(entityIn(q(StoreLayout.entity), 1))) "
            + "OR \(q(StoreLayout.target)) NOT IN (SELECT \(q(StoreLayout.key)) FROM \(q(second)) WHERE \(entityIn(q(StoreLayout.entity), 2)))"
    }
    /// One group of rows sharing values of `columns` (none null), with its size.
    static func duplicateGroup(_ table: String, _ columns: [String]) -> String {
        let cols = columns.map(q).joined(separator: ", ")
        return "SELECT \(cols), count(*) FROM \(q(table)) WHERE " + columns.map { "\(q($0)) IS NOT NULL" }.joined(separator: " AND ")
            + " GROUP BY \(cols) HAVING count(*) > 1 LIMIT 1"
    }
    /// Two rows whose `columns` equal `?1`, `?2`, ….
    static func rowsWithValues(_ table: String, _ columns: [String]) -> String {
        "SELECT \(q(StoreLayout.key)), \(q(StoreLayout.entity)) FROM \(q(table)) WHERE "
            + columns.enumerated().map { "\(q($0.element)) = ?\($0.offset + 1)" }.joined(separator: " AND ") + " ORDER BY \(q(StoreLayout.key)) LIMIT 2"
    }
    /// The indexes of table `?1` made by CREATE INDEX (not SQLite's automatic ones): name and uniqueness.
    static let indexList = "SELECT name, \"unique\" FROM pragma_index_list(?1) WHERE origin = 'c'"
    /// The columns of index `?1`, in order.
    static let indexColumns = "SELECT name FROM pragma_index_info(?1) ORDER BY seqno"

    /// Starts (or moves past `?2`'s keys) the key sequence of root table `?1`: the next key
    /// is past every row of the table and past the sequence of old root `?2`.
    static func continueSequence(_ table: String) -> String {
        "INSERT INTO strata_sequence (entity, next) VALUES (?1, max((SELECT coalesce(max(\(q(StoreLayout.key))), 0) + 1 FROM \(q(table))), "
            + "coalesce((SELECT next FROM strata_sequence WHERE entity = ?2), 1))) ON CONFLICT(entity) DO UPDATE SET next = max(next, excluded.next)"
    }
    static let dropSequence = "DELETE FROM strata_sequence WHERE entity = ?1"
    /// The rows of `column` of `table` naming external-storage files.
    static func externalRows(_ table: String, _ column: String) -> String {
        "SELECT \(q(StoreLayout.key)), \(q(column)) FROM \(q(table)) WHERE typeof(\(q(column))) = 'text'"
    }
    static func setColumn(_ table: String, _ column: String) -> String {
        "UPDATE \(q(table)) SET \(q(column)) = ?1 WHERE \(q(StoreLayout.key)) = ?2"
    }
}
