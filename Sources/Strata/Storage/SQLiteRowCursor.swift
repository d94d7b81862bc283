import CSQLite

/// The rows of a prepared SQLite statement as a ``RowCursor``: columns read in
/// place through the statement handle (a trivial value: reading a row retains
/// nothing), external-storage values resolved in the store's folder.
///
/// The first step of each run goes through `Statement.step` (STRATA_SQL_DEBUG
/// and the trace hook see every run: the objects query, and a prefetch's
/// statement again for each owner after `start(key:)`); later steps of a run
/// call SQLite directly.
struct SQLiteRowCursor: RowCursor {
    let statement: Statement
    let folder: ExternalFolder?
    private let handle: OpaquePointer
    private var started = false

    init(statement: Statement, folder: ExternalFolder?) {
        self.statement = statement
        self.folder = folder
        handle = statement.handle
    }

    @inline(__always) mutating func next() throws -> Bool {
        guard started else {
            started = true
            do { return try statement.step() } catch { throw SQLFunctions.damage(error) }
        }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        // A guard of the query found a damaged value (`strata_damaged`): the error names it.
        throw SQLFunctions.damage(statement.connection.error(rc, context: "executing SQL"))
    }

    mutating func start(key: Int64) throws {
        sqlite3_reset(handle)
        let rc = sqlite3_bind_int64(handle, 1, key)
        if rc != SQLITE_OK { throw statement.connection.error(rc, context: "binding a key") }
        started = false
    }

    @inline(__always) func kind(_ column: Int32) -> ColumnKind {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .int
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    @inline(__always) func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    @inline(__always) func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let p = sqlite3_column_text(handle, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, column)))
    }
    @inline(__always) func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        let p = sqlite3_column_blob(handle, column)
        let n = Int(sqlite3_column_bytes(handle, column))
        return UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : n)
    }

    func externalData(_ reference: UnsafeBufferPointer<UInt8>, of attribute: Attribute, pk: Int64) throws -> [UInt8] {
        // The column names a file in the store's folder (checked: the store file is untrusted).
        // A store without a folder (in memory) keeps every value in its row: the text is the value.
        guard let folder else { return Array(reference) }
        return try folder.read(reference, of: attribute, pk: pk)
    }
}
