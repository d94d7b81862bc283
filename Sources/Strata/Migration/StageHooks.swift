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

    /// The error a hook throws to fail with a status of its own, as a C hook does
    /// by returning one: `callback` with reason ``StrataError/Reason/hookFailed(status:)``.
    /// The runner names the stage and which hook in the message.
    ///
    /// ```swift
    /// StageHooks(willMigrate: { ctx in
    ///     if try ctx.fetchCount(tooMany) > 0 { throw StageHooks.failure(status: 42) }
    /// })
    /// ```
    public static func failure(status: Int32) -> StrataError {
        StrataError(.callback, "stage hook " + returned(status), reason: .hookFailed(status: status))
    }

    /// "returned 5 (STRATA_ERR_CONSTRAINT)"; a value that is no status: "returned 9999 (not a strata_status)".
    static func returned(_ status: Int32) -> String {
        let name = StrataError.Code(rawValue: status).map { "STRATA_ERR_\($0.name.uppercased())" } ?? "not a strata_status"
        return "returned \(status) (\(name))"
    }
}

/// Receives migration progress events, each a JSON object as text, such as
/// `{"stage":"migrateV1toV2","step":"copy","entity":"Trip","done":120000,"total":1000000}`.
public typealias MigrationProgressHandler = @Sendable (String) -> Void
