/// A value for each of some pending objects (a context's pending inserts), by hierarchy and key.
///
/// A bulk insert adds hundreds of thousands of objects, so no table is hashed or grown by
/// rehashing: each hierarchy keeps its keys in ascending order with their values beside them.
/// A context's keys of one hierarchy come from reserved blocks, which only ascend, so a new
/// pending insert is an append and the undo of a group (last first) a removal at the end; a
/// lookup is a binary search. Any other order works too, at the cost of moving values.
struct PendingObjectTable<Value> {
    /// The values of one hierarchy's objects, in key order.
    private struct Hierarchy {
        let root: ObjectIdentifier
        var keys: [Int64] = []
        var values: [Value] = []

        /// The position of the first key not below `pk`.
        func position(_ pk: Int64) -> Int {
            if let last = keys.last, last < pk { return keys.count }
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = lo + (hi - lo) / 2
                if keys[mid] < pk { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }

    /// One entry per hierarchy with values (a schema has few).
    private var hierarchies: [Hierarchy] = []

    private func hierarchy(_ id: ObjectID) -> Int? {
        let root = ObjectIdentifier(id.entity.root)
        return hierarchies.firstIndex { $0.root == root }
    }

    /// The value of the object `id` names (its entity may be any of its hierarchy's); setting
    /// nil removes it.
    subscript(id: ObjectID) -> Value? {
        get {
            guard let h = hierarchy(id) else { return nil }
            let i = hierarchies[h].position(id.pk)
            guard i < hierarchies[h].keys.count, hierarchies[h].keys[i] == id.pk else { return nil }
            return hierarchies[h].values[i]
        }
        set {
            if let value = newValue { insert(id, value) } else { remove(id) }
        }
    }

    private mutating func insert(_ id: ObjectID, _ value: Value) {
        let h: Int
        if let found = hierarchy(id) { h = found } else {
            hierarchies.append(Hierarchy(root: ObjectIdentifier(id.entity.root)))
            h = hierarchies.count - 1
        }
        let i = hierarchies[h].position(id.pk)
        if i == hierarchies[h].keys.count {
            hierarchies[h].keys.append(id.pk)
            hierarchies[h].values.append(value)
        } else if hierarchies[h].keys[i] == id.pk {
            hierarchies[h].values[i] = value
        } else {
            hierarchies[h].keys.insert(id.pk, at: i)
            hierarchies[h].values.insert(value, at: i)
        }
    }

    private mutating func remove(_ id: ObjectID) {
        guard let h = hierarchy(id) else { return }
        let i = hierarchies[h].position(id.pk)
        guard i < hierarchies[h].keys.count, hierarchies[h].keys[i] == id.pk else { return }
        if i == hierarchies[h].keys.count - 1 {
            hierarchies[h].keys.removeLast()
            hierarchies[h].values.removeLast()
        } else {
            hierarchies[h].keys.remove(at: i)
            hierarchies[h].values.remove(at: i)
        }
    }

    /// Forgets every value.
    mutating func removeAll() { hierarchies.removeAll() }
}

/// An entity of the schema a context keeps alive, held without counting a reference.
struct UnownedEntity { unowned(unsafe) let entity: Entity }
