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
    /// The index text of the value a saving insert is indexing (reused from row to row).
    private var indexText: [UInt8] = []
    /// Rows this save has inserted or updated; at ``largeSave`` rows the session enlarges its
    /// page cache for the rest of the save (``SQLiteSession/enlargeCacheForSave()``).
    private var rowsWritten = 0
    static let largeSave = 1_024

    /// Counts a row a save writes, enlarging the session's page cache at the ``largeSave``th.
    @inline(__always) private func countRow() throws {
        guard isSaving else { return }
        rowsWritten += 1
        if rowsWritten == SQLiteWriter.largeSave { try session.enlargeCacheForSave() }
    }

    init(session: SQLiteSession, saving: Bool) {
        self.session = session
        self.isSaving = saving
    }

    // MARK: Overlay

    /// The table to write rows of `table` to: the table itself when saving; on the overlay,
    /// its rows table, after copying the store rows `condition` matches into it (and hiding them).
    private func target(_ table: String, join isJoin: Bool = false, where condition: String?, _ args: [SQLValue]) throws -> String {
        guard !isSaving else { return dialect.quote(table) }
        if overlaid.insert(table).inserted {
            for sql in SQLiteDialect.createOverlay(table, isJoin: isJoin) { try connection.execute(script: sql, reported: false) }
        }
        if let condition {
            try connection.execute(SQLiteDialect.copyIntoOverlay(table, isJoin: isJoin, where: condition), args)
            try connection.execute(SQLiteDialect.hideInOverlay(table, isJoin: isJoin, where: condition), args)
        }
        return SQLiteDialect.overlayRows(table)
    }

    // MARK: Rows

    func insert(_ id: ObjectID, _ values: [SQLValue]) throws {
        try countRow()
        let e = id.entity
        let stmt: Statement
        var searches: [(slot: Int, statement: Statement)] = []
        if isSaving {
            let plan = try insertPlan(e)
            stmt = plan.row
            searches = plan.searches
        } else {
            stmt = try connection.statement(SQLiteDialect.insertRow(into: try target(dialect.table(e), where: nil, []), columns: e.storedColumns.map(dialect.column)))
        }
        // Every parameter is bound for each row, from storage alive while the row is stepped.
        defer { stmt.resetKeepingBindings() }
        let filesBefore = writtenFiles.count
        var bound = values
        // By index: a value that is no blob is only looked at (no copy of its text).
        for i in values.indices {
            guard case .blob(let bytes) = values[i], case .attribute(let a) = e.storedColumns[i], a.externalStorage else { continue }
            bound[i] = try externalValue(bytes)
        }
        sqlite3_bind_int64(stmt.handle, 1, id.pk)
        do {
            try stmt.withBinding(.text(e.name), at: 2) {
                try stmt.withBindings(bound, from: 3) { while try stmt.step() {} }
            }
        } catch let err as StrataError {
            // No row names the files written for it (the save may go on: an upsert at save).
            if writtenFiles.count > filesBefore {
                session.sqliteStore.externalFolder?.remove(Array(writtenFiles[filesBefore...]))
                writtenFiles.removeSubrange(filesBefore...)
            }
            throw constraintError(err, id, "a unique constraint of '\(e.name)' is violated by a saved object") { values[$0] }
        }
        guard isSaving else { return try indexSearchable(id, slots: Array(values.indices), values: values, replacing: false) }
        for (slot, search) in searches where !values[slot].isNull {
            // Searchable attributes are strings; any other value goes through `strata_index_text`.
            guard case .text(var text) = values[slot] else {
                try indexSearchable(id, slots: [slot], values: [values[slot]], replacing: false)
                continue
            }
            connection.statementLog?.append(search.sql)
            defer { search.resetKeepingBindings() }
            sqlite3_bind_int64(search.handle, 1, id.pk)
            // The index text `strata_index_text` would compute in the statement (NULL without tokens).
            let length = text.withUTF8 { TextSearch.indexText(utf8: $0, into: &indexText) }
            try indexText.withUnsafeBufferPointer { buf in
                if length > 0, let base = buf.baseAddress {
                    sqlite3_bind_text(search.handle, 2, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(length), nil)
                } else {
                    sqlite3_bind_null(search.handle, 2)
                }
                while try search.step() {}
            }
        }
    }

    /// What a saving insert of one entity's rows runs: the row's insert and, for each searchable
    /// attribute (its slot), the insert of its full-text entry with the index text the writer
    /// computes (what ``indexSearchable(_:slots:values:replacing:)`` does for a new row when
    /// saving, where `strata_index_text` computes it).
    struct InsertPlan {
        let row: Statement
        let searches: [(slot: Int, statement: Statement)]
    }

    /// The insert plan of `e`, its statements prepared once per session (a save inserts objects
    /// of few entities, each row looked up here).
    private func insertPlan(_ e: Entity) throws -> InsertPlan {
        if let plan = session.insertPlans[ObjectIdentifier(e)] { return plan }
        let row = try connection.statement(SQLiteDialect.insertRow(into: dialect.quote(dialect.table(e)), columns: e.storedColumns.map(dialect.column)))
        var searches: [(slot: Int, statement: Statement)] = []
        for (slot, column) in e.storedColumns.enumerated() {
            guard case .attribute(let a) = column, a.isSearchable else { continue }
            searches.append((slot, try connection.statement(SQLiteDialect.insertSearchTokens(dialect.searchIndex(a)))))
        }
        let plan = InsertPlan(row: row, searches: searches)
        session.insertPlans.set(ObjectIdentifier(e), plan)
        return plan
    }

    // MARK: Full-text tables

    /// Keeps the full-text tables of the searchable attributes among `slots` (with their new
    /// `values`) in step with the row: when saving, the row's entry of each is replaced; on the
    /// overlay, the row's key joins the pending keys `matches` checks beside the tables.
    private func indexSearchable(_ id: ObjectID, slots: [Int], values: [SQLValue], replacing: Bool) throws {
        let columns = id.entity.storedColumns
        for (k, slot) in slots.enumerated() {
            guard case .attribute(let a) = columns[slot], a.isSearchable else { continue }
            guard isSaving else {
                try connection.execute(SQLiteDialect.addSearchPending, [.int(id.pk)])
                return
            }
            let index = dialect.searchIndex(a)
            if replacing { try connection.execute(SQLiteDialect.deleteSearchRow(index), [.int(id.pk)]) }
            if !values[k].isNull { try connection.execute(SQLiteDialect.insertSearchRow(index), [.int(id.pk), values[k]]) }
        }
    }

    func update(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        guard !slots.isEmpty else { return }
        try countRow()
        let e = id.entity
        var bound = values
        for (k, slot) in slots.enumerated() {
            guard case .attribute(let a) = e.storedColumns[slot], a.externalStorage else { continue }
            if isSaving, let old = try externalFile(e, pk: id.pk, a) { obsoleteFiles.append(old) }
            if case .blob(let bytes) = values[k] { bound[k] = try externalValue(bytes) }
        }
        let table = try target(dialect.table(e), where: SQLiteDialect.keyIs(), [.int(id.pk)])
        let stmt = try connection.statement(SQLiteDialect.updateRow(table, columns: slots.map { dialect.column(e.storedColumns[$0]) }))
        defer { stmt.reset() }
        sqlite3_bind_int64(stmt.handle, 1, id.pk)
        for (k, v) in bound.enumerated() { stmt.bind(v, at: Int32(k + 2)) }
        do { while try stmt.step() {} } catch let err as StrataError {
            throw constraintError(err, id, "the update violates a unique constraint of '\(e.name)'") { slot in
                if let k = slots.firstIndex(of: slot) { return values[k] }
                return try SQLiteWriter.values(connection, dialect, id, slots: [slot])[0]
            }
        }
        try indexSearchable(id, slots: slots, values: values, replacing: true)
    }

    func deleteRow(_ id: ObjectID) throws {
        let e = id.entity
        if isSaving {
            for a in e.attributes where a.externalStorage && !a.isTransient {
                if let name = try externalFile(e, pk: id.pk, a) { obsoleteFiles.append(name) }
            }
        }
        let table = try target(dialect.table(e), where: SQLiteDialect.keyIs(), [.int(id.pk)])
        try connection.execute(SQLiteDialect.deleteRows(table, where: SQLiteDialect.keyIs()), [.int(id.pk)])
        guard isSaving else { return }  // the overlay's view no longer shows the row
        for case .attribute(let a) in e.storedColumns where a.isSearchable {
            try connection.execute(SQLiteDialect.deleteSearchRow(dialect.searchIndex(a)), [.int(id.pk)])
        }
    }

    /// One `UPDATE … WHERE _pk IN (the JSON array of keys, bound once)`. A value kept in an
    /// external-storage file is written row by row instead: each row keeps a file of its own.
    func updateRows(_ entity: Entity, keys: [Int64], slots: [Int], values: [SQLValue]) throws {
        guard !slots.isEmpty, !keys.isEmpty else { return }
        if isSaving, session.sqliteStore.externalFolder != nil,
           slots.contains(where: { if case .attribute(let a) = entity.storedColumns[$0] { return a.externalStorage } else { return false } }) {
            for pk in keys { try update(ObjectID(entity: entity, pk: pk), slots: slots, values: values) }
            return
        }
        let cond = SQLiteDialect.keyIn(1)
        let list = SQLiteSession.pkArray(keys)
        let table = try target(dialect.table(entity), where: cond, [list])
        try connection.execute(SQLiteDialect.updateRows(table, columns: slots.map { dialect.column(entity.storedColumns[$0]) }, where: cond),
                               [list] + values)
        // The full-text tables of the searchable attributes set, as ``indexSearchable`` keeps them per row.
        for (k, slot) in slots.enumerated() {
            guard case .attribute(let a) = entity.storedColumns[slot], a.isSearchable else { continue }
            guard isSaving else {
                try connection.execute(SQLiteDialect.addSearchPendingRows, [list])
                return
            }
            let index = dialect.searchIndex(a)
            try connection.execute(SQLiteDialect.deleteSearchRows(index), [list])
            if !values[k].isNull { try connection.execute(SQLiteDialect.insertSearchRows(index), [list, values[k]]) }
        }
    }

    /// One `DELETE … WHERE _pk IN (the JSON array of keys)` per table.
    func deleteRows(_ ids: [ObjectID]) throws {
        if ids.count == 1 { return try deleteRow(ids[0]) }
        var byTable: [String: [Int64]] = [:]
        var order: [String] = []
        for id in ids {
            let e = id.entity
            if isSaving {
                for a in e.attributes where a.externalStorage && !a.isTransient {
                    if let name = try externalFile(e, pk: id.pk, a) { obsoleteFiles.append(name) }
                }
            }
            let t = dialect.table(e)
            if byTable[t] == nil { order.append(t) }
            byTable[t, default: []].append(id.pk)
        }
        let cond = SQLiteDialect.keyIn(1)
        for t in order {
            let list = SQLiteSession.pkArray(byTable[t]!)
            let table = try target(t, where: cond, [list])
            try connection.execute(SQLiteDialect.deleteRows(table, where: cond), [list])
        }
        guard isSaving else { return }  // the overlay's view no longer shows the rows
        // Each searchable attribute's full-text table loses the rows of the entities that have it.
        var byIndex: [String: [Int64]] = [:]
        var indexes: [String] = []
        for id in ids {
            for case .attribute(let a) in id.entity.storedColumns where a.isSearchable {
                let index = dialect.searchIndex(a)
                if byIndex[index] == nil { indexes.append(index) }
                byIndex[index, default: []].append(id.pk)
            }
        }
        for index in indexes {
            try connection.execute(SQLiteDialect.deleteSearchRows(index), [SQLiteSession.pkArray(byIndex[index]!)])
        }
    }

    func values(_ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        var out = try SQLiteWriter.values(connection, dialect, id, slots: slots)
        // An external-storage value that moved to a file: its bytes, not the file's name.
        guard let folder = session.sqliteStore.externalFolder else { return out }
        for (k, slot) in slots.enumerated() {
            guard case .attribute(let a) = id.entity.storedColumns[slot], a.externalStorage, case .text(let name) = out[k] else { continue }
            do {
                out[k] = .blob(try folder.read(Array(name.utf8), of: a, pk: id.pk))
            } catch let missing as ExternalFolder.Missing {
                throw missing.error
            }
        }
        return out
    }

    func concreteEntity(root: Entity, pk: Int64) throws -> Entity? {
        try SQLiteWriter.concreteEntity(connection, dialect, root: root, pk: pk)
    }

    static func values(_ c: Connection, _ dialect: SQLiteDialect, _ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        guard !slots.isEmpty else { return [] }
        let e = id.entity
        var out = slots.map { _ in SQLValue.null }
        try c.statement(SQLiteDialect.selectRow(dialect.table(e), columns: slots.map { dialect.column(e.storedColumns[$0]) })).query([.int(id.pk)]) { s in
            for i in slots.indices { out[i] = s.value(at: Int32(i)) }
        }
        return out
    }

    static func concreteEntity(_ c: Connection, _ dialect: SQLiteDialect, root: Entity, pk: Int64) throws -> Entity? {
        if !root.isInHierarchy {
            let v = try c.statement(SQLiteDialect.rowExists(dialect.table(root))).scalar([.int(pk)])
            return v == nil ? nil : root
        }
        guard let stored = try c.statement(SQLiteDialect.rowEntity(dialect.table(root))).scalar([.int(pk)]) else { return nil }
        // A row whose entity name is none of the hierarchy's is damage, not a missing object.
        guard case .text(let name) = stored, let e = root.descendant(named: name) else { throw SQLiteSession.unknownEntity(root, pk: pk) }
        return e
    }

    /// A SQLite constraint failure of `id`'s row as a Strata error naming the unique
    /// constraint the row meets, with reason `.uniqueViolation`. SQLite names the
    /// columns only in the English of its message, so the table is asked instead:
    /// the first unique set of the entity whose values another row holds.
    /// - Parameter row: the row's value in a slot, as the failed statement wrote it.
    private func constraintError(_ err: StrataError, _ id: ObjectID, _ what: String, row: (Int) throws -> SQLValue) -> StrataError {
        guard let rc = err.sqliteCode, rc & 0xFF == SQLITE_CONSTRAINT else { return err }
        let e = id.entity
        var names: [String] = []
        var reason: StrataError.Reason?
        // SQLITE_CONSTRAINT_PRIMARYKEY and _UNIQUE (sqlite3.h; Swift does not import them).
        if rc == SQLITE_CONSTRAINT | (6 << 8) {
            names = [StoreLayout.key]  // a key given twice (a damaged sequence): no constraint of the model
        } else if rc == SQLITE_CONSTRAINT | (8 << 8) {
            names = (try? heldUnique(id, row))?.map { e.storedColumns[$0].name } ?? []
            reason = .uniqueViolation(attributes: names)
        }
        let list = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
        return StrataError(.constraint, "cannot save \(id): \(what)\(list)", reason: reason, entity: e.name,
                           attribute: names.count == 1 ? names[0] : nil)
    }

    /// The slots of the first unique set of `id.entity` (in `uniqueSlotSets` order) whose
    /// values in `row` another row of the table holds; nil when none does.
    private func heldUnique(_ id: ObjectID, _ row: (Int) throws -> SQLValue) throws -> [Int]? {
        let e = id.entity
        for slots in e.uniqueSlotSets {
            let values = try slots.map(row)
            if values.contains(where: \.isNull) { continue }
            let sql = SQLiteDialect.uniqueHolder(dialect.table(e), columns: slots.map { dialect.column(e.storedColumns[$0]) })
            if try connection.statement(sql).scalar(values + [.int(id.pk)]) != nil { return slots }
        }
        return nil
    }

    // MARK: External storage

    private func externalValue(_ bytes: [UInt8]) throws -> SQLValue {
        let store = session.sqliteStore
        guard isSaving, let folder = store.externalFolder,
              bytes.count >= store.options.externalStorageThreshold else { return .blob(bytes) }
        let name = UUIDText.random()
        try folder.write(bytes, name: name)
        writtenFiles.append(name)
        return .text(name)
    }

    /// The external-storage file a saved row names for `a`, if any (checked: only names Strata generates).
    private func externalFile(_ e: Entity, pk: Int64, _ a: Attribute) throws -> String? {
        guard session.sqliteStore.externalFolder != nil else { return nil }
        let v = try connection.statement(SQLiteDialect.selectRow(dialect.table(e), columns: [dialect.column(.attribute(a))])).scalar([.int(pk)])
        guard case .text(let name)? = v else { return nil }
        guard ExternalFolder.isValidName(name.utf8) else { throw ExternalFolder.corruptName(entity: e.name, attribute: a.name) }
        return name
    }

    // MARK: Links

    func related(_ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        try SQLiteWriter.related(connection, dialect, id, rel)
    }

    static func related(_ c: Connection, _ dialect: SQLiteDialect, _ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        let src = ObjectQueries.relatedRows(rel, alias: "d", dialect: dialect)
        var out: [ObjectID] = []
        let sql = SQLiteDialect.select("d.\(dialect.keyColumn), d.\(dialect.entityColumn)", from: src.from, where: "\(src.owner) = ?1", orderBy: src.key)
        let destination = rel.destination.root
        try c.statement(sql).query([.int(id.pk)]) { s in
            out.append(ObjectID(entity: destination.descendant(named: s.text(1)) ?? rel.destination, pk: s.int64(0)))
        }
        return out
    }

    func setLinks(_ rel: Relationship, rows: [Int64], to target: Int64?) throws {
        guard rel.isHeldInRow, !rows.isEmpty else { return }
        let col = dialect.column(.link(rel))
        let value: SQLValue = target.map { .int($0) } ?? .null
        let one = rows.count == 1
        let cond = one ? SQLiteDialect.keyIs() : SQLiteDialect.keyIn(1)
        let keys: SQLValue = one ? .int(rows[0]) : SQLiteSession.pkArray(rows)
        let table = try self.target(dialect.table(rel.entity), where: cond, [keys])
        try connection.execute(SQLiteDialect.setLink(table, col, where: cond), [keys, value])
    }

    func clearLinks(_ rel: Relationship, to target: Int64, keeping: [Int64]) throws -> [ObjectID] {
        guard rel.isHeldInRow else { return [] }
        let col = dialect.column(.link(rel))
        let cond = SQLiteDialect.linksTo(col, keeping: keeping.count)
        let args: [SQLValue] = switch keeping.count {
        case 0: [.int(target)]
        case 1: [.int(target), .int(keeping[0])]
        default: [.int(target), SQLiteSession.pkArray(keeping)]
        }
        let table = try self.target(dialect.table(rel.entity), where: cond, args)
        var out: [ObjectID] = []
        let root = rel.entity.root
        try connection.statement(SQLiteDialect.clearLinks(table, col, where: cond)).query(args) { s in
            out.append(ObjectID(entity: root.descendant(named: s.text(1)) ?? rel.entity, pk: s.int64(0)))
        }
        return out
    }

    func links(_ rel: Relationship, rows: [ObjectID]) throws -> [Int64?] {
        guard rel.isHeldInRow, !rows.isEmpty else { return rows.map { _ in nil } }
        let col = dialect.column(.link(rel))
        let stmt = try connection.statement(SQLiteDialect.linkOfRow(dialect.table(rel.entity), col))
        return try rows.map { row in
            if case .int(let t)? = try stmt.scalar([.int(row.pk)]) { return t }
            return nil
        }
    }

    func removePairs(_ rel: Relationship, pk: Int64, ownerSide: Bool) throws -> [Int64] {
        guard case .inPairs = rel.placement else { return [] }
        let (table, ownerCol, targetCol) = dialect.pairTable(rel)
        let cond = SQLiteDialect.pairSide(ownerSide ? ownerCol : targetCol)
        let t = try target(table, join: true, where: cond, [.int(pk)])
        var other: [Int64] = []
        try connection.statement(SQLiteDialect.deletePairs(t, where: cond, returning: ownerSide ? targetCol : ownerCol)).query([.int(pk)]) { s in
            other.append(s.int64(0))
        }
        return other
    }

    func addPairs(_ rel: Relationship, owner: Int64, targets: [Int64]) throws {
        guard case .inPairs = rel.placement, !targets.isEmpty else { return }
        let (table, ownerCol, targetCol) = dialect.pairTable(rel)
        let list = SQLiteSession.pkArray(targets)
        // On the overlay, store pairs already there are copied first, so that none shows twice.
        let into = try target(table, join: true, where: SQLiteDialect.pairsOf(ownerCol, targetCol), [.int(owner), list])
        try connection.execute(SQLiteDialect.insertPairs(into, ownerCol, targetCol), [.int(owner), list])
    }

    /// `strata_sequence` is a table: the change commits or rolls back with the save.
    func keepKeys(root: Entity, through key: Int64) throws {
        guard isSaving else { return }
        let (next, overflow) = key.addingReportingOverflow(1)
        guard !overflow else { throw StrataError(.invalid, "the key \(key) of '\(root.name)' leaves no key to reserve after it", entity: root.name) }
        try connection.execute(SQLiteDialect.keepKeys, [.text(root.name), .int(next)])
    }
}
