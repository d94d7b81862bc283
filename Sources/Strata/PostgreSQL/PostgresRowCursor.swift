/// The rows of one query on a PostgreSQL connection as a ``RowCursor``: the whole
/// result of a run is held by libpq and read in place. A prefetched relationship's
/// cursor reads the rows of a batch of owners in one statement (`load(owners:)`,
/// ordered by owner, the owner's key in `ownerColumn`) and `start(key:)` finds one
/// owner's among them; without `ownerColumn` it runs the query again per owner. Made with
/// `once`, its query reads every owner's rows (``ObjectQueries/prefetchedOnceSQL``, bound with
/// `args`, the fetch's): run at the first owner, it holds them all from then on.
/// Made with `continues`, its query is a `FETCH` from a server-side cursor, run again
/// whenever the rows of the last one were read, until one brings none.
struct PostgresRowCursor: RowCursor {
    let connection: PGConnection
    let sql: HashedSQL
    private var args: [SQLValue]
    private var rows: PGRows?
    private var row: Int32 = -1
    /// The end of the rows `next()` hands out: the result's, or the current owner's.
    private var end: Int32 = 0
    /// The column of the owner's key in a batch's rows; -1 when the query reads one owner.
    private let ownerColumn: Int32
    /// The owners of the loaded batch, ascending and distinct.
    private var owners: [Int64] = []
    /// Whether `sql` brings the next rows each time it runs (a `FETCH`).
    private let continues: Bool
    /// Whether `sql` reads the rows of every owner at once, with `args` (`ownerColumn` set).
    private let once: Bool

    init(connection: PGConnection, sql: String, args: [SQLValue], ownerColumn: Int32 = -1, continues: Bool = false, once: Bool = false) {
        self.init(connection: connection, hashed: HashedSQL(sql), args: args, ownerColumn: ownerColumn, continues: continues, once: once)
    }

    /// A cursor of a statement whose text is hashed already (a compiled read's).
    init(connection: PGConnection, hashed sql: HashedSQL, args: [SQLValue], ownerColumn: Int32 = -1, continues: Bool = false, once: Bool = false) {
        self.connection = connection
        self.sql = sql
        self.args = args
        self.ownerColumn = ownerColumn
        self.continues = continues
        self.once = once
    }

    mutating func next() throws -> Bool {
        if rows == nil { try run() }
        guard row < end else { return false }
        row += 1
        if row < end { return true }
        // The last FETCH's rows are read: the next ones, until a FETCH brings none.
        guard continues, end > 0 else { return false }
        try run()
        row = 0
        return row < end
    }

    private mutating func run() throws {
        let r = try connection.query(sql, args)
        rows = r
        end = r.count
    }

    mutating func start(key: Int64) throws {
        guard ownerColumn >= 0 else {
            if args.isEmpty { args = [.int(key)] } else { args[0] = .int(key) }
            rows = nil
            row = -1
            return
        }
        // The batch's rows are ordered by owner: the first of `key`'s, then up to the next owner's.
        guard let rows else { row = -1; end = 0; return }
        var lo: Int32 = 0, hi = rows.count
        // Owners visited in key order (the usual order): `key`'s rows begin where the last owner's ended.
        if (end == 0 || rows.int64(end - 1, ownerColumn) < key) && (end == rows.count || rows.int64(end, ownerColumn) >= key) {
            lo = end
            hi = end
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if rows.int64(mid, ownerColumn) < key { lo = mid + 1 } else { hi = mid }
        }
        var stop = lo
        while stop < rows.count && rows.int64(stop, ownerColumn) == key { stop += 1 }
        row = lo - 1
        end = stop
    }

    static var readsOwnerBatches: Bool { true }

    func holds(owner: Int64) -> Bool {
        guard ownerColumn >= 0 else { return true }
        if once { return rows != nil }
        var lo = 0, hi = owners.count
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if owners[mid] < owner { lo = mid + 1 } else { hi = mid }
        }
        return lo < owners.count && owners[lo] == owner
    }

    mutating func load(owners keys: () -> [Int64]) throws {
        guard ownerColumn >= 0 else { return }
        if once {
            rows = try connection.query(sql, args)
            row = -1
            end = 0
            return
        }
        owners = Array(Set(keys())).sorted()
        var text: [UInt8] = [UInt8(ascii: "{")]
        for (i, k) in owners.enumerated() {
            if i > 0 { text.append(UInt8(ascii: ",")) }
            JSONWriter.appendInt(k, to: &text)
        }
        text.append(UInt8(ascii: "}"))
        args = [.text(String(decoding: text, as: UTF8.self))]
        let r = try connection.query(sql, args)
        rows = r
        row = -1
        end = 0
    }

    /// The keys from the current row on, at most `max`; of a loaded batch, every row's (an owner's
    /// rows are visited in the order of the owners above, not the batch's: the batch of their own
    /// relationships' rows is read once for all of them).
    func ownerKeys(max: Int) -> [Int64] {
        guard let rows else { return [] }
        let first = ownerColumn >= 0 ? 0 : row
        guard first >= 0 else { return [] }
        let last = ownerColumn >= 0 ? rows.count : Int32(clamping: Swift.min(Int(rows.count), Int(first) + max))
        var keys: [Int64] = []
        keys.reserveCapacity(Int(Swift.max(last - first, 0)))
        var r = first
        while r < last { keys.append(rows.int64(r, 0)); r += 1 }
        return keys
    }

    @inline(__always) func kind(_ column: Int32) -> ColumnKind { rows!.kind(row, column) }
    @inline(__always) func int64(_ column: Int32) -> Int64 { rows!.int64(row, column) }
    @inline(__always) func double(_ column: Int32) -> Double { rows!.double(row, column) }
    @inline(__always) func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> { rows!.text(row, column) }
    @inline(__always) func blob(_ column: Int32) -> UnsafeRawBufferPointer { rows!.bytes(row, column) }

    /// A PostgreSQL store keeps every data value in its row (`bytea`): text in a data column is damage.
    func externalData(_ reference: UnsafeBufferPointer<UInt8>, of attribute: Attribute, pk: Int64) throws -> [UInt8] {
        throw StrataError(.corrupt, "\(attribute.entity?.name ?? "?")/\(pk): the stored value of '\(attribute.name)' is text, not data (the store is damaged)",
                          entity: attribute.entity?.name, attribute: attribute.name)
    }
}
