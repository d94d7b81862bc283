import CSQLite
import Glibc

/// The file layout and metadata of a Strata store in SQLite.
public final class SQLiteStore: DataStore, @unchecked Sendable {
    public let schema: Schema
    public let options: StoreOptions
    public let path: String
    public var isReadOnly: Bool { options.readOnly }
    let dialect = SQLiteDialect()
    public var queryDialect: any QueryDialect { dialect }
    /// For in-memory stores: the one connection every session shares.
    private(set) var sharedConnection: Connection?
    /// Whether every session shares one connection (an in-memory store).
    var sharesConnection: Bool { sharedConnection != nil }
    /// The folder for external-storage files (`<store>.strata/`); nil in memory.
    let externalFolder: ExternalFolder?
    /// Read from metadata.
    public private(set) var storeUUID: String = ""
    /// Sees every SQL statement of this store's connections.
    public let trace = TraceHook()
    public let saveHooks: SaveHooks

    static let formatVersion: Int64 = 1

    /// Opens (or creates) the store at `path` with `options`; `policy` decides,
    /// from what the file holds, whether to create, open or refuse.
    ///
    /// - Throws: `.incompatibleStore` if the file is not a Strata store; what `policy`
    ///   throws (a store holding another schema); `.io`, `.readOnly`, `.busy` from SQLite.
    /// - Parameter saveHooks: the participants and observers of every save, migrations' hooks included.
    public init(path: String?, options: StoreOptions, policy: StoreOpenPolicy, saveHooks: SaveHooks = SaveHooks()) throws {
        self.schema = options.schema
        self.saveHooks = saveHooks
        self.options = options
        if options.inMemory {
            self.path = ":memory:"
            externalFolder = nil
            let c = try Connection(path: ":memory:", readOnly: false, create: true)
            c.trace = trace
            sharedConnection = c
            try open(c, policy: policy)
            storeUUID = try SQLiteStore.metadata(c, "storeUUID").flatMap { if case .text(let s) = $0 { return s } else { return nil } } ?? ""
            return
        }
        guard let path else {
            throw StrataError(.invalid, "a store path is required unless the configuration sets inMemory")
        }
        let sqlitePath = try SQLiteStore.checkPath(path)
        self.path = path
        externalFolder = ExternalFolder(path: path + ".strata")
        let exists = SQLiteStore.fileSize(path)
        if options.readOnly && exists == nil {
            throw StrataError(.io, "cannot open '\(path)' read-only: no such file")
        }
        do {
            let c = try Connection(path: sqlitePath, readOnly: options.readOnly, create: true)
            if let exists, exists > 0 { try SQLiteStore.checkIsDatabase(c, path: path) }
            // Opening races with other connections creating or opening the same file; SQLite refuses
            // some lock upgrades at once (SQLITE_BUSY without waiting) to avoid deadlocks: start over.
            var attempt = 0
            while true {
                do {
                    try open(c, policy: policy)
                    break
                } catch let e as StrataError where e.code == .busy && attempt < 2_000 {
                    c.rollback()
                    attempt += 1
                    usleep(5_000)
                } catch is CreatedElsewhere where attempt < 2_000 {
                    // Another connection made the database a store first: decide again on what it holds.
                    attempt += 1
                }
            }
            storeUUID = try SQLiteStore.metadata(c, "storeUUID").flatMap { if case .text(let s) = $0 { return s } else { return nil } } ?? ""
            if !options.readOnly {
                // Best effort: a store whose folder cannot be swept still opens (reads report bad files).
                try? sweepOrphanedFiles(c)
            }
            // The first session takes this connection instead of opening another.
            if !c.isInTransaction { spare = c }
        } catch {
            // A failed open leaves no file behind that it created (a database with nothing in it).
            if exists == nil { SQLiteStore.removeIfEmpty(path) }
            throw error
        }
        self.sqlitePath = sqlitePath
    }

    /// The name SQLite opens: the path itself, made relative with "./" so that no
    /// name is ever read as a SQLite URI (Debian's SQLite has URI names on).
    private(set) var sqlitePath = ""

    /// Checks a store path: a plain file name, never a SQLite URI or `:memory:`.
    ///
    /// - Returns: the name to hand to SQLite.
    /// - Throws: `.invalid` for an empty path, `:memory:`, a `file:` URI, a NUL byte,
    ///   or a path that names a directory.
    static func checkPath(_ path: String) throws -> String {
        guard !path.isEmpty else {
            throw StrataError(.invalid, "a store path is required unless the configuration sets inMemory")
        }
        if path == ":memory:" {
            throw StrataError(.invalid, "':memory:' is not a store path: set \"inMemory\": true in the configuration for an in-memory store")
        }
        if path.hasPrefix("file:") {
            throw StrataError(.invalid, "store paths are plain file names, not SQLite URIs ('\(path.prefix(5))…'); "
                              + "to open a file whose name starts with 'file:', write './\(path.prefix(5))…'")
        }
        if path.utf8.contains(0) { throw StrataError(.invalid, "a store path cannot contain a NUL character") }
        if path.hasSuffix("/") || SQLiteStore.isDirectory(path) {
            throw StrataError(.invalid, "the store path '\(path)' names a directory, not a file")
        }
        return sqliteName(path)
    }

    /// The name SQLite opens for a checked path: relative paths start with "./", which
    /// SQLite never reads as a URI.
    static func sqliteName(_ path: String) -> String { path.hasPrefix("/") ? path : "./" + path }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes a database file that holds nothing (and its side files): what a failed first open made.
    static func removeIfEmpty(_ path: String) {
        guard let size = fileSize(path) else { return }
        if size > 0 {
            // A file that is not a database fails the check (SQLite reads its first page): kept.
            guard let c = try? Connection(path: sqliteName(path), readOnly: true, create: false),
                  (try? isEmptyDatabase(c)) == true else { return }
        }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// Removes external-storage files no committed row names: files written by a save
    /// whose process died before its commit. Runs under the write lock (saves write
    /// files only while holding it), so no file of a save in progress is taken.
    private func sweepOrphanedFiles(_ c: Connection) throws {
        guard let folder = externalFolder else { return }
        // Most stores have no file to sweep: the layout is worked out only when there is one.
        guard try !folder.generatedNames().isEmpty else { return }
        // With no external-storage column left (a migration removed them), every file is an orphan.
        let columns = StoreLayout(schema).tables.flatMap { t in t.externalColumns.map { (table: t.name, column: $0) } }
        try c.transaction {
            var referenced: Set<String> = []
            for (table, column) in columns {
                try c.statement(SQLiteDialect.fileNames(table, column))
                    .query { s in referenced.insert(s.text(0)) }
            }
            folder.remove(try folder.generatedNames().filter { !referenced.contains($0) })
        }
    }

    /// Reads what the database holds and has `policy` create, open or refuse.
    private func open(_ c: Connection, policy: StoreOpenPolicy) throws {
        // One read of the file's schema serves the stored state and the check of its tables.
        let objects = try StoredSchemaCheck.objects(c)
        let stored = try SQLiteStore.readState(c, path: path, objects: objects)
        try policy.open(stored, Opening(store: self, connection: c, objects: objects))
        if stored != nil, !options.inMemory, !options.readOnly { try c.execute(script: SQLiteDialect.walMode) }
    }

    /// Another connection created the store between reading the state and taking the write lock.
    private struct CreatedElsewhere: Error {}

    /// The store as its open policy sees it while `init` opens it.
    private final class Opening: StoreOpening {
        let store: SQLiteStore
        let connection: Connection
        /// The rows of `sqlite_master` the stored state was read with: the first check of the
        /// storage uses them (nothing was written since); any later one reads them again.
        private var objects: [StoredSchemaCheck.Object]?
        init(store: SQLiteStore, connection: Connection, objects: [StoredSchemaCheck.Object]) {
            self.store = store
            self.connection = connection
            self.objects = objects
        }

        var location: String { store.path }
        var name: StoreName { .file(store.path) }
        var isReadOnly: Bool { store.options.readOnly }
        var formatVersion: Int64 { SQLiteStore.formatVersion }

        func create() throws {
            guard !isReadOnly else { throw StrataError(.readOnly, "'\(location)' is opened read-only: a store cannot be created in it") }
            if store.options.inMemory {
                try SQLiteStore.createStore(connection, schema: store.schema, dialect: store.dialect)
                return
            }
            try connection.execute(script: SQLiteDialect.walMode)
            guard try SQLiteStore.createStore(connection, schema: store.schema, dialect: store.dialect, onlyIfEmpty: true) else {
                throw CreatedElsewhere()
            }
        }

        func writeDeclaration(of schema: Schema) throws {
            guard !isReadOnly else { throw StrataError(.readOnly, "'\(location)' is opened read-only: its schema declaration cannot be written") }
            if connection.isInTransaction {
                try SQLiteStore.writeSchemaMetadata(connection, schema: schema)
            } else {
                try connection.transaction { try SQLiteStore.writeSchemaMetadata(connection, schema: schema) }
            }
        }

        func verifyStorage(of schema: Schema) throws {
            do {
                let read = objects
                objects = nil
                try StoredSchemaCheck.verify(connection, schema: schema, location: location, objects: read)
            } catch let e as StrataError where e.code == .corrupt {
                // Another connection may have migrated the store since its state was read: open again.
                if case .text(let hash)? = try SQLiteStore.metadata(connection, "versionHash"), hash != schema.versionHash {
                    throw StrataError(.busy, "'\(location)' was migrated while it was being opened")
                }
                throw e
            }
        }

        func migrate<T>(_ body: (StoredState?) throws -> T) throws -> T {
            guard !isReadOnly else { throw StrataError(.readOnly, "'\(location)' is opened read-only: it cannot be migrated") }
            // A session's transaction: saves of the stage's hooks become savepoints of it.
            let session = SQLiteSession(store: store, connection: connection)
            return try session.transaction {
                try body(try SQLiteStore.readState(connection, path: location))
            }
        }

        func session(schema: Schema) throws -> StoreSession {
            SQLiteSession(store: store, connection: connection, schema: schema)
        }

        func committedSession(schema: Schema) throws -> StoreSession? {
            guard !store.options.inMemory else { return nil }
            // Another connection: while the stage's write transaction is open, it reads the last commit (WAL).
            let c = try Connection(path: SQLiteStore.sqliteName(store.path), readOnly: true, create: false)
            c.trace = store.trace
            return SQLiteSession(store: store, connection: c, schema: schema)
        }

        func changeStorage(_ mapping: SchemaMapping, stage: String,
                           report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
            let c = connection
            let migration = StorageMigration(mapping, dialect: store.dialect) { table in try SQLiteStore.indexes(c, table) }
            do {
                try StorageMigration.run(try migration.plan(), on: SQLiteMigrationConnection(connection: c, folder: store.externalFolder),
                                         stage: stage, report: report)
                try SQLiteHistoryNames.rename(c, mapping)
            } catch var e as StrataError where e.code == .internal || (e.code == .corrupt && e.sqliteCode != nil) {
                // The steps follow the stored schema: SQL that fails on them means the tables do not
                // match it (a store file is untrusted input).
                e.code = .corrupt
                e.message = "the tables of '\(location)' do not match its stored schema (version \(mapping.old.version)): " + e.message
                throw e
            }
        }
    }

    /// The steps a migration by `mapping` runs on a store laid out as its old schema
    /// (a dry run: no store is touched).
    public static func migrationSteps(_ mapping: SchemaMapping) throws -> [MigrationStep] {
        try StorageMigration(mapping, dialect: SQLiteDialect()).plan().map(\.description)
    }

    /// What the store at `path` holds about itself, read without writing (nil for an
    /// empty database).
    ///
    /// - Throws: `.io` for a missing file; `.incompatibleStore` for a file that is not a
    ///   SQLite database or not a Strata store; `.invalid` for a bad path.
    public static func storedState(path: String) throws -> StoredState? {
        let name = try checkPath(path)
        guard let size = fileSize(path) else { throw StrataError(.io, "cannot check '\(path)': no such file") }
        if size == 0 { return nil }
        let c = try Connection(path: name, readOnly: true, create: false)
        try checkIsDatabase(c, path: path)
        try c.beginRead()
        defer { c.endRead() }
        return try readState(c, path: path)
    }

    /// The indexes a table has (made by CREATE INDEX), with their columns.
    static func indexes(_ c: Connection, _ table: String) throws -> [StoreLayout.Index] {
        var list: [(String, Bool)] = []
        try c.statement(SQLiteDialect.indexList).query([.text(table)]) { s in list.append((s.text(0), s.int64(1) != 0)) }
        return try list.map { name, unique in
            var columns: [String] = []
            try c.statement(SQLiteDialect.indexColumns).query([.text(name)]) { s in columns.append(s.text(0)) }
            return StoreLayout.Index(name: name, columns: columns, isUnique: unique)
        }
    }

    /// The connection the store was opened with, until a session takes it.
    private var spare: Connection?
    private let spareLock = Lock()

    public func makeSession() throws -> StoreSession {
        if let shared = sharedConnection { return SQLiteSession(store: self, connection: shared) }
        let c = try spareLock.withLock {
            defer { spare = nil }
            return try spare ?? Connection(path: sqlitePath, readOnly: options.readOnly, create: false)
        }
        c.trace = trace
        try c.execute(script: SQLiteDialect.fullSync)
        return SQLiteSession(store: self, connection: c)
    }

    // MARK: Creation and checks

    /// The size of the file at `path` (nil when there is none), from `stat` alone.
    ///
    /// The store file itself is never opened outside SQLite: closing any descriptor of a
    /// file releases every POSIX lock the process holds on it, those of the process's
    /// other connections to the store included (sqlite.org/howtocorrupt.html, 2.2), and
    /// another process could then checkpoint and remove the WAL under them.
    static func fileSize(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int(st.st_size)
    }

    /// Checks, through `c`, that the non-empty file it opened is a SQLite database: its
    /// first page is read and nothing is written.
    ///
    /// - Throws: `.incompatibleStore` for a file that is not one (left untouched).
    static func checkIsDatabase(_ c: Connection, path: String) throws {
        do {
            _ = try c.statement(SQLiteDialect.schemaVersion).scalar()
        } catch let e as StrataError where e.code == .incompatibleStore {
            throw StrataError(.incompatibleStore, "'\(path)' is not a Strata store: it is not a SQLite database (the file was left untouched)")
        }
    }

    /// A database nobody has put anything in: no schema object at all (not even a view)
    /// and no user_version or application_id. Only such a file may become a store.
    static func isEmptyDatabase(_ c: Connection) throws -> Bool {
        guard try c.statement(SQLiteDialect.schemaObjectCount).scalar() == .int(0) else { return false }
        return try hasNoHeaderMarks(c)
    }

    /// Whether the database header holds no user_version and no application_id (what another
    /// program marks its files with).
    private static func hasNoHeaderMarks(_ c: Connection) throws -> Bool {
        try c.statement(SQLiteDialect.userVersion).scalar() == .int(0)
            && c.statement(SQLiteDialect.applicationID).scalar() == .int(0)
    }

    static func metadata(_ c: Connection, _ key: String) throws -> SQLValue? {
        try c.statement(SQLiteDialect.readMetadata).scalar([.text(key)])
    }

    static func setMetadata(_ c: Connection, _ key: String, _ value: SQLValue) throws {
        try c.execute(SQLiteDialect.writeMetadata,
                      [.text(key), value])
    }

    /// Creates the tables and metadata of a new store in one transaction; with `onlyIfEmpty`,
    /// does nothing and returns false when the database is no longer empty once the write lock is held.
    @discardableResult
    static func createStore(_ c: Connection, schema: Schema, dialect: SQLiteDialect, onlyIfEmpty: Bool = false) throws -> Bool {
        try c.transaction {
            if onlyIfEmpty, try !isEmptyDatabase(c) { return false }
            for sql in SQLiteDialect.metadataDDL { try c.execute(script: sql) }
            for sql in dialect.createSchema(StoreLayout(schema)) { try c.execute(script: sql) }
            try writeSchemaMetadata(c, schema: schema)
            try setMetadata(c, "storeUUID", .text(UUIDText.random()))
            try setMetadata(c, "formatVersion", .int(formatVersion))
            for root in schema.rootEntities {
                try c.execute(SQLiteDialect.startSequence, [.text(root.name)])
            }
            return true
        }
    }

    static func writeSchemaMetadata(_ c: Connection, schema: Schema) throws {
        try setMetadata(c, "schema", .text(schema.jsonText))
        try setMetadata(c, "version", .text(schema.version))
        try setMetadata(c, "versionHash", .text(schema.versionHash))
        try setMetadata(c, "entityHashes", .text(StoredState.entityHashesText(
            schema.entities.lazy.map { (key: $0.name, value: $0.versionHash) })))
    }

    /// What the database holds about itself: nil for an empty database (which may become a store).
    ///
    /// - Throws: `.incompatibleStore` for a database that holds something but no
    ///   `strata_metadata` table (the file is left untouched).
    static func readState(_ c: Connection, path: String) throws -> StoredState? {
        try readState(c, path: path, objects: StoredSchemaCheck.objects(c))
    }

    /// The stored state, given every row of `sqlite_master` just read on `c` (``StoredSchemaCheck/objects(_:)``,
    /// which the check of the file's schema then reads no second time when the store opens).
    static func readState(_ c: Connection, path: String, objects: [StoredSchemaCheck.Object]) throws -> StoredState? {
        if objects.isEmpty, try hasNoHeaderMarks(c) { return nil }
        guard objects.contains(where: { $0.type == "table" && $0.name == "strata_metadata" }) else {
            throw StrataError(.incompatibleStore, "'\(path)' is a SQLite database but not a Strata store (it has no strata_metadata table; the file was left untouched)")
        }
        var state = StoredState()
        try c.statement(SQLiteDialect.allMetadata).query { s in
            let value = s.value(at: 1)
            let text: String? = if case .text(let t) = value { t } else { nil }
            switch s.text(0) {
            case "schema": state.schemaJSON = text
            case "version": state.version = text
            case "versionHash": state.versionHash = text
            case "entityHashes": state.entityHashesText = text
            case "storeUUID": state.storeUUID = text
            case "formatVersion": if case .int(let n) = value { state.formatVersion = n }
            default: break
            }
        }
        return state
    }
}
