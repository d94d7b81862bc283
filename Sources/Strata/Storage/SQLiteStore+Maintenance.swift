import CSQLite
import Glibc

/// Backup, integrity check and vacuum of a SQLite store file (``StoreMaintenance``).
extension SQLiteStore: StoreMaintenance {
    // MARK: Backup

    /// An online copy of the store file and of the external-storage files it names.
    ///
    /// A connection of its own holds one read transaction (one WAL snapshot) for the whole
    /// copy: SQLite's backup API copies that snapshot's pages (256 at a time, retrying while the
    /// destination is busy) without ever restarting, and writers — which WAL never blocks on
    /// a reader — go on. The files the snapshot's rows name are then copied; a file that a
    /// later commit removed (an object deleted or replaced since) makes the copy start over
    /// on a newer snapshot. Pages are copied as they are (cheaper than `VACUUM INTO`, which
    /// rebuilds every table and index, and which SQLite refuses inside a transaction).
    ///
    /// The copy is made beside `destination` under a temporary name and renamed into place
    /// once complete: a failed backup leaves no destination behind.
    ///
    /// - Throws: `.invalid` for an in-memory store, a destination that exists (unless
    ///   `overwrite`) or that is the store itself; `.io` when a file cannot be written.
    public func backup(to destination: String, overwrite: Bool) throws {
        guard !options.inMemory else { throw StrataError(.invalid, "an in-memory store has no file to back up") }
        // A plain file name (not a URI, not a directory), as a store path is.
        _ = try SQLiteStore.checkPath(destination)
        var here = stat(), there = stat()
        if stat(path, &here) == 0, stat(destination, &there) == 0, here.st_dev == there.st_dev, here.st_ino == there.st_ino {
            throw StrataError(.invalid, "the backup destination '\(destination)' is the store itself")
        }
        let existing = [destination, destination + ".strata"].filter { SQLiteStore.exists($0) }
        if let first = existing.first, !overwrite {
            throw StrataError(.invalid, "the backup destination '\(first)' exists (pass {\"overwrite\": true} to replace it)")
        }
        let temporary = destination + ".partial-" + UUIDText.random()
        let copyFolder = ExternalFolder(path: temporary + ".strata")
        func discard() {
            copyFolder.removeFolder()
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
        }
        do {
            var attempts = 0
            while try !copy(into: temporary, folder: copyFolder) {
                discard()
                attempts += 1
                guard attempts < 1_000 else {
                    throw StrataError(.busy, "the backup of '\(path)' started over 1000 times: its external-storage files were replaced faster than they could be copied")
                }
            }
            if overwrite {
                for suffix in ["", "-wal", "-shm", "-journal"] { unlink(destination + suffix) }
                ExternalFolder(path: destination + ".strata").removeFolder()
                if SQLiteStore.exists(destination + ".strata") {
                    throw StrataError(.io, "cannot replace '\(destination).strata': it holds files Strata did not make")
                }
            }
            if SQLiteStore.exists(copyFolder.path), rename(copyFolder.path, destination + ".strata") != 0 {
                throw StrataError(.io, "cannot move the backup's external-storage folder to '\(destination).strata': \(String(cString: strerror(errno)))")
            }
            if rename(temporary, destination) != 0 {
                let reason = String(cString: strerror(errno))
                ExternalFolder(path: destination + ".strata").removeFolder()
                throw StrataError(.io, "cannot move the backup to '\(destination)': \(reason)")
            }
        } catch {
            discard()
            throw error
        }
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// One attempt of a backup into `file` and `folder`: false when a file the snapshot names
    /// was removed by a later commit (the caller starts over).
    private func copy(into file: String, folder: ExternalFolder) throws -> Bool {
        let source = try Connection(path: sqlitePath, readOnly: true, create: false)
        source.trace = trace
        try source.beginRead()
        defer { source.endRead() }
        // The snapshot is taken by the first read.
        _ = try source.statement(SQLiteDialect.schemaVersion).scalar()
        do {
            let copy = try Connection(path: SQLiteStore.sqliteName(file), readOnly: false, create: true)
            guard let backup = sqlite3_backup_init(copy.handle, "main", source.handle, "main") else {
                throw copy.error(sqlite3_errcode(copy.handle), context: "starting a backup")
            }
            var rc: Int32
            repeat {
                rc = sqlite3_backup_step(backup, 256)
                if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(5_000) }
            } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
            let finished = sqlite3_backup_finish(backup)
            guard rc == SQLITE_DONE else { throw copy.error(rc, context: "copying the store") }
            guard finished == SQLITE_OK else { throw copy.error(finished, context: "copying the store") }
        }
        guard let externalFolder else { return true }
        for table in StoreLayout(schema).tables {
            for column in table.externalColumns {
                let rows = try Statement(connection: source, sql: SQLiteDialect.fileRows(table.name, column))
                var complete = true
                try rows.query { s in
                    let name = s.text(2)
                    // A name Strata did not make is damage, copied as it is (the copy's check reports it).
                    guard complete, ExternalFolder.isValidName(name.utf8) else { return }
                    if try !externalFolder.copy(name, to: folder), try isStale(table.name, column, pk: s.int64(0), name: name) {
                        complete = false
                    }
                }
                guard complete else { return false }
            }
        }
        try folder.sync()
        return true
    }

    /// Whether the latest commit no longer names `name` in the row `pk` (the snapshot was stale).
    private func isStale(_ table: String, _ column: String, pk: Int64, name: String) throws -> Bool {
        let latest = try Connection(path: sqlitePath, readOnly: true, create: false)
        return try latest.statement(SQLiteDialect.selectRow(table, columns: [column])).scalar([.int(pk)]) != .text(name)
    }

    // MARK: Integrity

    /// SQLite's `PRAGMA integrity_check` (`sqlite`), the tables against the stored schema
    /// (`table`), the shared checks (links, pairs, values) and the external-storage files
    /// (`external`), on one snapshot of a connection of the check's own (an in-memory store:
    /// its one connection, under its lock). Files are confirmed off the snapshot: a missing
    /// one on the latest commit, an orphaned one under the write lock (taken for as long as
    /// it takes to look for each candidate's name; never on a read-only store, where a file of
    /// a save in progress may show as orphaned).
    public func checkIntegrity(_ report: inout IntegrityReport) throws {
        if let shared = sharedConnection {
            try shared.lock.withLock { try check(shared, &report) }
            return
        }
        let c = try Connection(path: sqlitePath, readOnly: true, create: false)
        c.trace = trace
        try check(c, &report)
    }

    private struct FileRow { let table: String, column: String, entity: String, pk: Int64, name: String }

    private func check(_ c: Connection, _ report: inout IntegrityReport) throws {
        let layout = StoreLayout(schema)
        // Listed before the snapshot: a file written after it is no candidate.
        let listed = try externalFolder?.generatedNames() ?? []
        var missing: [FileRow] = []
        var named: Set<String> = []
        do {
            try c.beginRead()
            defer { c.endRead() }
            try report.recording(.sqlite) { r in
                try c.statement(SQLiteDialect.integrityCheck(limit: r.room + 1)).query { s in
                    let finding = s.text(0)
                    if finding != "ok" { r.add(.sqlite, finding) }
                }
            }
            do {
                try StoredSchemaCheck.verify(c, layout: layout, location: path, version: schema.version)
            } catch let e as StrataError where e.code == .corrupt {
                // Tables that do not match cannot be read as the schema says: the other checks would only repeat it.
                report.add(.table, e.message)
                return
            }
            try IntegrityCheck.run(SQLiteIntegrityRows(connection: c), schema: schema, &report)
            guard let folder = externalFolder else { return }
            try report.recording(.external) { r in
                for table in layout.tables {
                    for column in table.externalColumns {
                        try Statement(connection: c, sql: SQLiteDialect.fileRows(table.name, column)).query { s in
                            let name = s.text(2)
                            // A name Strata did not make is the value check's finding.
                            guard ExternalFolder.isValidName(name.utf8) else { return }
                            named.insert(name)
                            if missing.count <= r.room, try !folder.holds(name) {
                                missing.append(FileRow(table: table.name, column: column, entity: s.text(1), pk: s.int64(0), name: name))
                            }
                        }
                    }
                }
            }
        }
        guard let folder = externalFolder else { return }
        for m in missing where try !isStale(m.table, m.column, pk: m.pk, name: m.name) && !folder.holds(m.name) {
            report.add(.external, "\(m.entity)/\(m.pk): the external storage file '\(m.name)' of '\(m.column)' is missing from '\(folder.path)'",
                       entity: m.entity, attribute: m.column, id: "\(m.entity)/\(m.pk)")
        }
        let candidates = listed.filter { !named.contains($0) }.prefix(report.room + 1)
        guard !candidates.isEmpty else { return }
        // Under the write lock no save is in progress (saves write files only while holding it).
        let writer: Connection? = try sharedConnection ?? (options.readOnly ? nil : Connection(path: sqlitePath, readOnly: false, create: false))
        if let writer, !writer.isInTransaction { try writer.begin(immediate: true) }
        defer { if sharedConnection == nil { writer?.rollback() } }
        let columns = layout.tables.flatMap { t in t.externalColumns.map { (t.name, $0) } }
        for name in candidates where try folder.holds(name) {
            var isNamed = false
            for (table, column) in columns where !isNamed {
                isNamed = try (writer ?? c).statement(SQLiteDialect.namesFile(table, column)).scalar([.text(name)]) != nil
            }
            if !isNamed {
                report.add(.external, "the external storage file '\(name)' in '\(folder.path)' is named by no row (an orphan)")
            }
        }
    }

    /// The integrity check's queries: statements of their own (not the connection's cache),
    /// external-storage values taken as their names (the files are the external check's).
    private struct SQLiteIntegrityRows: IntegrityRows {
        let connection: Connection
        var dialect: any QueryDialect { SQLiteDialect() }
        func rows(_ sql: String, _ args: [SQLValue]) throws -> CheckedRows {
            let s = try Statement(connection: connection, sql: sql)
            s.bind(args)
            return CheckedRows(rows: SQLiteRowCursor(statement: s, folder: nil))
        }
    }

    struct CheckedRows: RowCursor {
        var rows: SQLiteRowCursor
        mutating func next() throws -> Bool { try rows.next() }
        mutating func start(key: Int64) throws { try rows.start(key: key) }
        func kind(_ column: Int32) -> ColumnKind { rows.kind(column) }
        func int64(_ column: Int32) -> Int64 { rows.int64(column) }
        func double(_ column: Int32) -> Double { rows.double(column) }
        func text(_ column: Int32) -> UnsafeBufferPointer<UInt8> { rows.text(column) }
        func blob(_ column: Int32) -> UnsafeRawBufferPointer { rows.blob(column) }
        func externalData(_ reference: UnsafeBufferPointer<UInt8>, of attribute: Attribute, pk: Int64) throws -> [UInt8] {
            guard ExternalFolder.isValidName(reference) else {
                throw ExternalFolder.corruptName(entity: attribute.entity?.name ?? "?", attribute: attribute.name)
            }
            return []
        }
    }

    // MARK: Vacuum

    /// SQLite's `VACUUM` on a connection of its own (an in-memory store: its one connection):
    /// it takes the write lock for the whole rebuild (writers wait, then fail busy); readers on
    /// their snapshots, cursors included, go on.
    ///
    /// - Throws: `.readOnly`; `.busy` when another transaction holds the write lock past the
    ///   busy timeout, or (an in-memory store) a transaction is open on its connection.
    public func vacuum() throws {
        guard !options.readOnly else { throw StrataError(.readOnly, "'\(path)' is opened read-only: it cannot be vacuumed") }
        func run(_ c: Connection) throws {
            guard !c.isInTransaction else {
                throw StrataError(.busy, "'\(path)' cannot be vacuumed inside a transaction (SQLite's VACUUM runs only outside one)")
            }
            do {
                try c.execute(script: SQLiteDialect.vacuum)
            } catch var e as StrataError where e.code == .busy {
                e.message = "'\(path)' could not be vacuumed: another transaction held its write lock past the busy timeout (\(e.message))"
                throw e
            }
        }
        if let shared = sharedConnection {
            try shared.lock.withLock { try run(shared) }
            return
        }
        let c = try Connection(path: sqlitePath, readOnly: false, create: false)
        c.trace = trace
        try run(c)
    }
}
