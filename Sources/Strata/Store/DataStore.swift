/// The store seam (SwiftData's `DataStore`): contexts work through sessions
/// of a store and know nothing of how it keeps rows; SQLite is the first
/// implementation (`Storage/`), a PostgreSQL store would be the next.
///
/// The vocabulary both sides share lives in this folder: `PendingChange`
/// (what a context holds until it saves), `ChangeSet` (what a save did),
/// `StoreWriter` (the set-based primitives the context's rules write with)
/// and `SaveHooks` (what other layers attach to every save).
public protocol DataStore: AnyObject, Sendable {
    /// The schema the store was opened with.
    var schema: Schema { get }
    var isReadOnly: Bool { get }
    /// Sees every statement the store's sessions run.
    var trace: TraceHook { get }
    /// Participants and observers of every save through any session of this store.
    var saveHooks: SaveHooks { get }
    /// How the store spells SQL: what a context compiles its reads with (``CompiledFetch``).
    var queryDialect: any QueryDialect { get }
    /// A new session: one connection's worth of work for one context.
    func makeSession() throws -> StoreSession
}

/// Replays a context's pending changes through a writer (the context's own
/// rules: delete rules, links). Given to reads that include pending changes.
public typealias PendingReplay = (StoreWriter) throws -> Void

/// One connection's worth of work for a context. A session is used by one
/// thread at a time; every call is serialized by the session.
///
/// Reads (`fetchJSON` … `objectJSON`) each see one committed snapshot. With
/// `pending`, the replay runs first on an overlay only that read sees: the
/// store's files are not written and its write lock is not taken.
public protocol StoreSession: AnyObject {
    var store: DataStore { get }

    // MARK: Keys and identity (latest committed state, or the caller's transaction)

    /// Reserves `count` consecutive keys for new rows of `root`'s hierarchy; returns the first.
    func reserveKeys(root: Entity, count: Int) throws -> Int64
    /// The concrete entity of the saved object `pk` of `root`'s hierarchy, or nil.
    func concreteEntity(root: Entity, pk: Int64) throws -> Entity?
    /// The saved object of `root`'s hierarchy whose `slots` (of `entity`) hold `values` (all non-null).
    func findUnique(_ entity: Entity, slots: [Int], values: [SQLValue]) throws -> ObjectID?
    /// The saved values of some slots of `id` (nulls when there is no such object).
    func savedValues(_ id: ObjectID, slots: [Int]) throws -> [SQLValue]
    /// Runs `body`, an insert of many objects, letting the `findUnique` calls it makes between
    /// two key reservations read one committed snapshot (a store may take one per call instead).
    func probingUniqueKeys<T>(_ body: () throws -> T) throws -> T
    /// Saved objects of `entity` (and its subentities) that share the values of `slots`
    /// (none null) with another: one group per set of values, each in key order.
    func duplicateGroups(_ entity: Entity, slots: [Int]) throws -> [[ObjectID]]

    // MARK: Writes

    /// Runs `body` in one transaction (a savepoint when the session is inside
    /// `transaction`), then the store's save participants, then commits. The
    /// store's observers get the change set once it is committed (for a save
    /// inside `transaction`, once the outer transaction commits). On any error
    /// nothing of the save remains.
    @discardableResult
    func save(_ body: (StoreWriter) throws -> ChangeSet) throws -> ChangeSet
    /// Runs `body` as one transaction: saves inside it use savepoints, and all
    /// of it commits when `body` returns or rolls back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T
    var isInTransaction: Bool { get }
    /// Runs `body` in one read transaction: every read of this session inside it sees one
    /// committed snapshot, taken when it begins (after checking that the store still holds
    /// the session's version), and no write lock is taken. For a whole-store export, whose
    /// reads must agree with each other. An in-memory store's sessions share one connection:
    /// theirs wait until `body` returns.
    ///
    /// - Throws: `.misuse` inside `transaction` or another read transaction.
    func readTransaction<T>(_ body: () throws -> T) throws -> T

    // MARK: Reads

    // Each takes a fetch compiled with the store's ``DataStore/queryDialect``: the store runs
    // the statements it is given, binds the arguments and feeds the object writer.

    /// The objects a fetch matches, as a JSON array.
    func fetchJSON(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8]
    /// The same, in one buffer the caller may take over (`JSONBuffer.take()`) without a copy.
    func fetchBuffer(_ q: CompiledFetch, pending: PendingReplay?) throws -> JSONBuffer
    func count(_ q: CompiledFetch, pending: PendingReplay?) throws -> Int64
    /// An aggregation's results (``CompiledFetch/result``), as a JSON array of dictionaries.
    func resultBuffer(_ q: ResultQuery, pending: PendingReplay?) throws -> JSONBuffer
    /// The matching identifiers, as a JSON array.
    func identifiersJSON(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8]
    /// The matching identifiers.
    func identifierList(_ q: CompiledFetch, pending: PendingReplay?) throws -> [ObjectID]
    /// How the store runs a fetch (for SQLite: SQL, parameter count, query plan), as JSON.
    func explain(_ q: CompiledFetch, pending: PendingReplay?) throws -> [UInt8]
    /// One object as JSON, or nil when it does not exist.
    func objectJSON(_ id: ObjectID, pending: PendingReplay?) throws -> [UInt8]?
    /// The objects related to `id` through `rel` (any storage), in key order, or nil
    /// when `id` does not exist.
    func related(_ id: ObjectID, _ rel: Relationship, pending: PendingReplay?) throws -> [ObjectID]?

    // MARK: Prepared reads and cursors

    /// A fetch compiled once, run many times with the values of its variables
    /// (``FetchDescriptor/slots``).
    func prepare(_ q: CompiledFetch) throws -> PreparedRead
    /// A fetch's objects, read in batches on one snapshot (plus `pending`, as it is now)
    /// until the cursor is closed or read to the end.
    func openCursor(_ q: CompiledFetch, pending: PendingReplay?) throws -> ObjectCursor
}

/// A fetch a store compiled once (``StoreSession/prepare(_:)``). Each run takes the
/// values of the descriptor's slots, in slot order (none null), and reads on one snapshot.
public protocol PreparedRead: AnyObject {
    func fetchJSON(_ values: [SQLValue], pending: PendingReplay?) throws -> JSONBuffer
    func count(_ values: [SQLValue], pending: PendingReplay?) throws -> Int64
    func identifiersJSON(_ values: [SQLValue], pending: PendingReplay?) throws -> [UInt8]
    /// About the bytes the compiled queries hold (what a cache of them counts).
    var footprint: Int { get }
}

/// The objects of one fetch, read in order in batches, every batch on the snapshot
/// the cursor opened on (``StoreSession/openCursor(_:pending:)``).
public protocol ObjectCursor: AnyObject {
    /// The next objects (at most `limit`) as a JSON array; `[]` once every object was read.
    func next(_ limit: Int) throws -> JSONBuffer
    /// Ends the read (also done after the last batch, and when the cursor goes away).
    func close()
}

/// Set-based primitives a context's rules write with, inside a save's
/// transaction or on a read's overlay. Relationship arguments name where a
/// link lives; the schema says which kind (`Relationship.placement`).
public protocol StoreWriter: AnyObject {
    /// True for a save; false on a read's overlay (nothing is kept).
    var isSaving: Bool { get }

    /// Inserts a new row: every stored slot of `id.entity`, in slot order.
    func insert(_ id: ObjectID, _ values: [SQLValue]) throws
    /// Sets some slots of an existing row.
    func update(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws
    /// Deletes `id`'s row (and, in a save, forgets its external-storage files once committed).
    func deleteRow(_ id: ObjectID) throws
    /// Sets the same values in some slots (of `entity`) of every row of `keys` in `entity`'s
    /// hierarchy table: one statement, whatever the number of rows.
    func updateRows(_ entity: Entity, keys: [Int64], slots: [Int], values: [SQLValue]) throws
    /// Deletes the rows of `ids` (any hierarchies): one statement per table (and, in a save,
    /// forgets their external-storage files once committed).
    func deleteRows(_ ids: [ObjectID]) throws
    /// The current values of some slots of `id` (nulls when there is no such row);
    /// external-storage values as their bytes.
    func values(_ id: ObjectID, slots: [Int]) throws -> [SQLValue]
    /// The concrete entity of the row `pk` of `root`'s hierarchy, as this transaction sees it.
    func concreteEntity(root: Entity, pk: Int64) throws -> Entity?

    /// The objects related to `id` through `rel` (any storage), in key order.
    func related(_ id: ObjectID, _ rel: Relationship) throws -> [ObjectID]
    /// For a link held in rows (`rel.isHeldInRow`): points `rows` at `target` (nil: clears).
    func setLinks(_ rel: Relationship, rows: [Int64], to target: Int64?) throws
    /// For a link held in rows: clears it in every row that points at `target`,
    /// except `keeping`; returns the rows that changed.
    func clearLinks(_ rel: Relationship, to target: Int64, keeping: [Int64]) throws -> [ObjectID]
    /// For a link held in rows: the target each of `rows` points at now (nil: none), in row order.
    func links(_ rel: Relationship, rows: [ObjectID]) throws -> [Int64?]
    /// For a link kept in a join table: removes the pairs whose owner (`ownerSide`, the
    /// object `rel` belongs to) or target is `pk`; returns the keys of the other side.
    func removePairs(_ rel: Relationship, pk: Int64, ownerSide: Bool) throws -> [Int64]
    /// For a link kept in a join table: adds `(owner, t)` for each target.
    func addPairs(_ rel: Relationship, owner: Int64, targets: [Int64]) throws

    /// Makes sure no key up to `key` of `root`'s hierarchy is reserved again
    /// (``StoreSession/reserveKeys(root:count:)``), for rows written with keys of their own
    /// (an import): in the save's transaction where the store's key counters are transactional.
    /// Nothing on a read's overlay.
    func keepKeys(root: Entity, through key: Int64) throws
}

/// What other layers attach to every save of a store: participants write
/// inside the save's transaction, after the changes and their checks and
/// before the commit (persistent history); observers hear of each committed
/// change set (change notification).
public final class SaveHooks: @unchecked Sendable {
    /// May annotate the change set (the history token) before observers see it.
    public typealias Participant = (inout ChangeSet, StoreSession) throws -> Void
    public typealias Observer = (ChangeSet) -> Void

    private let lock = Lock()
    private var participants: [(Int, Participant)] = []
    private var observers: [(Int, Observer)] = []
    private var nextID = 0

    public init() {}

    /// Adds a participant; returns a token for `remove`.
    @discardableResult
    public func addParticipant(_ p: @escaping Participant) -> Int {
        lock.withLock { nextID += 1; participants.append((nextID, p)); return nextID }
    }

    /// Adds an observer; returns a token for `remove`.
    @discardableResult
    public func addObserver(_ o: @escaping Observer) -> Int {
        lock.withLock { nextID += 1; observers.append((nextID, o)); return nextID }
    }

    public func remove(_ token: Int) {
        let removed: [Any] = lock.withLock {
            let gone: [Any] = participants.filter { $0.0 == token }.map(\.1) + observers.filter { $0.0 == token }.map(\.1)
            participants.removeAll { $0.0 == token }
            observers.removeAll { $0.0 == token }
            return gone
        }
        _ = removed  // released outside the lock (a closure may own user data)
    }

    /// Runs every participant (inside the save's transaction).
    func participate(_ changes: inout ChangeSet, _ session: StoreSession) throws {
        for (_, p) in lock.withLock({ participants }) { try p(&changes, session) }
    }

    /// Tells every observer (after the commit, outside any lock).
    func notify(_ changes: ChangeSet) {
        for (_, o) in lock.withLock({ observers }) { o(changes) }
    }
}

/// One pending change of a context, in the order the context made it; the
/// context's rules replay the list through a `StoreWriter` on save and under
/// reads that include pending changes.
enum PendingChange {
    /// A new row: every stored column of `id.entity`, in slot order.
    case insert(ObjectID, [SQLValue])
    /// New values for some slots of an existing row.
    case update(ObjectID, slots: [Int], values: [SQLValue])
    /// Replaces the objects related through a relationship whose link is not
    /// a column of the owner's row (inverse foreign key or join table).
    case setRelated(ObjectID, Relationship, [ObjectID])
    /// Deletes an object, applying delete rules.
    case delete(ObjectID)
    /// The same new values for some slots (of `entity`) of existing objects of `entity`'s kind
    /// (`strata_update_where`; each identifier names its concrete entity): written with one
    /// statement per table.
    case updateSet(Entity, [ObjectID], slots: [Int], values: [SQLValue])
    /// Deletes objects, applying delete rules (`strata_delete_where`): their rows, and those
    /// their cascades reach, deleted with one statement per table at each step of the cascade.
    case deleteSet([ObjectID])
}

extension StoreSession {
    /// Each `findUnique` reads the latest committed state by itself.
    public func probingUniqueKeys<T>(_ body: () throws -> T) throws -> T { try body() }

    /// A store that writes `[UInt8]` only: one copy into a buffer.
    public func fetchBuffer(_ q: CompiledFetch, pending: PendingReplay?) throws -> JSONBuffer {
        JSONBuffer.copying(try fetchJSON(q, pending: pending))
    }
}
