/// The keys a session reserved in its store for each hierarchy and has not handed out
/// yet. Keys are reserved in blocks that double from 64 to 65,536 keys, so a store
/// reserves once per block, not once per object. Each reservation is a write transaction
/// of its own (on a SQLite write-ahead log not synced: ``SQLiteSession/reserveKeys(root:count:)``):
/// the bench's bulk insert (100,000 trips, 500,000 objects of three hierarchies) reserves 18
/// times, where blocks of at most 4,096 keys took 128, each synced then. Keys reserved and never
/// handed out (the rest of a block when the session ends or drops it) are skipped, never reused;
/// keys are 64-bit, so gaps cost nothing.
struct KeyBlocks {
    /// One per root entity name: the next key to hand out and the end of its block. A schema
    /// has few hierarchies, so a list scanned by name (the same string each time, compared by
    /// identity first) is cheaper than hashing the name for every key.
    private(set) var blocks: [(root: String, next: Int64, limit: Int64)] = []
    private var blockSize: Int64 = 64
    /// The largest block a session reserves at once.
    static let largestBlock: Int64 = 65_536

    /// `count` consecutive keys of `root`'s hierarchy: from its block, or from a new block
    /// of `want` keys whose first key `reserve(want)` returns.
    mutating func take(_ root: String, count: Int, reserve: (_ want: Int64) throws -> Int64) rethrows -> Int64 {
        let n = Int64(count)
        let i = blocks.firstIndex { $0.root == root }
        if let i, blocks[i].limit - blocks[i].next >= n {
            defer { blocks[i].next += n }
            return blocks[i].next
        }
        let want = max(n, blockSize)
        blockSize = min(blockSize * 2, KeyBlocks.largestBlock)
        let start = try reserve(want)
        if let i { blocks[i] = (root, start + n, start + want) } else { blocks.append((root, start + n, start + want)) }
        return start
    }

    /// Hands out no more key of `root`'s block.
    mutating func drop(_ root: String) { blocks.removeAll { $0.root == root } }
}
