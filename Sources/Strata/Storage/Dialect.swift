/// The one place SQL text is spelled: DDL from a layout, and the statements
/// the store reuses. A PostgreSQL store would provide its own dialect.
protocol SQLDialect {
    func quote(_ identifier: String) -> String
    func createSchema(_ layout: StoreLayout) -> [String]
}

struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { "\"" + identifier + "\"" }

    func createTable(_ t: StoreLayout.Table) -> String {
        var parts = t.columns.map { c in
            t.primaryKey == [c.name] && !t.withoutRowID ? "\(quote(c.name)) INTEGER PRIMARY KEY" : "\(quote(c.name)) \(c.type)"
        }
        if t.primaryKey.count > 1 || t.withoutRowID { parts.append("PRIMARY KEY (\(t.primaryKey.map(quote).joined(separator: ", ")))") }
        return "CREATE TABLE \(quote(t.name)) (\n  " + parts.joined(separator: ",\n  ") + "\n)" + (t.withoutRowID ? " WITHOUT ROWID" : "")
    }

    func createIndex(_ i: StoreLayout.Index, on table: String) -> String {
        "CREATE \(i.isUnique ? "UNIQUE " : "")INDEX \(quote(i.name)) ON \(quote(table)) (\(i.columns.map(quote).joined(separator: ", ")))"
    }

    /// `Trip.unique(name,startDate,endDate)`: '.', '(' and ',' cannot occur in entity,
    /// attribute or relationship names, so a generated index name never collides with a
    /// table (entity or join table) or with another index.
    static func indexName(_ table: String, _ kind: String, _ columns: [String]) -> String {
        "\(table).\(kind)(\(columns.joined(separator: ",")))"
    }

    /// The complete DDL of a layout: each table, then its indexes.
    func createSchema(_ layout: StoreLayout) -> [String] {
        var out: [String] = []
        for t in layout.tables {
            out.append(createTable(t))
            for i in t.indexes { out.append(createIndex(i, on: t.name)) }
        }
        return out
    }
}
