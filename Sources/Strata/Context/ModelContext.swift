/// SwiftData's ModelContext: pending inserts, updates and deletes, applied
/// to the store in one transaction by ``save()``.
///
/// Objects go in and come out as JSON. Input is read with a pull parser
/// straight into stored values (no intermediate tree); changes wait in
/// memory as an ordered list until ``save()`` replays them in one
/// transaction. Reads see pending changes unless a request opts out.
///
/// A context is used by one thread at a time; its methods are serialized by
/// a lock, so misuse from several threads is safe but not concurrent.
///
/// The type is split by concern: this file holds its state, atomic groups, save
/// and rollback; `ModelContext+Insert.swift`, `+Update.swift` (updates and deletes), `+SetWrites.swift` (of the objects a predicate matches),
/// `+Decode.swift` (the object decoder both share), `+Links.swift` (identifiers and
/// relationship values) and `+Read.swift`; `History/ModelContext+History.swift` has
/// the history calls.
public final class ModelContext {
    public let schema: Schema
    let session: StoreSession
    /// The replay's knowledge of the schema (link slots, tombstones, checks).
    let rules: SaveRules
    /// The pending changes, in the order they were made (the order a save replays them).
    var changes: [PendingChange] = []
    /// The concrete entity of each pending insert; each has its `.insert` in `changes`.
    /// (By hierarchy and key, without a reference counted per insert: ``PendingObjectTable``.)
    var pendingInserted = PendingObjectTable<UnownedEntity>()
    /// Objects marked for deletion.
    var pendingDeleted: Set<ObjectID> = []
    /// The unique keys of pending inserts and of saved objects whose keys pending updates changed.
    var unique = PendingUniqueIndex()
    /// The member tables of the entities whose objects this context decoded (``memberTable(_:)``).
    var memberTables = IdentityTable<MemberTable>()
    /// Levels of nested objects being inserted right now.
    var insertDepth = 0
    /// The descriptors `strata_fetch` and `strata_fetch_count` compiled, by text (``DescriptorCache``).
    var descriptorCache = DescriptorCache()
    let lock = Lock()

    /// A context on a store session and a schema. A container's contexts (made by
    /// `ModelContainer.makeContext`) record the configuration's `"author"` with their
    /// saves; a migration stage's hooks work on the stage's schema inside the stage's
    /// transaction (`StoreSession.transaction`), and their saves become part of it.
    /// - Parameter owner: what the context keeps alive for as long as it lives (and prepared
    ///   fetches and cursors made on it): the container that made it, whose configuration
    ///   holds the stage hooks' userdata (strata.h: freed once its contexts are freed).
    public init(session: StoreSession, schema: Schema, author: String? = nil, owner: AnyObject? = nil) {
        self.session = session
        self.schema = schema
        self.rules = SaveRules(schema: schema)
        self.savedAuthor = author
        self.owner = owner
    }

    /// Kept alive by the context, never used by it (`init`'s `owner`).
    private let owner: AnyObject?

    private var savedAuthor: String?
    private var savedName: String?

    /// The author history records with this context's saves: the configuration's
    /// `"author"` unless set here (nil: none).
    public var author: String? {
        get { lock.withLock { savedAuthor } }
        set { lock.withLock { savedAuthor = newValue } }
    }

    /// The context name history records with this context's saves (nil: none).
    public var name: String? {
        get { lock.withLock { savedName } }
        set { lock.withLock { savedName = newValue } }
    }

    /// True when there are changes not yet saved.
    public var hasChanges: Bool { lock.withLock { !changes.isEmpty } }

    /// The version before a migration stage, in a didMigrate hook: its schema and a
    /// session on the store as committed before the stage began (nil when the store
    /// cannot read it while the stage runs: in memory, or PostgreSQL).
    var previousVersion: (schema: Schema, session: StoreSession?)?

    // MARK: Lent contexts

    /// Set once the migration stage that lent this context to its hooks is done with it.
    private(set) var expired = false

    /// Ends a context lent to a migration stage's hooks: its pending changes are dropped and
    /// every later call (through prepared fetches and cursors made on it too) is `.misuse`,
    /// since its session is the stage's, on the stage's schema and connection.
    func expire() {
        lock.withLock {
            expired = true
            clearPending()
            descriptorCache.removeAll()
        }
    }

    /// Runs `body` under the context's lock, unless the context expired.
    func live<T>(_ body: () throws -> T) throws -> T {
        try lock.withLock {
            if expired {
                throw StrataError(.misuse, "this context was lent to a migration stage's hook, which has returned: it cannot be used "
                                  + "afterwards, nor the prepared fetches made on it")
            }
            return try body()
        }
    }

    func requireWritable() throws {
        if session.store.isReadOnly {
            throw StrataError(.readOnly, "the store was opened read-only")
        }
    }

    func entity(named name: String, path: String? = nil) throws -> Entity {
        guard let e = schema.entity(named: name) else {
            throw StrataError(.invalid, "unknown entity '\(name)' (the schema has: \(schema.entities.map(\.name).joined(separator: ", ")))", entity: name, path: path)
        }
        return e
    }

    // MARK: Atomic groups

    /// Runs `body` over JSON input; if it throws, every change it made is undone.
    /// When the input is not well-formed JSON, that is the error reported
    /// (even if a value before the syntax error was already rejected).
    func atomically<T>(input: UnsafeBufferPointer<UInt8>, _ body: () throws -> T) throws -> T {
        do {
            return try atomically(body)
        } catch let e as StrataError where e.reason != .malformedJSON {
            var scan = JSONReader(input)
            try scan.skipValue()
            try scan.expectEnd()
            throw e
        }
    }

    /// Runs `body`; if it throws, every change it made is undone: its changes, its
    /// inserts (those of its `.insert` changes) and what it did to the unique keys.
    func atomically<T>(_ body: () throws -> T) throws -> T {
        let start = changes.count
        unique.beginGroup()
        do {
            let result = try body()
            unique.endGroup()
            return result
        } catch {
            // Last first: each is then the last of its hierarchy's keys (``PendingObjectTable``).
            for case .insert(let id, _) in changes[start...].reversed() { pendingInserted[id] = nil }
            changes.removeSubrange(start...)
            unique.undoGroup()
            throw error
        }
    }

    // MARK: Save and rollback

    /// Writes every pending change in one transaction (a savepoint when the
    /// session is inside `StoreSession.transaction`) and returns what the save
    /// did, cascades and nullified links included. On failure nothing is
    /// written and the pending changes stay, so the caller can fix and retry
    /// or roll back.
    @discardableResult
    public func save() throws -> ChangeSet {
        try live {
            guard !changes.isEmpty else { return ChangeSet() }
            try requireWritable()
            let rules = self.rules
            let pending = changes
            let (author, name) = (savedAuthor, savedName)
            let index = unique
            let done = try session.save { writer in
                var replay = ChangeReplay(writer: writer, rules: rules) { [unowned self] id, row in
                    try self.savedCollision(id, row, index.insertPolicy(of: id))
                }
                try replay.apply(pending)
                var changes = replay.changeSet
                changes.author = author
                changes.contextName = name
                return changes
            }
            clearPending()
            return done
        }
    }

    /// The replay of the pending changes for a read that includes them (nil: nothing pending).
    func pendingReplay(_ include: Bool = true) -> PendingReplay? {
        guard include, !changes.isEmpty else { return nil }
        let rules = self.rules
        let pending = changes
        return { writer in
            var replay = ChangeReplay(writer: writer, rules: rules)
            try replay.apply(pending)
        }
    }

    /// Discards every pending change.
    public func rollback() {
        lock.withLock { clearPending() }
    }

    private func clearPending() {
        changes.removeAll(keepingCapacity: true)
        pendingInserted.removeAll()
        pendingDeleted.removeAll()
        unique.removeAll()
    }
}
