extension SQLiteMigration {
    /// Keys per batch of a row copy: progress is reported between batches.
    static let copyBatch: Int64 = 50_000

    /// Runs the planned steps on `c`, inside the caller's transaction.
    ///
    /// - Parameters:
    ///   - folder: the store's external-storage folder (nil in memory).
    ///   - report: hears each step, and the rows a copy has done out of its total.
    /// - Throws: `.migration` when the data does not allow a step (a required value
    ///   missing, a unique constraint over duplicates), naming the entity, the
    ///   attribute and one offending object or value; SQLite's errors otherwise.
    static func run(_ steps: [Step], on c: Connection, folder: ExternalFolder?, stage: String,
                    report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
        for step in steps {
            migrationLog("\(stage): \(step.description.line)")
            if !step.actions.isEmpty { report(step.description.kind.rawValue, step.description.entity, nil, nil) }
            for action in step.actions {
                migrationLog("  \(sql(action))")
                try perform(action, on: c, folder: folder, report: report)
            }
        }
    }

    private static func oneShot(_ c: Connection, _ sql: String) throws -> Statement {
        try Statement(connection: c, sql: sql)
    }

    private static func perform(_ action: Action, on c: Connection, folder: ExternalFolder?,
                                report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
        switch action {
        case .run(let sql, let args):
            try oneShot(c, sql).execute(args)

        case .copy(let sql, let table, let entities, let renames, let entity):
            let kinds = jsonArray(entities)
            var low: Int64 = 0, high: Int64 = 0, total: Int64 = 0
            try oneShot(c, SQLiteDialect.keyRange(table)).query([kinds]) { s in
                low = s.int64(0); high = s.int64(1); total = s.int64(2)
            }
            guard total > 0 else { return }
            let copy = try oneShot(c, sql)
            var done: Int64 = 0
            var from = low - 1
            report("copy", entity, 0, total)
            while from < high {
                let to = from > high - copyBatch ? high : from + copyBatch
                try copy.execute([.int(from), .int(to), kinds, .text(renames)])
                done += Int64(c.changes)
                report("copy", entity, done, total)
                from = to
            }

        case .check(let sql, let args, let failure):
            var row: [SQLValue]?
            try oneShot(c, sql).query(args) { s in
                if row == nil { row = (0..<s.columnCount).map { s.value(at: $0) } }
            }
            if let row { throw failure(row) }

        case .uniqueIndex(let sql, let table, let columns, let entity, let names):
            do {
                try oneShot(c, sql).execute()
            } catch let e as StrataError where e.code == .constraint {
                throw duplicateError(c, table: table, columns: columns, entity: entity, names: names) ?? e
            }

        case .inlineFiles(let table, let column, let attribute):
            guard let folder else { return }
            var rows: [(Int64, [UInt8])] = []
            try oneShot(c, SQLiteDialect.externalRows(table, column)).query { s in rows.append((s.int64(0), Array(s.text(1).utf8))) }
            let update = try oneShot(c, SQLiteDialect.setColumn(table, column))
            for (pk, name) in rows {
                let bytes = try folder.read(name, of: attribute, pk: pk)
                try update.execute([.blob(bytes), .int(pk)])
            }
        }
    }

    /// The error for a unique constraint the rows do not allow: one duplicated value and two of its objects.
    private static func duplicateError(_ c: Connection, table: String, columns: [String], entity: String, names: [String]) -> StrataError? {
        var values: [SQLValue] = []
        var count: Int64 = 0
        do {
            try oneShot(c, SQLiteDialect.duplicateGroup(table, columns)).query { s in
                values = (0..<Int32(columns.count)).map { s.value(at: $0) }
                count = s.int64(Int32(columns.count))
            }
        } catch { return nil }
        guard !values.isEmpty else { return nil }
        var ids: [String] = []
        _ = try? oneShot(c, SQLiteDialect.rowsWithValues(table, columns)).query(values) { s in ids.append("\(s.text(1))/\(s.int64(0))") }
        let shared = zip(names, values).map { "\($0) = \(describe($1))" }.joined(separator: ", ")
        let constraint = names.count == 1 ? "unique attribute '\(names[0])'" : "unique constraint (\(names.joined(separator: ", ")))"
        return StrataError(.migration, "entity '\(entity)': cannot adopt \(constraint): \(count) objects share \(shared)"
                           + (ids.isEmpty ? "" : " (\(ids.joined(separator: ", "))\(count > 2 ? ", …" : ""))")
                           + "; remove the duplicates before the storage change — a deduplicate operation or a hook in the stage's "
                           + "willMigrate — or set \"onDuplicates\": \"keepFirst\" or \"keepLast\" on the stage",
                           entity: entity, attribute: names.count == 1 ? names[0] : nil)
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
