import CSQLite

/// The rows of a prepared SQLite statement as a ``RowCursor``: columns read in
/// place, external-storage values resolved in the store's folder.
struct SQLiteRowCursor: RowCursor {
    let statement: Statement
    let folder: ExternalFolder?

    @inline(__always) mutating func next() throws -> Bool { try statement.step() }

    @inline(__always) func kind(_ column: Int32) -> ColumnKind {
        switch statement.columnType(column) {
        case SQLITE_INTEGER: return .int
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    @inline(__always) func int64(_ column: Int32) -> Int64 { statement.int64(column) }
    @inline(__always) func double(_ column: Int32) -> Double { statement.double(column) }
    @inline(__always) func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> { statement.textBuffer(column) }
    @inline(__always) func blob(_ column: Int32) -> UnsafeRawBufferPointer { statement.blobBuffer(column) }

    func externalData(_ reference: UnsafeBufferPointer<UInt8>, of attribute: Attribute, pk: Int64) throws -> [UInt8] {
        // The column names a file in the store's folder (checked: the store file is untrusted).
        // A store without a folder (in memory) keeps every value in its row: the text is the value.
        guard let folder else { return Array(reference) }
        return try folder.read(reference, of: attribute, pk: pk)
    }
}
