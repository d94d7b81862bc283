import CSQLite
import Glibc

/// The file layout and metadata of a Strata store in SQLite.
public final class SQLiteStore: DataStore, @unchecked Sendable {
    public let schema: Schema
    public let configuration: StoreConfiguration
    public let path: String
    public var isReadOnly: Bool { configuration.readOnly }
    let dialect = SQLiteDialect()
    /// For in-memory stores: the one connection every session shares.
    private var sharedConnection: Connection?
    /// The folder for external-storage files (`<store>.strata/`); nil in memory.
    let externalFolder: ExternalFolder?
    /// Read from metadata.
    public private(set) var storeUUID: String = ""
    /// Sees every SQL statement of this store's connections.
    public let trace = TraceHook()
    public let saveHooks = SaveHooks()

    static let formatVersion: Int64 = 1

    /// Opens (or creates) the store at `path` for `configuration`.
    ///
    /// - Throws: `.incompatibleStore` if the file is not a Strata store or holds
    ///   another schema; `.io`, `.readOnly`, `.busy` from SQLite.
    public init(path: String?, configuration: StoreConfiguration) throws {
        self.schema = configuration.schema
        self.configuration = configuration
        if configuration.inMemory {
            self.path = ":memory:"
            externalFolder = nil
            let c = try Connection(path: ":memory:", readOnly: false, create: true)
            c.trace = trace
            sharedConnection = c
            try SQLiteStore.createStore(c, schema: schema, dialect: dialect)
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
        if configuration.readOnly && exists == nil {
            throw StrataError(.io, "cannot open '\(path)' read-only: no such file")
        }
        if let size = exists, size > 0 {
            // Check the header ourselves: never let SQLite touch a file that is not a database.
            guard SQLiteStore.hasSQLiteHeader(path) else {
                throw StrataError(.incompatibleStore, "'\(path)' is not a Strata store: it is not a SQLite database (the file was left untouched)")
            }
        }
        do {
            let c = try Connection(path: sqlitePath, readOnly: configuration.readOnly, create: true)
            // Opening races with other connections creating or opening the same file; SQLite refuses
            // some lock upgrades at once (SQLITE_BUSY without waiting) to avoid deadlocks: start over.
            var attempt = 0
            while true {
                do {
                    try openOrCreate(c)
                    break
                } catch let e as StrataError where e.code == .busy && attempt < 2_000 {
                    c.rollback()
                    attempt += 1
                    usleep(5_000)
                }
            }
            storeUUID = try SQLiteStore.metadata(c, "storeUUID").flatMap { if case .text(let s) = $0 { return s } else { return nil } } ?? ""
            if !configuration.readOnly {
                // Best effort: a store whose folder cannot be swept still opens (reads report bad files).
                try? sweepOrphanedFiles(c)
            }
        } catch {
            // A failed open leaves no file behind that it created (a database with nothing in it).
            if exists == nil { SQLiteStore.removeIfEmpty(path) }
            throw error
        }
        self.sqlitePath = sqlitePath
    }

    /// The name SQLite opens: the path itself, made relative with "./" so that no
    /// name is ever read as a SQLite URI (Debian's SQLite has URI names on).
    private var sqlitePath = ""

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
            guard hasSQLiteHeader(path),
                  let c = try? Connection(path: sqliteName(path), readOnly: true, create: false),
                  (try? isEmptyDatabase(c)) == true else { return }
        }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// Removes external-storage files no committed row names: files written by a save
    /// whose process died before its commit. Runs under the write lock (saves write
    /// files only while holding it), so no file of a save in progress is taken.
    private func sweepOrphanedFiles(_ c: Connection) throws {
        guard let folder = externalFolder else { return }
        let columns = StoreLayout(schema).tables.flatMap { t in t.externalColumns.map { (table: t.name, column: $0) } }
        guard !columns.isEmpty, try !folder.generatedNames().isEmpty else { return }
        try c.transaction {
            var referenced: Set<String> = []
            for (table, column) in columns {
                try c.statement("SELECT \(dialect.quote(column)) FROM \(dialect.quote(table)) WHERE typeof(\(dialect.quote(column))) = 'text'")
                    .query { s in referenced.insert(s.text(0)) }
            }
            folder.remove(try folder.generatedNames().filter { !referenced.contains($0) })
        }
    }

    /// Creates the store in an empty database, or checks the one the file holds.
    private func openOrCreate(_ c: Connection) throws {
        var created = false
        if try SQLiteStore.isEmptyDatabase(c) {
            guard !configuration.readOnly else {
                throw StrataError(.incompatibleStore, "'\(path)' is an empty database, not a Strata store; a read-only open cannot create one")
            }
            try c.execute(script: "PRAGMA journal_mode=WAL")
            // Another connection may create the store first: then this one opens it.
            created = try SQLiteStore.createStore(c, schema: schema, dialect: dialect, onlyIfEmpty: true)
        }
        if !created {
            let tables = try SQLiteStore.userTables(c)
            guard tables.contains("strata_metadata") else {
                throw StrataError(.incompatibleStore, "'\(path)' is a SQLite database but not a Strata store (it has no strata_metadata table; the file was left untouched)")
            }
            try checkSchema(c)
            if !configuration.readOnly { try c.execute(script: "PRAGMA journal_mode=WAL") }
        }
    }

    public func makeSession() throws -> StoreSession {
        if let shared = sharedConnection { return SQLiteSession(store: self, connection: shared) }
        let c = try Connection(path: sqlitePath, readOnly: configuration.readOnly, create: false)
        c.trace = trace
        try c.execute(script: "PRAGMA synchronous=FULL")
        return SQLiteSession(store: self, connection: c)
    }

    // MARK: Creation and checks

    static func fileSize(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int(st.st_size)
    }

    static func hasSQLiteHeader(_ path: String) -> Bool {
        guard let f = fopen(path, "rb") else { return false }
        defer { fclose(f) }
        var header = [UInt8](repeating: 0, count: 16)
        let n = fread(&header, 1, 16, f)
        return n == 16 && header == Array("SQLite format 3\u{0}".utf8)
    }

    static func userTables(_ c: Connection) throws -> Set<String> {
        var out: Set<String> = []
        try c.statement("SELECT name FROM sqlite_master WHERE type = 'table'").query { s in out.insert(s.text(0)) }
        return out
    }

    /// A database nobody has put anything in: no schema object at all (not even a view)
    /// and no user_version or application_id. Only such a file may become a store.
    static func isEmptyDatabase(_ c: Connection) throws -> Bool {
        guard try c.statement("SELECT count(*) FROM sqlite_master").scalar() == .int(0) else { return false }
        return try c.statement("PRAGMA user_version").scalar() == .int(0)
            && c.statement("PRAGMA application_id").scalar() == .int(0)
    }

    static func metadata(_ c: Connection, _ key: String) throws -> SQLValue? {
        try c.statement("SELECT value FROM strata_metadata WHERE key = ?").scalar([.text(key)])
    }

    static func setMetadata(_ c: Connection, _ key: String, _ value: SQLValue) throws {
        try c.execute("INSERT INTO strata_metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
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
                try c.execute("INSERT OR IGNORE INTO strata_sequence (entity, next) VALUES (?, 1)", [.text(root.name)])
            }
            return true
        }
    }

    static func writeSchemaMetadata(_ c: Connection, schema: Schema) throws {
        try setMetadata(c, "schema", .text(schema.json.text))
        try setMetadata(c, "version", .text(schema.version))
        try setMetadata(c, "versionHash", .text(schema.versionHash))
        var w = JSONWriter()
        w.beginObject()
        for e in schema.entities { w.key(e.name); w.string(e.versionHash) }
        w.endObject()
        try setMetadata(c, "entityHashes", .text(w.string))
    }

    /// Compares the stored schema with the configured one.
    private func checkSchema(_ c: Connection) throws {
        guard case .text(let storedHash)? = try SQLiteStore.metadata(c, "versionHash"),
              case .text(let storedJSON)? = try SQLiteStore.metadata(c, "schema") else {
            throw StrataError(.corrupt, "'\(path)' has a strata_metadata table without a stored schema")
        }
        if case .int(let format)? = try SQLiteStore.metadata(c, "formatVersion"), format > SQLiteStore.formatVersion {
            throw StrataError(.incompatibleStore, "'\(path)' was written by a newer Strata (store format \(format), this library reads \(SQLiteStore.formatVersion))")
        }
        if storedHash == schema.versionHash {
            // Same storage; keep the stored declaration current (defaults, delete rules may differ).
            if !configuration.readOnly, storedJSON != schema.json.text {
                try c.transaction { try SQLiteStore.writeSchemaMetadata(c, schema: schema) }
            }
            return
        }
        let stored: Schema
        do { stored = try SchemaDecoder.decode(storedJSON) } catch {
            throw StrataError(.corrupt, "the schema stored in '\(path)' cannot be read: \(error)")
        }
        let differences = SchemaDiff.describe(from: stored, to: schema)
        throw StrataError(.incompatibleStore,
                          "the store '\(path)' holds schema version \(stored.version), which differs from the configured version \(schema.version): "
                          + differences.joined(separator: "; "))
    }
}
