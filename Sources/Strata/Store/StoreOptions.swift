/// What a store needs to open its location: the schema and the options of the
/// storage itself. The container's configuration (`Container/StoreConfiguration`)
/// adds what the layers above the store use (migration plan and hooks, history,
/// author) and hands the store these.
public struct StoreOptions: Sendable {
    public var schema: Schema
    /// A store that lives in memory only (the location is ignored).
    public var inMemory = false
    public var readOnly = false
    /// `data` attributes marked externalStorage at least this large go to files beside the store.
    public var externalStorageThreshold = 128 * 1024
    /// A PostgreSQL store's namespace (nil: the connection's `search_path`, else `public`).
    public var postgresSchema: String?

    public init(schema: Schema, inMemory: Bool = false, readOnly: Bool = false, externalStorageThreshold: Int = 128 * 1024) {
        self.schema = schema
        self.inMemory = inMemory
        self.readOnly = readOnly
        self.externalStorageThreshold = externalStorageThreshold
    }
}
