/// How a container opens its store: the schema (or migration plan) and options.
///
/// JSON form (DESIGN §3): `{"schema": {...}}` or `{"migrationPlan": {...}}`,
/// plus `"inMemory"`, `"readOnly"`, `"history"`, `"author"`,
/// `"externalStorageThreshold"` (bytes), `"postgresSchema"` (a PostgreSQL store's namespace).
public struct StoreConfiguration: Sendable {
    public var schema: Schema
    /// The migration plan the configuration was made from (its current schema is `schema`).
    public var migrationPlan: MigrationPlan?
    public var inMemory = false
    public var readOnly = false
    /// Whether saves are recorded in the store's persistent history (`"history"`, on by default).
    public var history = true
    /// The author recorded with each save, unless a context sets its own (`"author"`).
    public var author: String?
    /// `data` attributes marked externalStorage at least this large go to files beside the store.
    public var externalStorageThreshold = 128 * 1024
    /// Whether a store whose schema differs from the configured one (and is not a
    /// version of the migration plan) is migrated when the change is inferable
    /// (lightweight migration); false refuses it (`"automaticMigration": false`).
    public var automaticMigration = true
    /// A PostgreSQL store's schema (namespace) in its database (`"postgresSchema"`); nil: the first
    /// schema of the connection's `search_path` (libpq's `options=-csearch_path=…`), else `public`.
    public var postgresSchema: String?
    /// The hooks of custom stages, by stage name (``setStageHooks(_:forStage:)``).
    public private(set) var stageHooks: [String: StageHooks] = [:]
    /// Receives a migration's progress events.
    public var progress: MigrationProgressHandler?

    public init(schema: Schema) { self.schema = schema }

    /// What the store itself is opened with.
    public var storeOptions: StoreOptions {
        var options = StoreOptions(schema: schema, inMemory: inMemory, readOnly: readOnly, externalStorageThreshold: externalStorageThreshold)
        options.postgresSchema = postgresSchema
        return options
    }

    public static func decode(_ text: String) throws -> StoreConfiguration {
        var text = text
        return try text.withUTF8 { try decode($0) }
    }

    /// Decodes UTF-8 JSON bytes (invalid UTF-8 is an error, never repaired).
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> StoreConfiguration {
        try decode(JSONValue.parse(bytes), source: bytes)
    }

    /// - Parameter source: the text `json` was parsed from, if at hand: the schema's minified
    ///   text (``Schema/jsonText``) is then copied from it instead of written from the tree.
    static func decode(_ json: JSONValue, source: UnsafeBufferPointer<UInt8>? = nil) throws -> StoreConfiguration {
        var o = try ObjectReader(json, path: JSONPath(), what: "configuration")
        let schemaJSON = o.value("schema")
        let planJSON = o.value("migrationPlan")
        var config: StoreConfiguration
        switch (schemaJSON, planJSON) {
        case (let s?, nil):
            let text = source.flatMap { JSONReader.minifiedMember("schema", of: $0) }
            config = StoreConfiguration(schema: try SchemaDecoder.decode(s, path: JSONPath() / "schema", text: text))
        case (nil, let p?):
            let plan = try MigrationPlan.decode(p, path: JSONPath() / "migrationPlan")
            config = StoreConfiguration(schema: plan.currentSchema)
            config.migrationPlan = plan
        case (nil, nil):
            throw StrataError(.invalid, "configuration needs 'schema' or 'migrationPlan'", path: "/schema")
        case (_?, _?):
            throw StrataError(.invalid, "configuration takes 'schema' or 'migrationPlan', not both", path: "/migrationPlan")
        }
        config.inMemory = try o.bool("inMemory") ?? false
        config.readOnly = try o.bool("readOnly") ?? false
        config.history = try o.bool("history") ?? true
        config.author = try o.string("author")
        if let a = config.author { try StoreConfiguration.checkLabel(a, "author", path: "/author") }
        config.automaticMigration = try o.bool("automaticMigration") ?? true
        if let t = try o.int("externalStorageThreshold") {
            guard t >= 0 else { throw StrataError(.invalid, "externalStorageThreshold must not be negative", path: "/externalStorageThreshold") }
            config.externalStorageThreshold = Int(t)
        }
        if let ns = try o.string("postgresSchema") {
            guard !ns.isEmpty, ns.utf8.count <= 63, !ns.utf8.contains(0) else {
                throw StrataError(.invalid, "postgresSchema must be 1 to 63 bytes of UTF-8 without NUL (a PostgreSQL schema name)", path: "/postgresSchema")
            }
            config.postgresSchema = ns
        }
        try o.finish()
        if config.inMemory && config.readOnly {
            throw StrataError(.invalid, "an in-memory store cannot be read-only", path: "/readOnly")
        }
        return config
    }

    /// Checks an author or context name: 1 to 256 characters, no NUL.
    public static func checkLabel(_ text: String, _ what: String, path: String? = nil) throws {
        guard !text.isEmpty, text.utf8.count <= 256, !text.utf8.contains(0) else {
            throw StrataError(.invalid, "\(what) must be 1 to 256 bytes of UTF-8 without NUL", path: path)
        }
    }

    /// Sets (or, with nil, removes) the hooks of the custom stage named `name`.
    ///
    /// - Throws: `.invalid` when the configuration has no migration plan, the plan has
    ///   no stage of that name (the message lists the stage names), or the stage is
    ///   lightweight (hooks run only in custom stages).
    public mutating func setStageHooks(_ hooks: StageHooks?, forStage name: String) throws {
        guard let plan = migrationPlan else {
            throw StrataError(.invalid, "stage hooks for '\(name)': the configuration has no migration plan (stages live in \"migrationPlan\")")
        }
        guard let stage = plan.stages.first(where: { $0.name == name }) else {
            let names = plan.stages.map { "'\($0.name)'" }.joined(separator: ", ")
            throw StrataError(.invalid, "the migration plan has no stage named '\(name)' (its stages: \(names.isEmpty ? "none" : names))")
        }
        guard stage.kind == .custom else {
            throw StrataError(.invalid, "stage '\(name)' is lightweight: hooks run only in a stage of \"kind\": \"custom\"")
        }
        stageHooks[name] = hooks
    }
}

extension StoreOpener {
    /// The opener of a container's configuration: its plan, hooks and progress handler, and the
    /// author its stages' hook saves carry.
    public init(_ configuration: StoreConfiguration) {
        self.init(schema: configuration.schema, plan: configuration.migrationPlan, automaticMigration: configuration.automaticMigration,
                  hooks: configuration.stageHooks, progress: configuration.progress)
        author = configuration.author
    }
}
