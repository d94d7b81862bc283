/// The store-writer primitives on PostgreSQL. A save writes inside its transaction;
/// a read that includes pending changes writes them the same way inside its own
/// transaction, which it then rolls back (``PostgresSession/read(_:_:)``): nothing
/// is kept, and other connections never see it. Data values live in their rows
/// (`bytea`; PostgreSQL moves large values out of line itself), external storage
/// included.
///
/// Inserted rows are held back per entity and sent together, one
/// `INSERT … SELECT * FROM unnest(…)` per entity and ``PostgresInsertBatch/maxRows``
/// rows, before the connection's next statement of any kind (``PGConnection/queued``):
/// every later statement, the save's commit included, sees them.
final class PostgresWriter: StoreWriter {
    unowned let session: PostgresSession
    let isSaving: Bool
    var connection: PGConnection { session.connection }
    var dialect: PostgresDialect { session.dialect }
    /// The rows held back, per entity, in the order their entities first came.
    private var batches: [PostgresInsertBatch] = []
    private var batchIndex: [ObjectIdentifier: Int] = [:]
    private var heldRows = 0
    /// In a save, the unique values of the rows held back, per table and columns
    /// (``uniqueKey(_:_:)``): a row with the same values sends them first, so that the
    /// look-up for another holder finds its holder as when every row was sent at once.
    private var heldUniques: [String: Set<[SQLValue]>] = [:]

    init(session: PostgresSession, saving: Bool) {
        self.session = session
        self.isSaving = saving
    }

    /// In a save, an object of an entity with unique constraints is first looked for by its
    /// unique values: one another transaction holds is refused with `.uniqueViolation` before
    /// anything fails (the save may turn the insert into an update), so the transaction stays
    /// usable. A transaction that commits the same values in between makes the insert fail,
    /// and the save starts over (``PostgresSession/save(_:)``).
    func insert(_ id: ObjectID, _ values: [SQLValue]) throws {
        let e = id.entity
        let checksUnique = isSaving && !e.uniqueSlotSets.isEmpty
        if checksUnique, let slots = try heldUnique(id, { values[$0] }) {
            let names = slots.map { e.storedColumns[$0].name }
            throw StrataError(.constraint, "cannot save \(id): a unique constraint of '\(e.name)' is violated by a saved object (\(names.joined(separator: ", ")))",
                              reason: .uniqueViolation(attributes: names), entity: e.name, attribute: names.count == 1 ? names[0] : nil)
        }
        guard e.storedColumns.count <= PostgresInsertBatch.maxColumns else {
            do {
                try connection.execute(dialect.insertRow(dialect.table(e), columns: e.storedColumns.map(dialect.column)), [.int(id.pk), .text(e.name)] + values)
            } catch let err as StrataError {
                throw constraintError(err, id, "a unique constraint of '\(e.name)' is violated by a saved object")
            }
            return
        }
        let i: Int
        if let j = batchIndex[ObjectIdentifier(e)] { i = j } else {
            i = batches.count
            batches.append(PostgresInsertBatch(e))
            batchIndex[ObjectIdentifier(e)] = i
        }
        try batches[i].append(id, values)
        if checksUnique {
            for slots in e.uniqueSlotSets {
                let v = slots.map { values[$0] }
                if !v.contains(where: \.isNull) { heldUniques[uniqueKey(e, slots), default: []].insert(v.map(PostgresWriter.comparable)) }
            }
        }
        heldRows += 1
        // The connection keeps the writer until it sends the rows (or a rollback drops them).
        if heldRows == 1 { connection.queued = { [self] in try self.sendHeldRows() } }
        if batches[i].count >= PostgresInsertBatch.maxRows { try connection.runQueued() }
    }

    /// Sends the rows held back: one statement per entity and batch.
    private func sendHeldRows() throws {
        let held = batches
        batches = []
        batchIndex = [:]
        heldUniques = [:]
        heldRows = 0
        for b in held {
            let e = b.entity
            let sql = dialect.insertRows(dialect.table(e), columns: e.storedColumns.map(dialect.column), types: e.storedColumns.map(PostgresDialect.valueType))
            let rows: PGRows
            do {
                rows = try connection.query(sql, b.arguments)
            } catch let err as StrataError {
                throw batchError(err, b)
            }
            guard rows.count < b.count else { continue }
            // A key in use (rows written with keys of their own: an import) left its row out:
            // the first such row, or the second of two with one key, is refused.
            var sent = Set<Int64>(), seen = Set<Int64>()
            for r in 0..<rows.count { sent.insert(rows.int64(r, 0)) }
            let refused = b.ids.first { !sent.contains($0.pk) || !seen.insert($0.pk).inserted } ?? b.ids[0]
            throw refusal(refused, "a unique constraint of '\(e.name)' is violated by a saved object", names: [StoreLayout.key], reason: nil, state: "23505")
        }
    }

    /// A failed batch's error. Every row's unique values were looked for before it was held
    /// back (keys in use are left out, not failed: ``sendHeldRows()``), so a unique failure
    /// means another transaction committed the same values since: the save starts over, as
    /// after a serialization failure, and the look-up then finds them.
    private func batchError(_ err: StrataError, _ b: PostgresInsertBatch) -> StrataError {
        guard err.code == .constraint else { return err }
        var out = constraintError(err, b.ids[0], "a unique constraint of '\(b.entity.name)' is violated by a saved object")
        if isSaving { out.postgresState = "40001" }
        return out
    }

    /// What a batch's unique values are kept under: the table and the columns.
    private func uniqueKey(_ e: Entity, _ slots: [Int]) -> String {
        ([dialect.table(e)] + slots.map { dialect.column(e.storedColumns[$0]) }).joined(separator: "\u{0}")
    }

    /// `v` as the server compares it in a column: an integral double as its integer, NaN equal to NaN.
    private static func comparable(_ v: SQLValue) -> SQLValue {
        guard case .double(let d) = v else { return v }
        if d.isNaN { return .text("\u{0}NaN") }  // no stored text holds NUL
        if d == d.rounded(), abs(d) < 9.2e18 { return .int(Int64(d)) }
        return v
    }

    func update(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        guard !slots.isEmpty else { return }
        let e = id.entity
        let sql = dialect.updateRow(dialect.table(e), columns: slots.map { dialect.column(e.storedColumns[$0]) })
        do {
            try connection.execute(sql, [.int(id.pk)] + values)
        } catch let err as StrataError {
            throw constraintError(err, id, "the update violates a unique constraint of '\(e.name)'")
        }
    }

    func deleteRow(_ id: ObjectID) throws {
        try connection.execute(dialect.deleteRow(dialect.table(id.entity)), [.int(id.pk)])
    }

    /// One `UPDATE … WHERE _pk = ANY($1)` (the keys as one array).
    func updateRows(_ entity: Entity, keys: [Int64], slots: [Int], values: [SQLValue]) throws {
        guard !slots.isEmpty, !keys.isEmpty else { return }
        let sql = dialect.updateRows(dialect.table(entity), columns: slots.map { dialect.column(entity.storedColumns[$0]) })
        try connection.execute(sql, [PostgresDialect.keyArray(keys)] + values)
    }

    /// One `DELETE … WHERE _pk = ANY($1)` per table.
    func deleteRows(_ ids: [ObjectID]) throws {
        if ids.count == 1 { return try deleteRow(ids[0]) }
        var byTable: [String: [Int64]] = [:]
        var order: [String] = []
        for id in ids {
            let t = dialect.table(id.entity)
            if byTable[t] == nil { order.append(t) }
            byTable[t, default: []].append(id.pk)
        }
        for t in order { try connection.execute(dialect.deleteRows(t), [PostgresDialect.keyArray(byTable[t]!)]) }
    }

    func values(_ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        try PostgresWriter.values(connection, dialect, id, slots: slots)
    }

    func concreteEntity(root: Entity, pk: Int64) throws -> Entity? {
        try PostgresWriter.concreteEntity(connection, dialect, root: root, pk: pk)
    }

    static func values(_ c: PGConnection, _ dialect: PostgresDialect, _ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        guard !slots.isEmpty else { return [] }
        let e = id.entity
        let rows = try c.query(dialect.selectRow(dialect.table(e), columns: slots.map { dialect.column(e.storedColumns[$0]) }), [.int(id.pk)])
        guard rows.count > 0 else { return slots.map { _ in .null } }
        return slots.indices.map { rows.value(0, Int32($0)) }
    }

    static func concreteEntity(_ c: PGConnection, _ dialect: PostgresDialect, root: Entity, pk: Int64) throws -> Entity? {
        let rows = try c.query(dialect.rowEntity(dialect.table(root)), [.int(pk)])
        guard rows.count > 0 else { return nil }
        if !root.isInHierarchy { return root }
        guard let e = root.descendant(named: rows.string(0, 0)) else { throw PostgresSession.unknownEntity(root, pk: pk) }
        return e
    }

    /// A unique failure of `id`'s row as Strata's error naming the constraint's attributes
    /// (the index PostgreSQL names), with reason `.uniqueViolation`.
    private func constraintError(_ err: StrataError, _ id: ObjectID, _ what: String) -> StrataError {
        guard err.code == .constraint else { return err }
        let e = id.entity
        var names: [String] = []
        var reason: StrataError.Reason?
        if let broken = connection.lastConstraint {
            for slots in e.uniqueSlotSets {
                let cols = slots.map { dialect.column(e.storedColumns[$0]) }
                if PostgresDialect.indexName(StoreLayout.indexName(dialect.table(e), "unique", cols)) == broken {
                    names = slots.map { e.storedColumns[$0].name }
                    reason = .uniqueViolation(attributes: names)
                    break
                }
            }
            if names.isEmpty && broken.hasSuffix("_pkey") { names = [StoreLayout.key] }
        }
        return refusal(id, what, names: names, reason: reason, state: err.postgresState)
    }

    /// The refusal of `id`'s row: `what` it broke and the attributes it names.
    private func refusal(_ id: ObjectID, _ what: String, names: [String], reason: StrataError.Reason?, state: String?) -> StrataError {
        let list = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
        return StrataError(.constraint, "cannot save \(id): \(what)\(list)", reason: reason, entity: id.entity.name,
                           attribute: names.count == 1 ? names[0] : nil, postgresState: state)
    }

    /// The slots of the first unique set of `id.entity` whose values another row holds. The
    /// rows held back are sent first only when one of them holds the same values.
    private func heldUnique(_ id: ObjectID, _ row: (Int) throws -> SQLValue) throws -> [Int]? {
        let e = id.entity
        for slots in e.uniqueSlotSets {
            let values = try slots.map(row)
            if values.contains(where: \.isNull) { continue }
            if heldUniques[uniqueKey(e, slots)]?.contains(values.map(PostgresWriter.comparable)) == true { try connection.runQueued() }
            let sql = dialect.uniqueHolder(dialect.table(e), columns: slots.map { dialect.column(e.storedColumns[$0]) })
            if try connection.withoutQueued({ try connection.scalar(sql, values + [.int(id.pk)]) }) != nil { return slots }
        }
        return nil
    }

    // MARK: Links

    func related(_ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        try PostgresWriter.related(connection, dialect, id, rel)
    }

    static func related(_ c: PGConnection, _ dialect: PostgresDialect, _ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        let src = ObjectQueries.relatedRows(rel, alias: "d", dialect: dialect)
        let sql = dialect.select("d._pk, d._entity", from: src.from, where: "\(src.owner) = $1", orderBy: src.key, paging: "")
        let rows = try c.query(sql, [.int(id.pk)])
        let destination = rel.destination.root
        return (0..<rows.count).map { r in
            ObjectID(entity: destination.descendant(named: rows.string(r, 1)) ?? rel.destination, pk: rows.int64(r, 0))
        }
    }

    func setLinks(_ rel: Relationship, rows: [Int64], to target: Int64?) throws {
        guard rel.isHeldInRow, !rows.isEmpty else { return }
        try connection.execute(dialect.setLinks(dialect.table(rel.entity), dialect.column(.link(rel))),
                               [PostgresDialect.keyArray(rows), target.map { .int($0) } ?? .null])
    }

    func clearLinks(_ rel: Relationship, to target: Int64, keeping: [Int64]) throws -> [ObjectID] {
        guard rel.isHeldInRow else { return [] }
        let rows = try connection.query(dialect.clearLinks(dialect.table(rel.entity), dialect.column(.link(rel))),
                                        [.int(target), PostgresDialect.keyArray(keeping)])
        let root = rel.entity.root
        return (0..<rows.count).map { r in ObjectID(entity: root.descendant(named: rows.string(r, 1)) ?? rel.entity, pk: rows.int64(r, 0)) }
    }

    func links(_ rel: Relationship, rows: [ObjectID]) throws -> [Int64?] {
        guard rel.isHeldInRow, !rows.isEmpty else { return rows.map { _ in nil } }
        let sql = dialect.linkOfRow(dialect.table(rel.entity), dialect.column(.link(rel)))
        return try rows.map { row in
            if case .int(let t)? = try connection.scalar(sql, [.int(row.pk)]) { return t }
            return nil
        }
    }

    func removePairs(_ rel: Relationship, pk: Int64, ownerSide: Bool) throws -> [Int64] {
        guard case .inPairs = rel.placement else { return [] }
        let (table, ownerCol, targetCol) = dialect.pairTable(rel)
        let rows = try connection.query(dialect.deletePairs(table, side: ownerSide ? ownerCol : targetCol, returning: ownerSide ? targetCol : ownerCol), [.int(pk)])
        return (0..<rows.count).map { rows.int64($0, 0) }
    }

    func addPairs(_ rel: Relationship, owner: Int64, targets: [Int64]) throws {
        guard case .inPairs = rel.placement, !targets.isEmpty else { return }
        let (table, ownerCol, targetCol) = dialect.pairTable(rel)
        try connection.execute(dialect.insertPairs(table, ownerCol, targetCol), [.int(owner), PostgresDialect.keyArray(targets)])
    }

    /// Under the sequence's advisory lock, as reservations take it (`PostgresSession.reserveKeys`).
    func keepKeys(root: Entity, through key: Int64) throws {
        guard isSaving else { return }
        let sequence = dialect.quote(PostgresDialect.sequenceName(dialect.table(root)))
        try connection.execute(PostgresStore.lockKeys, [.text(sequence)])
        defer { _ = try? connection.execute(PostgresStore.unlockKeys, [.text(sequence)]) }
        _ = try connection.query(PostgresDialect.keepKeys(sequence), [.text(sequence), .int(key)])
    }
}
