import CSQLite
import Glibc

/// Applies a context's changes to SQLite and reads objects back as JSON.
///
/// Every public method takes the connection's lock for its whole duration,
/// so a session may be called from any thread (one at a time per context).
public final class SQLiteSession: StoreSession {
    let sqliteStore: SQLiteStore
    let connection: Connection
    public var store: DataStore { sqliteStore }
    var schema: Schema { sqliteStore.schema }
    /// Reserved primary keys per root table: next free and limit (exclusive).
    private var reserved: [String: (next: Int64, limit: Int64)] = [:]
    private var blockSize: Int64 = 64
    /// Per-entity write plans, built on first use.
    private var writePlans: [ObjectIdentifier: WritePlan] = [:]
    /// Whether any entity needs relationship checks at save.
    lazy var schemaNeedsValidation: Bool = schema.entities.contains { $0.needsSaveValidation }

    /// What inserting and updating rows of one entity needs, computed once.
    final class WritePlan {
        let insert: Statement
        /// Slots of to-one links whose inverse is to-one (other rows must let go of the target).
        let oneToOneSlots: [Int]
        /// Slots of to-one links whose inverse to-many has a minimum or maximum count.
        let boundedInverseSlots: [Int]
        let hasExternalStorage: Bool

        init(insert: Statement, entity e: Entity) {
            self.insert = insert
            var oneToOne: [Int] = []
            var bounded: [Int] = []
            var external = false
            for (slot, c) in e.storedColumns.enumerated() {
                switch c {
                case .foreignKey(let r):
                    if let inv = r.inverse {
                        if !inv.isToMany { oneToOne.append(slot) }
                        if inv.isToMany && (inv.minimumModelCount != nil || inv.maximumModelCount != nil) { bounded.append(slot) }
                    }
                case .attribute(let a):
                    if a.externalStorage { external = true }
                }
            }
            oneToOneSlots = oneToOne
            boundedInverseSlots = bounded
            hasExternalStorage = external
        }
    }

    func writePlan(_ e: Entity) throws -> WritePlan {
        if let p = writePlans[ObjectIdentifier(e)] { return p }
        let p = WritePlan(insert: try connection.statement(insertSQL(e)), entity: e)
        writePlans[ObjectIdentifier(e)] = p
        return p
    }

    init(store: SQLiteStore, connection: Connection) {
        self.sqliteStore = store
        self.connection = connection
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T { try connection.lock.withLock(body) }

    // MARK: Identifiers

    /// Reserves `count` consecutive primary keys for rows of `root`'s table.
    ///
    /// Keys come from `strata_sequence`, reserved in blocks in their own tiny
    /// transaction, so that contexts (and processes) never hand out the same key.
    func allocate(root: Entity, count: Int) throws -> Int64 {
        try locked {
            let n = Int64(count)
            if let r = reserved[root.name], r.limit - r.next >= n {
                reserved[root.name] = (r.next + n, r.limit)
                return r.next
            }
            let want = max(n, blockSize)
            blockSize = min(blockSize * 2, 4096)
            let sql = "INSERT INTO strata_sequence (entity, next) VALUES (?1, 1 + ?2) ON CONFLICT(entity) DO UPDATE SET next = next + ?2 RETURNING next"
            let ownTransaction = !connection.isInTransaction
            if ownTransaction { try connection.begin() }
            let end: Int64
            do {
                guard case .int(let e)? = try connection.statement(sql).scalar([.text(root.name), .int(want)]) else {
                    throw StrataError(.internal, "could not reserve primary keys for '\(root.name)'")
                }
                end = e
                if ownTransaction { try connection.commit() }
            } catch {
                if ownTransaction { connection.rollback() }
                throw error
            }
            let start = end - want
            reserved[root.name] = (start + n, end)
            return start
        }
    }

    /// The concrete entity of the saved row `pk` in `root`'s table, or nil.
    func concreteEntity(root: Entity, pk: Int64) throws -> Entity? {
        try locked {
            if !root.isInHierarchy {
                let v = try connection.statement("SELECT 1 FROM \(quote(root.name)) WHERE _pk = ?").scalar([.int(pk)])
                return v == nil ? nil : root
            }
            guard case .text(let name)? = try connection.statement("SELECT _entity FROM \(quote(root.name)) WHERE _pk = ?").scalar([.int(pk)]) else {
                return nil
            }
            return schema.entity(named: name)
        }
    }

    /// The saved object whose `columns` hold `values` (all non-null), if any.
    func findUnique(root: Entity, columns: [String], values: [SQLValue]) throws -> ObjectID? {
        try locked {
            let cond = columns.map { "\(quote($0)) = ?" }.joined(separator: " AND ")
            let sql = "SELECT _pk, _entity FROM \(quote(root.name)) WHERE \(cond) LIMIT 1"
            var found: ObjectID?
            try connection.statement(sql).query(values) { s in
                if let e = schema.entity(named: s.text(1)) { found = ObjectID(entity: e, pk: s.int64(0)) }
            }
            return found
        }
    }

    /// The saved values of some columns of `id`'s row (nulls when there is no such row).
    func savedValues(_ id: ObjectID, columns: [String]) throws -> [SQLValue] {
        try locked {
            guard !columns.isEmpty else { return [] }
            var out = columns.map { _ in SQLValue.null }
            let sql = "SELECT \(columns.map(quote).joined(separator: ", ")) FROM \(quote(id.entity.tableName)) WHERE _pk = ?1"
            try connection.statement(sql).query([.int(id.pk)]) { s in
                for i in columns.indices { out[i] = s.value(at: Int32(i)) }
            }
            return out
        }
    }

    // MARK: Save

    enum ApplyMode { case save, preview }

    struct ApplyState {
        var mode: ApplyMode
        var touched: [ObjectID] = []
        var touchedSet: Set<ObjectID> = []
        var deleted: Set<ObjectID> = []
        var writtenFiles: [String] = []
        var obsoleteFiles: [String] = []
        /// Deletions that a deny rule allows only if these related objects are deleted by the same save.
        var denied: [(object: ObjectID, rel: Relationship, targets: [ObjectID])] = []

        /// Whether touched objects are collected (only when some entity needs checks at save).
        var tracksTouched = true

        mutating func touch(_ id: ObjectID) {
            guard tracksTouched else { return }
            if touchedSet.insert(id).inserted { touched.append(id) }
        }
    }

    /// Saves `changes` in one transaction; on any error the store is unchanged.
    func save(_ changes: [PendingChange]) throws {
        try locked {
            guard !changes.isEmpty else { return }
            var state = ApplyState(mode: .save)
            state.tracksTouched = schemaNeedsValidation
            // IMMEDIATE: external-storage files are written only while the write lock is held,
            // so the sweep at open (which holds it too) never takes a file a save is about to commit.
            try connection.begin()
            do {
                try apply(changes, &state)
                try checkDenied(state)
                try validate(&state)
                // New files' names must be durable before the commit that refers to them.
                if !state.writtenFiles.isEmpty, let folder = sqliteStore.externalFolder { try folder.sync() }
                try connection.commit()
            } catch {
                connection.rollback()
                sqliteStore.externalFolder?.remove(state.writtenFiles)
                throw error
            }
            // Readers whose snapshot still names a removed file retry on a newer one (`read`).
            sqliteStore.externalFolder?.remove(state.obsoleteFiles)
        }
    }

    /// Runs a read call on one committed snapshot plus `changes`.
    ///
    /// Every statement of `body` runs in one transaction: a deferred read
    /// transaction when there are no pending changes (one WAL snapshot), or
    /// the changes applied in a transaction that is rolled back. When the
    /// snapshot names an external-storage file that a newer commit has
    /// already replaced (and removed), the call starts over on a newer
    /// snapshot; a file the latest committed state still names but that is
    /// gone is an error.
    func read<T>(_ changes: [PendingChange], _ body: () throws -> T) throws -> T {
        try locked {
            var attempts = 0
            while true {
                do {
                    return try withChangesApplied(changes, body)
                } catch let missing as ExternalFolder.Missing {
                    attempts += 1
                    // Inside a caller's transaction the snapshot cannot move on: report at once.
                    if attempts < 1_000, !connection.isInTransaction {
                        let sql = "SELECT \(quote(missing.attribute)) FROM \(quote(missing.table)) WHERE _pk = ?1"
                        // The latest committed row names another file (or none): the snapshot was stale.
                        if try connection.statement(sql).scalar([.int(missing.pk)]) != .text(missing.name) { continue }
                    }
                    throw StrataError(.io, "external storage file '\(missing.name)' of '\(missing.entity).\(missing.attribute)' is missing from the store's .strata folder",
                                      entity: missing.entity, attribute: missing.attribute)
                }
            }
        }
    }

    /// Runs `body` on one snapshot with `changes` applied inside a transaction that is then
    /// rolled back: reads see the context's pending changes exactly as a save would make them.
    /// Inside a transaction the caller already holds, `body` runs in it.
    func withChangesApplied<T>(_ changes: [PendingChange], _ body: () throws -> T) throws -> T {
        try locked {
            if changes.isEmpty {
                if connection.isInTransaction { return try body() }
                // A deferred transaction: the first read takes the snapshot every later statement sees.
                // (Not reported to the trace hook, which counts the statements that read data.)
                try connection.beginRead()
                defer { connection.endRead() }
                return try body()
            }
            var state = ApplyState(mode: .preview)
            state.tracksTouched = false
            try connection.begin()
            defer { connection.rollback() }
            do {
                try apply(changes, &state)
            } catch let e as StrataError where e.code == .constraint {
                // Pending changes collide on a unique key: the save will refuse them, but reads
                // show them as they are. Replay without the unique indexes (the drop is rolled back).
                connection.rollback()
                try connection.begin()
                var names: [String] = []
                try connection.statement("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE 'CREATE UNIQUE INDEX %'")
                    .query { s in names.append(s.text(0)) }
                for name in names { try connection.execute(script: "DROP INDEX \(quote(name))") }
                state = ApplyState(mode: .preview)
                state.tracksTouched = false
                try apply(changes, &state)
            }
            return try body()
        }
    }

    private func apply(_ changes: [PendingChange], _ state: inout ApplyState) throws {
        for change in changes {
            switch change {
            case .insert(let id, let values): try insertRow(id, values, &state)
            case .update(let id, let slots, let values): try updateRow(id, slots, values, &state)
            case .setRelated(let owner, let rel, let targets): try setRelated(owner, rel, targets, &state)
            case .delete(let id): try deleteObject(id, &state)
            }
        }
    }

    private func insertSQL(_ e: Entity) -> String {
        let cols = ["_pk", "_entity"] + e.storedColumns.map(\.name)
        let params = (1...cols.count).map { "?\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(quote(e.tableName)) (\(cols.map(quote).joined(separator: ", "))) VALUES (\(params))"
    }

    private func insertRow(_ id: ObjectID, _ values: [SQLValue], _ state: inout ApplyState) throws {
        let e = id.entity
        let plan = try writePlan(e)
        let stmt = plan.insert
        defer { stmt.reset() }
        sqlite3_bind_int64(stmt.handle, 1, id.pk)
        e.name.withCString { _ = sqlite3_bind_text(stmt.handle, 2, $0, -1, SQLITE_TRANSIENT_PTR) }
        for (i, v) in values.enumerated() {
            if plan.hasExternalStorage, case .blob(let bytes) = v, case .attribute(let a) = e.storedColumns[i], a.externalStorage {
                stmt.bind(try externalValue(bytes, &state), at: Int32(i + 3))
            } else {
                stmt.bind(v, at: Int32(i + 3))
            }
        }
        do { while try stmt.step() {} } catch let err as StrataError {
            throw SQLiteSession.uniqueViolation(err, id, "a unique constraint of '\(e.name)' is violated by a saved object")
        }
        if !plan.oneToOneSlots.isEmpty { try clearOtherOneToOne(id, slots: nil, values: values, &state) }
        state.touch(id)
        if !plan.boundedInverseSlots.isEmpty { try touchInverseOwners(e, slots: nil, values: values, &state) }
    }

    private func updateRow(_ id: ObjectID, _ slots: [Int], _ values: [SQLValue], _ state: inout ApplyState) throws {
        let e = id.entity
        var bound = values
        for (k, slot) in slots.enumerated() {
            guard case .attribute(let a) = e.storedColumns[slot], a.externalStorage else { continue }
            if state.mode == .save, let old = try externalFile(e, pk: id.pk, a) {
                state.obsoleteFiles.append(old)
            }
            if case .blob(let bytes) = values[k] { bound[k] = try externalValue(bytes, &state) }
        }
        if state.mode == .save && state.tracksTouched { try touchPreviousTargets(id, slots: slots, &state) }
        let sets = slots.enumerated().map { k, slot in "\(quote(e.storedColumns[slot].name)) = ?\(k + 2)" }.joined(separator: ", ")
        let stmt = try connection.statement("UPDATE \(quote(e.tableName)) SET \(sets) WHERE _pk = ?1")
        defer { stmt.reset() }
        sqlite3_bind_int64(stmt.handle, 1, id.pk)
        for (k, v) in bound.enumerated() { stmt.bind(v, at: Int32(k + 2)) }
        do { while try stmt.step() {} } catch let err as StrataError {
            throw SQLiteSession.uniqueViolation(err, id, "the update violates a unique constraint of '\(e.name)'")
        }
        try clearOtherOneToOne(id, slots: slots, values: values, &state)
        state.touch(id)
        try touchInverseOwners(e, slots: slots, values: values, &state)
    }

    /// Whether losing a link through `rel` may break a check at save (a minimum count or a required to-one).
    static func losingALinkNeedsCheck(_ rel: Relationship) -> Bool {
        rel.isToMany ? rel.minimumModelCount != nil : !rel.isOptional
    }

    /// Before foreign keys of `id` change: the objects they point at now lose a link; check them when that matters.
    private func touchPreviousTargets(_ id: ObjectID, slots: [Int], _ state: inout ApplyState) throws {
        let e = id.entity
        for slot in slots {
            guard case .foreignKey(let r) = e.storedColumns[slot], let inv = r.inverse, SQLiteSession.losingALinkNeedsCheck(inv) else { continue }
            let sql = "SELECT \(quote(e.storedColumns[slot].name)) FROM \(quote(e.tableName)) WHERE _pk = ?1"
            if case .int(let old)? = try connection.statement(sql).scalar([.int(id.pk)]) {
                state.touch(ObjectID(entity: r.destination, pk: old))
            }
        }
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

    /// A one-to-one link held in this row: no other row may keep pointing at the same target.
    private func clearOtherOneToOne(_ id: ObjectID, slots: [Int]?, values: [SQLValue], _ state: inout ApplyState) throws {
        let e = id.entity
        for (k, v) in values.enumerated() {
            guard case .int(let target) = v else { continue }
            let slot = slots?[k] ?? k
            guard case .foreignKey(let r) = e.storedColumns[slot], let inv = r.inverse, !inv.isToMany else { continue }
            let col = quote(e.storedColumns[slot].name)
            let sql = "UPDATE \(quote(e.tableName)) SET \(col) = NULL WHERE \(col) = ?1 AND _pk <> ?2 RETURNING _pk, _entity"
            // The rows let go lose their link: check them when it is required.
            try connection.statement(sql).query([.int(target), .int(id.pk)]) { s in
                if !r.isOptional { state.touch(ObjectID(entity: schema.entity(named: s.text(1)) ?? e, pk: s.int64(0))) }
            }
        }
    }

    /// Linking a row to a target changes the target's to-many count: validate it when bounded.
    private func touchInverseOwners(_ e: Entity, slots: [Int]?, values: [SQLValue], _ state: inout ApplyState) throws {
        guard state.mode == .save else { return }
        for (k, v) in values.enumerated() {
            guard case .int(let target) = v else { continue }
            let slot = slots?[k] ?? k
            guard case .foreignKey(let r) = e.storedColumns[slot], let inv = r.inverse, inv.isToMany,
                  inv.minimumModelCount != nil || inv.maximumModelCount != nil else { continue }
            state.touch(ObjectID(entity: r.destination, pk: target))
        }
    }

    private func externalValue(_ bytes: [UInt8], _ state: inout ApplyState) throws -> SQLValue {
        guard state.mode == .save, let folder = sqliteStore.externalFolder,
              bytes.count >= sqliteStore.configuration.externalStorageThreshold else { return .blob(bytes) }
        let name = UUIDText.random()
        try folder.write(bytes, name: name)
        state.writtenFiles.append(name)
        return .text(name)
    }

    /// The external-storage file a saved row names for `a`, if any (checked: only names Strata generates).
    private func externalFile(_ e: Entity, pk: Int64, _ a: Attribute) throws -> String? {
        guard sqliteStore.externalFolder != nil else { return nil }
        let v = try connection.statement("SELECT \(quote(a.name)) FROM \(quote(e.tableName)) WHERE _pk = ?").scalar([.int(pk)])
        guard case .text(let name)? = v else { return nil }
        guard ExternalFolder.isValidName(name.utf8) else { throw ExternalFolder.corruptName(entity: e.name, attribute: a.name) }
        return name
    }

    private func setRelated(_ owner: ObjectID, _ rel: Relationship, _ targets: [ObjectID], _ state: inout ApplyState) throws {
        let list = SQLiteSession.pkArray(targets.map(\.pk))
        switch rel.storage {
        case .foreignKey(let col):
            let target: SQLValue = targets.first.map { .int($0.pk) } ?? .null
            try connection.execute("UPDATE \(quote(owner.entity.tableName)) SET \(quote(col)) = ?2 WHERE _pk = ?1", [.int(owner.pk), target])
        case .inverseForeignKey(let col):
            let table = quote(rel.destination.tableName)
            let c = quote(col)
            let inverseRequired = rel.inverse.map { !$0.isOptional } ?? false
            if SQLiteSession.losingALinkNeedsCheck(rel) {
                // Targets taken from other owners leave those owners with one link fewer.
                let previous = "SELECT DISTINCT \(c) FROM \(table) WHERE _pk IN (SELECT value FROM json_each(?2)) AND \(c) IS NOT NULL AND \(c) <> ?1"
                try connection.statement(previous).query([.int(owner.pk), list]) { s in state.touch(ObjectID(entity: rel.entity, pk: s.int64(0))) }
            }
            let clear = "UPDATE \(table) SET \(c) = NULL WHERE \(c) = ?1 AND _pk NOT IN (SELECT value FROM json_each(?2)) RETURNING _pk"
            try connection.statement(clear).query([.int(owner.pk), list]) { s in
                if inverseRequired { state.touch(ObjectID(entity: rel.destination, pk: s.int64(0))) }
            }
            try connection.execute("UPDATE \(table) SET \(c) = ?1 WHERE _pk IN (SELECT value FROM json_each(?2))", [.int(owner.pk), list])
        case .joinTable(let table, let ownerCol, let targetCol):
            if let inv = rel.inverse, inv.minimumModelCount != nil || inv.maximumModelCount != nil {
                // Every target before and after changes its count through the inverse.
                for old in try related(owner, rel) { state.touch(old) }
                for t in targets { state.touch(t) }
            }
            try connection.execute("DELETE FROM \(quote(table)) WHERE \(quote(ownerCol)) = ?1", [.int(owner.pk)])
            try connection.execute("INSERT OR IGNORE INTO \(quote(table)) (\(quote(ownerCol)), \(quote(targetCol))) SELECT ?1, value FROM json_each(?2)",
                                   [.int(owner.pk), list])
        }
        state.touch(owner)
    }

    // MARK: Delete rules

    /// The objects related to `id` through `rel`, as saved (in this transaction).
    func related(_ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        let src = relatedSource(rel, ownerTable: id.entity)
        var out: [ObjectID] = []
        let sql = "SELECT d._pk, d._entity FROM \(src.from) WHERE \(src.owner) = ?1 ORDER BY d._pk"
        try connection.statement(sql).query([.int(id.pk)]) { s in
            out.append(ObjectID(entity: schema.entity(named: s.text(1)) ?? rel.destination, pk: s.int64(0)))
        }
        return out
    }

    /// Deletes an object and, through cascade rules, the objects it reaches: a work list,
    /// not recursion, so a chain of any length cannot exhaust the stack.
    private func deleteObject(_ requested: ObjectID, _ state: inout ApplyState) throws {
        var work: [ObjectID] = [requested]
        while let next = work.popLast() {
            let cascades = try deleteOne(next, &state)
            work.append(contentsOf: cascades.reversed())
        }
    }

    /// Deletes one object, applying its delete rules; returns the objects its cascades reach.
    private func deleteOne(_ requested: ObjectID, _ state: inout ApplyState) throws -> [ObjectID] {
        guard !state.deleted.contains(requested) else { return [] }
        // Resolve the concrete entity from the row (cascades reach subentities).
        guard let e = try concreteEntity(root: requested.entity.root, pk: requested.pk) else { return [] }
        let id = ObjectID(entity: e, pk: requested.pk)
        state.deleted.insert(id)

        var cascades: [ObjectID] = []
        for rel in e.relationships {
            let targets = try related(id, rel).filter { !state.deleted.contains($0) }
            switch rel.deleteRule {
            case .deny:
                // Checked once every deletion of the save is applied: related objects the same
                // save deletes do not count, whatever the order (`checkDenied`). A preview
                // (reads with pending changes) shows the deletion; only a save refuses it.
                if !targets.isEmpty && state.mode == .save { state.denied.append((id, rel, targets)) }
            case .cascade:
                cascades += targets
            case .nullify:
                try nullify(id, rel, targets, &state)
            case .noAction:
                break
            }
        }
        // Links from relationships without an inverse that point at this object.
        for other in schema.entities {
            for rel in other.ownRelationships where rel.inverse == nil && e.isKind(of: rel.destination) {
                switch rel.storage {
                case .foreignKey(let col):
                    try connection.execute("UPDATE \(quote(other.tableName)) SET \(quote(col)) = NULL WHERE \(quote(col)) = ?1", [.int(id.pk)])
                case .joinTable(let table, _, let targetCol):
                    try connection.execute("DELETE FROM \(quote(table)) WHERE \(quote(targetCol)) = ?1", [.int(id.pk)])
                case .inverseForeignKey:
                    break
                }
            }
        }
        if state.mode == .save {
            for a in e.attributes where a.externalStorage {
                if let name = try externalFile(e, pk: id.pk, a) { state.obsoleteFiles.append(name) }
            }
        }
        try connection.execute("DELETE FROM \(quote(e.tableName)) WHERE _pk = ?1", [.int(id.pk)])
        return cascades
    }

    /// Fails when a deny rule still has related objects that the save did not delete.
    private func checkDenied(_ state: ApplyState) throws {
        for (id, rel, targets) in state.denied {
            let remaining = targets.filter { !state.deleted.contains($0) }
            guard let first = remaining.first else { continue }
            throw StrataError(.constraint, "cannot delete \(id): relationship '\(rel.name)' has delete rule deny and still holds \(remaining.count) object(s), e.g. \(first)",
                              entity: id.entity.name, attribute: rel.name)
        }
    }

    private func nullify(_ id: ObjectID, _ rel: Relationship, _ targets: [ObjectID], _ state: inout ApplyState) throws {
        switch rel.storage {
        case .foreignKey:
            // The link lives in the deleted row; the target's to-many count changes.
            if let inv = rel.inverse, inv.minimumModelCount != nil { for t in targets { state.touch(t) } }
        case .inverseForeignKey(let col):
            try connection.execute("UPDATE \(quote(rel.destination.tableName)) SET \(quote(col)) = NULL WHERE \(quote(col)) = ?1", [.int(id.pk)])
            if let inv = rel.inverse, !inv.isOptional { for t in targets { state.touch(t) } }
        case .joinTable(let table, let ownerCol, _):
            try connection.execute("DELETE FROM \(quote(table)) WHERE \(quote(ownerCol)) = ?1", [.int(id.pk)])
            if let inv = rel.inverse, inv.minimumModelCount != nil { for t in targets { state.touch(t) } }
        }
    }

    // MARK: Validation at save

    private func validate(_ state: inout ApplyState) throws {
        for id in state.touched where !state.deleted.contains(id) {
            let declared = id.entity
            guard declared.root.descendants.contains(where: { $0.needsSaveValidation }) else { continue }
            guard let e = try concreteEntity(root: declared.root, pk: id.pk), e.needsSaveValidation else { continue }
            let object = ObjectID(entity: e, pk: id.pk)
            for rel in e.relationships {
                if !rel.isToMany && !rel.isOptional {
                    if try related(object, rel).isEmpty {
                        throw StrataError(.validation, "\(object): required relationship '\(rel.name)' is not set", entity: e.name, attribute: rel.name)
                    }
                }
                if rel.isToMany, rel.minimumModelCount != nil || rel.maximumModelCount != nil {
                    let n = try related(object, rel).count
                    if let mn = rel.minimumModelCount, n < mn {
                        throw StrataError(.constraint, "\(object): relationship '\(rel.name)' holds \(n) object(s), fewer than its minimumModelCount \(mn)",
                                          entity: e.name, attribute: rel.name)
                    }
                    if let mx = rel.maximumModelCount, mx > 0, n > mx {
                        throw StrataError(.constraint, "\(object): relationship '\(rel.name)' holds \(n) object(s), more than its maximumModelCount \(mx)",
                                          entity: e.name, attribute: rel.name)
                    }
                }
            }
        }
    }
}

extension Entity {
    /// Whether saving an object of this entity needs relationship checks (required to-one, min/max counts).
    var needsSaveValidation: Bool {
        relationships.contains { r in
            (!r.isToMany && !r.isOptional) || (r.isToMany && (r.minimumModelCount != nil || r.maximumModelCount != nil))
        }
    }
}
