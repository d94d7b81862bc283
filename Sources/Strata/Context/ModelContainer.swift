/// SwiftData's ModelContainer: one store opened with one schema. Safe to
/// share between threads; each thread works through its own ``ModelContext``.
public final class ModelContainer: @unchecked Sendable {
    public let store: DataStore
    public var schema: Schema { store.schema }
    public let configuration: StoreConfiguration

    /// Opens or creates the store at `path` (ignored when `configuration.inMemory`).
    public init(path: String?, configuration: StoreConfiguration) throws {
        self.configuration = configuration
        store = try SQLiteStore(path: path, configuration: configuration, policy: StoreOpener(schema: configuration.schema, plan: configuration.migrationPlan))
    }

    /// A new context with its own connection (in-memory stores share one).
    public func makeContext() throws -> ModelContext {
        ModelContext(container: self, session: try store.makeSession())
    }
}
