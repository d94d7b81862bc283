/// The code a custom stage runs around its storage change (SwiftData's
/// `MigrationStage.custom(fromVersion:toVersion:willMigrate:didMigrate:)`).
///
/// `willMigrate` gets a context bound to the stage's old schema, before the
/// storage changes; `didMigrate` a context bound to the new schema, after it.
/// Both run inside the stage's one transaction: a hook that throws aborts the
/// stage, and the store stays at the previous version. Changes a hook leaves
/// unsaved are saved when it returns.
public struct StageHooks: Sendable {
    public typealias Hook = @Sendable (ModelContext) throws -> Void

    public var willMigrate: Hook?
    public var didMigrate: Hook?

    public init(willMigrate: Hook? = nil, didMigrate: Hook? = nil) {
        self.willMigrate = willMigrate
        self.didMigrate = didMigrate
    }
}

/// Receives migration progress events, each a JSON object as text, such as
/// `{"stage":"migrateV1toV2","step":"copy","entity":"Trip","done":120000,"total":1000000}`.
public typealias MigrationProgressHandler = @Sendable (String) -> Void
