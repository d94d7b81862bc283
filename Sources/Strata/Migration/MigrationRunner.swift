import Glibc

/// Runs an open's stages (DESIGN §6), each in one transaction of the store:
///
/// 1. the stored state is read again inside the transaction (another process may
///    have migrated meanwhile: a stage already done is skipped);
/// 2. willMigrate, on the stage's old schema: the stage's declarative operations,
///    then its hook; then the duplicates a new unique constraint would meet, when
///    the stage's `onDuplicates` keeps the first or last of each group;
/// 3. the storage change the mapping infers;
/// 4. didMigrate, on the new schema: the stage's hook;
/// 5. the new version's declaration.
///
/// A failure anywhere rolls the stage back: the store stays at the last completed
/// stage, and the next open resumes from there. Errors name the stage.
struct MigrationRunner {
    let stages: [PlannedStage]
    let hooks: [String: StageHooks]
    let progress: MigrationProgressHandler?
    /// The configuration's author: history records the stages' saves with it (a hook may set another).
    var author: String? = nil

    func run(on store: StoreOpening) throws {
        // While the stages run, an open of the same file on this thread (a hook's) fails at once.
        let migrating = MigrationsInProgress.enter(store.location)
        defer { MigrationsInProgress.leave(migrating) }
        for planned in stages {
            do {
                let ran = try store.migrate { stored -> Bool in
                    guard let hash = stored?.versionHash else {
                        throw StrataError(.corrupt, "\(store.name.phrase) lost its stored schema during the migration")
                    }
                    let (from, to) = (planned.from, planned.to)
                    // A stage that changes no storage is done when the store carries its new label.
                    let labeledDone = from.versionHash == to.versionHash && from.version != to.version && stored?.version == to.version
                    if hash != from.versionHash || labeledDone {
                        // Another connection ran this stage meanwhile.
                        if hash == to.versionHash { return false }
                        throw StrataError(.busy, "\(store.name.phrase) changed while it was being migrated")
                    }
                    try runStage(planned, store)
                    return true
                }
                if ran {
                    migrationLog("\(planned.name): committed")
                    emit(planned.name, "commit")
                } else {
                    migrationLog("\(planned.name): already done by another connection")
                }
            } catch var e as StrataError {
                if e.stage == nil {
                    e.stage = planned.name
                    e.message = "migration stage '\(planned.name)' (\(planned.from.version) -> \(planned.to.version)) failed: " + e.message
                }
                throw e
            }
        }
    }

    private func runStage(_ planned: PlannedStage, _ store: StoreOpening) throws {
        let name = planned.name
        migrationLog("\(name): begin (\(planned.from.version) -> \(planned.to.version))")
        emit(name, "begin")
        let hooks = self.hooks[name]
        // Beyond SwiftData: a didMigrate hook reads the old version ("fromVersion"), as committed
        // before the stage began; the store keeps it from here on.
        let previous = hooks?.didMigrate != nil ? try store.committedSession(schema: planned.from) : nil
        let operations = planned.stage?.willMigrate ?? []
        let policy = planned.stage?.onDuplicates ?? .error
        if !operations.isEmpty || hooks?.willMigrate != nil || policy != .error {
            emit(name, "willMigrate")
            let session = try store.session(schema: planned.from)
            let context = ModelContext(session: session, schema: planned.from)
            // Lent to the stage: whatever a hook kept of it fails as misuse once the stage is done with it.
            defer { context.expire() }
            // History records the stage's saves under the stage's name.
            context.name = name
            context.author = author
            for op in operations {
                migrationLog("\(name): willMigrate \(op)")
                try perform(op, context, session)
            }
            if context.hasChanges { _ = try context.save() }
            if let hook = hooks?.willMigrate {
                migrationLog("\(name): willMigrate hook")
                try call(hook, context, stage: name, which: "willMigrate")
            }
            if policy != .error {
                migrationLog("\(name): onDuplicates \(policy.rawValue)")
                try keep(policy, planned.mapping, context, session)
            }
        }
        emit(name, "storage")
        try store.changeStorage(planned.mapping, stage: name) { step, entity, done, total in
            emit(name, step, entity: entity, done: done, total: total)
        }
        if let hook = hooks?.didMigrate {
            emit(name, "didMigrate")
            let session = try store.session(schema: planned.to)
            let context = ModelContext(session: session, schema: planned.to)
            defer { context.expire() }
            context.name = name
            context.author = author
            context.previousVersion = (planned.from, previous)
            migrationLog("\(name): didMigrate hook")
            try call(hook, context, stage: name, which: "didMigrate")
        }
        try store.writeDeclaration(of: planned.to)
    }

    /// Runs a user hook; what it leaves unsaved is saved. Its failure is `.callback`; a failure
    /// of that save is the save's own (a constraint, a lost connection), as in any save.
    private func call(_ hook: StageHooks.Hook, _ context: ModelContext, stage: String, which: String) throws {
        try run(hook, context, stage: stage, which: which)
        if context.hasChanges {
            do {
                _ = try context.save()
            } catch var e as StrataError where e.stage == nil {
                e.message = "saving what the \(which) hook left unsaved: " + e.message
                throw e
            }
        }
    }

    private func run(_ hook: StageHooks.Hook, _ context: ModelContext, stage: String, which: String) throws {
        do {
            try hook(context)
        } catch let e as StrataError {
            // A status of the hook's own (a C hook's return, `StageHooks.failure`) is the message;
            // an error with a stage is another migration's, one the hook ran, and is quoted.
            let message: String
            let status: Int32?
            if case .hookFailed(let returned?)? = e.reason, e.stage == nil {
                message = "\(which) hook " + StageHooks.returned(returned)
                status = returned
            } else {
                message = "the \(which) hook failed: \(e.message)"
                status = e.hookStatus ?? (e.code == .callback ? nil : e.code.rawValue)
            }
            var out = StrataError(.callback, "stage '\(stage)': " + message, reason: .hookFailed(status: status),
                                  entity: e.entity, attribute: e.attribute)
            out.stage = stage
            throw out
        } catch {
            var out = StrataError(.callback, "stage '\(stage)': the \(which) hook failed: \(error)", reason: .hookFailed(status: nil))
            out.stage = stage
            throw out
        }
    }

    // MARK: Declarative operations

    private func perform(_ op: MigrationOperation, _ context: ModelContext, _ session: StoreSession) throws {
        switch op {
        case .deduplicate(let entityName, let by, let keep, let merge):
            guard let entity = context.schema.entity(named: entityName) else { return }
            let slots = by.compactMap { entity.slotByName[$0] }
            try deduplicate(entity, slots: slots, keepLast: keep == .last, merge: merge, context, session)
        }
    }

    /// Keeps the first (or last) object of each group of duplicates and deletes the others
    /// with their delete rules; with `merge`, their related objects move to the kept one first.
    private func deduplicate(_ entity: Entity, slots: [Int], keepLast: Bool, merge: Bool,
                             _ context: ModelContext, _ session: StoreSession) throws {
        for group in try session.duplicateGroups(entity, slots: slots) {
            guard let kept = keepLast ? group.last : group.first else { continue }
            let others = group.filter { $0 != kept }
            if merge { try mergeRelationships(into: kept, from: others, context) }
            for id in others { try context.delete(id: id.description) }
        }
    }

    /// Moves the duplicates' related objects to the kept one, as the context sees them: a
    /// to-many relationship gains the objects it lacks, an empty to-one takes the first
    /// duplicate's. Relationships are matched by name (the objects may be of two entities
    /// of a hierarchy) and must both be to-one or both to-many.
    private func mergeRelationships(into kept: ObjectID, from others: [ObjectID], _ context: ModelContext) throws {
        // The kept object's related objects, by relationship, as the merge leaves them.
        var current: [String: [ObjectID]] = [:]
        for other in others {
            var moves: [(theirs: Relationship, mine: Relationship, merged: [ObjectID])] = []
            for theirs in other.entity.relationships {
                guard let mine = kept.entity.relationshipByName[theirs.name], mine.isToMany == theirs.isToMany else { continue }
                let moving = try context.related(other, theirs)
                guard !moving.isEmpty else { continue }
                let have = try current[mine.name] ?? context.related(kept, mine)
                if mine.isToMany || have.isEmpty {
                    let merged = have + moving.filter { !have.contains($0) }
                    moves.append((theirs, mine, merged))
                    current[mine.name] = merged
                } else {
                    current[mine.name] = have
                }
            }
            // The duplicate lets go first: its delete rules (cascade) must not reach what moves.
            for m in moves { try context.setRelated(other, m.theirs, to: []) }
            for m in moves { try context.setRelated(kept, m.mine, to: m.merged) }
        }
    }

    /// Applies `onDuplicates` to the unique constraints the new version adds: among old
    /// objects sharing the constrained values, keeps the first (or last) of each group.
    private func keep(_ policy: DuplicatePolicy, _ mapping: SchemaMapping, _ context: ModelContext, _ session: StoreSession) throws {
        for e in mapping.new.entities {
            guard let o = mapping.origin(of: e) else { continue }
            var sets: [[String]] = e.ownAttributes.filter(\.isUnique).map { [$0.name] } + e.uniqueConstraints
            sets = sets.filter { !$0.isEmpty }
            for names in sets {
                // The old properties the constrained values come from; all must exist.
                var oldSlots: [Int] = []
                for n in names {
                    var oldName: String?
                    if let a = e.attributeByName[n] { oldName = mapping.origin(of: a)?.name }
                    if let r = e.relationshipByName[n] { oldName = mapping.origin(of: r)?.name }
                    guard let on = oldName, let slot = o.slotByName[on] else { oldSlots = []; break }
                    oldSlots.append(slot)
                }
                guard !oldSlots.isEmpty else { continue }
                let already = o.ownAttributes.contains { $0.isUnique && oldSlots == [o.slotByName[$0.name] ?? -1] }
                    || o.uniqueConstraints.contains { $0.compactMap { o.slotByName[$0] } == oldSlots }
                if already { continue }
                try deduplicate(o, slots: oldSlots, keepLast: policy == .keepLast, merge: false, context, session)
            }
        }
        if context.hasChanges { _ = try context.save() }
    }

    // MARK: Progress

    private func emit(_ stage: String, _ step: String, entity: String? = nil, done: Int64? = nil, total: Int64? = nil) {
        guard let progress else { return }
        var w = JSONWriter()
        w.beginObject()
        w.key("stage"); w.string(stage)
        w.key("step"); w.string(step)
        if let entity { w.key("entity"); w.string(entity) }
        if let done { w.key("done"); w.int(done) }
        if let total { w.key("total"); w.int(total) }
        w.endObject()
        progress(w.string)
    }
}

/// The store files this process is migrating (by device and inode, so that any name of a
/// file finds it), each with the thread running the migration. An open of such a file on
/// that thread — a stage hook opening the store it migrates — would wait for its own
/// write lock for ever: it fails at once instead (``ModelContainer``).
enum MigrationsInProgress {
    struct File: Hashable { let device: UInt64; let inode: UInt64 }

    private static let lock = Lock()
    nonisolated(unsafe) private static var files: [File: [pthread_t]] = [:]

    static func file(_ path: String) -> File? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return File(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// Notes that this thread migrates the file at `path` (nil for no file: an in-memory store).
    static func enter(_ path: String) -> File? {
        guard let f = file(path) else { return nil }
        lock.withLock { files[f, default: []].append(pthread_self()) }
        return f
    }

    static func leave(_ f: File?) {
        guard let f else { return }
        lock.withLock {
            guard var threads = files[f], let i = threads.lastIndex(where: { pthread_equal($0, pthread_self()) != 0 }) else { return }
            threads.remove(at: i)
            files[f] = threads.isEmpty ? nil : threads
        }
    }

    /// Whether this thread is migrating the file at `path`.
    static func isMigratedByThisThread(_ path: String) -> Bool {
        guard let f = file(path) else { return false }
        return lock.withLock { files[f]?.contains { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
}
