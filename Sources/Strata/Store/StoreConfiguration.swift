/// How a container opens its store: the schema (or migration plan) and options.
///
/// JSON form (DESIGN §3): `{"schema": {...}}` or `{"migrationPlan": {...}}`,
/// plus `"inMemory"`, `"readOnly"`, `"history"`, `"author"`,
/// `"externalStorageThreshold"` (bytes).
public struct StoreConfiguration: Sendable {
    public var schema: Schema
    /// The migration plan the configuration was made from (its current schema is `schema`).
    public var migrationPlan: MigrationPlan?
    public var inMemory = false
    public var readOnly = false
    /// `data` attributes marked externalStorage at least this large go to files beside the store.
    public var externalStorageThreshold = 128 * 1024
    /// Whether a store whose schema differs from the configured one (and is not a
    /// version of the migration plan) is migrated when the change is inferable
    /// (lightweight migration); false refuses it (`"automaticMigration": false`).
    public var automaticMigration = true
    /// The hooks of custom stages, by stage name (``setStageHooks(_:forStage:)``).
    public private(set) var stageHooks: [String: StageHooks] = [:]
    /// Receives a migration's progress events.
    public var progress: MigrationProgressHandler?

    public init(schema: Schema) { self.schema = schema }

    public static func decode(_ text: String) throws -> StoreConfiguration {
        try decode(JSONValue.parse(text))
    }

    /// Decodes UTF-8 JSON bytes (invalid UTF-8 is an error, never repaired).
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> StoreConfiguration {
        try decode(JSONValue.parse(bytes))
    }

    static func decode(_ json: JSONValue) throws -> StoreConfiguration {
        var o = try ObjectReader(json, path: JSONPath(), what: "configuration")
        let schemaJSON = o.value("schema")
        let planJSON = o.value("migrationPlan")
        var config: StoreConfiguration
        switch (schemaJSON, planJSON) {
        case (let s?, nil):
            config = StoreConfiguration(schema: try SchemaDecoder.decode(s, path: JSONPath() / "schema"))
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
        // "history" and "author" are reserved for persistent history, which this version does not
        // implement: "history": false says what happens (nothing is recorded) and is accepted;
        // "history": true and "author" (recorded only by history) are refused, never ignored.
        if try o.bool("history") == true {
            throw StrataError(.invalid, "persistent history is not implemented in this version of Strata; omit \"history\" or set it to false",
                              path: "/history")
        }
        if o.value("author") != nil {
            throw StrataError(.invalid, "\"author\" is recorded only by persistent history, which is not implemented in this version",
                              path: "/author")
        }
        config.automaticMigration = try o.bool("automaticMigration") ?? true
        if let t = try o.int("externalStorageThreshold") {
            guard t >= 0 else { throw StrataError(.invalid, "externalStorageThreshold must not be negative", path: "/externalStorageThreshold") }
            config.externalStorageThreshold = Int(t)
        }
        try o.finish()
        if config.inMemory && config.readOnly {
            throw StrataError(.invalid, "an in-memory store cannot be read-only", path: "/readOnly")
        }
        return config
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
