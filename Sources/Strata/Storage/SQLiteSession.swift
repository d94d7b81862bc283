import CSQLite
import Glibc

/// A store session on one SQLite connection: keys, identity lookups, saves
/// (one transaction, or a savepoint inside `transaction`) and reads on one
/// snapshot (`SQLiteSession+Read.swift`).
///
/// Every method takes the connection's lock for its whole duration, so a
/// session may be called from any thread (one at a time per context).
public final class SQLiteSession: StoreSession {
    let sqliteStore: SQLiteStore
    let connection: Connection
    public var store: DataStore { sqliteStore }
    /// The schema the session lays the store out by: the store's, or a migration stage's version.
    let schema: Schema
    var dialect: SQLiteDialect { sqliteStore.dialect }
    /// Reserved primary keys per root table: next free and limit (exclusive).
    private var keys = KeyBlocks()
    /// Whether the connection's journal is a write-ahead log, once read (``isInWALMode()``).
    private var journalIsWAL: Bool?
    /// Per entity, the statements a save runs to insert its rows (``SQLiteWriter/InsertPlan``),
    /// prepared once per session.
    var insertPlans = IdentityTable<SQLiteWriter.InsertPlan>()
    /// Cached unique-key probes (`findUnique`) per entity and constraint.
    private var uniqueProbes: [UniqueProbe: Statement] = [:]
    /// Inside ``probingUniqueKeys(_:)``: unique probes share one read transaction, begun by
    /// the first probe and ended before any key reservation and when the insert ends.
    private var probesShareSnapshot = false
    /// Whether that read transaction is open.
    private var probeSnapshotOpen = false
    /// Per root entity, whether its table held no row on that read transaction's snapshot
    /// (asked by its first probe of the root; forgotten when the transaction ends). A probe of an
    /// empty table finds nothing, so it is not run: a first import into a new store probes nothing.
    private var emptyOnProbeSnapshot = IdentityTable<Bool>()
    private struct UniqueProbe: Hashable { let entity: ObjectIdentifier; let slots: [Int] }
    /// What saves inside `transaction` leave for its end.
    private var outer: OuterTransaction?
    /// The page cache limit a large save replaced (``enlargeCacheForSave()``), restored when the
    /// save ends; nil outside one.
    private var cacheBeforeSave: Int64?
    /// A large save's page cache, in KiB: SQLite's default (2,000 KiB) spills a save of
    /// thousands of rows to the WAL and reads the pages back while it goes on (the indexes'
    /// pages are touched in no order); 16 MiB took 100,000 trips' insert from 3.4 to 3.0 s, and
    /// more gained nothing. It is held only until the save ends.
    static let largeSaveCacheKiB: Int64 = 16 * 1024

    /// Saves inside an outer transaction: files and notifications wait for its outcome.
    private struct OuterTransaction {
        var depth = 0
        var writtenFiles: [String] = []
        var obsoleteFiles: [String] = []
        var changes = ChangeSet()
    }

    /// Whether the session works for the store's container (not for a migration stage): it
    /// checks that the file still holds the version the container opened (`checkStoredVersion`).
    let watchesVersion: Bool

    init(store: SQLiteStore, connection: Connection, schema: Schema? = nil) {
        self.sqliteStore = store
        self.connection = connection
        self.schema = schema ?? store.schema
        // An in-memory store has one connection and no other writer: nobody else can migrate it.
        watchesVersion = schema == nil && !store.options.inMemory
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T { try connection.lock.withLock(body) }

    public var isInTransaction: Bool { locked { connection.isInTransaction } }

    // MARK: Keys and identity

    /// Reserves `count` consecutive primary keys for rows of `root`'s table.
    ///
    /// Keys come from `strata_sequence`, reserved in blocks in their own tiny
    /// transaction, so that contexts (and processes) never hand out the same key.
    ///
    /// In write-ahead-log mode that transaction commits at `synchronous=NORMAL`, not synced to
    /// disk: the log is recovered as a prefix after a crash, so whatever commit is synced later
    /// (every save that writes these keys is one, whichever connection makes it) makes the
    /// reservation durable with it, and a crash that loses the reservation loses every later
    /// commit, so nothing that used its keys survives it either. The connection syncs again
    /// (FULL) once the reservation ends, committed or not. A connection in another journal
    /// mode (a file SQLite could not put in WAL mode) keeps FULL: there NORMAL may lose more.
    public func reserveKeys(root: Entity, count: Int) throws -> Int64 {
        try locked {
            try keys.take(root.name, count: count) { want in
                // A reservation commits in its own transaction, never in the probes' read transaction.
                endProbeSnapshot()
                let ownTransaction = !connection.isInTransaction
                let unsynced = try ownTransaction && isInWALMode()
                if unsynced { try connection.execute(script: SQLiteDialect.normalSync, reported: false) }
                defer { if unsynced { _ = try? connection.execute(script: SQLiteDialect.fullSync, reported: false) } }
                if ownTransaction { try connection.begin() }
                do {
                    if ownTransaction && watchesVersion { try checkStoredVersion() }
                    guard case .int(let end)? = try connection.statement(SQLiteDialect.reserveKeys).scalar([.text(root.name), .int(want)]), end > want else {
                        throw StrataError(.corrupt, "the key sequence of '\(root.name)' (strata_sequence) is damaged or used up: no key can be reserved",
                                          entity: root.name)
                    }
                    if ownTransaction { try connection.commit() }
                    return end - want
                } catch {
                    if ownTransaction { connection.rollback() }
                    throw error
                }
            }
        }
    }

    /// Whether the connection's journal is a write-ahead log (`PRAGMA journal_mode`), read once
    /// per session: no other connection can take the file out of WAL mode while this one has it
    /// open, and a file found in another mode only keeps its reservations synced.
    func isInWALMode() throws -> Bool {
        if let known = journalIsWAL { return known }
        let mode = try Statement(connection: connection, sql: SQLiteDialect.journalMode)
        let wal = try mode.step() && mode.text(0) == "wal"
        journalIsWAL = wal
        return wal
    }

    /// After a rollback that may have undone key reservations made inside it: the keys
    /// this session has handed out or holds stay reserved in `strata_sequence`, so no
    /// other context is ever given them (its pending inserts may still use them).
    private func keepReservations() {
        for b in keys.blocks {
            do {
                try connection.execute(SQLiteDialect.keepKeys, [.text(b.root), .int(b.limit)])
            } catch {
                // Not known to be reserved any more: hand out no key of this block.
                keys.drop(b.root)
            }
        }
    }

    public func concreteEntity(root: Entity, pk: Int64) throws -> Entity? {
        try lockedRead { try SQLiteWriter.concreteEntity(connection, dialect, root: root, pk: pk) }
    }

    /// Unique probes on one snapshot save a read transaction (its locks) per probe. Not on a
    /// connection contexts share (in memory), nor inside a transaction the caller holds. A
    /// snapshot older than the latest commit is no hazard: an object saved since with the same
    /// unique values is met at save, as one saved after the probe would be.
    public func probingUniqueKeys<T>(_ body: () throws -> T) throws -> T {
        let share = locked { !sqliteStore.sharesConnection && !connection.isInTransaction && !probesShareSnapshot }
        guard share else { return try body() }
        locked { probesShareSnapshot = true }
        defer {
            locked {
                probesShareSnapshot = false
                endProbeSnapshot()
            }
        }
        return try body()
    }

    /// Ends the unique probes' read transaction, if one is open (under the session's lock).
    private func endProbeSnapshot() {
        guard probeSnapshotOpen else { return }
        probeSnapshotOpen = false
        emptyOnProbeSnapshot.removeAll()
        connection.endRead()
    }

    /// Whether `root`'s table holds no row on the probes' open read transaction (asked once
    /// per transaction and root).
    private func isEmptyOnProbeSnapshot(_ root: Entity) throws -> Bool {
        if let known = emptyOnProbeSnapshot[ObjectIdentifier(root)] { return known }
        let empty = try connection.statement(SQLiteDialect.anyRow(dialect.table(root))).scalar() == nil
        emptyOnProbeSnapshot.set(ObjectIdentifier(root), empty)
        return empty
    }

    public func findUnique(_ entity: Entity, slots: [Int], values: [SQLValue]) throws -> ObjectID? {
        try lockedRead {
            if probesShareSnapshot && !probeSnapshotOpen && !connection.isInTransaction {
                try connection.beginRead()
                probeSnapshotOpen = true
            }
            let root = entity.root
            // On the probes' own snapshot nothing but the probes runs: an empty table stays empty.
            if probeSnapshotOpen, try isEmptyOnProbeSnapshot(root) { return nil }
            let key = UniqueProbe(entity: ObjectIdentifier(entity), slots: slots)
            let stmt: Statement
            if let s = uniqueProbes[key] {
                stmt = s
                connection.statementLog?.append(s.sql)
            } else {
                stmt = try connection.statement(SQLiteDialect.findUnique(dialect.table(root), columns: slots.map { dialect.column(entity.storedColumns[$0]) }))
                uniqueProbes[key] = stmt
            }
            // Every parameter is bound for each probe (one per slot).
            defer { stmt.resetKeepingBindings() }
            return try stmt.withBindings(values, from: 1) { () throws -> ObjectID? in
                guard try stmt.step() else { return nil }
                guard let e = root.descendant(named: stmt.text(1)) else { return nil }
                return ObjectID(entity: e, pk: stmt.int64(0))
            }
        }
    }

    public func savedValues(_ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        try lockedRead { try SQLiteWriter.values(connection, dialect, id, slots: slots) }
    }

    public func duplicateGroups(_ entity: Entity, slots: [Int]) throws -> [[ObjectID]] {
        try lockedRead {
            let root = entity.root
            let sql = SQLiteDialect.duplicateObjects(dialect.table(root), slots.map { dialect.column(entity.storedColumns[$0]) })
            var groups: [[ObjectID]] = []
            var last: [SQLValue] = []
            try connection.statement(sql).query([SQLiteDialect.nameList(entity.descendants.map(\.name))]) { s in
                guard let e = root.descendant(named: s.text(1)) else { return }
                let values = (0..<Int32(slots.count)).map { s.value(at: 2 + $0) }
                if values != last || groups.isEmpty { groups.append([]); last = values }
                groups[groups.count - 1].append(ObjectID(entity: e, pk: s.int64(0)))
            }
            return groups
        }
    }

    // MARK: Saves and transactions

    public func save(_ body: (StoreWriter) throws -> ChangeSet) throws -> ChangeSet {
        // Observers are told outside the session's lock.
        let (changes, notify) = try locked { () throws -> (ChangeSet, Bool) in
            defer { restoreCacheAfterSave() }
            let nested = outer != nil || connection.isInTransaction
            // IMMEDIATE: external-storage files are written only while the write lock is held,
            // so the sweep at open (which holds it too) never takes a file a save is about to commit.
            if nested { try connection.execute(script: dialect.savepoint("strata_save")) } else { try connection.begin() }
            let writer = SQLiteWriter(session: self, saving: true)
            var changes: ChangeSet
            do {
                // Under the write lock, before anything is written: the rows follow this container's version.
                if !nested && watchesVersion { try checkStoredVersion() }
                changes = try body(writer)
                if !changes.isEmpty { try sqliteStore.saveHooks.participate(&changes, self) }
                // New files' names must be durable before the commit that refers to them.
                if !writer.writtenFiles.isEmpty, let folder = sqliteStore.externalFolder { try folder.sync() }
                if nested { try connection.execute(script: dialect.releaseSavepoint("strata_save")) } else { try connection.commit() }
            } catch {
                if nested {
                    _ = try? connection.execute(script: dialect.rollbackToSavepoint("strata_save"))
                    _ = try? connection.execute(script: dialect.releaseSavepoint("strata_save"))
                } else {
                    connection.rollback()
                }
                sqliteStore.externalFolder?.remove(writer.writtenFiles)
                throw error
            }
            if nested {
                // Committed (or not) with the outer transaction.
                outer?.writtenFiles += writer.writtenFiles
                outer?.obsoleteFiles += writer.obsoleteFiles
                outer?.changes.merge(changes)
                return (changes, false)
            }
            // Readers whose snapshot still names a removed file retry on a newer one (`read`).
            sqliteStore.externalFolder?.remove(writer.obsoleteFiles)
            return (changes, !changes.isEmpty)
        }
        if notify { sqliteStore.saveHooks.notify(changes) }
        return changes
    }

    /// Enlarges the connection's page cache to ``largeSaveCacheKiB`` for the rest of the save
    /// (the writer calls it once a save has written ``SQLiteWriter/largeSave`` rows).
    func enlargeCacheForSave() throws {
        guard cacheBeforeSave == nil else { return }
        let limit = try Statement(connection: connection, sql: SQLiteDialect.cacheSize)
        guard try limit.step() else { return }
        let before = limit.int64(0)
        // A limit already as large stays (a positive one counts pages, of 4 KiB in a Strata store).
        guard before < 0 ? before > -SQLiteSession.largeSaveCacheKiB : before < SQLiteSession.largeSaveCacheKiB / 4 else { return }
        try connection.execute(script: SQLiteDialect.cacheSize(-SQLiteSession.largeSaveCacheKiB), reported: false)
        cacheBeforeSave = before
    }

    /// Gives the page cache its limit from before the save back (SQLite frees the pages above it).
    private func restoreCacheAfterSave() {
        guard let before = cacheBeforeSave else { return }
        cacheBeforeSave = nil
        _ = try? connection.execute(script: SQLiteDialect.cacheSize(before), reported: false)
    }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        var committed: ChangeSet?
        let result = try locked { () throws -> T in
            if outer != nil {
                // Nested: a savepoint of the outer transaction.
                outer?.depth += 1
                defer { outer?.depth -= 1 }
                let name = "strata_nested_\(outer?.depth ?? 0)"
                let before = outer
                do {
                    return try connection.savepoint(name, body)
                } catch {
                    keepReservations()
                    if let b = before, let now = outer {
                        // Files the rolled-back saves wrote are no row's; the older ones stay.
                        sqliteStore.externalFolder?.remove(Array(now.writtenFiles.dropFirst(b.writtenFiles.count)))
                        outer = OuterTransaction(depth: now.depth, writtenFiles: b.writtenFiles, obsoleteFiles: b.obsoleteFiles, changes: b.changes)
                    }
                    throw error
                }
            }
            guard !connection.isInTransaction else {
                throw StrataError(.misuse, "the session is already inside a transaction")
            }
            try connection.begin()
            outer = OuterTransaction()
            let result: T
            do {
                result = try body()
                if let files = outer?.writtenFiles, !files.isEmpty, let folder = sqliteStore.externalFolder { try folder.sync() }
                try connection.commit()
            } catch {
                connection.rollback()
                sqliteStore.externalFolder?.remove(outer?.writtenFiles ?? [])
                outer = nil
                keepReservations()
                throw error
            }
            let done = outer
            outer = nil
            sqliteStore.externalFolder?.remove(done?.obsoleteFiles ?? [])
            if let changes = done?.changes, !changes.isEmpty { committed = changes }
            return result
        }
        if let committed { sqliteStore.saveHooks.notify(committed) }
        return result
    }

    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        // The lock is held throughout: an in-memory store's other sessions share this connection.
        try lockedRead {
            guard outer == nil, !connection.isInTransaction else {
                throw StrataError(.misuse, "the session is already inside a transaction")
            }
            try connection.beginRead()
            defer { connection.endRead() }
            // BEGIN is deferred: this first read takes the snapshot.
            try checkStoredVersion()
            return try body()
        }
    }

    // MARK: Reads

    /// Runs a read call on one committed snapshot plus the replayed pending changes.
    ///
    /// Every statement of `body` runs in one transaction: a deferred read
    /// transaction (one WAL snapshot); with `pending`, the replay first builds
    /// an overlay of temporary tables and views that shadow the touched tables
    /// for this connection only, dropped when the read ends. Neither takes the
    /// store's write lock. When the snapshot names an external-storage file
    /// that a newer commit has already replaced (and removed), the call starts
    /// over on a newer snapshot; a file the latest committed state still names
    /// but that is gone is an error.
    /// - Parameter oneStatement: `body` runs one statement, which without `pending` is its own
    ///   snapshot (SQLite's implicit read transaction, from its first step to its reset): no
    ///   `BEGIN` and `ROLLBACK` around it.
    func read<T>(_ pending: PendingReplay?, oneStatement: Bool = false, _ body: () throws -> T) throws -> T {
        try lockedRead {
            var attempts = 0
            while true {
                do {
                    return try onSnapshot(pending, oneStatement: oneStatement, body)
                } catch let missing as ExternalFolder.Missing {
                    attempts += 1
                    // Inside a caller's transaction the snapshot cannot move on: report at once.
                    if attempts < 1_000, !connection.isInTransaction {
                        let sql = SQLiteDialect.selectRow(missing.table, columns: [missing.attribute])
                        // The latest committed row names another file (or none): the snapshot was stale.
                        if try connection.statement(sql).scalar([.int(missing.pk)]) != .text(missing.name) { continue }
                    }
                    throw missing.error
                }
            }
        }
    }

    // MARK: The stored version

    /// Fails with `.incompatibleStore`, naming both versions, when the store no longer holds
    /// the version this session's container opened: another container or process migrated
    /// it since. One metadata read (which also takes a deferred transaction's snapshot);
    /// saves call it inside their write transaction, before writing, so no row of the old
    /// version reaches a migrated store. Sessions of a migration stage only read.
    func checkStoredVersion() throws {
        guard case .text(let stored)? = try connection.statement(SQLiteDialect.readMetadata).scalar([.text("versionHash")]) else {
            throw StrataError(.corrupt, "the store '\(sqliteStore.path)' has lost its stored schema version (strata_metadata.versionHash)")
        }
        if watchesVersion && stored != schema.versionHash { throw migratedElsewhere(nothingWritten: true) }
    }

    /// The error of a session whose store another container or process migrated.
    private func migratedElsewhere(nothingWritten: Bool) -> StrataError {
        var version = "another version"
        if case .text(let v)? = try? connection.statement(SQLiteDialect.readMetadata).scalar([.text("version")]) { version = "version \(v)" }
        return StrataError(.incompatibleStore,
                           "the store '\(sqliteStore.path)' was migrated to \(version) by another container or process after this container "
                           + "opened it with version \(schema.version)\(nothingWritten ? " (nothing was written)" : ""); "
                           + "close this container and open the store with the new version's schema")
    }

    /// A read under the session's lock whose failure, when the store no longer holds this
    /// container's version, reports the migration (not the statement the new layout broke).
    /// Costs nothing unless the read fails.
    func lockedRead<T>(_ body: () throws -> T) throws -> T {
        try locked {
            do {
                return try body()
            } catch let e as StrataError where watchesVersion && e.code != .incompatibleStore && !connection.isInTransaction {
                if case .text(let hash)? = try? connection.statement(SQLiteDialect.readMetadata).scalar([.text("versionHash")]),
                   hash != schema.versionHash {
                    throw migratedElsewhere(nothingWritten: false)
                }
                throw e
            }
        }
    }

    /// Runs `body` on one snapshot, with `pending` replayed on an overlay that is then dropped.
    /// Inside a transaction the caller already holds, `body` runs in it (the overlay in a savepoint).
    private func onSnapshot<T>(_ pending: PendingReplay?, oneStatement: Bool, _ body: () throws -> T) throws -> T {
        let nested = connection.isInTransaction
        if pending == nil && nested { return try body() }
        if pending == nil && oneStatement { return try body() }
        // Not reported to the trace hook, which counts the statements that read data.
        if nested {
            try connection.execute(script: dialect.savepoint("strata_read"), reported: false)
        } else {
            try connection.beginRead()
        }
        defer {
            if nested {
                _ = try? connection.execute(script: dialect.rollbackToSavepoint("strata_read"), reported: false)
                _ = try? connection.execute(script: dialect.releaseSavepoint("strata_read"), reported: false)
            } else {
                connection.endRead()
            }
        }
        if let pending {
            let overlay = SQLiteWriter(session: self, saving: false)
            try pending(overlay)
        }
        return try body()
    }
}
