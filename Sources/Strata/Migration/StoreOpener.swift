/// What opening a store with a configuration does, decided from the store's
/// stored state (``StoreOpener/decide(_:name:readOnly:formatVersion:)``).
public enum OpenDecision: Sendable {
    /// An empty database: create the current schema in it.
    case create
    /// The stored schema has the current storage (equal version hashes): open as
    /// it is; with `refreshDeclaration`, store the current declaration first
    /// (defaults, delete rules or labels differ; the storage does not).
    case open(refreshDeclaration: Bool)
    /// Migrate through these stages, in order, each in one transaction.
    case migrate([PlannedStage])
    /// The store cannot be opened: the error says why; the file is left untouched.
    case refuse(StrataError)
}

/// One stage an open runs: a stage of the plan, or the lightweight migration a
/// store needs first (a store made without the plan, or before its first version).
public struct PlannedStage: @unchecked Sendable {
    /// The stage's name (a lightweight migration outside the plan is named
    /// `lightweight <from> -> <to>`).
    public let name: String
    /// The plan's stage; nil for a lightweight migration outside the plan.
    public let stage: MigrationStage?
    public let mapping: SchemaMapping

    public var from: Schema { mapping.old }
    public var to: Schema { mapping.new }

    /// The name of a lightweight stage outside the plan (or between two versions it has no stage for).
    static func lightweightName(_ from: Schema, _ to: Schema) -> String { "lightweight \(from.version) -> \(to.version)" }
}

/// The open policy (DESIGN §6): compares what a store holds with the configured
/// schema and migration plan, and creates, opens, migrates or refuses.
///
/// - An empty database becomes a store (not when read-only).
/// - The stored version is found in the plan by its version and storage hash, or
///   by its storage hash alone (a store made before the app adopted the plan):
///   the stages from there on run. A store with the current storage and no place
///   in the plan opens as it is.
/// - Otherwise, when the change to the plan's first version (or, without a plan,
///   to the configured schema) is inferable and `automaticMigration` is on, a
///   lightweight migration runs first.
/// - A store newer than the configured schema, written in a newer format, that
///   the plan does not know and that cannot be inferred, or that needs migrating
///   while read-only: refused, naming the versions and what differs; the file is
///   left untouched. Without a plan, a change that cannot be inferred is
///   `.migration`, naming the entity, the property and the change.
public struct StoreOpener: StoreOpenPolicy {
    public let schema: Schema
    public let plan: MigrationPlan?
    public let automaticMigration: Bool
    public let hooks: [String: StageHooks]
    public let progress: MigrationProgressHandler?
    /// The author history records with the stages' saves (the configuration's).
    public var author: String?

    public init(schema: Schema, plan: MigrationPlan? = nil, automaticMigration: Bool = true,
                hooks: [String: StageHooks] = [:], progress: MigrationProgressHandler? = nil) {
        self.schema = schema
        self.plan = plan
        self.automaticMigration = automaticMigration
        self.hooks = hooks
        self.progress = progress
    }

    /// Decides, without touching the store.
    ///
    /// - Parameters:
    ///   - stored: the stored state; nil for an empty database.
    ///   - name: how messages name the store.
    ///   - formatVersion: the newest store format this library reads.
    public func decide(_ stored: StoredState?, name: StoreName, readOnly: Bool, formatVersion: Int64) -> OpenDecision {
        guard let stored else {
            guard !readOnly else {
                return .refuse(StrataError(.incompatibleStore,
                                           "\(name.phrase) is an empty database, not a Strata store; a read-only open cannot create one"))
            }
            return .create
        }
        guard let storedHash = stored.versionHash, let storedJSON = stored.schemaJSON else {
            return .refuse(StrataError(.corrupt, "\(name.phrase) has a strata_metadata table without a stored schema"))
        }
        if let format = stored.formatVersion, format > formatVersion {
            return .refuse(StrataError(.incompatibleStore,
                                       "\(name.phrase) was written by a newer Strata (store format \(format), this library reads \(formatVersion))"))
        }
        let stages: [PlannedStage]
        do {
            guard let s = try plannedStages(stored, storedHash: storedHash, storedJSON: storedJSON, name: name) else {
                return .open(refreshDeclaration: !readOnly && storedJSON != schema.jsonText)
            }
            stages = s
        } catch let e as StrataError {
            return .refuse(e)
        } catch {
            return .refuse(StrataError(.internal, "\(error)"))
        }
        if readOnly {
            return .refuse(StrataError(.readOnly, "\(name.theStore) holds version \(stored.version ?? "?") and needs migrating to "
                                       + "\(schema.version) (\(stages.map(\.name).joined(separator: ", "))); a read-only open cannot migrate it "
                                       + "(\(name.untouched))"))
        }
        return .migrate(stages)
    }

    /// The stages that carry the stored version to the current one; nil when the store opens as it is.
    func plannedStages(_ stored: StoredState, storedHash: String, storedJSON: String, name: StoreName) throws -> [PlannedStage]? {
        if let plan {
            // By version and storage, else by storage alone (the first version with it: its stages' hooks run).
            let index = plan.schemas.firstIndex { $0.version == stored.version && $0.versionHash == storedHash }
                ?? plan.schemas.firstIndex { $0.versionHash == storedHash }
            if let index { return try planStages(plan, from: index) }
            if storedHash == schema.versionHash { return nil }
        } else if storedHash == schema.versionHash {
            return nil
        }
        let old: Schema
        do { old = try SchemaDecoder.decode(storedJSON) } catch {
            throw StrataError(.corrupt, "the schema stored in \(name.phrase) cannot be read: \(error)")
        }
        // The stored hash names the storage the tables have; the stored schema must have it. When
        // they differ the metadata is damaged: decided here, once (no stage would ever find the
        // store at the version it starts from).
        guard old.versionHash == storedHash else {
            throw StrataError(.corrupt, "\(name.phrase) is damaged: its stored version hash (\(storedHash.prefix(12))…) is not the hash of its "
                              + "stored schema (version \(old.version), \(old.versionHash.prefix(12))…), so its storage is unknown "
                              + "(\(name.untouched))")
        }
        let target = plan?.schemas[0] ?? schema
        let known = plan.map { " (the migration plan's versions: \($0.schemas.map(\.version).joined(separator: ", ")))" } ?? ""
        func differences() -> String { SchemaDiff.describe(from: old, to: target).joined(separator: "; ") }
        if let plan, plan.schemas.contains(where: { $0.version == old.version }) {
            throw StrataError(.incompatibleStore, "\(name.theStore) holds a version \(old.version) whose storage differs from the migration "
                              + "plan's version \(old.version): \(differences())\(known) (\(name.untouched))")
        }
        if StoreOpener.isNewer(old.version, than: schema.version) {
            throw StrataError(.incompatibleStore, "\(name.theStore) holds version \(old.version), newer than this app's \(schema.version)"
                              + "\(known): \(differences()) (\(name.untouched))")
        }
        guard automaticMigration else {
            throw StrataError(.incompatibleStore, "\(name.theStore) holds schema version \(old.version), which differs from the configured "
                              + "version \(target.version): \(differences())\(known); automatic migration is off (\(name.untouched))")
        }
        let mapping: SchemaMapping
        do {
            mapping = try SchemaMapping.infer(from: old, to: target, history: plan.map { [old] + $0.schemas } ?? [])
        } catch var e as StrataError {
            if plan != nil {
                // The plan does not know the store, and no lightweight migration reaches its first version.
                e.code = .incompatibleStore
                e.message = "\(name.theStore) holds version \(old.version), which is none of the migration plan's versions\(known), and "
                    + "migrating it to \(target.version) cannot be inferred: \(e.message) (\(name.untouched))"
            }
            throw e
        }
        if !old.entities.isEmpty && old.entities.allSatisfy({ mapping.successor(of: $0) == nil }) {
            // Not one entity in common: another app's store, not an older version of this one.
            throw StrataError(.incompatibleStore, "\(name.theStore) holds schema version \(old.version), which has no entity of the "
                              + "configured version \(target.version) (\(old.entities.map(\.name).joined(separator: ", "))): it is not a version "
                              + "of this model, and migrating would remove every object (\(name.untouched))")
        }
        let first = PlannedStage(name: PlannedStage.lightweightName(old, target), stage: nil, mapping: mapping)
        guard let plan else { return [first] }
        return [first] + (try planStages(plan, from: 0) ?? [])
    }

    /// The plan's stages from version `index` on (a pair of versions without a stage migrates lightweight).
    private func planStages(_ plan: MigrationPlan, from index: Int) throws -> [PlannedStage]? {
        guard index < plan.schemas.count - 1 else { return nil }
        var out: [PlannedStage] = []
        for i in index..<(plan.schemas.count - 1) {
            let (a, b) = (plan.schemas[i], plan.schemas[i + 1])
            let stage = plan.stage(from: a.version)
            let name = stage?.name ?? PlannedStage.lightweightName(a, b)
            do {
                out.append(PlannedStage(name: name, stage: stage, mapping: try SchemaMapping.infer(from: a, to: b, history: plan.schemas)))
            } catch var e as StrataError {
                e.stage = name
                e.message = "stage '\(name)' (\(a.version) -> \(b.version)): " + e.message
                throw e
            }
        }
        return out
    }

    /// Whether version label `a` is newer than `b`: both dotted numbers, compared part by part.
    static func isNewer(_ a: String, than b: String) -> Bool {
        let x = a.split(separator: ".").map { Int($0) }
        let y = b.split(separator: ".").map { Int($0) }
        guard !x.contains(nil), !y.contains(nil) else { return false }
        let xs = x.compactMap { $0 }, ys = y.compactMap { $0 }
        for i in 0..<max(xs.count, ys.count) {
            let p = i < xs.count ? xs[i] : 0, q = i < ys.count ? ys[i] : 0
            if p != q { return p > q }
        }
        return false
    }

    /// Decides and has `store` carry the decision out.
    public func open(_ stored: StoredState?, _ store: StoreOpening) throws {
        switch decide(stored, name: store.name, readOnly: store.isReadOnly, formatVersion: store.formatVersion) {
        case .create: try store.create()
        case .open(let refresh):
            // The storage the stored hash names: the configured schema's, or a version of the plan with it.
            let hash = stored?.versionHash
            try store.verifyStorage(of: hash == schema.versionHash ? schema : plan?.schemas.last { $0.versionHash == hash } ?? schema)
            if refresh { try store.writeDeclaration(of: schema) }
        case .migrate(let stages):
            // The stored version's storage, checked before anything runs on it.
            if let first = stages.first { try store.verifyStorage(of: first.from) }
            try MigrationRunner(stages: stages, hooks: hooks, progress: progress, author: author).run(on: store)
        case .refuse(let error): throw error
        }
    }
}
