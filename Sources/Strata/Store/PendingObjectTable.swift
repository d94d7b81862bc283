/// A value for each of some objects, by hierarchy and key: a context's pending inserts, the
/// records of what a save changed.
///
/// A bulk insert adds hundreds of thousands of objects, so no table is hashed or grown by
/// rehashing: each hierarchy keeps its keys in ascending order with their values beside them.
/// A context's keys of one hierarchy come from reserved blocks, which only ascend, so a new
/// pending insert (and the record of its insert at save) is an append and the undo of a group
/// (last first) a removal at the end; a lookup is a binary search. Nothing is ever moved, so no order of keys costs more than a
/// hash table would: a key below the last one (an import's own keys, in any order) goes to a
/// hash table beside the arrays, and a key removed from the middle leaves a hole.
struct PendingObjectTable<Value> {
    /// The values of one hierarchy's objects. A key is in `keys` or in `others`, never both.
    private struct Hierarchy {
        let root: ObjectIdentifier
        /// Ascending.
        var keys: [Int64] = []
        /// Beside `keys`; nil where a key was removed from the middle.
        var values: [Value?] = []
        /// Keys that came below the last of `keys`.
        var others: [Int64: Value] = [:]

        /// The index of `pk` in `keys`, if it is there.
        func index(_ pk: Int64) -> Int? {
            guard let last = keys.last, pk <= last else { return nil }
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = lo + (hi - lo) / 2
                if keys[mid] < pk { lo = mid + 1 } else { hi = mid }
            }
            return keys[lo] == pk ? lo : nil
        }

        func value(_ pk: Int64) -> Value? {
            if let i = index(pk) { return values[i] }
            return others.isEmpty ? nil : others[pk]
        }

        mutating func set(_ pk: Int64, _ value: Value) {
            if let i = index(pk) {
                values[i] = value
            } else if let last = keys.last, pk < last {
                others[pk] = value
            } else if !others.isEmpty && others[pk] != nil {
                // Above the last key again after removals from the end: it stays where it is.
                others[pk] = value
            } else {
                keys.append(pk)
                values.append(value)
            }
        }

        mutating func remove(_ pk: Int64) {
            guard let i = index(pk) else {
                if !others.isEmpty { others[pk] = nil }
                return
            }
            values[i] = nil
            // Holes at the end go, so that the next key above them is an append again.
            while let last = values.last, last == nil {
                keys.removeLast()
                values.removeLast()
            }
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
            return hierarchies[h].value(id.pk)
        }
        set {
            if let value = newValue {
                let h: Int
                if let found = hierarchy(id) { h = found } else {
                    hierarchies.append(Hierarchy(root: ObjectIdentifier(id.entity.root)))
                    h = hierarchies.count - 1
                }
                hierarchies[h].set(id.pk, value)
            } else if let h = hierarchy(id) {
                hierarchies[h].remove(id.pk)
            }
        }
    }

    /// Forgets every value.
    mutating func removeAll() { hierarchies.removeAll() }
}

/// An entity of the schema a context keeps alive, held without counting a reference.
struct UnownedEntity { unowned(unsafe) let entity: Entity }
