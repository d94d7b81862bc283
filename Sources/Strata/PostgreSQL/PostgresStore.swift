import Glibc

/// A Strata store in a schema (namespace) of a PostgreSQL database, shared by any
/// number of processes on any number of hosts: the same layout as the SQLite store
/// (``StoreLayout``), spelled by ``PostgresDialect``, with the store's metadata in
/// `strata_metadata`, one key sequence per hierarchy, and the text functions of
/// `PostgresFunctions` installed beside the tables.
///
/// The location (a libpq URI, which may hold a password) is never repeated in an
/// error, a message or a trace: messages name the store by its schema.
public final class PostgresStore: DataStore, @unchecked Sendable {
    public let schema: Schema
    public let options: StoreOptions
    public var isReadOnly: Bool { options.readOnly }
    let dialect = PostgresDialect()
    public var queryDialect: any QueryDialect { dialect }
    public let trace = TraceHook()
    public let saveHooks: SaveHooks
    /// The namespace the store lives in.
    public let namespace: String
    private let uri: String
    public private(set) var storeUUID = ""
    /// Whether the history tables were seen (`PostgresHistory.swift`).
    let historyTables = PostgresHistoryTables()

    static let formatVersion: Int64 = 1

    /// Every session's advisory lock of the store: saves take it shared (for their transaction),
    /// opening and migrating take it alone.
    static let shareStoreLock = "SELECT pg_advisory_xact_lock_shared(hashtextextended('strata:' || current_schema(), 0))"
    static let lockStore = "SELECT pg_advisory_lock(hashtextextended('strata:' || current_schema(), 0))"
    static let unlockStore = "SELECT pg_advisory_unlock(hashtextextended('strata:' || current_schema(), 0))"
    /// A key sequence's lock (`$1`: the sequence's quoted name), held while a block is reserved.
    static let lockKeys = "SELECT pg_advisory_lock(hashtextextended('strata:' || current_schema() || ':' || $1, 0))"
    static let unlockKeys = "SELECT pg_advisory_unlock(hashtextextended('strata:' || current_schema() || ':' || $1, 0))"

    /// Opens (or creates) the store in the database `uri` names; `policy` decides from what the
    /// schema holds whether to create, open or refuse.
    ///
    /// - Throws: `.io` when the server cannot be reached or refuses the connection, or libpq is
    ///   missing; `.schema` for a name PostgreSQL cannot hold; what `policy` throws.
    public init(uri: String, options: StoreOptions, policy: StoreOpenPolicy, saveHooks: SaveHooks = SaveHooks()) throws {
        schema = options.schema
        self.options = options
        self.saveHooks = saveHooks
        self.uri = uri
        try PostgresStore.checkNames(options.schema)
        let c = try PGConnection(uri: uri)
        let server: String
        (namespace, server) = try PostgresStore.enter(c, options: options)
        c.trace = trace
        // A stage hook opening the store its stage migrates would wait for its own lock for ever.
        let opening = try OpensInProgress.enter(server: server, namespace: namespace)
        defer { OpensInProgress.leave(opening) }
        var unlocked = false
        defer { if !unlocked { _ = try? c.execute(PostgresStore.unlockStore) } }
        // The lock, then everything the checks below read of the schema, in one round trip.
        var catalog: PostgresCatalog? = try PostgresCatalog.read(c, locking: true)
        var attempt = 0
        var unchanged: PostgresCatalog?
        while true {
            do {
                let stored = try PostgresStore.readState(c, namespace: namespace, catalog: catalog)
                let o = Opening(store: self, connection: c, catalog: catalog)
                catalog = nil  // a second attempt reads again
                try policy.open(stored, o)
                unchanged = o.catalog
                break
            } catch let e as StrataError where e.postgresState == "23505" && attempt < 3 {
                // Two first opens raced to create the schema or the metadata: decide again.
                if c.isInTransaction { _ = try? c.execute(script: "ROLLBACK") }
                attempt += 1
            }
        }
        // What the open read still holds unless it wrote: the functions' version and the UUID.
        func metadata(_ key: String) throws -> String? {
            if let unchanged { return unchanged.value(key) }
            guard case .text(let value)? = try c.scalar(PostgresDialect.readMetadata, [.text(key)]) else { return nil }
            return value
        }
        try PostgresStore.refreshFunctions(c, stored: try metadata("functionsVersion"), namespace: namespace, readOnly: options.readOnly)
        c.forgetPrepared()
        if let uuid = try metadata("storeUUID") { storeUUID = uuid }
        // The unlock's answer is read at the connection's next statement (the store's first read).
        c.send(detached: PostgresStore.unlockStore)
        unlocked = true
        spare = c
    }

    /// What the store in the database `uri` names holds about itself, read without writing (nil for
    /// an empty or missing schema), for `strata_check_store`.
    ///
    /// - Throws: `.io` when the server cannot be reached; `.incompatibleStore` for a schema holding
    ///   tables but no store.
    public static func storedState(uri: String, options: StoreOptions) throws -> StoredState? {
        var readOnly = options
        readOnly.readOnly = true
        let c = try PGConnection(uri: uri)
        let (namespace, exists, _) = try setUp(c, options: readOnly)
        guard exists else { return nil }  // no such schema: opening would create the store
        try c.execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", reported: false)
        defer { _ = try? c.execute(script: "ROLLBACK", reported: false) }
        return try readState(c, namespace: namespace)
    }

    /// Installs the functions of this version of Strata when the store holds another version's, or
    /// this version's installed in a schema of another name (under the store's lock, which `init`
    /// holds): a store made by an older Strata, or renamed since, gets the definitions before
    /// anything runs them. `stored`: the `functionsVersion` the store holds.
    ///
    /// - Throws: `.incompatibleStore` when `readOnly` and the functions name another schema's
    ///   tables (they would fail, or read a namesake's).
    static func refreshFunctions(_ c: PGConnection, stored: String?, namespace: String, readOnly: Bool) throws {
        let current = PostgresFunctions.installedVersion(namespace)
        guard let stored, stored != current else { return }
        guard !readOnly else {
            guard PostgresFunctions.namesAnotherSchema(stored, namespace) else { return }
            throw StrataError(.incompatibleStore, "the PostgreSQL schema '\(namespace)' holds functions installed under another name of the "
                              + "schema: opening the store once without readOnly installs them again")
        }
        try c.execute(script: "BEGIN")
        do {
            for sql in PostgresFunctions.definitions(schema: namespace) { try c.execute(script: sql, reported: false) }
            try setMetadata(c, "functionsVersion", current)
            try c.execute(script: "COMMIT")
        } catch {
            _ = try? c.execute(script: "ROLLBACK")
            throw error
        }
    }

    /// The stores this process is opening (and migrating, under the store's lock), by server,
    /// database and schema, each with the threads doing it. An open of such a store on one of
    /// those threads — a stage hook opening the store its stage migrates — would wait for the
    /// lock its own thread holds: it fails at once instead.
    enum OpensInProgress {
        private static let lock = Lock()
        nonisolated(unsafe) private static var stores: [String: [pthread_t]] = [:]
        /// The server's address, port and database a connection is on (three columns of
        /// ``PostgresStore/setUp(_:options:)``'s statement, joined by ``key(_:_:)``: kept apart, the
        /// statement resolves no text concatenation of other types, which costs a fresh connection's
        /// server about 0.1 ms).
        static let identity = "coalesce(host(inet_server_addr()), 'local'), coalesce(inet_server_port(), 0), current_database()"

        /// The server and database of ``identity``'s three columns, from column `first` of `rows`' first row.
        static func key(_ rows: PGRows, _ first: Int32) -> String {
            rows.string(0, first) + ":" + String(rows.int64(0, first + 1)) + "/" + rows.string(0, first + 2)
        }

        /// Notes that this thread opens the store of `namespace` in the database `server` names
        /// (``identity``); returns its key.
        /// - Throws: `.misuse` when this thread is opening (or migrating) it already.
        static func enter(server: String, namespace: String) throws -> String {
            let key = server + "/" + namespace
            let mine = lock.withLock { () -> Bool in
                if stores[key]?.contains(where: { pthread_equal($0, pthread_self()) != 0 }) == true { return true }
                stores[key, default: []].append(pthread_self())
                return false
            }
            if mine {
                throw StrataError(.misuse, "the PostgreSQL schema '\(namespace)' is being migrated by this thread (a stage hook opening the store its "
                                  + "stage migrates): it cannot be opened until the migration ends; a hook works through the context it is given")
            }
            return key
        }

        static func leave(_ key: String) {
            lock.withLock {
                guard var threads = stores[key], let i = threads.lastIndex(where: { pthread_equal($0, pthread_self()) != 0 }) else { return }
                threads.remove(at: i)
                stores[key] = threads.isEmpty ? nil : threads
            }
        }
    }

    /// Chooses the store's schema (configuration, the first of the connection's search_path,
    /// `public`) and sets the connection up for it (``sessionSetup(_:)``) in the same statement
    /// that asks whether the database has it and which server and database the connection is on
    /// (``OpensInProgress/identity``). Returns the schema's name, whether it exists and the server.
    static func setUp(_ c: PGConnection, options: StoreOptions) throws -> (namespace: String, exists: Bool, server: String) {
        var ns = options.postgresSchema
        if ns == nil, case .text(let path)? = try c.scalar("SELECT current_setting('search_path')") {
            ns = firstSchema(path)
        }
        let name = ns ?? "public"
        guard name.utf8.count <= PostgresDialect.maxIdentifierBytes else {
            throw StrataError(.invalid, "the PostgreSQL schema name '\(name)' is longer than PostgreSQL's 63 bytes")
        }
        c.setup = PostgresStore.sessionSetup(name)
        // to_regnamespace reads the quoted name as search_path does (a function: nothing to plan, as a subquery of pg_namespace has).
        let rows = try c.query("SELECT to_regnamespace($1) IS NOT NULL, \(OpensInProgress.identity), " + sessionSettings, c.setup[0].1)
        guard rows.count == 1 else { throw StrataError(.io, "the PostgreSQL server did not answer the connection's setup") }
        return (name, rows.int64(0, 0) != 0, OpensInProgress.key(rows, 1))
    }

    /// Sets the connection up for the store's schema (``setUp(_:options:)``) and creates the
    /// schema when the database lacks it (unless read-only). Returns its name and the server
    /// and database the connection is on.
    static func enter(_ c: PGConnection, options: StoreOptions) throws -> (namespace: String, server: String) {
        let (name, exists, server) = try setUp(c, options: options)
        if !exists {
            guard !options.readOnly else {
                throw StrataError(.io, "cannot open the PostgreSQL store read-only: its database has no schema '\(name)'")
            }
            try c.execute(script: "CREATE SCHEMA IF NOT EXISTS \(PostgresDialect().quote(name))")
        }
        return (name, server)
    }

    /// The settings of ``sessionSetup(_:)``, a select list (`$1`: the schema's quoted name).
    static let sessionSettings = "set_config('search_path', $1, false), set_config('jit', 'off', false), set_config('constraint_exclusion', 'on', false)"

    /// What every connection of a store sets first: its schema as the whole search_path, no
    /// JIT compilation (a store's statements are short; compiling one costs more than it saves),
    /// and constraint exclusion for every table: the planner leaves out a read's search for
    /// entity names its table's validated check excludes (``PostgresDialect/entityCheck(_:)``).
    static func sessionSetup(_ namespace: String) -> [(String, [SQLValue])] {
        [("SELECT " + sessionSettings, [.text(PostgresDialect().quote(namespace))])]
    }

    /// The first schema of a `search_path` setting, skipping `"$user"` and `pg_temp`/`pg_catalog`.
    static func firstSchema(_ path: String) -> String? {
        var items: [String] = []
        var current = ""
        var quoted = false
        var chars = Array(path)[...]
        while let ch = chars.first {
            chars = chars.dropFirst()
            if quoted {
                if ch == "\"" {
                    if chars.first == "\"" { current.append("\""); chars = chars.dropFirst() } else { quoted = false }
                } else { current.append(ch) }
            } else if ch == "\"" {
                quoted = true
            } else if ch == "," {
                items.append(current); current = ""
            } else if ch != " " {
                current.append(ch)
            }
        }
        items.append(current)
        return items.first { !$0.isEmpty && $0 != "$user" && $0 != "pg_temp" && $0 != "pg_catalog" }
    }

    /// Every name the layout gives PostgreSQL must fit its 63 bytes (longer ones would be cut, silently).
    static func checkNames(_ schema: Schema) throws {
        let layout = StoreLayout(schema)
        for t in layout.tables {
            let limit = PostgresDialect.maxIdentifierBytes - (t.primaryKey == [StoreLayout.key] ? 5 : 0)
            guard t.name.utf8.count <= limit else {
                throw StrataError(.schema, "the name '\(t.name)' is longer than a PostgreSQL store takes (\(limit) bytes)", entity: t.name)
            }
            for c in t.columns where c.name.utf8.count > PostgresDialect.maxIdentifierBytes {
                throw StrataError(.schema, "'\(t.name).\(c.name)': the name is longer than PostgreSQL's 63 bytes", entity: t.name, attribute: c.name)
            }
        }
    }

    /// The connection the store was opened with, until a session takes it.
    private var spare: PGConnection?
    private let spareLock = Lock()

    /// A connection of the store's own: the same database, the same namespace.
    func connect() throws -> PGConnection {
        let c = try PGConnection(uri: uri)
        c.setup = PostgresStore.sessionSetup(namespace)
        if options.readOnly { c.setup.append(("SELECT set_config('default_transaction_read_only', 'on', false)", [])) }
        for (sql, args) in c.setup { try c.execute(sql, args) }
        c.trace = trace
        return c
    }

    public func makeSession() throws -> StoreSession {
        let c = try spareLock.withLock { () throws -> PGConnection in
            defer { spare = nil }
            return try spare ?? connect()
        }
        if options.readOnly, !c.setup.contains(where: { $0.0.containsText("read_only") }) {
            c.setup.append(("SELECT set_config('default_transaction_read_only', 'on', false)", []))
            try c.execute(c.setup[c.setup.count - 1].0)
        }
        return PostgresSession(store: self, connection: c)
    }

    // MARK: Metadata

    /// What the schema holds about itself: nil when it holds nothing (it may become a store).
    func readState(_ c: PGConnection) throws -> StoredState? { try PostgresStore.readState(c, namespace: namespace) }

    /// The stored state from `catalog` (read now when nil).
    static func readState(_ c: PGConnection, namespace: String, catalog: PostgresCatalog? = nil) throws -> StoredState? {
        let catalog = try catalog ?? PostgresCatalog.read(c, locking: false)
        if catalog.tables.isEmpty, case .int(0)? = try c.scalar(PostgresDialect.objectCount) { return nil }
        guard catalog.tables.contains("strata_metadata") else {
            throw StrataError(.incompatibleStore, "the PostgreSQL schema '\(namespace)' holds tables but is not a Strata store (it has no strata_metadata table; nothing was changed)")
        }
        if let failure = catalog.metadataFailure { throw failure }
        var state = StoredState()
        state.schemaJSON = catalog.value("schema")
        state.version = catalog.value("version")
        state.versionHash = catalog.value("versionHash")
        state.storeUUID = catalog.value("storeUUID")
        state.formatVersion = catalog.value("formatVersion").flatMap { Int64($0) }
        state.entityHashesText = catalog.value("entityHashes")
        return state
    }

    static func setMetadata(_ c: PGConnection, _ key: String, _ value: String) throws {
        try c.execute(PostgresDialect.writeMetadata, [.text(key), .text(value)])
    }

    static func writeSchemaMetadata(_ c: PGConnection, schema: Schema) throws {
        try setMetadata(c, "schema", schema.jsonText)
        try setMetadata(c, "version", schema.version)
        try setMetadata(c, "versionHash", schema.versionHash)
        try setMetadata(c, "entityHashes", StoredState.entityHashesText(
            schema.entities.lazy.map { (key: $0.name, value: $0.versionHash) }))
    }

    /// The store as its open policy sees it while `init` opens it.
    private final class Opening: StoreOpening {
        let store: PostgresStore
        let connection: PGConnection
        /// What the open read of the schema, until this opening writes (or may write) anything.
        private(set) var catalog: PostgresCatalog?
        init(store: PostgresStore, connection: PGConnection, catalog: PostgresCatalog?) {
            self.store = store
            self.connection = connection
            self.catalog = catalog
        }

        var location: String { "the PostgreSQL schema '\(store.namespace)'" }
        var name: StoreName { .server(location) }
        var isReadOnly: Bool { store.options.readOnly }
        var formatVersion: Int64 { PostgresStore.formatVersion }

        /// One transaction: PostgreSQL runs DDL inside transactions.
        func create() throws {
            catalog = nil
            guard !isReadOnly else { throw StrataError(.readOnly, "\(location) is opened read-only: a store cannot be created in it") }
            let c = connection
            try c.execute(script: "BEGIN")
            do {
                for sql in PostgresDialect.metadataDDL { try c.execute(script: sql) }
                for sql in PostgresFunctions.definitions(schema: store.namespace) { try c.execute(script: sql, reported: false) }
                for sql in store.dialect.createSchema(StoreLayout(store.schema)) { try c.execute(script: sql) }
                try PostgresStore.writeSchemaMetadata(c, schema: store.schema)
                try PostgresStore.setMetadata(c, "storeUUID", UUIDText.random())
                try PostgresStore.setMetadata(c, "formatVersion", String(PostgresStore.formatVersion))
                try PostgresStore.setMetadata(c, "functionsVersion", PostgresFunctions.installedVersion(store.namespace))
                try c.execute(script: "COMMIT")
            } catch {
                _ = try? c.execute(script: "ROLLBACK")
                throw error
            }
        }

        func writeDeclaration(of schema: Schema) throws {
            catalog = nil
            guard !isReadOnly else { throw StrataError(.readOnly, "\(location) is opened read-only: its schema declaration cannot be written") }
            if connection.isInTransaction {
                try PostgresStore.writeSchemaMetadata(connection, schema: schema)
            } else {
                try connection.execute(script: "BEGIN")
                do {
                    try PostgresStore.writeSchemaMetadata(connection, schema: schema)
                    try connection.execute(script: "COMMIT")
                } catch {
                    _ = try? connection.execute(script: "ROLLBACK")
                    throw error
                }
            }
        }

        func verifyStorage(of schema: Schema) throws {
            let found = try catalog ?? PostgresCatalog.read(connection, locking: false)
            try PostgresStorageCheck.verify(found, layout: StoreLayout(schema), location: location, version: schema.version)
        }

        func migrate<T>(_ body: (StoredState?) throws -> T) throws -> T {
            catalog = nil
            guard !isReadOnly else { throw StrataError(.readOnly, "\(location) is opened read-only: it cannot be migrated") }
            let session = PostgresSession(store: store, connection: connection, schema: store.schema)
            return try session.transaction { try body(try store.readState(connection)) }
        }

        func session(schema: Schema) throws -> StoreSession {
            catalog = nil
            return PostgresSession(store: store, connection: connection, schema: schema)
        }

        /// The stage's old version, copied at its start (``PostgresPreviousVersion``): another
        /// connection cannot read it, since the stage's DDL holds the tables it changes until the
        /// stage commits.
        func committedSession(schema: Schema) throws -> StoreSession? {
            catalog = nil
            let copies = try PostgresPreviousVersion(connection, layout: StoreLayout(schema), namespace: store.namespace,
                                                     versionHash: schema.versionHash)
            return PostgresSession(store: store, connection: connection, schema: schema, previous: copies)
        }

        /// The shared plan (``StorageMigration``) spelled by ``PostgresDialect``, run inside the stage's
        /// transaction: PostgreSQL's DDL is transactional, so a failure leaves every table as it was.
        func changeStorage(_ mapping: SchemaMapping, stage: String,
                           report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws {
            catalog = nil
            let c = connection
            defer { c.forgetPrepared() }  // statements prepared on the old tables
            do {
                let migration = StorageMigration(mapping, dialect: store.dialect) { table in try PostgresMigrationConnection.indexes(c, table) }
                try StorageMigration.run(try migration.plan(), on: PostgresMigrationConnection(connection: c), stage: stage, report: report)
                // Older history reads under the new names (as `SQLiteHistoryNames.rename` on SQLite).
                try PostgresHistoryNames.rename(c, mapping)
            } catch var e as StrataError where e.code == .internal && e.postgresState != nil {
                // The steps follow the stored schema: SQL that fails on them means the tables do not
                // match it (the database is shared: someone changed them).
                e.code = .corrupt
                e.message = "the tables of \(location) do not match its stored schema (version \(mapping.old.version)): " + e.message
                throw e
            }
        }
    }
}
