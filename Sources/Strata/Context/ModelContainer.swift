/// SwiftData's ModelContainer: one store opened with one schema. Safe to
/// share between threads; each thread works through its own ``ModelContext``.
public final class ModelContainer: @unchecked Sendable {
    public let store: DataStore
    public var schema: Schema { store.schema }
    public let configuration: StoreConfiguration

    /// Opens or creates the store at `path` (ignored when `configuration.inMemory`).
    public init(path: String?, configuration: StoreConfiguration) throws {
        self.configuration = configuration
        store = try SQLiteStore(path: path, configuration: configuration, policy: StoreOpener(configuration))
    }

    /// A new context with its own connection (in-memory stores share one).
    public func makeContext() throws -> ModelContext {
        ModelContext(container: self, session: try store.makeSession())
    }
}

// MARK: Dry runs

extension ModelContainer {
    /// The steps a lightweight migration from `from` to `to` (schema JSON texts) would
    /// run, as JSON `{"steps": [{"kind": …, "entity": …, "sql": [...]}, …]}`, without
    /// touching any store (Core Data's inferredMappingModel).
    ///
    /// - Throws: `.invalid` / `.schema` for a malformed schema (the path says which
    ///   argument: `/from/…` or `/to/…`); `.migration` naming the change that cannot
    ///   be inferred.
    public static func inferMigration(from: String, to: String) throws -> String {
        throw StrataError(.invalid, "strata_infer_migration is not implemented yet")
    }

    /// What opening the store at `path` with `configuration` would do, as JSON
    /// `{"status": "compatible" | "migratable" | "incompatible", "storedVersion": …,
    /// "stages": [...], "reason": …}`. Opens the file read-only; never writes.
    public static func checkStore(path: String, configuration: StoreConfiguration) throws -> String {
        throw StrataError(.invalid, "strata_check_store is not implemented yet")
    }
}
