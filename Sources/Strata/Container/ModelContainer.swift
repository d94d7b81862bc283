/// SwiftData's ModelContainer: one store opened with one schema. Safe to
/// share between threads; each thread works through its own ``ModelContext``.
public final class ModelContainer: @unchecked Sendable {
    public let store: DataStore
    public var schema: Schema { store.schema }
    public let configuration: StoreConfiguration
    /// Observers of this container's saves and, through polling, of other writers' saves.
    public let observers: ChangeObservers

    /// Opens or creates the store at `path` (ignored when `configuration.inMemory`).
    ///
    /// Every save, those of migration stage hooks included, is recorded in the store's
    /// history (or, with `"history": false`, marks the history incomplete before it).
    ///
    /// - Throws: `.misuse` for a file this thread is migrating (a stage hook opening the store
    ///   its stage migrates, which would wait for the stage's own write lock).
    public init(path location: String?, configuration: StoreConfiguration) throws {
        let place = configuration.inMemory ? StoreLocation.file(location) : StoreLocation(location)
        let path = configuration.inMemory ? location : place.fileName
        if let path, !configuration.inMemory, MigrationsInProgress.isMigratedByThisThread(path) {
            throw StrataError(.misuse, "'\(path)' is being migrated by this thread (a stage hook opening the store its stage migrates): "
                              + "it cannot be opened until the migration ends; a hook works through the context it is given")
        }
        self.configuration = configuration
        // Before the store opens: a migration's stage hooks save through the participant too.
        let hooks = SaveHooks()
        let origin = UUIDText.random()
        if configuration.history {
            hooks.addParticipant { changes, session in try HistoryRecorder.record(&changes, session, origin: origin) }
        } else {
            hooks.addParticipant { changes, session in try HistoryRecorder.skip(&changes, session, origin: origin) }
        }
        let store: DataStore
        switch place {
        case .postgreSQL(let uri):
            store = try PostgresStore(uri: uri, options: configuration.storeOptions, policy: StoreOpener(configuration), saveHooks: hooks)
        case .file:
            store = try SQLiteStore(path: path, options: configuration.storeOptions, policy: StoreOpener(configuration), saveHooks: hooks)
        }
        self.store = store
        // Observers begin with the open container (a migration's saves come before any observer).
        let observers = ChangeObservers(schema: configuration.schema, origin: origin) { try store.makeSession() }
        self.observers = observers
        hooks.addObserver { [weak observers] changes in observers?.saved(changes) }
    }

    /// A new context with its own connection (in-memory stores share one).
    public func makeContext() throws -> ModelContext {
        ModelContext(session: try store.makeSession(), schema: schema, author: configuration.author, owner: self)
    }
}

// MARK: Dry runs

extension ModelContainer {
    /// The steps a lightweight migration from `from` to `to` (schema JSON texts) would
    /// run, as JSON `{"steps": [{"kind": …, "entity": …, "sql": [...]}, …]}`, without
    /// touching any store (Core Data's inferredMappingModel). Versions are labels: an
    /// entity or property renamed through `originalName` keeps its objects and keys.
    ///
    /// - Throws: `.invalid` / `.schema` for a malformed schema (the path starts with
    ///   `/from` or `/to`); `.migration` naming the change that cannot be inferred.
    public static func inferMigration(from: String, to: String) throws -> String {
        func schema(_ text: String, _ name: String) throws -> Schema {
            let json: JSONValue
            do { json = try JSONValue.parse(text) } catch var e as StrataError {
                e.message = "\(name) schema: " + e.message
                if e.path == nil { e.path = "/" + name }
                throw e
            }
            return try SchemaDecoder.decode(json, path: JSONPath() / name)
        }
        let old = try schema(from, "from")
        let new = try schema(to, "to")
        let mapping = try SchemaMapping.infer(from: old, to: new)
        // The same storage: opening runs no step.
        if mapping.isIdentity { return MigrationStep.json([]) }
        return MigrationStep.json(try SQLiteStore.migrationSteps(mapping))
    }

    /// What the store at `location` (a store file or a PostgreSQL URI) holds about itself:
    /// its schema's JSON, version and version hashes, read in one read-only snapshot without
    /// writing anything. Nil for an empty database (or a PostgreSQL schema that does not exist).
    /// A tool that looks at any store opens it read-only with the stored schema.
    ///
    /// - Throws: `.io` for a missing or unreadable file, `.corrupt` for a file that is not a
    ///   store (or a damaged one), as opening would.
    public static func storedState(at location: String, postgresSchema: String? = nil) throws -> StoredState? {
        var options = StoreOptions(schema: Schema(version: "", entities: [], json: .object([]), versionHash: "", pairSets: []),
                                   readOnly: true)
        options.postgresSchema = postgresSchema
        return try readStoredState(location, options: options).stored
    }

    /// The stored state of the store at `location`, the format version its store writes, and how
    /// messages name it. Only the location and `postgresSchema` of `options` are read.
    private static func readStoredState(_ location: String, options: StoreOptions)
        throws -> (stored: StoredState?, formatVersion: Int64, name: StoreName) {
        switch StoreLocation(location) {
        case .postgreSQL(let uri):
            return (try PostgresStore.storedState(uri: uri, options: options), PostgresStore.formatVersion,
                    .server("the PostgreSQL database"))
        case .file(let file):
            let path = file ?? location
            return (try SQLiteStore.storedState(path: path), SQLiteStore.formatVersion, .file(path))
        }
    }

    /// What opening the store at `path` with `configuration` would do, as JSON
    /// `{"status": "compatible" | "migratable" | "incompatible", "storedVersion": …,
    /// "currentVersion": …, "stages": [{"name", "kind", "from", "to"}], "reason": …}`.
    /// Opens the file read-only and never writes; data-dependent failures (duplicates
    /// under a new unique constraint, missing required values) show only when migrating.
    ///
    /// - Throws: `.io` when the file cannot be read; `.invalid` for a bad path.
    public static func checkStore(path location: String, configuration: StoreConfiguration) throws -> String {
        let (stored, formatVersion, name) = try readStoredState(location, options: configuration.storeOptions)
        let opener = StoreOpener(configuration)
        var w = JSONWriter()
        w.beginObject()
        func finish(_ status: String, stages: [PlannedStage] = [], reason: String? = nil) -> String {
            w.key("status"); w.string(status)
            w.key("storedVersion"); if let v = stored?.version { w.string(v) } else { w.null() }
            w.key("currentVersion"); w.string(configuration.schema.version)
            w.key("stages"); w.beginArray()
            for s in stages {
                w.beginObject()
                w.key("name"); w.string(s.name)
                w.key("kind"); w.string(s.stage?.kind.rawValue ?? MigrationStage.Kind.lightweight.rawValue)
                w.key("from"); w.string(s.from.version)
                w.key("to"); w.string(s.to.version)
                // Two versions with the same storage: the stage runs its hooks and changes no table.
                w.key("changesStorage"); w.bool(!s.mapping.isIdentity)
                w.endObject()
            }
            w.endArray()
            if let reason { w.key("reason"); w.string(reason) }
            w.endObject()
            return w.string
        }
        switch opener.decide(stored, name: name, readOnly: configuration.readOnly, formatVersion: formatVersion) {
        case .create:
            return finish("compatible", reason: "the database is empty: opening creates the store")
        case .open:
            return finish("compatible")
        case .migrate(let stages):
            return finish("migratable", stages: stages)
        case .refuse(let e):
            return finish("incompatible", reason: e.message)
        }
    }
}
