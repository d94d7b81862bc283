import Glibc

/// One libpq connection to a PostgreSQL server, used by one session at a time
/// (``lock``). Statements are prepared once per connection and text of SQL
/// (`PQprepare`), values always bound: integers, reals and bytes in binary,
/// text as untyped text so that the server gives it the type its place needs
/// (a column's, a function argument's, `numeric` beside a decimal). Results
/// come back in binary (``PGRows``).
final class PGConnection {
    let pq: LibPQ
    private let handle: LibPQ.Conn
    /// Serializes every use of this connection.
    let lock = Lock()
    var trace: TraceHook?
    private var prepared: [StatementKey: String] = [:]
    /// The most statements ``prepared`` holds; past it every one is deallocated.
    static let preparedLimit = 512
    /// How many statements are prepared (what tests read).
    var preparedCount: Int { prepared.count }
    /// The constraint the last failed statement broke (PG_DIAG_CONSTRAINT_NAME), if any.
    private(set) var lastConstraint: String?
    private var nextName = 0
    /// The statements (as ``prepared`` keys them) run once without being prepared: a statement
    /// is prepared at its second run, so that one run once (most of opening a store) costs one
    /// round trip, not two. Bounded as ``prepared`` is.
    private var ranOnce: Set<StatementKey> = []
    /// Keeps apart the prepared statements of reads whose names resolve to other tables (the
    /// copies ``PostgresPreviousVersion`` reads): the same text prepared once for each.
    var statementScope = ""
    /// Statements held back to be sent together (a save's batched inserts,
    /// ``PostgresWriter``): run, and emptied, before this connection's next statement
    /// — dropped instead when that statement is a `ROLLBACK` (to a savepoint or not),
    /// which would undo them. Their errors are the next statement's.
    var queued: (() throws -> Void)?

    /// Connects to `uri` (libpq's URI or key=value syntax).
    ///
    /// - Throws: `.io` naming what failed (libpq missing, server unreachable, password refused,
    ///   no such database), never repeating the location's password.
    init(uri: String) throws {
        pq = try LibPQ.shared()
        let secrets = PGConnection.secrets(in: uri)
        guard let h = pq.connectdb(uri) else { throw StrataError(.noMemory, "libpq could not allocate a connection") }
        if pq.status(h) != LibPQ.connectionOK {
            var message = pq.errorMessage(h).map { String(cString: $0) } ?? "unknown error"
            let needed = pq.connectionNeedsPassword(h) != 0
            pq.finish(h)
            message = PGConnection.scrub(message, secrets).trimmingTrailingNewlines()
            throw StrataError(.io, "cannot connect to the PostgreSQL server\(needed ? " (it asks for a password the location does not give)" : ""): \(message)")
        }
        handle = h
        _ = pq.setNoticeProcessor(h, { _, _ in }, nil)  // notices are not errors: never printed
    }

    deinit { pq.finish(handle) }

    /// The passwords a location holds (URI user info, `password=`), raw and percent-decoded.
    static func secrets(in uri: String) -> [String] {
        var out: [String] = []
        if let scheme = uri.firstOccurrence(ofText: "://") {
            let rest = uri[scheme.endIndex...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@") {
                let info = authority[..<at]
                if let colon = info.firstIndex(of: ":") { out.append(String(info[info.index(after: colon)...])) }
            }
        }
        var search = uri[...]
        while let found = search.firstOccurrence(ofText: "password=") {
            let value = search[found.endIndex...].prefix { $0 != "&" && $0 != " " }
            out.append(String(value))
            search = search[found.endIndex...]
        }
        return out.filter { !$0.isEmpty }.flatMap { [$0, percentDecoded($0)] }
    }

    static func percentDecoded(_ s: String) -> String {
        var bytes: [UInt8] = []
        var u = Array(s.utf8)[...]
        while let b = u.first {
            u = u.dropFirst()
            if b == UInt8(ascii: "%"), u.count >= 2, let v = UInt8(String(decoding: u.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v); u = u.dropFirst(2)
            } else { bytes.append(b) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func scrub(_ message: String, _ secrets: [String]) -> String {
        var m = message
        for s in secrets where !s.isEmpty { m = m.replacingAll(s, with: "********") }
        return m
    }

    // MARK: Statements

    /// Statements that set the connection up (its search_path): run again after a reconnection.
    var setup: [(String, [SQLValue])] = []

    /// A connection the server or the network dropped is connected again before the next
    /// statement outside a transaction (libpq's `PQreset`, then ``setup``): a lost connection
    /// fails the call it happened in (`.io`, nothing of a transaction kept), not every later one.
    private func reconnectIfLost() throws {
        guard pq.status(handle) != LibPQ.connectionOK else { return }
        // Inside a transaction the server dropped: the rest of it must fail, not run on a new connection.
        guard !transactionOpen else {
            throw StrataError(.io, "the connection to the PostgreSQL server was lost in the middle of a transaction (nothing of it was kept)")
        }
        prepared.removeAll()
        pq.reset(handle)
        guard pq.status(handle) == LibPQ.connectionOK else {
            let message = (pq.errorMessage(handle).map { String(cString: $0) } ?? "unknown error").trimmingTrailingNewlines()
            throw StrataError(.io, "the connection to the PostgreSQL server was lost and cannot be made again: \(message)")
        }
        _ = pq.setNoticeProcessor(handle, { _, _ in }, nil)
        for (sql, args) in setup { _ = try query(sql, args, reported: false) }
    }

    /// Whether a BEGIN of this connection has not ended yet (the server's word while connected).
    private var transactionOpen = false

    var isInTransaction: Bool {
        settle()
        return pq.status(handle) == LibPQ.connectionOK ? pq.transactionStatus(handle) != LibPQ.transactionIdle : transactionOpen
    }
    var isInFailedTransaction: Bool {
        settle()
        return pq.transactionStatus(handle) == LibPQ.transactionInError
    }

    /// Whether a statement of ``send(detached:)`` was sent and its answer not read yet.
    private var detached = false

    /// Sends `sql` (no arguments, outside a transaction) without waiting for its answer, which is
    /// read, and dropped, before this connection's next statement: the round trip overlaps what the
    /// caller does meanwhile. For a statement whose failure changes nothing the caller relies on
    /// (the unlock that ends an open, whose failure a closed connection makes moot).
    func send(detached sql: String) {
        settle()
        guard queued == nil, pq.status(handle) == LibPQ.connectionOK else { _ = try? execute(script: sql); return }
        report(sql, true)
        detached = pq.sendQuery(handle, sql) == 1
    }

    /// Reads, and drops, the answer of a ``send(detached:)`` statement.
    private func settle() {
        guard detached else { return }
        detached = false
        while let r = pq.getResult(handle) { pq.clear(r) }
    }

    private func report(_ sql: String, _ reported: Bool) {
        if reported, let t = trace, t.isActive { t.emit(sql) }
        if sqlDebug { fputs("[strata sql] \(sql)\n", stderr) }
    }

    /// Runs statements without arguments (DDL, transaction control); returns the rows the
    /// last one changed.
    @discardableResult
    func execute(script sql: String, reported: Bool = true) throws -> Int64 {
        settle()
        if queued != nil {
            if sql.hasPrefix("ROLLBACK") { queued = nil } else { try runQueued() }
        }
        report(sql, reported)
        let ends = sql == "COMMIT" || sql == "ROLLBACK"
        if ends && pq.status(handle) != LibPQ.connectionOK && sql == "ROLLBACK" {
            transactionOpen = false  // the server dropped the transaction with the connection
            return 0
        }
        try reconnectIfLost()
        let r = pq.exec(handle, sql)
        defer { pq.clear(r) }
        if sql.hasPrefix("BEGIN") { transactionOpen = true } else if ends { transactionOpen = false }
        try check(r)
        return PGConnection.changed(pq, r)
    }

    /// Runs `statements`, which take no arguments, in one round trip: one simple query, which
    /// PostgreSQL runs as one transaction (or inside the open one), each statement on a snapshot
    /// of its own under READ COMMITTED, and stops at the first that fails. Returns the rows of
    /// each statement that ran, in order, in text format (read them with ``PGRows/string(_:_:)``
    /// and ``PGRows/isNull(_:_:)``), and the error of the one that failed, if any (outside a
    /// transaction nothing of the script is kept then, but a session lock it took stays taken).
    ///
    /// - Throws: `.io` when the connection fails.
    func run(script statements: [String]) throws -> (rows: [PGRows], failure: StrataError?) {
        settle()
        if queued != nil { try runQueued() }
        for sql in statements { report(sql, true) }
        try reconnectIfLost()
        guard pq.sendQuery(handle, statements.joined(separator: ";\n")) == 1 else { try check(nil); return ([], nil) }
        var rows: [PGRows] = [], failure: StrataError?
        while let r = pq.getResult(handle) {
            guard failure == nil else { pq.clear(r); continue }  // what the server sends after the error
            do {
                try check(r)
                rows.append(PGRows(pq: pq, result: r))
            } catch let e as StrataError {
                pq.clear(r)
                failure = e
            }
        }
        if failure == nil && rows.count != statements.count { try check(nil) }
        return (rows, failure)
    }

    /// The rows a command's result says it changed (0 when it says nothing).
    static func changed(_ pq: LibPQ, _ r: LibPQ.Result?) -> Int64 {
        guard let r, let text = pq.cmdTuples(r) else { return 0 }
        return Int64(String(cString: text)) ?? 0
    }

    func execute(_ sql: String, _ args: [SQLValue] = []) throws {
        _ = try query(sql, args)
    }

    /// What a statement is prepared by: its text (hashed once, by the caller that keeps it), the
    /// kinds of its arguments (a letter each) and the ``statementScope``.
    private struct StatementKey: Hashable {
        let scope: String
        let types: String
        let sql: HashedSQL
    }

    /// Runs one statement with `args`; the rows in binary.
    func query(_ sql: String, _ args: [SQLValue] = [], reported: Bool = true) throws -> PGRows {
        try query(HashedSQL(sql), args, reported: reported)
    }

    /// Runs one statement with `args`, its text hashed once by the caller (a compiled read's, run
    /// again and again: the statement is found without hashing or copying its text again); the rows in binary.
    func query(_ hashed: HashedSQL, _ args: [SQLValue] = [], reported: Bool = true) throws -> PGRows {
        let sql = hashed.text
        settle()
        if queued != nil { try runQueued() }
        report(sql, reported)
        try reconnectIfLost()
        var types = ""
        for a in args {
            switch a {
            case .null: types += "n"
            case .int: types += "i"
            case .double: types += "d"
            case .text: types += "t"
            case .blob: types += "b"
            }
        }
        let key = StatementKey(scope: statementScope, types: types, sql: hashed)
        let name: String
        if let n = prepared[key] { name = n } else {
            var oids: [UInt32] = args.map {
                switch $0 {
                case .int: return 20  // int8
                case .double: return 701  // float8
                case .blob: return 17  // bytea
                case .null, .text: return 0  // the server infers it
                }
            }
            // A value the SQL never reads (a predicate that folded it away) has nothing to infer from: text.
            for i in oids.indices where oids[i] == 0 && !PGConnection.mentions(sql, parameter: i + 1) { oids[i] = 25 }
            if ranOnce.count >= PGConnection.preparedLimit { ranOnce.removeAll() }
            if ranOnce.insert(key).inserted {
                // Its first run: parsed, planned and run in one round trip (prepared from its second run on).
                return try withParameters(args) { values, lengths, formats in
                    let r = pq.execParams(handle, sql, Int32(args.count), &oids, values, lengths, formats, 1)
                    do { try check(r) } catch { pq.clear(r); throw error }
                    return PGRows(pq: pq, result: r!)
                }
            }
            if prepared.count >= PGConnection.preparedLimit {
                // Bounded: a program that compiles ever new queries does not grow the server's memory.
                if !isInFailedTransaction { try execute(script: "DEALLOCATE ALL", reported: false) }
                prepared.removeAll()
            }
            nextName += 1
            name = "s\(nextName)"
            let r = pq.prepare(handle, name, sql, Int32(args.count), &oids)
            defer { pq.clear(r) }
            try check(r)
            prepared[key] = name
        }
        return try withParameters(args) { values, lengths, formats in
            let r = pq.execPrepared(handle, name, Int32(args.count), values, lengths, formats, 1)
            do { try check(r) } catch { pq.clear(r); throw error }
            return PGRows(pq: pq, result: r!)
        }
    }

    /// Runs the ``queued`` statements now (emptied first: they run statements of their own).
    func runQueued() throws {
        guard let q = queued else { return }
        queued = nil
        try q()
    }

    /// Runs `body` with the ``queued`` statements held back (a look-up that must not send them).
    func withoutQueued<T>(_ body: () throws -> T) rethrows -> T {
        let q = queued
        queued = nil
        defer { if queued == nil { queued = q } }
        return try body()
    }

    /// Whether `sql` reads `$n` (not as the start of `$n0`…).
    static func mentions(_ sql: String, parameter n: Int) -> Bool {
        let mark = Array("$\(n)".utf8), text = Array(sql.utf8)
        var i = 0
        while i + mark.count <= text.count {
            if text[i] == mark[0] && Array(text[i..<(i + mark.count)]) == mark {
                let next = i + mark.count < text.count ? text[i + mark.count] : 0
                if !(next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9")) { return true }
            }
            i += 1
        }
        return false
    }

    /// The first column of the first row, or nil.
    func scalar(_ sql: String, _ args: [SQLValue] = []) throws -> SQLValue? {
        let rows = try query(sql, args)
        guard rows.count > 0 else { return nil }
        return rows.value(0, 0)
    }

    /// The values as libpq takes them: every value's bytes in one buffer, and per value a
    /// pointer into it (nil for NULL), a length and a format (1 binary, 0 text). The buffers are
    /// temporary (on the stack when small: a statement runs without allocating for its values).
    private func withParameters<T>(_ args: [SQLValue], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws -> T) throws -> T {
        var size = 1  // never an empty buffer: every pointer below is valid
        for a in args {
            switch a {
            case .null: break
            case .int, .double: size += 8
            case .blob(let b): size += b.count
            case .text(let s): size += s.utf8.count + 1
            }
        }
        let n = args.count
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
            try withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * n + 1) { ints in
                try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: n + 1) { pointers in
                    let base = UnsafeMutableRawPointer(buffer.baseAddress!)
                    var at = 0
                    for (i, a) in args.enumerated() {
                        let start = at
                        var format: Int32 = 1
                        switch a {
                        case .null: format = 0
                        case .int(let v): base.storeBytes(of: v.bigEndian, toByteOffset: at, as: Int64.self); at += 8
                        case .double(let v): base.storeBytes(of: v.bitPattern.bigEndian, toByteOffset: at, as: UInt64.self); at += 8
                        case .blob(let b):
                            b.withUnsafeBytes { if let p = $0.baseAddress, !$0.isEmpty { (base + at).copyMemory(from: p, byteCount: $0.count) } }
                            at += b.count
                        case .text(let s):
                            let count = s.utf8.count
                            let copied = s.utf8.withContiguousStorageIfAvailable { src -> Bool in
                                if let p = src.baseAddress, count > 0 { (base + at).copyMemory(from: p, byteCount: count) }
                                return true
                            }
                            if copied == nil { for (k, byte) in s.utf8.enumerated() { buffer[at + k] = byte } }
                            if count > 0 && memchr(base + at, 0, count) != nil { throw PGConnection.textWithNUL() }
                            at += count
                            buffer[at] = 0
                            at += 1
                            format = 0
                        }
                        pointers[i] = a.isNull ? nil : UnsafePointer(base.assumingMemoryBound(to: CChar.self) + start)
                        ints[i] = Int32(at - start)
                        ints[n + i] = format
                    }
                    return try body(UnsafePointer(pointers.baseAddress!), UnsafePointer(ints.baseAddress!), UnsafePointer(ints.baseAddress! + n))
                }
            }
        }
    }

    /// The refusal of text holding NUL, which PostgreSQL's text type excludes.
    static func textWithNUL() -> StrataError {
        StrataError(.invalid, "a PostgreSQL store cannot hold text with a NUL character (U+0000): PostgreSQL's text type excludes it")
    }

    /// How PostgreSQL runs `sql`: `{"sql": …, "parameterCount": n, "queryPlan": [{"id", "parent": 0,
    /// "detail"}]}`, one entry a line of EXPLAIN's text (the shape of SQLite's explained plans).
    func explainJSON(_ sql: String, _ args: [SQLValue]) throws -> [UInt8] {
        var plan = ExplainedQuery(sql: sql, parameterCount: args.count)
        let rows = try query("EXPLAIN " + sql, args)
        for r in 0..<rows.count { plan.step(id: Int64(r), parent: 0, detail: rows.string(r, 0)) }
        return plan.finish()
    }

    /// Forgets the prepared statements (after DDL changed the tables they read).
    func forgetPrepared() {
        if !prepared.isEmpty, !isInFailedTransaction { _ = try? execute(script: "DEALLOCATE ALL", reported: false) }
        prepared.removeAll()
    }

    // MARK: Errors

    private func check(_ r: LibPQ.Result?) throws {
        guard let r else {
            throw StrataError(.io, "the PostgreSQL server connection failed: " + (pq.errorMessage(handle).map { String(cString: $0) } ?? "").trimmingTrailingNewlines())
        }
        let status = pq.resultStatus(r)
        if status == LibPQ.commandOK || status == LibPQ.tuplesOK || status == 0 { return }
        let state = pq.resultErrorField(r, LibPQ.diagSQLState).map { String(cString: $0) } ?? ""
        var message = pq.resultErrorField(r, LibPQ.diagMessage).map { String(cString: $0) }
            ?? pq.errorMessage(handle).map { String(cString: $0) } ?? "unknown error"
        message = message.trimmingTrailingNewlines()
        let detail = pq.resultErrorField(r, LibPQ.diagDetail).map { String(cString: $0) }
        lastConstraint = pq.resultErrorField(r, LibPQ.diagConstraint).map { String(cString: $0) }
        if state == PostgresFunctions.damagedState {
            // strata_damaged: the object in the message, its entity and attribute as the error's table and column.
            let entity = pq.resultErrorField(r, LibPQ.diagTable).map { String(cString: $0) }
            let attribute = pq.resultErrorField(r, LibPQ.diagColumn).map { String(cString: $0) } ?? "?"
            throw StrataError(.corrupt, "\(message): the stored value of '\(attribute)' is not of its type (the store is damaged)",
                              entity: entity, attribute: attribute == "_entity" ? nil : attribute, postgresState: state)
        }
        throw PGConnection.mapError(state: state, message: message, detail: detail)
    }

    /// The SQLSTATE of a PostgreSQL error as Strata's code (postgresql.org/docs/current/errcodes-appendix.html).
    static func mapError(state: String, message: String, detail: String?) -> StrataError {
        let code: StrataError.Code
        switch state.prefix(2) {
        case "": code = .io  // no server answer: the connection is gone
        case "08", "57", "53", "58": code = state == "57014" ? .busy : .io
        case "40": code = .busy  // serialization failure, deadlock
        case "55": code = state == "55P03" ? .busy : .internal  // lock not available
        case "23": code = .constraint
        case "25": code = state == "25006" ? .readOnly : .internal
        case "42": code = state == "42501" ? .io : .internal  // insufficient privilege: what the server refuses
        case "22": code = state == "22021" ? .invalid : .internal
        default: code = .internal
        }
        if state == "42883" {
            // A function of Strata's the store's schema lacks: installed by an older Strata (a read-only
            // open does not refresh them) or dropped since.
            return StrataError(.incompatibleStore, "PostgreSQL: \(message): the store's functions are not this version of Strata's; "
                               + "opening the store once without readOnly installs them", postgresState: state)
        }
        return StrataError(code, "PostgreSQL: \(message)" + (detail.map { " (\($0))" } ?? ""), postgresState: state)
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = self
        while let last = s.last, last == "\n" || last == " " { s.removeLast() }
        return s
    }
}

/// The rows of one result, read in place (binary format): a ``RowCursor`` for the object writer.
final class PGRows {
    let pq: LibPQ
    let result: LibPQ.Result
    let count: Int32
    let columns: Int32
    /// Each column's type OID.
    let types: [UInt32]

    /// The rows the command changed (an INSERT, UPDATE or DELETE).
    var changed: Int64 { PGConnection.changed(pq, result) }

    init(pq: LibPQ, result: LibPQ.Result) {
        self.pq = pq
        self.result = result
        count = pq.ntuples(result)
        columns = pq.nfields(result)
        types = (0..<columns).map { pq.ftype(result, $0) }
    }

    deinit { pq.clear(result) }

    @inline(__always) func isNull(_ row: Int32, _ column: Int32) -> Bool { pq.getisnull(result, row, column) != 0 }

    @inline(__always) func bytes(_ row: Int32, _ column: Int32) -> UnsafeRawBufferPointer {
        let p = pq.getvalue(result, row, column)
        return UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : Int(pq.getlength(result, row, column)))
    }

    func kind(_ row: Int32, _ column: Int32) -> ColumnKind {
        if isNull(row, column) { return .null }
        switch types[Int(column)] {
        case 20, 21, 23, 16: return .int
        case 700, 701: return .real
        case 17: return .blob
        default: return .text
        }
    }

    func int64(_ row: Int32, _ column: Int32) -> Int64 {
        let b = bytes(row, column)
        switch types[Int(column)] {
        case 20 where b.count == 8: return Int64(bigEndian: b.loadUnaligned(as: Int64.self))
        case 23 where b.count == 4: return Int64(Int32(bigEndian: b.loadUnaligned(as: Int32.self)))
        case 21 where b.count == 2: return Int64(Int16(bigEndian: b.loadUnaligned(as: Int16.self)))
        case 16 where b.count == 1: return Int64(b[0])
        case 700, 701:
            let d = double(row, column)
            return d.isFinite && abs(d) < 9.2e18 ? Int64(d) : 0
        default: return 0
        }
    }

    func double(_ row: Int32, _ column: Int32) -> Double {
        let b = bytes(row, column)
        switch types[Int(column)] {
        case 701 where b.count == 8: return Double(bitPattern: UInt64(bigEndian: b.loadUnaligned(as: UInt64.self)))
        case 700 where b.count == 4: return Double(Float(bitPattern: UInt32(bigEndian: b.loadUnaligned(as: UInt32.self))))
        case 20, 21, 23, 16: return Double(int64(row, column))
        default: return 0
        }
    }

    func text(_ row: Int32, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
        let b = bytes(row, column)
        return UnsafeBufferPointer(start: b.baseAddress?.assumingMemoryBound(to: UInt8.self), count: b.count)
    }

    func string(_ row: Int32, _ column: Int32) -> String { String(decoding: text(row, column), as: UTF8.self) }

    func value(_ row: Int32, _ column: Int32) -> SQLValue {
        switch kind(row, column) {
        case .null: return .null
        case .int: return .int(int64(row, column))
        case .real: return .double(double(row, column))
        case .text: return .text(string(row, column))
        case .blob: return .blob(Array(bytes(row, column)))
        }
    }
}
