/// The kind of value a result column holds in the current row.
enum ColumnKind: UInt8 {
    case null, int, real, text, blob
}

/// The rows of a query, one at a time, as a store backend returns them: the
/// object writer reads the current row's columns by index, without copying.
///
/// Buffers are valid until the next call to `next()`.
protocol RowCursor {
    /// Moves to the next row; false when there is none.
    mutating func next() throws -> Bool
    /// Runs the query again for another owner (its first parameter): the next `next()` gives the
    /// owner's first row. The rows of a prefetched relationship are read this way, once per owner row.
    mutating func start(key: Int64) throws
    /// Whether a prefetched relationship's cursor reads the rows of a batch of owners at once
    /// (``load(owners:)``), `start(key:)` then finding an owner's rows among them, rather than
    /// running its query per owner (``QueryDialect/ownerBatch(_:parameter:)``).
    static var readsOwnerBatches: Bool { get }
    /// Whether the loaded batch holds `owner`'s rows (maybe none): false before the first ``load(owners:)``.
    func holds(owner: Int64) -> Bool
    /// Runs the query once for the owners `owners` gives (in any order, maybe repeated, never
    /// empty), asked for only by a cursor whose query is not already that of every owner
    /// (``ObjectQueries/prefetchedOnceSQL``).
    mutating func load(owners: () -> [Int64]) throws
    /// The keys of at most `max` rows of this cursor from the current one on: the owners of the
    /// next batch of its prefetched relationships' rows (of a loaded batch: its every row's).
    func ownerKeys(max: Int) -> [Int64]
    func kind(_ column: Int32) -> ColumnKind
    func int64(_ column: Int32) -> Int64
    func double(_ column: Int32) -> Double
    /// UTF-8 text of a column.
    func text(_ column: Int32) -> UnsafeBufferPointer<UInt8>
    func blob(_ column: Int32) -> UnsafeRawBufferPointer
    /// The bytes of an external-storage data value whose column holds the text
    /// `reference` (the backend resolves and checks where the value lives).
    func externalData(_ reference: UnsafeBufferPointer<UInt8>, of attribute: Attribute, pk: Int64) throws -> [UInt8]
}

extension RowCursor {
    /// A cursor that runs its query per owner (the writer never calls the other three).
    static var readsOwnerBatches: Bool { false }
    func holds(owner: Int64) -> Bool { true }
    mutating func load(owners: () -> [Int64]) throws {}
    func ownerKeys(max: Int) -> [Int64] { [] }
}
