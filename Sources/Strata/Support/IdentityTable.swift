/// Values kept per object identity (per entity, say: its member table, its save plan, its
/// prepared inserts), for lookups made once per object of a bulk operation.
///
/// The first few keys are found by a linear scan of their identities, which for the handful
/// of entities one operation touches is cheaper than hashing; keys past those go to a hash
/// table, so a table of many keys costs what a dictionary would.
///
/// A value type without a lock: its owner serializes every use.
struct IdentityTable<Held> {
    /// Keys up to this many are scanned; later ones are hashed.
    static var scanLimit: Int { 8 }
    private var keys: [ObjectIdentifier] = []
    private var values: [Held] = []
    private var others: [ObjectIdentifier: Held] = [:]

    /// The value of `key`, if it has one.
    subscript(key: ObjectIdentifier) -> Held? {
        for i in keys.indices where keys[i] == key { return values[i] }
        return others.isEmpty ? nil : others[key]
    }

    /// Gives `key` the value `value` (values are never removed one by one).
    mutating func set(_ key: ObjectIdentifier, _ value: Held) {
        if let i = keys.firstIndex(of: key) {
            values[i] = value
        } else if keys.count < IdentityTable.scanLimit && others.isEmpty {
            keys.append(key)
            values.append(value)
        } else {
            others[key] = value
        }
    }

    /// Forgets every value.
    mutating func removeAll() {
        keys.removeAll()
        values.removeAll()
        others.removeAll()
    }
}
