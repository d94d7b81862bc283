import CSQLite

/// The store-writer primitives on SQLite, in one of two modes:
///
/// - **saving**: statements write the store's tables inside the save's
///   transaction; external-storage values go to files, and the files of
///   replaced or deleted values are removed once the save commits;
/// - **overlay** (a read that includes pending changes): nothing of the
///   store is written and its write lock is not taken. The first write to a
///   table creates, for this connection only, two temporary tables and a
///   temporary view named like the table, which shadows it for every
///   statement of the read:
///
///       temp."T.rows"    rows written by the replay (new rows, and copies of
///                        store rows taken before they are changed)
///       temp."T.hidden"  keys of store rows that the overlay replaces or deletes
///       temp."T"         SELECT * FROM main."T" WHERE key NOT IN hidden
///                        UNION ALL SELECT * FROM temp."T.rows"
///
///   A change to store rows first copies the rows it matches into `T.rows`
///   and hides them (`target(_:where:)`), then runs the same statement on
///   `T.rows`. The read's transaction is rolled back at its end, which drops
///   the overlay. Unique indexes do not apply to the overlay: reads show
///   pending changes as they are, collisions included; the save refuses them.
final class SQLiteWriter: StoreWriter {
    unowned let session: SQLiteSession
    let isSaving: Bool
    var connection: Connection { session.connection }
    var dialect: SQLiteDialect { session.dialect }
    /// External-storage files written by this save (removed if it fails).
    private(set) var writtenFiles: [String] = []
    /// Files of replaced or deleted values (removed once the save commits).
    private(set) var obsoleteFiles: [String] = []
    /// Tables shadowed by the overlay so far.
    private var overlaid: Set<String> = []

    init(session: SQLiteSession, saving: Bool) {
        self.session = session
        self.isSaving = saving
    }

    // MARK: Overlay

    /// The table to write rows of `table` to: the table itself when saving; on the overlay,
    /// its rows table, after copying the store rows `condition` matches into it (and hiding them).
    private func target(_ table: String, join isJoin: Bool = false, where condition: String?, _ args: [SQLValue]) throws -> String {
        guard !isSaving else { return dialect.quote(table) }
        try overlay(table, isJoin: isJoin)
        let rows = "temp." + dialect.quote(table + ".rows")
        if let condition {
            let key = isJoin ? "_source, _target" : "_pk"
            let keyExpr = isJoin ? "(_source, _target)" : "_pk"
            let hidden = "temp." + dialect.quote(table + ".hidden")
            let store = "main." + dialect.quote(table)
            try connection.execute("INSERT INTO \(rows) SELECT * FROM \(store) WHERE (\(condition)) AND \(keyExpr) NOT IN (SELECT \(key) FROM \(hidden))", args)
            try connection.execute("INSERT OR IGNORE INTO \(hidden) SELECT \(key) FROM \(store) WHERE (\(condition))", args)
        }
        return rows
    }

    /// Creates the overlay of `table` on first use.
    private func overlay(_ table: String, isJoin: Bool) throws {
        guard overlaid.insert(table).inserted else { return }
        let t = dialect.quote(table)
        let rows = dialect.quote(table + ".rows")
        let hidden = dialect.quote(table + ".hidden")
        let key = isJoin ? "_source, _target" : "_pk"
        let keyExpr = isJoin ? "(_source, _target)" : "_pk"
        let script = [
            "CREATE TEMP TABLE \(rows) AS SELECT * FROM main.\(t) WHERE 0",
            "CREATE UNIQUE INDEX temp.\(dialect.quote(table + ".rows.key")) ON \(rows) (\(key))",
            isJoin ? "CREATE TEMP TABLE \(hidden) (_source INTEGER, _target INTEGER, PRIMARY KEY (_source, _target)) WITHOUT ROWID"
                   : "CREATE TEMP TABLE \(hidden) (_pk INTEGER PRIMARY KEY)",
            "CREATE TEMP VIEW \(t) AS SELECT * FROM main.\(t) WHERE \(keyExpr) NOT IN (SELECT \(key) FROM temp.\(hidden)) UNION ALL SELECT * FROM temp.\(rows)",
        ]
        for sql in script { try connection.execute(script: sql, reported: false) }
    }

    // MARK: Rows

    func insert(_ id: ObjectID, _ values: [SQLValue]) throws {
        let e = id.entity
        let stmt: Statement
        if isSaving {
            if let s = session.insertStatements[ObjectIdentifier(e)] { stmt = s } else {
                stmt = try connection.statement(insertSQL(e, into: dialect.quote(e.tableName)))
                session.insertStatements[ObjectIdentifier(e)] = stmt
            }
        } else {
            stmt = try connection.statement(insertSQL(e, into: try target(e.tableName, where: nil, [])))
        }
        defer { stmt.reset() }
        sqlite3_bind_int64(stmt.handle, 1, id.pk)
        e.name.withCString { _ = sqlite3_bind_text(stmt.handle, 2, $0, -1, SQLITE_TRANSIENT_PTR) }
        for (i, v) in values.enumerated() {
            if case .blob(let bytes) = v, case .attribute(let a) = e.storedColumns[i], a.externalStorage {
                stmt.bind(try externalValue(bytes), at: Int32(i + 3))
            } else {
                stmt.bind(v, at: Int32(i + 3))
            }
        }
        do { while try stmt.step() {} } catch let err as StrataError {
            throw SQLiteWriter.uniqueViolation(err, id, "a unique constraint of '\(e.name)' is violated by a saved object")
        }
    }

    private func insertSQL(_ e: Entity, into table: String) -> String {
        let cols = ["_pk", "_entity"] + e.storedColumns.map(\.name)
        let params = (1...cols.count).map { "?\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(table) (\(cols.map(dialect.quote).joined(separator: ", "))) VALUES (\(params))"
    }

    func update(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        guard !slots.isEmpty else { return }
        let e = id.entity
        var bound = values
        for (k, slot) in slots.enumerated() {
            guard case .attribute(let a) = e.storedColumns[slot], a.externalStorage else { continue }
            if isSaving, let old = try externalFile(e, pk: id.pk, a) { obsoleteFiles.append(old) }
            if case .blob(let bytes) = values[k] { bound[k] = try externalValue(bytes) }
        }
        let table = try target(e.tableName, where: "_pk = ?1", [.int(id.pk)])
        let sets = slots.enumerated().map { k, slot in "\(dialect.quote(e.storedColumns[slot].name)) = ?\(k + 2)" }.joined(separator: ", ")
        let stmt = try connection.statement("UPDATE \(table) SET \(sets) WHERE _pk = ?1")
        defer { stmt.reset() }
        sqlite3_bind_int64(stmt.handle, 1, id.pk)
        for (k, v) in bound.enumerated() { stmt.bind(v, at: Int32(k + 2)) }
        do { while try stmt.step() {} } catch let err as StrataError {
            throw SQLiteWriter.uniqueViolation(err, id, "the update violates a unique constraint of '\(e.name)'")
        }
    }

    func deleteRow(_ id: ObjectID) throws {
        let e = id.entity
        if isSaving {
            for a in e.attributes where a.externalStorage && !a.isTransient {
                if let name = try externalFile(e, pk: id.pk, a) { obsoleteFiles.append(name) }
            }
        }
        let table = try target(e.tableName, where: "_pk = ?1", [.int(id.pk)])
        try connection.execute("DELETE FROM \(table) WHERE _pk = ?1", [.int(id.pk)])
    }

    func values(_ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        try SQLiteWriter.values(connection, dialect, id, slots: slots)
    }

    func concreteEntity(root: Entity, pk: Int64) throws -> Entity? {
        try SQLiteWriter.concreteEntity(connection, dialect, root: root, pk: pk)
    }

    static func values(_ c: Connection, _ dialect: SQLiteDialect, _ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        guard !slots.isEmpty else { return [] }
        let e = id.entity
        var out = slots.map { _ in SQLValue.null }
        let sql = "SELECT \(slots.map { dialect.quote(e.storedColumns[$0].name) }.joined(separator: ", ")) FROM \(dialect.quote(e.tableName)) WHERE _pk = ?1"
        try c.statement(sql).query([.int(id.pk)]) { s in
            for i in slots.indices { out[i] = s.value(at: Int32(i)) }
        }
        return out
    }

    static func concreteEntity(_ c: Connection, _ dialect: SQLiteDialect, root: Entity, pk: Int64) throws -> Entity? {
        if !root.isInHierarchy {
            let v = try c.statement("SELECT 1 FROM \(dialect.quote(root.name)) WHERE _pk = ?").scalar([.int(pk)])
            return v == nil ? nil : root
        }
        guard case .text(let name)? = try c.statement("SELECT _entity FROM \(dialect.quote(root.name)) WHERE _pk = ?").scalar([.int(pk)]) else {
            return nil
        }
        return root.descendant(named: name)
    }

    /// A SQLite constraint failure as a Strata error naming the columns
    /// (SQLite reports "UNIQUE constraint failed: Trip.name, Trip.startDate").
    static func uniqueViolation(_ err: StrataError, _ id: ObjectID, _ what: String) -> StrataError {
        guard err.sqliteCode.map({ $0 & 0xFF }) == SQLITE_CONSTRAINT else { return err }
        var columns: [String] = []
        if let r = err.message.firstRange(of: "constraint failed: ") {
            columns = err.message[r.upperBound...].split(separator: ",").map { part in
                let t = part.drop(while: { $0 == " " })
                return String(t.split(separator: ".").last ?? t)
            }
        }
        let list = columns.isEmpty ? "" : " (\(columns.joined(separator: ", ")))"
        return StrataError(.constraint, "cannot save \(id): \(what)\(list)", entity: id.entity.name,
                           attribute: columns.count == 1 ? columns[0] : nil)
    }

    // MARK: External storage

    private func externalValue(_ bytes: [UInt8]) throws -> SQLValue {
        let store = session.sqliteStore
        guard isSaving, let folder = store.externalFolder,
              bytes.count >= store.configuration.externalStorageThreshold else { return .blob(bytes) }
        let name = UUIDText.random()
        try folder.write(bytes, name: name)
        writtenFiles.append(name)
        return .text(name)
    }

    /// The external-storage file a saved row names for `a`, if any (checked: only names Strata generates).
    private func externalFile(_ e: Entity, pk: Int64, _ a: Attribute) throws -> String? {
        guard session.sqliteStore.externalFolder != nil else { return nil }
        let v = try connection.statement("SELECT \(dialect.quote(a.name)) FROM \(dialect.quote(e.tableName)) WHERE _pk = ?").scalar([.int(pk)])
        guard case .text(let name)? = v else { return nil }
        guard ExternalFolder.isValidName(name.utf8) else { throw ExternalFolder.corruptName(entity: e.name, attribute: a.name) }
        return name
    }

    // MARK: Links

    func related(_ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        let src = session.relatedSource(rel, ownerTable: id.entity)
        var out: [ObjectID] = []
        let sql = "SELECT d._pk, d._entity FROM \(src.from) WHERE \(src.owner) = ?1 ORDER BY d._pk"
        let destination = rel.destination.root
        try connection.statement(sql).query([.int(id.pk)]) { s in
            out.append(ObjectID(entity: destination.descendant(named: s.text(1)) ?? rel.destination, pk: s.int64(0)))
        }
        return out
    }

    func setLinks(_ rel: Relationship, rows: [Int64], to target: Int64?) throws {
        guard let col = rel.foreignKeyColumn, !rows.isEmpty else { return }
        let value: SQLValue = target.map { .int($0) } ?? .null
        if rows.count == 1 {
            let table = try self.target(rel.entity.tableName, where: "_pk = ?1", [.int(rows[0])])
            try connection.execute("UPDATE \(table) SET \(dialect.quote(col)) = ?2 WHERE _pk = ?1", [.int(rows[0]), value])
        } else {
            let list = SQLiteSession.pkArray(rows)
            let cond = "_pk IN (SELECT value FROM json_each(?1))"
            let table = try self.target(rel.entity.tableName, where: cond, [list])
            try connection.execute("UPDATE \(table) SET \(dialect.quote(col)) = ?2 WHERE \(cond)", [list, value])
        }
    }

    func clearLinks(_ rel: Relationship, to target: Int64, keeping: [Int64]) throws -> [ObjectID] {
        guard let col = rel.foreignKeyColumn else { return [] }
        let c = dialect.quote(col)
        let cond = keeping.isEmpty ? "\(c) = ?1" : "\(c) = ?1 AND _pk NOT IN (SELECT value FROM json_each(?2))"
        let args: [SQLValue] = keeping.isEmpty ? [.int(target)] : [.int(target), SQLiteSession.pkArray(keeping)]
        let table = try self.target(rel.entity.tableName, where: cond, args)
        var out: [ObjectID] = []
        let root = rel.entity.root
        try connection.statement("UPDATE \(table) SET \(c) = NULL WHERE \(cond) RETURNING _pk, _entity").query(args) { s in
            out.append(ObjectID(entity: root.descendant(named: s.text(1)) ?? rel.entity, pk: s.int64(0)))
        }
        return out
    }

    func links(_ rel: Relationship, rows: [ObjectID]) throws -> [Int64?] {
        guard let col = rel.foreignKeyColumn, !rows.isEmpty else { return rows.map { _ in nil } }
        let sql = "SELECT \(dialect.quote(col)) FROM \(dialect.quote(rel.entity.tableName)) WHERE _pk = ?1"
        let stmt = try connection.statement(sql)
        return try rows.map { row in
            if case .int(let t)? = try stmt.scalar([.int(row.pk)]) { return t }
            return nil
        }
    }

    func removePairs(_ rel: Relationship, pk: Int64, ownerSide: Bool) throws -> [Int64] {
        guard case .joinTable(let table, let ownerCol, let targetCol) = rel.storage else { return [] }
        let cond = "\(dialect.quote(ownerSide ? ownerCol : targetCol)) = ?1"
        let t = try target(table, join: true, where: cond, [.int(pk)])
        var other: [Int64] = []
        try connection.statement("DELETE FROM \(t) WHERE \(cond) RETURNING \(dialect.quote(ownerSide ? targetCol : ownerCol))").query([.int(pk)]) { s in
            other.append(s.int64(0))
        }
        return other
    }

    func addPairs(_ rel: Relationship, owner: Int64, targets: [Int64]) throws {
        guard case .joinTable(let table, let ownerCol, let targetCol) = rel.storage, !targets.isEmpty else { return }
        let list = SQLiteSession.pkArray(targets)
        let o = dialect.quote(ownerCol), t = dialect.quote(targetCol)
        // On the overlay, store pairs already there are copied first, so that none shows twice.
        let into = try target(table, join: true, where: "\(o) = ?1 AND \(t) IN (SELECT value FROM json_each(?2))", [.int(owner), list])
        try connection.execute("INSERT OR IGNORE INTO \(into) (\(o), \(t)) SELECT ?1, value FROM json_each(?2)", [.int(owner), list])
    }
}
