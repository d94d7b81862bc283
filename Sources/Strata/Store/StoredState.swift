/// What a store holds about itself (SQLite: the `strata_metadata` table), as a
/// store reads it when it opens. The open policy (`Migration/StoreOpener`)
/// compares it with the configuration; the store itself never decides.
///
/// Every field is what the file says, unchecked: a store file is untrusted
/// input, so a missing or ill-typed entry is nil.
public struct StoredState: Sendable, Equatable {
    public static func == (a: StoredState, b: StoredState) -> Bool {
        a.schemaJSON == b.schemaJSON && a.version == b.version && a.versionHash == b.versionHash
            && a.entityHashes == b.entityHashes && a.formatVersion == b.formatVersion && a.storeUUID == b.storeUUID
    }

    /// The JSON text of the stored schema declaration.
    public var schemaJSON: String?
    /// The stored schema's version label.
    public var version: String?
    /// The stored schema's version hash (its storage).
    public var versionHash: String?
    /// Entity name → entity version hash; nil when missing or not a JSON object of strings.
    /// Read from ``entityHashesText`` when asked for: opening a store does not need them.
    public var entityHashes: [String: String]? {
        get { StoredState.entityHashes(entityHashesText) }
        set { entityHashesText = newValue.map { StoredState.entityHashesText($0.sorted(by: { $0.key < $1.key })) } }
    }
    /// The stored entity hashes as the store holds them (a JSON object of strings, unless damaged).
    var entityHashesText: String?
    /// The store format the file was written in.
    public var formatVersion: Int64?
    public var storeUUID: String?

    /// The entity hashes' stored JSON text: an object of `name: hash` in the order given (what a
    /// store writes with its schema, and what setting ``entityHashes`` keeps).
    static func entityHashesText(_ hashes: some Sequence<(key: String, value: String)>) -> String {
        var w = JSONWriter()
        w.beginObject()
        for (name, hash) in hashes { w.key(name); w.string(hash) }
        w.endObject()
        return w.string
    }

    /// The entity hashes of their stored JSON text: nil unless it is an object of strings.
    static func entityHashes(_ text: String?) -> [String: String]? {
        guard let text, case .object(let members)? = try? JSONValue.parse(text) else { return nil }
        var hashes: [String: String] = [:]
        for (name, value) in members {
            guard case .string(let hash) = value else { return nil }
            hashes[name] = hash
        }
        return hashes.count == members.count ? hashes : nil
    }

    public init(schemaJSON: String? = nil, version: String? = nil, versionHash: String? = nil,
                entityHashes: [String: String]? = nil, formatVersion: Int64? = nil, storeUUID: String? = nil) {
        self.schemaJSON = schemaJSON
        self.version = version
        self.versionHash = versionHash
        self.formatVersion = formatVersion
        self.storeUUID = storeUUID
        self.entityHashes = entityHashes
    }
}

/// A store being opened, as its open policy sees it: what it is, and the few
/// things the policy may ask of it. The store performs them with its own
/// mechanics (locks, transactions, retries).
public protocol StoreOpening: AnyObject {
    /// The store's path (or ":memory:", or its schema on a server): what tells stores apart.
    var location: String { get }
    /// How messages name the store.
    var name: StoreName { get }
    var isReadOnly: Bool { get }
    /// The store format this library writes, and the newest it reads.
    var formatVersion: Int64 { get }
    /// Creates the configured schema in the empty database. When another
    /// connection made the database a store first, the store reads its state
    /// again and asks the policy once more (the policy does not see it).
    func create() throws
    /// Stores `schema`'s declaration (JSON, version, hashes) in place of the
    /// stored one: in one transaction of its own, or in the caller's (``migrate(_:)``).
    func writeDeclaration(of schema: Schema) throws
    /// Checks that the store's storage is exactly what it makes for `schema` (the stored
    /// version) and holds nothing else — no view, trigger or object it did not make —
    /// without scanning any table.
    /// - Throws: `.corrupt` naming what differs (the file is left untouched).
    func verifyStorage(of schema: Schema) throws

    /// Runs `body` in one write transaction, on the stored state read inside it (so
    /// that a stage starts from what another process may have committed meanwhile):
    /// committed when `body` returns, rolled back when it throws.
    func migrate<T>(_ body: (StoredState?) throws -> T) throws -> T
    /// A session on the store's opening connection that sees and writes the store as
    /// `schema` lays it out (a stage's old or new version), inside ``migrate(_:)``.
    func session(schema: Schema) throws -> StoreSession
    /// A read-only session on the store as last committed (before the running
    /// ``migrate(_:)`` transaction), laid out as `schema`: what a didMigrate hook reads
    /// of the previous version. Asked for at the stage's start, before anything of the
    /// stage runs, and used until the stage ends. Nil when the store cannot offer one
    /// (a store in memory).
    func committedSession(schema: Schema) throws -> StoreSession?
    /// Carries the storage from `mapping.old` to `mapping.new`, inside ``migrate(_:)``: the
    /// steps of ``StorageMigration``, spelled by the store's ``MigrationDialect``.
    /// `report(step, entity, done, total)` hears each step and the progress of copies.
    func changeStorage(_ mapping: SchemaMapping, stage: String,
                       report: (_ step: String, _ entity: String?, _ done: Int64?, _ total: Int64?) -> Void) throws
}

/// What a store does when it opens: given the stored state (nil for an empty
/// database, which may become a store), create, open as it is, or refuse by
/// throwing. A store calls it while it opens, under the locks it takes for that.
public protocol StoreOpenPolicy {
    func open(_ stored: StoredState?, _ store: StoreOpening) throws
}
