/// Checks, when a PostgreSQL store opens, that its schema holds exactly the tables,
/// columns and indexes the stored schema's layout makes (and the store's own
/// metadata and history): the database is shared, so anything else means someone changed it.
enum PostgresStorageCheck {
    /// Checks `catalog` (``PostgresCatalog``, read under the store's lock) against `layout`.
    /// - Throws: `.corrupt` naming the first difference.
    static func verify(_ catalog: PostgresCatalog, layout: StoreLayout, location: String, version: String) throws {
        func damaged(_ what: String) -> StrataError {
            StrataError(.corrupt, "\(location) does not match its stored schema: \(what) (stored schema version \(version); nothing was changed)")
        }
        var found = catalog.columns
        for t in layout.tables {
            guard let cols = found.removeValue(forKey: t.name) else { throw damaged("the table '\(t.name)' is missing") }
            // In any order: a migration adds columns at the end of a table it alters in place.
            let want = t.columns.map { ($0.name, PostgresStorageCheck.type($0)) }
            guard cols.map(\.0).sorted() == want.map(\.0).sorted() else {
                throw damaged("the table '\(t.name)' has the columns \(cols.map(\.0).joined(separator: ", ")), not \(want.map(\.0).joined(separator: ", "))")
            }
            let types = Dictionary(cols, uniquingKeysWith: { a, _ in a })
            for (name, need) in want where types[name] != need {
                throw damaged("the column '\(t.name).\(name)' is \(types[name] ?? "missing"), not \(need)")
            }
        }
        found.removeValue(forKey: "strata_metadata")
        // The history's tables: none (no save was recorded) or all, as Strata makes them.
        try PostgresHistoryTables.verify(found.filter { PostgresDialect.historyTableNames.contains($0.key) }.mapValues { Optional($0) }, damaged)
        for name in PostgresDialect.historyTableNames { found.removeValue(forKey: name) }
        if let extra = found.keys.sorted().first { throw damaged("it holds a table '\(extra)' the schema does not make") }
        for t in layout.tables {
            for i in t.indexes where !catalog.indexes.contains(PostgresDialect.indexName(i.name)) {
                throw damaged("the index '\(i.name)' is missing")
            }
        }
    }

    /// The type `format_type` shows for a column of the layout.
    static func type(_ c: StoreLayout.Column) -> String {
        switch c.content {
        case .key, .link, .pairEnd: return "bigint"
        case .entityName: return "text"
        case .value(let type):
            switch type {
            case .string, .uuid, .url, .decimal, .json: return "text"
            case .int, .bool, .composite: return "bigint"
            case .double, .date: return "double precision"
            case .data: return "bytea"
            }
        }
    }
}
