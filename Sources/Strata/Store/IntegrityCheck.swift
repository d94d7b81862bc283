/// The rows of a query on an integrity check's snapshot, as a store gives them to
/// ``IntegrityCheck`` (SQLite: a statement on the check's read transaction;
/// PostgreSQL: a result of its REPEATABLE READ transaction).
protocol IntegrityRows {
    associatedtype Cursor: RowCursor
    var dialect: any QueryDialect { get }
    func rows(_ sql: String, _ args: [SQLValue]) throws -> Cursor
}

/// Strata's own integrity checks, written once for every SQL store (ISO SQL through the
/// store's ``QueryDialect``): links and pairs that point at missing objects or objects of
/// the wrong entity, values the object writer refuses, history rows that do not parse.
/// Each query reads a bounded number of rows (pages by key, or only the problems, at most
/// the report's room): memory does not grow with the store.
enum IntegrityCheck {
    /// Rows read per page of the value check.
    static let page = 1000

    /// Links, pairs and values, on the snapshot `source` reads.
    static func run<S: IntegrityRows>(_ source: S, schema: Schema, _ report: inout IntegrityReport) throws {
        try report.recording(.link) { try links(source, schema: schema, &$0) }
        try report.recording(.pair) { try pairs(source, schema: schema, &$0) }
        try report.recording(.value) { try values(source, schema: schema, &$0) }
    }

    /// The names of `entity`'s kind (itself and its subentities), as bound parameters from `first` on.
    private static func kind(_ entity: Entity, _ d: any QueryDialect, first: Int) -> (sql: String, args: [SQLValue]) {
        let names = entity.descendants.map(\.name)
        return ((0..<names.count).map { d.parameter(first + $0) }.joined(separator: ", "), names.map { .text($0) })
    }

    private static func id(_ rows: some RowCursor, entity: Int32, key: Int32, fallback: String) -> String {
        let name = rows.kind(entity) == .text ? String(decoding: rows.text(entity), as: UTF8.self) : fallback
        return "\(name)/\(rows.int64(key))"
    }

    /// Every link held in a row: it must name an existing object of the relationship's destination (or a subentity).
    static func links<S: IntegrityRows>(_ s: S, schema: Schema, _ report: inout IntegrityReport) throws {
        let d = s.dialect, pk = d.keyColumn, en = d.entityColumn
        for e in schema.entities {
            for r in e.ownRelationships where r.isHeldInRow {
                guard report.room > 0 else { return }
                let link = "t.\(d.quote(d.column(.link(r))))"
                let (names, args) = kind(r.destination, d, first: 1)
                let sql = d.select("t.\(pk), t.\(en), \(link), x.\(en)",
                                   from: "\(d.quote(d.table(e))) t LEFT JOIN \(d.quote(d.table(r.destination))) x ON x.\(pk) = \(link)",
                                   where: "\(link) IS NOT NULL AND (x.\(pk) IS NULL OR x.\(en) NOT IN (\(names)))",
                                   orderBy: "t.\(pk)", paging: d.limit("\(report.room + 1)", offset: nil))
                var rows = try s.rows(sql, args)
                while try rows.next() {
                    let owner = id(rows, entity: 1, key: 0, fallback: e.name)
                    let target = rows.int64(2)
                    let message = rows.kind(3) == .null
                        ? "\(owner): '\(r.name)' points at \(r.destination.name) key \(target), which does not exist"
                        : "\(owner): '\(r.name)' points at \(String(decoding: rows.text(3), as: UTF8.self))/\(target), "
                          + "which is not a \(r.destination.name)"
                    report.add(.link, message, entity: e.name, attribute: r.name, id: owner)
                }
            }
        }
    }

    /// Every pair of a join table: its owner and its target must exist, each of its relationship's side.
    static func pairs<S: IntegrityRows>(_ s: S, schema: Schema, _ report: inout IntegrityReport) throws {
        let d = s.dialect, pk = d.keyColumn, en = d.entityColumn
        for (_, r) in schema.pairSets {
            guard report.room > 0 else { return }
            let (table, ownerColumn, targetColumn) = d.pairTable(r)
            let owner = "p.\(d.quote(ownerColumn))", target = "p.\(d.quote(targetColumn))"
            let (owners, ownerArgs) = kind(r.entity, d, first: 1)
            let (targets, targetArgs) = kind(r.destination, d, first: 1 + ownerArgs.count)
            let sql = d.select("\(owner), \(target), o.\(en), x.\(en)",
                               from: "\(d.quote(table)) p LEFT JOIN \(d.quote(d.table(r.entity))) o ON o.\(pk) = \(owner) "
                                   + "LEFT JOIN \(d.quote(d.table(r.destination))) x ON x.\(pk) = \(target)",
                               where: "o.\(pk) IS NULL OR x.\(pk) IS NULL OR o.\(en) NOT IN (\(owners)) OR x.\(en) NOT IN (\(targets))",
                               orderBy: "1, 2", paging: d.limit("\(report.room + 1)", offset: nil))
            var rows = try s.rows(sql, ownerArgs + targetArgs)
            while try rows.next() {
                let ownerID = id(rows, entity: 2, key: 0, fallback: r.entity.name)
                let targetID = id(rows, entity: 3, key: 1, fallback: r.destination.name)
                let what = rows.kind(2) == .null ? "its owner \(ownerID) does not exist"
                    : rows.kind(3) == .null ? "its target \(targetID) does not exist"
                    : "it pairs \(ownerID) with \(targetID), which are not a \(r.entity.name) and a \(r.destination.name)"
                report.add(.pair, "a pair of '\(r.entity.name).\(r.name)' (table \(table)): \(what)",
                           entity: r.entity.name, attribute: r.name, id: ownerID)
            }
        }
    }

    /// Every row of every hierarchy, written by the object writer (its checks of each stored value,
    /// its entity name), one row at a time so that each damaged row is named and the scan goes on.
    static func values<S: IntegrityRows>(_ s: S, schema: Schema, _ report: inout IntegrityReport) throws {
        let d = s.dialect, pk = d.keyColumn
        for root in schema.rootEntities {
            let plan = ObjectPlan(entities: root.descendants, relationships: false)
            let (list, joins) = selectList(plan, alias: "t", dialect: d)
            let sql = d.select(list, from: "\(d.quote(d.table(root))) t" + joins,
                               where: "t.\(pk) > \(d.parameter(1))", orderBy: "t.\(pk)", paging: d.limit("\(page)", offset: nil))
            var after = Int64.min
            while report.room > 0 {
                var rows = try s.rows(sql, [.int(after)])
                var none: [S.Cursor] = []
                let writer = ObjectWriter(plan: plan)
                var read = 0
                while true {
                    do {
                        guard try writer.write(&rows, prefetched: &none, limit: 1) else { break }
                    } catch let e as StrataError where e.code == .corrupt {
                        report.add(.value, e.message, entity: e.entity ?? root.name, attribute: e.attribute,
                                   id: id(rows, entity: 1, key: 0, fallback: root.name))
                    }
                    after = rows.int64(0)
                    read += 1
                    if read % 64 == 0 { _ = writer.takeBatch() }
                }
                if read < page { break }
            }
        }
    }

    /// Every history transaction and change row, read as a history fetch reads them, in pages of
    /// sequences. The first row that does not parse is reported (rows after it are not read: a
    /// damaged row cannot say where the next one starts).
    static func history(_ storage: HistoryStorage, _ report: inout IntegrityReport) throws {
        try report.recording(.history) { _ in
            try storage.readHistory { snapshot in
                _ = try snapshot.names()
                var after: Int64 = 0
                while true {
                    var q = HistoryQuery()
                    q.filter = .compare(.sequence, .greater, .int(after))
                    q.sort = [(.sequence, true)]
                    q.limit = Int64(page)
                    var read = 0
                    try snapshot.transactions(q) { t, _ in after = t.sequence; read += 1 }
                    if read < page { break }
                }
            }
        }
    }
}
