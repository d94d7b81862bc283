/// SwiftData's ModelContainer: one store opened with one schema. Safe to
/// share between threads; each thread works through its own ``ModelContext``.
public final class ModelContainer: @unchecked Sendable {
    public let store: SQLiteStore
    public var schema: Schema { store.schema }
    public let configuration: StoreConfiguration

    /// Opens or creates the store at `path` (ignored when `configuration.inMemory`).
    public init(path: String?, configuration: StoreConfiguration) throws {
        self.configuration = configuration
        store = try SQLiteStore(path: path, configuration: configuration, policy: StoreOpener(configuration: configuration))
    }

    /// A new context with its own connection (in-memory stores share one).
    public func makeContext() throws -> ModelContext {
        guard let session = try store.makeSession() as? SQLiteSession else {
            throw StrataError(.internal, "unsupported store session")
        }
        return ModelContext(container: self, session: session)
    }
}
