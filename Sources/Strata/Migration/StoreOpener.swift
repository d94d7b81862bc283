/// What opening a store with a configuration does, decided from the store's
/// stored state (``StoreOpener/decide(_:location:readOnly:formatVersion:)``).
public enum OpenDecision: Sendable {
    /// An empty database: create the current schema in it.
    case create
    /// The stored schema has the current storage (equal version hashes): open as
    /// it is; with `refreshDeclaration`, store the current declaration first
    /// (defaults, delete rules or labels differ; the storage does not).
    case open(refreshDeclaration: Bool)
    /// The store cannot be opened: the error says why; the file is left untouched.
    case refuse(StrataError)
    // Migrating through a plan's stages becomes a case of its own.
}

/// The open policy (DESIGN §6): compares what a store holds with the configured
/// schema and migration plan, and creates, opens or refuses.
///
/// - An empty database becomes a store (not when read-only).
/// - Equal version hashes: open; the stored declaration follows the configured
///   one when they differ and the store is writable.
/// - A store written in a newer format, a schema no longer readable, an older
///   version of the plan (stages are not run by this version) or another
///   schema: refused, naming the versions and what differs.
public struct StoreOpener: StoreOpenPolicy {
    public let schema: Schema
    public let plan: MigrationPlan?

    public init(schema: Schema, plan: MigrationPlan? = nil) {
        self.schema = schema
        self.plan = plan
    }

    /// Decides, without touching the store.
    ///
    /// - Parameters:
    ///   - stored: the stored state; nil for an empty database.
    ///   - location: the store's path, for messages.
    ///   - formatVersion: the newest store format this library reads.
    public func decide(_ stored: StoredState?, location: String, readOnly: Bool, formatVersion: Int64) -> OpenDecision {
        guard let stored else {
            guard !readOnly else {
                return .refuse(StrataError(.incompatibleStore,
                                           "'\(location)' is an empty database, not a Strata store; a read-only open cannot create one"))
            }
            return .create
        }
        guard let storedHash = stored.versionHash, let storedJSON = stored.schemaJSON else {
            return .refuse(StrataError(.corrupt, "'\(location)' has a strata_metadata table without a stored schema"))
        }
        if let format = stored.formatVersion, format > formatVersion {
            return .refuse(StrataError(.incompatibleStore,
                                       "'\(location)' was written by a newer Strata (store format \(format), this library reads \(formatVersion))"))
        }
        if storedHash == schema.versionHash {
            return .open(refreshDeclaration: !readOnly && storedJSON != schema.json.text)
        }
        if let plan, let older = plan.schema(withVersionHash: storedHash) {
            return .refuse(StrataError(.incompatibleStore,
                                       "the store '\(location)' holds version \(older.version) of the migration plan; migrating from version "
                                       + "\(older.version) to \(schema.version) is not implemented in this version of Strata "
                                       + "(the file was left untouched)"))
        }
        let old: Schema
        do { old = try SchemaDecoder.decode(storedJSON) } catch {
            return .refuse(StrataError(.corrupt, "the schema stored in '\(location)' cannot be read: \(error)"))
        }
        var message = "the store '\(location)' holds schema version \(old.version), which differs from the configured version "
            + "\(schema.version): " + SchemaDiff.describe(from: old, to: schema).joined(separator: "; ")
        if let plan {
            message += " (its storage is none of the migration plan's versions: \(plan.schemas.map(\.version).joined(separator: ", ")))"
        }
        return .refuse(StrataError(.incompatibleStore, message))
    }

    /// Decides and has `store` carry the decision out.
    public func open(_ stored: StoredState?, _ store: StoreOpening) throws {
        switch decide(stored, location: store.location, readOnly: store.isReadOnly, formatVersion: store.formatVersion) {
        case .create: try store.create()
        case .open(let refresh): if refresh { try store.writeDeclaration(of: schema) }
        case .refuse(let error): throw error
        }
    }
}
