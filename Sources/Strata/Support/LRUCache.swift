/// A map bounded by its number of entries and by the sum of a cost its owner gives each entry
/// (an estimate of bytes, say): an insertion past either bound evicts the least recently used
/// entries first. A lookup marks its entry as used. Eviction scans the entries (caches of a
/// few hundred entries, whose misses cost far more than the scan: compiling, preparing).
///
/// A value type without a lock: its owner serializes every use (a context's lock, a
/// connection's lock). An evicted value is only released by the cache; whoever still holds it
/// (a class instance) keeps it alive.
struct LRUCache<CacheKey: Hashable, CacheValue> {
    private struct Entry {
        let key: CacheKey
        let value: CacheValue
        let cost: Int
        var used: UInt64
    }

    /// The most entries the cache holds.
    let maxCount: Int
    /// The most cost the entries add up to.
    let maxCost: Int
    private var entries: [Entry] = []
    private var index: [CacheKey: Int] = [:]
    private var clock: UInt64 = 0
    /// The cost of the entries held (at most ``maxCost``).
    private(set) var cost = 0
    /// How many entries are held (at most ``maxCount``).
    var count: Int { entries.count }

    init(maxCount: Int, maxCost: Int = .max) {
        precondition(maxCount > 0 && maxCost > 0)
        self.maxCount = maxCount
        self.maxCost = maxCost
    }

    /// The value of `key`, marked as just used; nil when it is not held.
    @inline(__always) mutating func value(for key: CacheKey) -> CacheValue? {
        guard let i = index[key] else { return nil }
        clock &+= 1
        entries[i].used = clock
        return entries[i].value
    }

    /// Holds `value` for `key` (replacing a value held for it), evicting the least recently used
    /// entries past the bounds. A value costing more than ``maxCost`` is not held.
    mutating func insert(_ value: CacheValue, for key: CacheKey, cost: Int = 0) {
        if let i = index[key] { remove(at: i) }
        guard cost <= maxCost else { return }
        while !entries.isEmpty && (entries.count >= maxCount || self.cost > maxCost - cost) {
            var oldest = 0
            for j in entries.indices where entries[j].used < entries[oldest].used { oldest = j }
            remove(at: oldest)
        }
        clock &+= 1
        index[key] = entries.count
        entries.append(Entry(key: key, value: value, cost: cost, used: clock))
        self.cost += cost
    }

    /// Forgets every entry.
    mutating func removeAll() {
        entries.removeAll()
        index.removeAll()
        cost = 0
    }

    private mutating func remove(at i: Int) {
        let gone = entries[i]
        index[gone.key] = nil
        cost -= gone.cost
        let last = entries.count - 1
        if i != last {
            entries.swapAt(i, last)
            index[entries[i].key] = i
        }
        entries.removeLast()
    }
}
