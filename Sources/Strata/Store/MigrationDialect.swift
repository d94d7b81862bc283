/// How a SQL store spells the statements of a storage migration, and what its
/// engine can change in place: the planner (``StorageMigration``) decides which
/// tables change how and in which order, and asks the dialect for every
/// statement. The statements every engine runs as ISO SQL are written once,
/// below, from the dialect's quoting, parameters and name lists; a store spells
/// only what its engine does its own way. Identifiers are quoted; values —
/// defaults, entity names, key ranges — are always bound, in the order each
/// function documents (`$n` is the statement's n-th argument, as the engine
/// spells it: ``parameter(_:)``).
protocol MigrationDialect {
    // MARK: What the engine changes in place

    /// Whether a column can go without rebuilding its table. Without it, a table that
    /// loses a column is rebuilt (created anew, rows copied); with it, the table is
    /// altered in place and the indexes over the column go with it.
    var dropsColumnsInPlace: Bool { get }

    // MARK: Spelling

    func quote(_ identifier: String) -> String
    /// The n-th argument of a statement.
    func parameter(_ n: Int) -> String
    /// Whether `expression` is one of the entity names argument `n` holds (``nameList(_:)``).
    func isOneOf(_ expression: String, names n: Int) -> String
    /// The entity `expression` is renamed to through argument `n` (a JSON object,
    /// ``nameMap(_:)``), or itself.
    func renamed(_ expression: String, through n: Int) -> String

    // MARK: Names and bound lists

    /// The name a table is built under before it takes its final name.
    func buildingName(_ table: String) -> String
    /// The name the store gives the layout's index `name` (the same, or shortened to fit).
    func storedIndexName(_ name: String) -> String
    /// A list of entity names, bound where a statement takes one.
    func nameList(_ names: [String]) -> SQLValue

    // MARK: Statements each engine spells its own way

    /// A table of the layout, without its indexes.
    func createTable(_ t: StoreLayout.Table) -> String
    func createIndex(_ i: StoreLayout.Index, on table: String) -> String
    /// Renames a table (and what the engine names after it).
    func renameTable(_ from: String, to: String) -> [String]
    func addColumn(_ table: String, _ column: StoreLayout.Column) -> String
    /// Drops index `i` (its stored name) of `table`.
    func dropIndex(_ i: StoreLayout.Index, on table: String) -> String
    /// Makes the full-text index of a searchable column of `table` (which holds its final rows)
    /// and fills it.
    func createSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> [String]
    /// Drops the full-text index of a searchable column of `table`.
    func dropSearchIndex(_ s: StoreLayout.SearchIndex, on table: String) -> String
    /// Index `i` (its stored name) of `table` takes `name`; nil for an engine that renames no
    /// index (an index kept in place keeps its old name there).
    func renameIndex(_ i: StoreLayout.Index, to name: String, on table: String) -> String?
    /// Copies a link set's (owner, target) pairs into a set of pairs (a pair already there is skipped).
    func copyPairs(into: String, from table: String, owner: String, target: String) -> String
    /// Renames the entities of rows through `$1` (``nameMap(_:)``).
    func renameEntities(_ table: String) -> String
    /// Statements that start (or move) the key sequence of root table `table` past every
    /// row of it and past the sequence of old root table `from` (which exists, unless it
    /// is `table`).
    func continueSequence(_ table: String, from: String) -> [(sql: String, args: [SQLValue])]
    /// Statements that remove the key sequence of old root table `table`.
    func dropSequence(_ table: String) -> [(sql: String, args: [SQLValue])]
    /// The keys and file names of the rows of `column` of `table` whose value is kept in
    /// an external-storage file; nil for a store that keeps every value in its row.
    func externalRows(_ table: String, _ column: String) -> String?
    /// The statements that drop the check that the rows of `table` name only `entities`
    /// (``StoreLayout/Table/entities``) and make it again; nil for an engine whose tables
    /// carry none.
    func entityCheck(_ table: String, _ entities: [String]) -> (drop: String, add: String)?
}

/// The statements every engine runs as they are (ISO SQL), spelled once.
extension MigrationDialect {
    private var key: String { quote(StoreLayout.key) }
    private var entity: String { quote(StoreLayout.entity) }

    /// A column's name between two renames (swaps and chains of renames go through one).
    func renamingName(_ index: Int) -> String { "_strata_renaming_\(index)" }
    /// Entity renames (old name → new name) as a JSON object, bound where a statement takes them.
    func nameMap(_ renames: [(String, String)]) -> SQLValue {
        var w = JSONWriter()
        w.beginObject()
        for (k, v) in renames { w.key(k); w.string(v) }
        w.endObject()
        return .text(w.string)
    }

    func renameColumn(_ table: String, from: String, to: String) -> String {
        "ALTER TABLE \(quote(table)) RENAME COLUMN \(quote(from)) TO \(quote(to))"
    }
    /// Only when ``dropsColumnsInPlace``.
    func dropColumn(_ table: String, _ column: String) -> String { "ALTER TABLE \(quote(table)) DROP COLUMN \(quote(column))" }
    func dropTable(_ table: String) -> String { "DROP TABLE \(quote(table))" }

    /// Copies the rows of entities `$3` of `from` whose keys are in (`$1`, `$2`] into `into`;
    /// the entity of each row is renamed through `$4`. `values` are the expressions of
    /// `columns` over the source row `s`.
    func copyRows(into: String, columns: [String], from: String, values: [String]) -> String {
        "INSERT INTO \(quote(into)) (\(key), \(entity)\(columns.map { ", " + quote($0) }.joined())) "
            + "SELECT s.\(key), \(renamed("s." + entity, through: 4))"
            + values.map { ", " + $0 }.joined()
            + " FROM \(quote(from)) AS s WHERE \(isOneOf("s." + entity, names: 3)) AND s.\(key) > \(parameter(1)) AND s.\(key) <= \(parameter(2))"
    }
    /// The smallest key, the largest and the count of the rows of entities `$1` of `table`.
    func keyRange(_ table: String) -> String {
        "SELECT min(\(key)), max(\(key)), count(*) FROM \(quote(table)) WHERE \(isOneOf(entity, names: 1))"
    }
    /// A column of the source row `s` of a copy.
    func sourceColumn(_ column: String) -> String { "s.\(quote(column))" }
    /// The (smallest) target a link set (`table`, `owner`, `target`) holds for the source row `s`.
    func linkTarget(_ table: String, owner: String, target: String) -> String {
        "(SELECT min(p.\(quote(target))) FROM \(quote(table)) AS p WHERE p.\(quote(owner)) = s.\(key))"
    }
    /// Deletes the rows whose entity is not one of `$1`.
    func deleteRowsOutside(_ table: String) -> String {
        "DELETE FROM \(quote(table)) WHERE NOT \(isOneOf(entity, names: 1))"
    }
    /// The key and entity of one row whose entity is not one of `$1`.
    func rowOutside(_ table: String) -> String {
        "SELECT \(key), \(entity) FROM \(quote(table)) WHERE NOT \(isOneOf(entity, names: 1)) LIMIT 1"
    }
    /// No check by default (SQLite: a store file's checks are the file's to bypass).
    func entityCheck(_ table: String, _ entities: [String]) -> (drop: String, add: String)? { nil }
    /// Sets `column` to `$1` where it is null, in rows of entities `$2` (and where column
    /// `present`, when given, is not null: a field of a composite that has a value).
    func fillDefault(_ table: String, _ column: String, wherePresent present: String? = nil) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = \(parameter(1)) WHERE \(quote(column)) IS NULL\(presence(present)) AND \(isOneOf(entity, names: 2))"
    }
    /// The key and entity of one row of entities `$1` without a value in `column` (where
    /// column `present`, when given, is not null).
    func rowWithoutValue(_ table: String, _ column: String, wherePresent present: String? = nil) -> String {
        "SELECT \(key), \(entity) FROM \(quote(table)) WHERE \(quote(column)) IS NULL\(presence(present)) AND \(isOneOf(entity, names: 1)) LIMIT 1"
    }
    private func presence(_ column: String?) -> String { column.map { " AND \(quote($0)) IS NOT NULL" } ?? "" }
    /// Clears `column` in rows whose entity is not one of `$1`.
    func clearOutside(_ table: String, _ column: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = NULL WHERE \(quote(column)) IS NOT NULL AND NOT \(isOneOf(entity, names: 1))"
    }
    /// Clears links of `column` whose target is not a row of entities `$1` of `target`.
    func clearDanglingLinks(_ table: String, _ column: String, target: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = NULL WHERE \(quote(column)) IS NOT NULL AND \(quote(column)) NOT IN "
            + "(SELECT \(key) FROM \(quote(target)) WHERE \(isOneOf(entity, names: 1)))"
    }
    /// Clears links of `column` held by a row when a row with a smaller key links to the same object.
    func keepFirstLinks(_ table: String, _ column: String) -> String {
        "UPDATE \(quote(table)) SET \(quote(column)) = NULL WHERE \(quote(column)) IS NOT NULL AND \(key) > "
            + "(SELECT min(o.\(key)) FROM \(quote(table)) AS o WHERE o.\(quote(column)) = \(quote(table)).\(quote(column)))"
    }
    /// Deletes pairs whose first end is not a row of entities `$1` of `first`, or whose
    /// second end is not a row of entities `$2` of `second`.
    func deleteDanglingPairs(_ table: String, first: String, second: String) -> String {
        "DELETE FROM \(quote(table)) WHERE \(quote(StoreLayout.source)) NOT IN (SELECT \(key) FROM \(quote(first)) WHERE \(isOneOf(entity, names: 1))) "
            + "OR \(quote(StoreLayout.target)) NOT IN (SELECT \(key) FROM \(quote(second)) WHERE \(isOneOf(entity, names: 2)))"
    }
    /// The values of `columns` (none null) of one group of rows sharing them, and the group's size.
    func duplicateGroup(_ table: String, _ columns: [String]) -> String {
        let cols = columns.map(quote).joined(separator: ", ")
        return "SELECT \(cols), count(*) FROM \(quote(table)) WHERE " + columns.map { "\(quote($0)) IS NOT NULL" }.joined(separator: " AND ")
            + " GROUP BY \(cols) HAVING count(*) > 1 LIMIT 1"
    }
    /// The key and entity of two rows whose `columns` equal `$1`, `$2`, … (key order).
    func rowsWithValues(_ table: String, _ columns: [String]) -> String {
        "SELECT \(key), \(entity) FROM \(quote(table)) WHERE "
            + columns.enumerated().map { "\(quote($0.element)) = \(parameter($0.offset + 1))" }.joined(separator: " AND ") + " ORDER BY \(key) LIMIT 2"
    }
}

/// What a migration's steps run on: the store's connection, inside the stage's
/// transaction (``StorageMigration/run(_:on:stage:report:)``).
protocol MigrationConnection {
    /// How the statements given to this connection are spelled.
    var dialect: any MigrationDialect { get }
    /// Runs one statement; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ args: [SQLValue]) throws -> Int64
    /// A statement prepared once and run many times (the batches of a copy); each run
    /// returns the number of rows it changed.
    func prepare(_ sql: String) throws -> (_ args: [SQLValue]) throws -> Int64
    /// The rows of a query, at most `limit` of them.
    func rows(_ sql: String, _ args: [SQLValue], limit: Int) throws -> [[SQLValue]]
    /// Runs a statement that the data may refuse (a unique index over duplicates): when it
    /// fails, the transaction goes on as if it had not run.
    func attempt(_ sql: String) throws
    /// Moves the external-storage files of `column` of `table` (the rows `rows` selects)
    /// back into the rows: external storage turned off for `attribute`.
    func inlineFiles(table: String, column: String, attribute: Attribute, rows: String) throws
}
