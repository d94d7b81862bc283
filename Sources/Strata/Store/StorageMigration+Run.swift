extension StorageMigration {
    /// Keys per batch of a row copy: progress is reported between batches.
    static let copyBatch: Int64 = 50_000

    /// Runs the planned steps on `c`, inside the caller's transaction.
    ///
    /// - Parameter report: hears each step, and the rows a copy has done out of its total.
    /// - Throws: `.migration` when the data does not allow a step (a required value
    ///   missing, a unique constraint over duplicates), naming the entity, the
    ///   attribute and one offending object or value; the store's errors otherwise.
    static func run(_ steps: [Step], on c: MigrationConnection, stage: String,
                    report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
        for step in steps {
            migrationLog("\(stage): \(step.description.line)")
            if !step.actions.isEmpty { report(step.description.kind.rawValue, step.description.entity, nil, nil) }
            for action in step.actions {
                migrationLog("  \(sql(action))")
                try perform(action, on: c, report: report)
            }
        }
    }

    private static func perform(_ action: Action, on c: MigrationConnection,
                                report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
        switch action {
        case .run(let sql, let args):
            try c.run(sql, args)

        case .copy(let sql, let table, let entities, let renames, let entity):
            try copy(sql, table: table, entities: entities, renames: renames, entity: entity, on: c, report: report)

        case .check(let sql, let args, let failure):
            if let row = try c.rows(sql, args, limit: 1).first { throw failure(row) }

        case .uniqueIndex(let sql, let table, let columns, let entity, let names):
            do {
                try c.attempt(sql)
            } catch let e as StrataError where e.code == .constraint {
                throw duplicateError(c, table: table, columns: columns, entity: entity, names: names) ?? e
            }

        case .inlineFiles(let rows, let table, let column, let attribute):
            try c.inlineFiles(table: table, column: column, attribute: attribute, rows: rows)

        case .entityCheck(let sql, let table, let entities, let root):
            do {
                try c.attempt(sql)
            } catch let e as StrataError where e.code == .constraint {
                // A row the stage leaves with a name of no entity of the hierarchy: damage the stage does not drop.
                guard let row = try c.rows(c.dialect.rowOutside(table), [c.dialect.nameList(entities)], limit: 1).first, row.count == 2,
                      case .int(let pk) = row[0] else { throw e }
                let name = if case .text(let n) = row[1] { n } else { "" }
                throw StrataError(.corrupt, "\(root)/\(pk): the row's entity name '\(name)' is not an entity of \(root)'s hierarchy "
                                  + "(the store is damaged): the migration cannot keep it (nothing was changed)", entity: root)
            }
        }
    }

    /// Copies the rows of `entities` of `table` in key ranges of ``copyBatch`` keys, reporting
    /// the rows done after each.
    private static func copy(_ sql: String, table: String, entities: [String], renames: SQLValue, entity: String, on c: MigrationConnection,
                             report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
        let kinds = c.dialect.nameList(entities)
        guard let range = try c.rows(c.dialect.keyRange(table), [kinds], limit: 1).first, range.count == 3 else { return }
        let (low, high, total) = (integer(range[0]), integer(range[1]), integer(range[2]))
        guard total > 0 else { return }
        let batch = try c.prepare(sql)
        var done: Int64 = 0
        var from = low - 1
        report("copy", entity, 0, total)
        while from < high {
            let to = from > high - copyBatch ? high : from + copyBatch
            done += try batch([.int(from), .int(to), kinds, renames])
            report("copy", entity, done, total)
            from = to
        }
    }

    /// The error for a unique constraint the rows do not allow: one duplicated value and two of its objects.
    private static func duplicateError(_ c: MigrationConnection, table: String, columns: [String], entity: String, names: [String]) -> StrataError? {
        guard let group = try? c.rows(c.dialect.duplicateGroup(table, columns), [], limit: 1).first, group.count == columns.count + 1 else { return nil }
        let values = Array(group.prefix(columns.count))
        let count = integer(group[columns.count])
        var ids: [String] = []
        for row in (try? c.rows(c.dialect.rowsWithValues(table, columns), values, limit: 2)) ?? [] {
            if row.count == 2, case .int(let pk) = row[0], case .text(let e) = row[1] { ids.append("\(e)/\(pk)") }
        }
        let shared = zip(names, values).map { "\($0) = \(describe($1))" }.joined(separator: ", ")
        let constraint = names.count == 1 ? "unique attribute '\(names[0])'" : "unique constraint (\(names.joined(separator: ", ")))"
        return StrataError(.migration, "entity '\(entity)': cannot adopt \(constraint): \(count) objects share \(shared)"
                           + (ids.isEmpty ? "" : " (\(ids.joined(separator: ", "))\(count > 2 ? ", …" : ""))")
                           + "; remove the duplicates before the storage change — a deduplicate operation or a hook in the stage's "
                           + "willMigrate — or set \"onDuplicates\": \"keepFirst\" or \"keepLast\" on the stage",
                           entity: entity, attribute: names.count == 1 ? names[0] : nil)
    }

    /// An integer a query returned (a null, from an aggregate over no rows: 0).
    private static func integer(_ v: SQLValue) -> Int64 {
        switch v {
        case .int(let n): return n
        case .double(let d): return d.isFinite && abs(d) < 9.2e18 ? Int64(d) : 0
        default: return 0
        }
    }

    private static func describe(_ v: SQLValue) -> String {
        switch v {
        case .null: return "null"
        case .int(let n): return String(n)
        case .double(let d): return String(d)
        case .text(let t):
            var w = JSONWriter()
            w.string(t.count > 80 ? String(t.prefix(80)) + "…" : t)
            return w.string
        case .blob(let b): return "<\(b.count) bytes>"
        }
    }
}
