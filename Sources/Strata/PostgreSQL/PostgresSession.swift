import Glibc

/// A store session on one PostgreSQL connection: keys from the hierarchy's
/// sequence, saves in one transaction (retried on a serialization failure or a
/// deadlock), reads in one REPEATABLE READ transaction (one snapshot), pending
/// changes written inside it and rolled back.
public final class PostgresSession: StoreSession {
    let pgStore: PostgresStore
    let connection: PGConnection
    public var store: DataStore { pgStore }
    let schema: Schema
    var dialect: PostgresDialect { pgStore.dialect }
    private var keys = KeyBlocks()
    /// What saves inside `transaction` leave for its end.
    private var outer: (depth: Int, changes: ChangeSet)?
    /// Whether the session works for the store's container (not a migration stage).
    let watchesVersion: Bool
    /// For a didMigrate hook's reads of the stage's old version: the copies it reads.
    let previous: PostgresPreviousVersion?

    /// How many times a save or read starts over after a serialization failure or a deadlock.
    static let retries = 8

    init(store: PostgresStore, connection: PGConnection, schema: Schema? = nil, previous: PostgresPreviousVersion? = nil) {
        self.pgStore = store
        self.connection = connection
        self.schema = schema ?? store.schema
        self.previous = previous
        watchesVersion = schema == nil
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T { try connection.lock.withLock(body) }

    public var isInTransaction: Bool { locked { connection.isInTransaction } }

    // MARK: Keys and identity

    /// Reserves `count` consecutive keys of `root`'s hierarchy from its sequence, in blocks, under
    /// a session advisory lock of the sequence: processes on any host never get the same key, and
    /// a rollback never gives a key back (sequences are not transactional).
    public func reserveKeys(root: Entity, count: Int) throws -> Int64 {
        try locked {
            try keys.take(root.name, count: count) { want in
                let sequence = dialect.quote(PostgresDialect.sequenceName(dialect.table(root)))
                try connection.execute(PostgresStore.lockKeys, [.text(sequence)])
                defer { _ = try? connection.execute(PostgresStore.unlockKeys, [.text(sequence)]) }
                guard case .int(let start)? = try connection.scalar(PostgresDialect.reserveKeys, [.text(sequence), .int(want)]), start >= 1 else {
                    throw StrataError(.corrupt, "the key sequence of '\(root.name)' is damaged: no key can be reserved", entity: root.name)
                }
                return start
            }
        }
    }

    public func concreteEntity(root: Entity, pk: Int64) throws -> Entity? {
        try lockedRead { try PostgresWriter.concreteEntity(connection, dialect, root: root, pk: pk) }
    }

    public func findUnique(_ entity: Entity, slots: [Int], values: [SQLValue]) throws -> ObjectID? {
        try lockedRead {
            let root = entity.root
            let rows = try connection.query(dialect.findUnique(dialect.table(root), columns: slots.map { dialect.column(entity.storedColumns[$0]) }), values)
            guard rows.count > 0, let e = root.descendant(named: rows.string(0, 1)) else { return nil }
            return ObjectID(entity: e, pk: rows.int64(0, 0))
        }
    }

    public func savedValues(_ id: ObjectID, slots: [Int]) throws -> [SQLValue] {
        try lockedRead { try PostgresWriter.values(connection, dialect, id, slots: slots) }
    }

    public func duplicateGroups(_ entity: Entity, slots: [Int]) throws -> [[ObjectID]] {
        try lockedRead {
            let root = entity.root
            let sql = dialect.duplicateObjects(dialect.table(root), slots.map { dialect.column(entity.storedColumns[$0]) })
            let rows = try connection.query(sql, [PostgresDialect.nameArray(entity.descendants.map(\.name))])
            var groups: [[ObjectID]] = []
            var last: [SQLValue] = []
            for r in 0..<rows.count {
                guard let e = root.descendant(named: rows.string(r, 1)) else { continue }
                let values = (0..<Int32(slots.count)).map { rows.value(r, 2 + $0) }
                if values != last || groups.isEmpty { groups.append([]); last = values }
                groups[groups.count - 1].append(ObjectID(entity: e, pk: rows.int64(r, 0)))
            }
            return groups
        }
    }

    // MARK: Saves and transactions

    public func save(_ body: (StoreWriter) throws -> ChangeSet) throws -> ChangeSet {
        let (changes, notify) = try locked { () throws -> (ChangeSet, Bool) in
            let nested = outer != nil || connection.isInTransaction
            var attempt = 0
            while true {
                if nested { try connection.execute(script: "SAVEPOINT strata_save") } else { try connection.execute(script: "BEGIN ISOLATION LEVEL READ COMMITTED") }
                let writer = PostgresWriter(session: self, saving: true)
                var changes: ChangeSet
                do {
                    // Saves share the store's lock, migrations take it alone: no row of an old
                    // version reaches a migrated store.
                    if !nested && watchesVersion { try checkStoredVersion(lock: true) }
                    changes = try body(writer)
                    if !changes.isEmpty { try pgStore.saveHooks.participate(&changes, self) }
                    if nested { try connection.execute(script: "RELEASE SAVEPOINT strata_save") } else { try connection.execute(script: "COMMIT") }
                } catch {
                    if nested {
                        _ = try? connection.execute(script: "ROLLBACK TO SAVEPOINT strata_save")
                        _ = try? connection.execute(script: "RELEASE SAVEPOINT strata_save")
                    } else {
                        rollback()
                    }
                    if !nested, attempt < PostgresSession.retries, PostgresSession.isRetryable(error) {
                        attempt += 1
                        usleep(UInt32(1_000 << min(attempt, 6)))
                        continue
                    }
                    throw PostgresSession.finalError(error)
                }
                if nested {
                    outer?.changes.merge(changes)
                    return (changes, false)
                }
                return (changes, !changes.isEmpty)
            }
        }
        if notify { pgStore.saveHooks.notify(changes) }
        return changes
    }

    /// A serialization failure or a deadlock, or a transaction aborted by a unique value another
    /// transaction committed since it was looked for (25P02 after a refusal the save handled):
    /// the whole transaction may start over.
    static func isRetryable(_ error: Error) -> Bool {
        guard let e = error as? StrataError, let state = e.postgresState else { return false }
        return state == "40001" || state == "40P01" || state == "25P02"
    }

    /// After the retries: a conflict the server kept refusing is `.busy`.
    static func finalError(_ error: Error) -> Error {
        guard isRetryable(error), var e = error as? StrataError else { return error }
        e.code = .busy
        e.message = "the save conflicted with other transactions \(retries) times and was given up (nothing was written): " + e.message
        return e
    }

    private func rollback() {
        if connection.isInTransaction { _ = try? connection.execute(script: "ROLLBACK") }
    }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        var committed: ChangeSet?
        let result = try locked { () throws -> T in
            if outer != nil {
                outer?.depth += 1
                let depth = outer?.depth ?? 0
                defer { outer?.depth -= 1 }
                let before = outer?.changes
                try connection.execute(script: "SAVEPOINT strata_nested_\(depth)")
                do {
                    let r = try body()
                    try connection.execute(script: "RELEASE SAVEPOINT strata_nested_\(depth)")
                    return r
                } catch {
                    _ = try? connection.execute(script: "ROLLBACK TO SAVEPOINT strata_nested_\(depth)")
                    _ = try? connection.execute(script: "RELEASE SAVEPOINT strata_nested_\(depth)")
                    if let before { outer?.changes = before }
                    throw error
                }
            }
            guard !connection.isInTransaction else { throw StrataError(.misuse, "the session is already inside a transaction") }
            try connection.execute(script: "BEGIN ISOLATION LEVEL READ COMMITTED")
            outer = (0, ChangeSet())
            let result: T
            do {
                if watchesVersion { try checkStoredVersion(lock: true) }
                result = try body()
                try connection.execute(script: "COMMIT")
            } catch {
                rollback()
                outer = nil
                throw error
            }
            if let changes = outer?.changes, !changes.isEmpty { committed = changes }
            outer = nil
            return result
        }
        if let committed { pgStore.saveHooks.notify(committed) }
        return result
    }

    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try lockedRead {
            guard outer == nil, !connection.isInTransaction else {
                throw StrataError(.misuse, "the session is already inside a transaction")
            }
            try connection.execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", reported: false)
            defer { rollback() }
            // The first statement takes the snapshot.
            try checkStoredVersion()
            return try body()
        }
    }

    // MARK: Reads

    /// Runs a read call on one snapshot (a REPEATABLE READ transaction) plus the replayed pending
    /// changes, written in that transaction and rolled back with it. Inside the caller's
    /// transaction, in a savepoint of it.
    /// - Parameter oneStatement: `body` runs one statement: with nothing pending and no
    ///   transaction open, it runs alone (a statement is its own snapshot), without the
    ///   transaction's two more round trips.
    func read<T>(_ pending: PendingReplay?, oneStatement: Bool = false, _ body: () throws -> T) throws -> T {
        try lockedRead {
            let nested = connection.isInTransaction
            if pending == nil && (nested || oneStatement) { return try body() }
            var attempt = 0
            while true {
                if nested {
                    try connection.execute(script: "SAVEPOINT strata_read", reported: false)
                } else {
                    try connection.execute(script: pending == nil ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN ISOLATION LEVEL REPEATABLE READ",
                                           reported: false)
                }
                do {
                    defer {
                        if nested {
                            _ = try? connection.execute(script: "ROLLBACK TO SAVEPOINT strata_read", reported: false)
                            _ = try? connection.execute(script: "RELEASE SAVEPOINT strata_read", reported: false)
                        } else {
                            _ = try? connection.execute(script: "ROLLBACK", reported: false)
                        }
                    }
                    if let pending {
                        try connection.execute(script: "SET CONSTRAINTS ALL DEFERRED", reported: false)
                        try pending(PostgresWriter(session: self, saving: false))
                    }
                    return try body()
                } catch {
                    if !nested, attempt < PostgresSession.retries, PostgresSession.isRetryable(error) {
                        attempt += 1
                        continue
                    }
                    throw error
                }
            }
        }
    }

    // MARK: The stored version

    /// Fails with `.incompatibleStore` when the store no longer holds the version this session's
    /// container opened. With `lock` (inside a write transaction), first takes the store's lock
    /// shared, which a migration takes alone, until the transaction ends.
    func checkStoredVersion(lock: Bool = false) throws {
        if lock { try connection.execute(PostgresStore.shareStoreLock) }
        guard case .text(let stored)? = try connection.scalar(PostgresDialect.readMetadata, [.text("versionHash")]) else {
            throw StrataError(.corrupt, "the PostgreSQL store has lost its stored schema version (strata_metadata.versionHash)")
        }
        if watchesVersion && stored != schema.versionHash { throw migratedElsewhere(nothingWritten: true) }
    }

    private func migratedElsewhere(nothingWritten: Bool) -> StrataError {
        var version = "another version"
        if case .text(let v)? = try? connection.scalar(PostgresDialect.readMetadata, [.text("version")]) { version = "version \(v)" }
        return StrataError(.incompatibleStore,
                           "the PostgreSQL store was migrated to \(version) by another container or process after this container "
                           + "opened it with version \(schema.version)\(nothingWritten ? " (nothing was written)" : ""); "
                           + "close this container and open the store with the new version's schema")
    }

    /// A read under the session's lock whose failure, when the store no longer holds this
    /// container's version, reports the migration.
    func lockedRead<T>(_ body: () throws -> T) throws -> T {
        try locked {
            if let previous { return try previous.reading(connection, body) }
            do {
                return try body()
            } catch let e as StrataError where watchesVersion && e.code != .incompatibleStore && !connection.isInTransaction {
                if case .text(let hash)? = try? connection.scalar(PostgresDialect.readMetadata, [.text("versionHash")]), hash != schema.versionHash {
                    connection.forgetPrepared()
                    throw migratedElsewhere(nothingWritten: false)
                }
                throw e
            }
        }
    }

    static func unknownEntity(_ root: Entity, pk: Int64) -> StrataError {
        StrataError(.corrupt, "\(root.name)/\(pk): the row's entity name is not an entity of \(root.name)'s hierarchy (the store is damaged)",
                    entity: root.name)
    }
}
