import CSQLite
import Glibc

let SQLITE_TRANSIENT_PTR = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)


/// A prepared statement. Values reach SQL only through `bind`; SQL text is
/// built from validated, quoted identifiers only.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: Connection

    init(connection: Connection, sql: String) throws {
        self.connection = connection
        self.sql = sql
        // Outside a transaction (one statement, its own snapshot; a cursor's), a statement reading
        // the TEMP table of the overlay's searchable keys needs it made first (`begin`/`beginRead`
        // make it for everything inside a transaction).
        if !connection.madeSearchPending && Connection.readsSearchPending(sql) { try connection.makeSearchPending() }
        connection.registerFunctions(namedIn: sql)
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let s = stmt else {
            sqlite3_finalize(stmt)
            throw connection.error(rc, context: "preparing SQL")
        }
        handle = s
    }

    deinit { sqlite3_finalize(handle) }

    @inline(__always) func bind(_ value: SQLValue, at index: Int32) {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .int(let i): sqlite3_bind_int64(handle, index, i)
        case .double(let d): sqlite3_bind_double(handle, index, d)
        case .text(let s):
            var s = s
            s.withUTF8 { buf in
                _ = sqlite3_bind_text(handle, index, UnsafeRawPointer(buf.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                    .assumingMemoryBound(to: CChar.self), Int32(buf.count), SQLITE_TRANSIENT_PTR)
            }
        case .blob(let b):
            b.withUnsafeBytes { buf in
                _ = sqlite3_bind_blob(handle, index, buf.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(buf.count), SQLITE_TRANSIENT_PTR)
            }
        }
    }

    func bind(_ values: [SQLValue]) {
        for (i, v) in values.enumerated() { bind(v, at: Int32(i + 1)) }
    }

    /// Binds `values` to the parameters from `first` on without copying text or bytes
    /// (SQLITE_STATIC) and runs `body` (the steps) while their storage is alive. Afterwards
    /// those parameters point at storage that may be gone: the statement is stepped again
    /// only after all its parameters are bound anew, so ``resetKeepingBindings()`` suffices.
    func withBindings<T>(_ values: [SQLValue], from first: Int32, _ body: () throws -> T) throws -> T {
        try bindAll(values, values.startIndex, first, body)
    }

    private func bindAll<T>(_ values: [SQLValue], _ i: Int, _ index: Int32, _ body: () throws -> T) throws -> T {
        guard i < values.endIndex else { return try body() }
        return try withBinding(values[i], at: index) { try bindAll(values, i + 1, index + 1, body) }
    }

    /// Binds `value` to parameter `index` without copying its text or bytes and runs `body`
    /// while they are alive (as ``withBindings(_:from:_:)`` does for several).
    func withBinding<T>(_ value: SQLValue, at index: Int32, _ body: () throws -> T) throws -> T {
        switch value {
        case .text(var s):
            return try s.withUTF8 { buf in
                _ = sqlite3_bind_text(handle, index, UnsafeRawPointer(buf.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                    .assumingMemoryBound(to: CChar.self), Int32(buf.count), nil)
                return try body()
            }
        case .blob(let b):
            return try b.withUnsafeBytes { buf in
                _ = sqlite3_bind_blob(handle, index, buf.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(buf.count), nil)
                return try body()
            }
        default:
            bind(value, at: index)
            return try body()
        }
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Resets the statement for its next run without clearing its parameters, for a
    /// statement whose every parameter each run binds (see ``withBindings(_:from:_:)``).
    func resetKeepingBindings() { sqlite3_reset(handle) }

    /// Steps once; returns true when a row is available.
    @inline(__always) func step() throws -> Bool {
        if sqlite3_stmt_busy(handle) == 0 {
            if sqlDebug { connection.debugLog(self) }
            if let t = connection.trace, t.isActive { t.emit(sql) }
        }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw connection.error(rc, context: "executing SQL")
    }

    /// Runs the statement with the given arguments to completion.
    func execute(_ args: [SQLValue] = []) throws {
        defer { reset() }
        bind(args)
        while try step() {}
    }

    /// Runs a query and calls `row` for each result row.
    func query(_ args: [SQLValue] = [], _ row: (Statement) throws -> Void) throws {
        defer { reset() }
        bind(args)
        while try step() { try row(self) }
    }

    /// The first column of the first row, if any.
    func scalar(_ args: [SQLValue] = []) throws -> SQLValue? {
        defer { reset() }
        bind(args)
        guard try step() else { return nil }
        return value(at: 0)
    }

    @inline(__always) func columnType(_ i: Int32) -> Int32 { sqlite3_column_type(handle, i) }
    @inline(__always) func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }
    @inline(__always) func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }
    func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }
    /// The text of a column as a buffer valid until the next step/reset.
    @inline(__always) func textBuffer(_ i: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let p = sqlite3_column_text(handle, i) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, i)))
    }
    @inline(__always) func blobBuffer(_ i: Int32) -> UnsafeRawBufferPointer {
        let p = sqlite3_column_blob(handle, i)
        let n = Int(sqlite3_column_bytes(handle, i))
        return UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : n)
    }

    /// The number of columns of the statement's rows.
    var columnCount: Int32 { sqlite3_column_count(handle) }

    func value(at i: Int32) -> SQLValue {
        switch columnType(i) {
        case SQLITE_INTEGER: return .int(int64(i))
        case SQLITE_FLOAT: return .double(double(i))
        case SQLITE_TEXT: return .text(text(i))
        case SQLITE_BLOB: return .blob(Array(blobBuffer(i).bindMemory(to: UInt8.self)))
        default: return .null
        }
    }
}

/// One SQLite connection with a statement cache.
final class Connection {
    let handle: OpaquePointer
    let path: String
    let readOnly: Bool
    /// The prepared statements by their SQL, the least recently used evicted past
    /// ``statementCacheSize`` (a program whose descriptors compile to ever new SQL does not
    /// grow it). An evicted statement is finalized when its last user lets it go (a cursor
    /// holds its statement: `Statement.deinit`).
    private var cache = LRUCache<HashedSQL, Statement>(maxCount: Connection.statementCacheSize)
    /// The most statements ``cache`` holds.
    static let statementCacheSize = 256
    /// How many prepared statements the cache holds (what tests read).
    var cachedStatements: Int { cache.count }
    /// Serializes every use of this connection (sessions of an in-memory store share one).
    let lock = Lock()
    /// Statements executed since `resetStatementLog()` (for tests and debugging).
    var statementLog: [String]? = nil
    /// The container's trace hook, if any.
    var trace: TraceHook?

    init(path: String, readOnly: Bool, create: Bool, uri: Bool = false) throws {
        var db: OpaquePointer?
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        if uri { flags |= SQLITE_OPEN_URI }
        // Strata serializes every use of a connection with its own lock (`Connection.lock`),
        // so SQLite's per-call mutex would only be overhead.
        flags |= SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let h = db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw Connection.mapError(rc, message: "cannot open '\(path)': \(message)")
        }
        handle = h
        self.path = path
        self.readOnly = readOnly
        sqlite3_extended_result_codes(h, 1)
        // A store file is untrusted input: nothing its schema carries may run inside Strata's
        // calls. Views and triggers of the file are off (Strata makes none; the read overlay's
        // views are TEMP ones, which stay on), functions in schema objects must be innocuous,
        // and SQL cannot edit the schema as a table (defensive). Strata's own SQL functions
        // appear in statements only, never in a schema object, so none needs SQLITE_INNOCUOUS.
        for (option, on) in Connection.distrust where strata_sqlite3_db_config_flag(h, option, on) != on {
            sqlite3_close_v2(h)
            throw StrataError(.internal, "SQLite \(String(cString: sqlite3_libversion())) cannot set option \(option) of sqlite3_db_config, "
                              + "which keeps a store file's views and triggers from running: Strata needs SQLite 3.35 or newer")
        }
        sqlite3_busy_timeout(h, 10_000)
        SQLFunctions.register(h)
    }

    /// Whether this connection made its TEMP table of the overlay's searchable keys
    /// (``SQLiteDialect/searchPending``); made before its first transaction, outside of it
    /// (a transaction's rollback would drop it), or before the first statement outside a
    /// transaction that reads it (a `matches` query), once the file has been opened as a store.
    /// A connection that only ever reads without such a query never makes it, nor the TEMP
    /// database SQLite opens for it (two page caches, about 150 kB).
    fileprivate var madeSearchPending = false

    fileprivate func makeSearchPending() throws {
        guard !madeSearchPending, !isInTransaction else { return }
        try execute(script: SQLiteDialect.createSearchPending, reported: false)
        madeSearchPending = true
    }

    /// Whether this connection registered the SQL functions of ``SQLFunctions/registerNamed(_:)``.
    private(set) var registeredNamedFunctions = false

    /// Registers the SQL functions a connection's first statement naming one needs, before SQLite
    /// prepares `sql` (it resolves a statement's functions then; registering a new function
    /// invalidates no prepared statement).
    fileprivate func registerFunctions(namedIn sql: String) {
        guard !registeredNamedFunctions else { return }
        var sql = sql
        guard sql.withUTF8({ SQLFunctions.mayNameLateFunction($0) }) else { return }
        SQLFunctions.registerNamed(handle)
        registeredNamedFunctions = true
    }

    /// Whether `sql` names the TEMP table of ``SQLiteDialect/searchPending``.
    static func readsSearchPending(_ sql: String) -> Bool {
        var sql = sql, name = SQLiteDialect.searchPendingName
        return sql.withUTF8 { text in name.withUTF8 { TextFolding.contains(text, $0) } }
    }

    /// The `sqlite3_db_config` options every connection sets, and their values.
    static let distrust: [(Int32, Int32)] = [
        (SQLITE_DBCONFIG_DEFENSIVE, 1), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0),
        (SQLITE_DBCONFIG_ENABLE_VIEW, 0), (SQLITE_DBCONFIG_ENABLE_TRIGGER, 0),
    ]

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    func debugLog(_ s: Statement) {
        if let expanded = sqlite3_sql(s.handle) {
            fputs("[strata sql] \(String(cString: expanded))\n", stderr)
        }
    }

    /// A cached prepared statement for this SQL text.
    func statement(_ sql: String) throws -> Statement {
        try statement(HashedSQL(sql))
    }

    /// The same, for SQL whose hash was computed once (a compiled fetch's queries).
    func statement(_ sql: HashedSQL) throws -> Statement {
        statementLog?.append(sql.text)
        if let s = cache.value(for: sql) { return s }
        let s = try Statement(connection: self, sql: sql.text)
        cache.insert(s, for: sql)
        return s
    }

    /// Runs one or more statements without arguments (DDL, pragmas).
    /// - Parameter reported: false keeps the statements out of the statement log and the
    ///   trace hook (STRATA_SQL_DEBUG still prints them).
    func execute(script sql: String, reported: Bool = true) throws {
        report(sql, reported)
        registerFunctions(namedIn: sql)
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(err)
            throw Connection.mapError(rc, message: message)
        }
    }

    /// Tells the statement log and the trace hook (when `reported`) and STRATA_SQL_DEBUG of a script.
    private func report(_ sql: String, _ reported: Bool) {
        if reported {
            statementLog?.append(sql)
            if let t = trace, t.isActive { t.emit(sql) }
        }
        if sqlDebug { fputs("[strata sql] \(sql)\n", stderr) }
    }

    func execute(_ sql: String, _ args: [SQLValue] = []) throws {
        try statement(sql).execute(args)
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    func error(_ rc: Int32, context: String) -> StrataError {
        Connection.mapError(rc, message: "\(context): \(String(cString: sqlite3_errmsg(handle)))")
    }

    static func mapError(_ rc: Int32, message: String) -> StrataError {
        let code: StrataError.Code
        switch rc & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: code = .busy
        case SQLITE_READONLY: code = .readOnly
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_FULL, SQLITE_PERM: code = .io
        case SQLITE_CORRUPT: code = .corrupt
        case SQLITE_NOTADB: code = .incompatibleStore
        case SQLITE_NOMEM: code = .noMemory
        case SQLITE_CONSTRAINT: code = .constraint
        case SQLITE_MISUSE: code = .misuse
        default: code = .internal
        }
        if code == .internal, rc & 0xFF == SQLITE_ERROR, damageSigns.contains(where: { message.containsText($0) }) {
            // The tables were checked against the stored schema when the store opened: SQL that
            // no longer finds them means someone changed the file since (a store file is untrusted input).
            return StrataError(.corrupt, "the store's tables no longer match its schema (the file was changed outside Strata): \(message)",
                               sqliteCode: rc)
        }
        return StrataError(code, message, sqliteCode: rc)
    }

    /// SQLite's words for SQL that does not fit the tables it runs on: a table or column gone
    /// or renamed, a table replaced by a view (views of the file are off), columns added, and
    /// FTS5's for a full-text table whose `_config` shadow table was changed.
    /// SQLite reports all of these as plain SQLITE_ERROR, with no extended code to tell
    /// them apart, so this is the one place Strata reads an error's text (SQLite's own,
    /// here where it maps it); everything after decides on the code and the reason.
    static let damageSigns = ["no such table", "no such column", "has no column named", "no such index",
                              "access to view", "because it is a view", "values were supplied",
                              "invalid fts5 file format"]

    // MARK: Transactions

    func begin(immediate: Bool = true) throws {
        try makeSearchPending()
        try control(SQLiteDialect.begin(immediate: immediate), reported: true)
    }
    func commit() throws { try control(SQLiteDialect.commit, reported: true) }

    /// Starts a deferred read transaction; unlike `begin`, not reported to the
    /// statement log or the trace hook (STRATA_SQL_DEBUG still prints it).
    func beginRead() throws {
        try makeSearchPending()
        try control(SQLiteDialect.begin(immediate: false), reported: false)
    }
    /// Ends a read transaction started with `beginRead`.
    func endRead() { if isInTransaction { _ = try? control(SQLiteDialect.rollback, reported: false) } }
    func rollback() {
        if isInTransaction { _ = try? control(SQLiteDialect.rollback, reported: true) }
    }

    /// Runs a transaction-control statement, prepared once per connection (not
    /// parsed again for every read, as `execute(script:)` would).
    private func control(_ sql: String, reported: Bool) throws {
        report(sql, reported)
        let s: Statement
        let key = HashedSQL(sql)
        if let cached = cache.value(for: key) { s = cached } else {
            s = try Statement(connection: self, sql: sql)
            cache.insert(s, for: key)
        }
        let rc = sqlite3_step(s.handle)
        let failure = rc == SQLITE_DONE || rc == SQLITE_ROW ? nil : error(rc, context: "executing \(sql)")
        sqlite3_reset(s.handle)
        if let failure { throw failure }
    }

    /// Runs `body` in savepoint `name` of the open transaction: released if it returns, rolled
    /// back to (and released) if it throws.
    func savepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        let dialect = SQLiteDialect()
        try execute(script: dialect.savepoint(name))
        do {
            let result = try body()
            try execute(script: dialect.releaseSavepoint(name))
            return result
        } catch {
            _ = try? execute(script: dialect.rollbackToSavepoint(name))
            _ = try? execute(script: dialect.releaseSavepoint(name))
            throw error
        }
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try begin()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollback()
            throw error
        }
    }
}
