/// The rows of one query on a PostgreSQL connection as a ``RowCursor``: the whole
/// result of a run is held by libpq and read in place; `start(key:)` runs the
/// query again for another owner (a prefetched relationship).
struct PostgresRowCursor: RowCursor {
    let connection: PGConnection
    let sql: String
    private var args: [SQLValue]
    private var rows: PGRows?
    private var row: Int32 = -1

    init(connection: PGConnection, sql: String, args: [SQLValue]) {
        self.connection = connection
        self.sql = sql
        self.args = args
    }

    mutating func next() throws -> Bool {
        if rows == nil { rows = try connection.query(sql, args) }
        guard let rows else { return false }
        row += 1
        return row < rows.count
    }

    mutating func start(key: Int64) throws {
        if args.isEmpty { args = [.int(key)] } else { args[0] = .int(key) }
        rows = nil
        row = -1
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
