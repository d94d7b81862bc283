/// The unique keys of a context's pending changes: which pending object holds each key, so
/// an insert meets the objects inserted or re-keyed before it without asking the store.
///
/// It covers two kinds of objects:
/// - pending inserts of entities with unique constraints: their row (to recompute their keys
///   when a later change touches a key slot) and, when they hold a key, the policy that
///   decides what they do on meeting an object saved meanwhile with the same key;
/// - saved objects whose key slots pending updates changed (*re-keyed*): their saved keys no
///   longer count, their current ones are held here.
///
/// Invariants:
/// - a key has at most one holder; a key an object already holds stays with it when another
///   object gets the same values (the save reports that collision);
/// - `keysOf[id]` lists the keys `id` got last; it holds those of them no other object held first;
///   a pending insert whose keys never changed has no entry: its keys are those of its row, all
///   of which it holds (an insert holding a key another object holds meets that object instead);
/// - every change made inside a group (``beginGroup()``) is undone by ``undoGroup()``, in reverse.
///
/// A key is a constraint (numbered by its "root|col,col" name: entities of one hierarchy share
/// the constraints they inherit) and the values of its columns; a set of values with a null is
/// no key, as in SQL.
struct PendingUniqueIndex {
    /// The holder of each key: constraint number -> values -> object.
    private var holders: [[KeyValues: ObjectID]] = []
    /// The keys each object got last, once they changed (see the invariants).
    private var keysOf: [ObjectID: [(Int, KeyValues)]] = [:]
    /// The pending inserts of entities with unique constraints: their rows and, for those
    /// holding a key, how they meet an object saved meanwhile with the same key.
    private var inserts = PendingObjectTable<(row: [SQLValue], policy: InsertPolicy?)>()
    /// The values pending updates gave to key slots, by object and slot.
    private var updatedKeySlots: [ObjectID: [Int: SQLValue]] = [:]
    /// Saved objects whose keys pending updates may have changed.
    private var rekeyed: Set<ObjectID> = []
    /// The constraint numbers of each entity, in `uniqueSlotSets` order, and the number of each
    /// constraint name (caches; never cleared, so a number always means the same constraint).
    private var constraintsOf = IdentityTable<[Int]>()
    private var numbers: [String: Int] = [:]
    /// The undo steps of the running group.
    private var undoLog: [Undo] = []

    private enum Undo {
        /// A new insert: forget its row, its policy and the keys it holds.
        case inserted(ObjectID)
        /// New keys of an object: give each key back to its holder before, and the object its keys before.
        case keys(ObjectID, before: [(Int, KeyValues)]?, replaced: [(Int, KeyValues, ObjectID?)])
        /// New key slot values of an object: its values before, and whether it was re-keyed before.
        case keySlots(ObjectID, before: [Int: SQLValue]?, wasRekeyed: Bool)
    }

    // MARK: Keys

    /// The unique keys of `e` in `row`, in `uniqueSlotSets` order (numbers `e`'s constraints once).
    mutating func keys(_ e: Entity, _ row: (Int) -> SQLValue) -> [UniqueKey] {
        let sets = e.uniqueSlotSets
        guard !sets.isEmpty else { return [] }
        let constraints = self.constraints(e)
        var keys: [UniqueKey] = []
        for (i, slots) in sets.enumerated() {
            let values = slots.map(row)
            if values.contains(where: \.isNull) { continue }
            keys.append(UniqueKey(slots: slots, constraint: constraints[i], key: KeyValues(values)))
        }
        return keys
    }

    /// The numbers of `e`'s constraints, in `uniqueSlotSets` order (numbering new ones).
    private mutating func constraints(_ e: Entity) -> [Int] {
        if let known = constraintsOf[ObjectIdentifier(e)] { return known }
        let names = e.uniqueSlotSets.map { slots in e.root.name + "|" + slots.map { e.storedColumns[$0].name }.joined(separator: ",") }
        let known = names.map { name in
            if let n = numbers[name] { return n }
            numbers[name] = holders.count
            holders.append([:])
            return holders.count - 1
        }
        constraintsOf.set(ObjectIdentifier(e), known)
        return known
    }

    /// The pending object holding `key`, if any.
    func holder(of key: UniqueKey) -> ObjectID? { holders[key.constraint][key.key] }

    /// How the pending insert `id` meets an object saved meanwhile with one of its keys (nil: it holds none).
    func insertPolicy(of id: ObjectID) -> InsertPolicy? { inserts[id]?.policy }

    /// The keys `id` got last (see the invariants; nil: none recorded).
    private mutating func currentKeys(_ id: ObjectID) -> [(Int, KeyValues)]? {
        if let keys = keysOf[id] { return keys }
        guard let entry = inserts[id], entry.policy != nil else { return nil }
        return keys(id.entity) { entry.row[$0] }.map { ($0.constraint, $0.key) }
    }

    /// True when `id` is a saved object whose saved keys no longer count.
    func isRekeyed(_ id: ObjectID) -> Bool { rekeyed.contains(id) }

    // MARK: Changes

    /// Records a new pending insert of `e` with its `row`, holding `keys` (which no pending object
    /// holds), its `_onConflict` policy and `provided[slot]`: its input gave `slot` a value.
    mutating func inserted(_ id: ObjectID, _ e: Entity, row: [SQLValue], keys: [UniqueKey], policy: ConflictPolicy, provided: SlotFlags) {
        guard !e.uniqueSlotSets.isEmpty else { return }
        undoLog.append(.inserted(id))
        guard !keys.isEmpty else {
            inserts[id] = (row, nil)
            return
        }
        inserts[id] = (row, InsertPolicy(policy: policy, provided: provided))
        for k in keys { holders[k.constraint][k.key] = id }
    }

    /// Pending changes gave `values` to `slots` of `id`: recomputes its keys when a key slot changed.
    /// `saved(id, slots)` reads the saved values of a saved object's key slots.
    mutating func keySlotsChanged(_ id: ObjectID, slots: [Int], values: [SQLValue],
                                  saved: (ObjectID, [Int]) throws -> [SQLValue]) throws {
        let e = id.entity
        guard e.uniqueSlotSets.contains(where: { set in set.contains(where: slots.contains) }) else { return }
        let before = updatedKeySlots[id]
        var overlay = before ?? [:]
        for (slot, v) in zip(slots, values) where e.uniqueSlotSets.contains(where: { $0.contains(slot) }) { overlay[slot] = v }
        updatedKeySlots[id] = overlay
        undoLog.append(.keySlots(id, before: before, wasRekeyed: rekeyed.contains(id)))
        var base: [SQLValue]
        if let row = inserts[id]?.row {
            base = row
        } else {
            base = e.defaultRow.map { _ in SQLValue.null }
            let keySlots = Array(Set(e.uniqueSlotSets.joined())).sorted()
            for (slot, v) in zip(keySlots, try saved(id, keySlots)) { base[slot] = v }
            rekeyed.insert(id)
        }
        setKeys(id, keys(e) { overlay[$0] ?? base[$0] }.map { ($0.constraint, $0.key) })
    }

    /// Records `id`'s current keys, replacing the ones recorded before.
    private mutating func setKeys(_ id: ObjectID, _ keys: [(Int, KeyValues)]) {
        let recorded = keysOf[id]
        let before = recorded ?? currentKeys(id)
        var replaced: [(Int, KeyValues, ObjectID?)] = []
        for (k, v) in before ?? [] where holders[k][v] == id {
            replaced.append((k, v, id))
            holders[k][v] = nil
        }
        for (k, v) in keys where holders[k][v] == nil {
            replaced.append((k, v, nil))
            holders[k][v] = id
        }
        keysOf[id] = keys
        undoLog.append(.keys(id, before: recorded, replaced: replaced))
    }

    /// A deleted object holds no key any more (not undone: a deletion is no group).
    mutating func deleted(_ id: ObjectID) {
        guard let keys = currentKeys(id) else { return }
        for (k, v) in keys where holders[k][v] == id { holders[k][v] = nil }
    }

    /// Forgets every pending object (the save or rollback of all pending changes).
    mutating func removeAll() {
        for k in holders.indices { holders[k].removeAll() }
        keysOf.removeAll()
        inserts.removeAll()
        updatedKeySlots.removeAll()
        rekeyed.removeAll()
        undoLog.removeAll()
    }

    // MARK: Groups

    /// Starts a group of changes that ``undoGroup()`` can undo.
    mutating func beginGroup() { undoLog.removeAll(keepingCapacity: true) }

    /// Ends the running group, keeping its changes.
    mutating func endGroup() { undoLog.removeAll(keepingCapacity: true) }

    /// Undoes every change of the running group, last first, and ends it.
    mutating func undoGroup() {
        for undo in undoLog.reversed() {
            switch undo {
            case .inserted(let id):
                if let keys = currentKeys(id) {
                    for (k, v) in keys where holders[k][v] == id { holders[k][v] = nil }
                }
                inserts[id] = nil
                keysOf[id] = nil
            case .keys(let id, let before, let replaced):
                for (k, v, previous) in replaced.reversed() { holders[k][v] = previous }
                keysOf[id] = before
            case .keySlots(let id, let before, let wasRekeyed):
                updatedKeySlots[id] = before
                if !wasRekeyed { rekeyed.remove(id) }
            }
        }
        undoLog.removeAll(keepingCapacity: true)
    }
}

/// One unique key of an object: the constraint's slots, its number (``PendingUniqueIndex``) and the values.
struct UniqueKey {
    let slots: [Int]
    let constraint: Int
    let key: KeyValues
    var values: [SQLValue] { key.values }
}

/// The values of a unique key with their hash, computed once (``HashedOnce``): a bulk insert
/// looks each key up, records it and moves it at every growth of its table.
typealias KeyValues = HashedOnce<[SQLValue]>

extension HashedOnce where Wrapped == [SQLValue] {
    /// The key's values.
    var values: [SQLValue] { value }
}

/// How a pending insert holding a unique key meets an object saved meanwhile with the same key:
/// its `_onConflict` policy and, by slot, whether its input gave a value (those slots an upsert writes).
struct InsertPolicy {
    let policy: ConflictPolicy
    let provided: SlotFlags
    /// The slots the input gave a value.
    var providedSlots: [Int] { provided.indices.filter { provided[$0] } }
}

