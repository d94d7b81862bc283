/// A context's rules for writing its pending changes through a store writer:
/// one-to-one links (a target keeps one owner), inverse links, delete rules
/// (cascade as a work list, deny, nullify, links of inverse-less
/// relationships), save-time validation (required to-one, minimum and
/// maximum counts) and the change set of what the save did.
///
/// A save replays with `writer.isSaving`; a read that includes pending changes
/// replays the same way on the store's overlay, without the checks (deny,
/// validation) and without recording: reads show pending changes as they are,
/// a save refuses what breaks a rule.
struct ChangeReplay {
    let writer: StoreWriter
    let rules: SaveRules
    private let saving: Bool
    /// For a save: what an insert refused by a unique index meets (an object saved since the
    /// context looked); nil keeps the refusal.
    private let resolve: CollisionResolver?
    /// Pending inserts that became an existing object (an upsert or ignore at save): later
    /// changes of the save that name them apply to that object.
    private var redirects: [RowKey: ObjectID] = [:]
    /// Objects whose relationships must be checked before commit (only when the schema has such checks).
    private var touched: [ObjectID] = []
    private var touchedSet: Set<ObjectID> = []
    private var deleted: Set<ObjectID> = []
    /// Deletions that a deny rule allows only if these related objects are deleted by the same save.
    private var denied: [(object: ObjectID, rel: Relationship, targets: [ObjectID])] = []
    /// What the save did.
    private(set) var changeSet = ChangeSet()
    /// Rows this replay inserted that no link of a one-to-one relationship held in rows
    /// points at yet (only for entities such a link can point at): linking one needs no
    /// statement to take it from another row, since nothing can point at a row that did
    /// not exist.
    private var unlinked: Set<RowKey> = []

    private struct RowKey: Hashable {
        let root: ObjectIdentifier
        let pk: Int64
        init(_ root: Entity, _ pk: Int64) { self.root = ObjectIdentifier(root); self.pk = pk }
    }

    init(writer: StoreWriter, rules: SaveRules, resolve: CollisionResolver? = nil) {
        self.writer = writer
        self.rules = rules
        self.saving = writer.isSaving
        self.resolve = writer.isSaving ? resolve : nil
    }

    /// Replays `changes` in order; when saving, then checks deny rules and validation.
    mutating func apply(_ changes: [PendingChange]) throws {
        if saving { changeSet.reserveCapacity(changes.count) }
        // By index, each change read in place: a copy of each (its payload retained, then
        // released) only where a redirect rewrites it.
        for i in changes.indices {
            if !redirects.isEmpty { try apply(redirect(changes[i])) } else { try apply(changes[i]) }
        }
        guard saving else { return }
        try checkDenied()
        try validate()
    }

    private mutating func apply(_ change: borrowing PendingChange) throws {
        switch change {
        case .insert(let id, let values): try insert(id, values)
        case .update(let id, let slots, let values): try update(id, slots, values)
        case .setRelated(let owner, let rel, let targets): try setRelated(owner, rel, targets)
        case .delete(let id): try delete(id)
        case .updateSet(let e, let ids, let slots, let values): try updateSet(e, ids, slots, values)
        case .deleteSet(let ids): try deleteSet(ids)
        }
    }

    // MARK: Bookkeeping

    private mutating func touch(_ id: ObjectID) {
        guard saving && rules.needsValidation else { return }
        if touchedSet.insert(id).inserted { touched.append(id) }
    }

    /// Records that `name` changed on the object `pk` of `entity`'s hierarchy (resolving its concrete entity).
    private mutating func noteUpdate(_ entity: Entity, _ pk: Int64, _ name: String) throws {
        guard saving else { return }
        let probe = ObjectID(entity: entity, pk: pk)
        if let kind = changeSet.kind(of: probe) {
            // Known: the record keeps its concrete entity.
            if kind == .updated { changeSet.recordUpdate(probe, name) }
            return
        }
        guard !deleted.contains(probe) else { return }
        let concrete = entity.root.isInHierarchy ? try writer.concreteEntity(root: entity.root, pk: pk) : entity
        guard let concrete else { return }  // a dangling link (noAction) changes no object
        changeSet.recordUpdate(ObjectID(entity: concrete, pk: pk), name)
    }

    /// A link through `rel` (held in rows of `rel.entity`) to `target` appeared or went: the target's inverse changed.
    private mutating func noteInverse(_ rel: Relationship, _ target: Int64) throws {
        guard saving, let inv = rel.inverse else { return }
        try noteUpdate(rel.destination, target, inv.name)
    }

    // MARK: Redirected inserts

    private func redirected(_ id: ObjectID) -> ObjectID { redirects[RowKey(id.entity.root, id.pk)] ?? id }

    /// `change` with the inserts that became existing objects replaced by them (links included).
    private func redirect(_ change: PendingChange) -> PendingChange {
        switch change {
        case .insert(let id, let values):
            return .insert(id, redirectLinks(id.entity, slots: nil, values))
        case .update(let id, let slots, let values):
            return .update(redirected(id), slots: slots, values: redirectLinks(id.entity, slots: slots, values))
        case .setRelated(let owner, let rel, let targets):
            return .setRelated(redirected(owner), rel, targets.map(redirected))
        case .delete(let id):
            return .delete(redirected(id))
        case .updateSet(let e, let ids, let slots, let values):
            return .updateSet(e, ids.map(redirected), slots: slots, values: redirectLinks(e, slots: slots, values))
        case .deleteSet(let ids):
            return .deleteSet(ids.map(redirected))
        }
    }

    /// Link values (in `slots`, or a whole row) that name a redirected insert.
    private func redirectLinks(_ e: Entity, slots: [Int]?, _ values: [SQLValue]) -> [SQLValue] {
        var out = values
        for (k, v) in values.enumerated() {
            guard case .int(let pk) = v, case .link(let r) = e.storedColumns[slots?[k] ?? k],
                  let to = redirects[RowKey(r.destination.root, pk)] else { continue }
            out[k] = .int(to.pk)
        }
        return out
    }

    // MARK: Inserts and updates

    private mutating func insert(_ id: ObjectID, _ values: [SQLValue]) throws {
        let e = id.entity
        do {
            try writer.insert(id, values)
        } catch let refused as StrataError where refused.isUniqueViolation {
            // Another context or process saved the same unique values since the insert looked.
            guard let resolve, let found = try resolve(id, values) else { throw refused }
            switch found {
            case .keep(let other):
                redirects[RowKey(e.root, id.pk)] = other
            case .update(let other, let slots):
                redirects[RowKey(e.root, id.pk)] = other
                try update(other, slots, slots.map { values[$0] })
            }
            return
        }
        if saving { changeSet.recordInsert(id) }
        touch(id)
        let plan = rules.plan(e)
        if plan.isOneToOneTarget { unlinked.insert(RowKey(e.root, id.pk)) }
        for slot in plan.linkSlots {
            guard case .int(let target) = values[slot], case .link(let r) = e.storedColumns[slot] else { continue }
            try linked(id, r, to: target)
        }
    }

    private mutating func update(_ id: ObjectID, _ slots: [Int], _ values: [SQLValue]) throws {
        let before = try beforeUpdate(id, slots, values)
        try writer.update(id, slots: slots, values: values)
        try afterUpdate(id, slots, values, before)
    }

    /// What an update of `id` does before it writes: links that move take one from their
    /// previous targets; returns the old values history records (`historyValues`).
    private mutating func beforeUpdate(_ id: ObjectID, _ slots: [Int], _ values: [SQLValue]) throws -> [SQLValue] {
        let e = id.entity
        let plan = rules.plan(e)
        // Links that move: their previous targets lose one.
        if saving && !plan.linkSlots.isEmpty {
            let linkSlots = slots.indices.filter { plan.linkSlots.contains(slots[$0]) }
            let previous = linkSlots.isEmpty ? [] : try writer.values(id, slots: linkSlots.map { slots[$0] })
            for (k, old) in zip(linkSlots, previous) {
                guard case .int(let target) = old, values[k] != old, case .link(let r) = e.storedColumns[slots[k]] else { continue }
                if let inv = r.inverse, ChangeReplay.losingALinkNeedsCheck(inv) { touch(ObjectID(entity: r.destination, pk: target)) }
                try noteInverse(r, target)
            }
        }
        // Attributes whose old and new values history records (`historyValues`).
        guard saving && !plan.valueSlots.isEmpty && changeSet.kind(of: id) != .inserted else { return [] }
        let valueSlots = slots.filter { plan.valueSlots.contains($0) }
        return valueSlots.isEmpty ? [] : try writer.values(id, slots: valueSlots)
    }

    /// Records an update of `id` written after ``beforeUpdate`` (which returned `before`): the
    /// change set, the old and new values, the checks at save, and the links it makes.
    private mutating func afterUpdate(_ id: ObjectID, _ slots: [Int], _ values: [SQLValue], _ before: [SQLValue]) throws {
        let e = id.entity
        let plan = rules.plan(e)
        if saving { changeSet.recordUpdate(id, slots.map { e.storedColumns[$0].changeName }) }
        if !before.isEmpty {
            let valueIndexes = slots.indices.filter { plan.valueSlots.contains(slots[$0]) }
            let changed = valueIndexes.map { slots[$0] }
            changeSet.recordValues(id, old: e.compositeValues(Array(zip(changed, before)).map { (slot: $0.0, value: $0.1) }),
                                   new: e.compositeValues(zip(changed, valueIndexes).map { (slot: $0.0, value: values[$0.1]) }))
        }
        touch(id)
        guard !plan.linkSlots.isEmpty else { return }
        for k in slots.indices where plan.linkSlots.contains(slots[k]) {
            guard case .int(let target) = values[k], case .link(let r) = e.storedColumns[slots[k]] else { continue }
            try linked(id, r, to: target)
        }
    }

    /// Gives `values` to `slots` (of `e`) of every object of `ids` (of `e`'s kind): one
    /// statement for the table, and for each object the bookkeeping of ``update``. An object
    /// whose concrete entity has a unique constraint over a slot written is updated by itself,
    /// so that a violation names it as ``update`` does (such a set succeeds for one object,
    /// or with null values, only).
    private mutating func updateSet(_ e: Entity, _ ids: [ObjectID], _ slots: [Int], _ values: [SQLValue]) throws {
        var mappings: [ObjectIdentifier: (slots: [Int], alone: Bool)] = [:]
        var together: [(id: ObjectID, slots: [Int], before: [SQLValue])] = []
        for id in ids {
            let c = id.entity
            let mapped: (slots: [Int], alone: Bool)
            if let m = mappings[ObjectIdentifier(c)] { mapped = m } else {
                let own = c.slots(slots, of: e)
                mapped = (own, c.uniqueSlotSets.contains { $0.contains(where: own.contains) })
                mappings[ObjectIdentifier(c)] = mapped
            }
            if mapped.alone {
                try update(id, mapped.slots, values)
            } else {
                together.append((id, mapped.slots, try beforeUpdate(id, mapped.slots, values)))
            }
        }
        guard !together.isEmpty else { return }
        try writer.updateRows(e, keys: together.map(\.id.pk), slots: slots, values: values)
        for t in together { try afterUpdate(t.id, t.slots, values, t.before) }
    }

    /// `id`'s row now links to `target` through `r` (a link held in the row).
    private mutating func linked(_ id: ObjectID, _ r: Relationship, to target: Int64) throws {
        try noteInverse(r, target)
        guard let inv = r.inverse else { return }
        if !inv.isToMany {
            // One-to-one: no other row may keep pointing at the same target
            // (none does when the target is a row this replay inserted and nothing linked yet).
            if unlinked.remove(RowKey(r.destination.root, target)) != nil { return }
            for other in try writer.clearLinks(r, to: target, keeping: [id.pk]) {
                if saving { changeSet.recordUpdate(other, r.name) }
                if !r.isOptional { touch(other) }
            }
        } else if inv.minimumModelCount != nil || inv.maximumModelCount != nil {
            // The target's to-many count changes: validate it when bounded.
            touch(ObjectID(entity: r.destination, pk: target))
        }
    }

    /// Whether losing a link through `rel` may break a check at save (a minimum count or a required to-one).
    static func losingALinkNeedsCheck(_ rel: Relationship) -> Bool {
        rel.isToMany ? rel.minimumModelCount != nil : !rel.isOptional
    }

    /// Replaces the objects `owner` relates to through `rel` (a link not held in the owner's row).
    private mutating func setRelated(_ owner: ObjectID, _ rel: Relationship, _ targets: [ObjectID]) throws {
        var changed = false
        switch rel.placement {
        case .inRow:
            let old = try writer.links(rel, rows: [owner]).first ?? nil
            let new = targets.first?.pk
            if let new, !unlinked.isEmpty { unlinked.remove(RowKey(rel.destination.root, new)) }
            try writer.setLinks(rel, rows: [owner.pk], to: new)
            if old != new {
                changed = true
                if let old { try noteInverse(rel, old) }
                if let new { try noteInverse(rel, new) }
            }
        case .inInverseRows:
            // The link lives in the targets' rows, through the inverse.
            guard let inv = rel.inverse else { return }
            if saving {
                // What the save changes (a read's replay needs none of it).
                for (t, old) in zip(targets, try writer.links(inv, rows: targets)) where old != owner.pk {
                    changed = true
                    changeSet.recordUpdate(t, inv.name)
                    if let old {
                        // Taken from another owner, which holds one link fewer.
                        if ChangeReplay.losingALinkNeedsCheck(rel) { touch(ObjectID(entity: rel.entity, pk: old)) }
                        try noteUpdate(rel.entity, old, rel.name)
                    }
                }
            }
            for let_go in try writer.clearLinks(inv, to: owner.pk, keeping: targets.map(\.pk)) {
                changed = true
                if saving { changeSet.recordUpdate(let_go, inv.name) }
                if !inv.isOptional { touch(let_go) }
            }
            if !unlinked.isEmpty { unlinked.remove(RowKey(owner.entity.root, owner.pk)) }
            try writer.setLinks(inv, rows: targets.map(\.pk), to: owner.pk)
        case .inPairs:
            let before = saving ? try writer.related(owner, rel) : []
            let bounded = rel.inverse.map { $0.minimumModelCount != nil || $0.maximumModelCount != nil } ?? false
            _ = try writer.removePairs(rel, pk: owner.pk, ownerSide: true)
            try writer.addPairs(rel, owner: owner.pk, targets: targets.map(\.pk))
            let beforeSet = Set(before), afterSet = Set(targets)
            for t in before where !afterSet.contains(t) {
                changed = true
                if let inv = rel.inverse, saving { changeSet.recordUpdate(t, inv.name) }
                if bounded { touch(t) }
            }
            for t in targets where !beforeSet.contains(t) {
                changed = true
                if let inv = rel.inverse, saving { changeSet.recordUpdate(t, inv.name) }
                if bounded { touch(t) }
            }
        }
        if changed && saving { changeSet.recordUpdate(owner, rel.name) }
        touch(owner)
    }

    // MARK: Delete rules

    /// Deletes an object and, through cascade rules, the objects it reaches: a work list,
    /// not recursion, so a chain of any length cannot exhaust the stack.
    private mutating func delete(_ requested: ObjectID) throws {
        var work: [ObjectID] = [requested]
        while let next = work.popLast() {
            var cascades: [ObjectID] = []
            if let id = try prepareDeletion(next, cascades: &cascades) { try writer.deleteRow(id) }
            work.append(contentsOf: cascades.reversed())
        }
    }

    /// Deletes objects and, through cascade rules, the objects they reach, one step of the
    /// cascade at a time: the rows of a step go with one statement per table.
    private mutating func deleteSet(_ ids: [ObjectID]) throws {
        var work = ids
        while !work.isEmpty {
            var rows: [ObjectID] = []
            var cascades: [ObjectID] = []
            for requested in work {
                if let id = try prepareDeletion(requested, cascades: &cascades) { rows.append(id) }
            }
            try writer.deleteRows(rows)
            work = cascades
        }
    }

    /// Applies the delete rules of one object and records its deletion, adding the objects
    /// its cascades reach to `cascades`; returns the object (its concrete entity), whose row
    /// the caller deletes, or nil when it is deleted already or missing.
    private mutating func prepareDeletion(_ requested: ObjectID, cascades: inout [ObjectID]) throws -> ObjectID? {
        guard !deleted.contains(requested) else { return nil }
        // The concrete entity from the row (cascades reach subentities).
        guard let e = try writer.concreteEntity(root: requested.entity.root, pk: requested.pk) else { return nil }
        let id = ObjectID(entity: e, pk: requested.pk)
        deleted.insert(id)
        let plan = rules.plan(e)
        var tombstone: [(name: String, value: SQLValue)] = []
        if saving && !plan.preservedSlots.isEmpty {
            let values = try writer.values(id, slots: plan.preservedSlots)
            tombstone = e.compositeValues(zip(plan.preservedSlots, values).map { (slot: $0.0, value: $0.1) })
        }

        for rel in e.relationships {
            let targets = try writer.related(id, rel).filter { !deleted.contains($0) }
            switch rel.deleteRule {
            case .deny:
                // Checked once every deletion of the save is applied: related objects the same
                // save deletes do not count, whatever the order (`checkDenied`). A read's replay
                // shows the deletion; only a save refuses it.
                if !targets.isEmpty && saving { denied.append((id, rel, targets)) }
            case .cascade:
                cascades += targets
            case .nullify:
                try nullify(id, rel, targets)
            case .noAction:
                break
            }
        }
        // Links from relationships without an inverse that point at this object.
        for rel in rules.inverseLessLinks where e.isKind(of: rel.destination) {
            switch rel.placement {
            case .inRow:
                for owner in try writer.clearLinks(rel, to: id.pk, keeping: []) where saving {
                    changeSet.recordUpdate(owner, rel.name)
                }
            case .inPairs:
                for owner in try writer.removePairs(rel, pk: id.pk, ownerSide: false) {
                    try noteUpdate(rel.entity, owner, rel.name)
                }
            case .inInverseRows:
                break
            }
        }
        if saving { changeSet.recordDelete(id, tombstone: tombstone) }
        return id
    }

    /// Unlinks `targets` from the deleted `id`: they lose a link through `rel`'s inverse.
    private mutating func nullify(_ id: ObjectID, _ rel: Relationship, _ targets: [ObjectID]) throws {
        let inv = rel.inverse
        switch rel.placement {
        case .inRow:
            // The link lives in the deleted row; the targets' to-many changes.
            if let inv, inv.minimumModelCount != nil { for t in targets { touch(t) } }
        case .inInverseRows:
            guard let inv else { return }
            for t in try writer.clearLinks(inv, to: id.pk, keeping: []) where !inv.isOptional { touch(t) }
        case .inPairs:
            _ = try writer.removePairs(rel, pk: id.pk, ownerSide: true)
            if let inv, inv.minimumModelCount != nil { for t in targets { touch(t) } }
        }
        if saving, let inv { for t in targets { changeSet.recordUpdate(t, inv.name) } }
    }

    /// Fails when a deny rule still has related objects that the save did not delete.
    private func checkDenied() throws {
        for (id, rel, targets) in denied {
            let remaining = targets.filter { !deleted.contains($0) }
            guard let first = remaining.first else { continue }
            throw StrataError(.constraint, "cannot delete \(id): relationship '\(rel.name)' has delete rule deny and still holds \(remaining.count) object(s), e.g. \(first)",
                              entity: id.entity.name, attribute: rel.name)
        }
    }

    // MARK: Validation at save

    private func validate() throws {
        for id in touched where !deleted.contains(id) {
            let declared = id.entity
            guard rules.hierarchyNeedsValidation(declared.root) else { continue }
            guard let e = try writer.concreteEntity(root: declared.root, pk: id.pk), e.needsSaveValidation else { continue }
            let object = ObjectID(entity: e, pk: id.pk)
            for rel in e.relationships {
                if !rel.isToMany && !rel.isOptional {
                    if try writer.related(object, rel).isEmpty {
                        throw StrataError(.validation, "\(object): required relationship '\(rel.name)' is not set", entity: e.name, attribute: rel.name)
                    }
                }
                if rel.isToMany, rel.minimumModelCount != nil || rel.maximumModelCount != nil {
                    let n = try writer.related(object, rel).count
                    if let mn = rel.minimumModelCount, n < mn {
                        throw StrataError(.constraint, "\(object): relationship '\(rel.name)' holds \(n) object(s), fewer than its minimumModelCount \(mn)",
                                          entity: e.name, attribute: rel.name)
                    }
                    if let mx = rel.maximumModelCount, mx > 0, n > mx {
                        throw StrataError(.constraint, "\(object): relationship '\(rel.name)' holds \(n) object(s), more than its maximumModelCount \(mx)",
                                          entity: e.name, attribute: rel.name)
                    }
                }
            }
        }
    }
}

/// What a save does with a pending insert whose unique values an object saved since holds.
enum SavedCollision {
    /// Update that object with these slots of the insert's row (an upsert).
    case update(ObjectID, slots: [Int])
    /// Keep that object as it is (`"_onConflict": "ignore"`).
    case keep(ObjectID)
}

/// Finds the saved object a pending insert (`id`, its row) collides with — nil when none,
/// so the refusal stands — or throws (`"_onConflict": "error"`). Runs inside the save's transaction.
typealias CollisionResolver = (_ id: ObjectID, _ row: [SQLValue]) throws -> SavedCollision?

/// What the replay needs to know about a schema, computed once per context.
final class SaveRules {
    /// What a replay needs of one entity's columns (a class: a replay asks for it once per
    /// change, and a class is handed out with one retain).
    final class Plan {
        /// Slots of links held in the row (to-one foreign keys).
        let linkSlots: [Int]
        /// Slots of `preserveValueOnDeletion` attributes (the tombstone of a deleted object).
        let preservedSlots: [Int]
        /// Slots of `historyValues` attributes (old and new values of updates).
        let valueSlots: [Int]
        /// Whether a link of a one-to-one relationship held in rows can point at objects of the entity.
        let isOneToOneTarget: Bool

        init(linkSlots: [Int], preservedSlots: [Int], valueSlots: [Int], isOneToOneTarget: Bool) {
            self.linkSlots = linkSlots
            self.preservedSlots = preservedSlots
            self.valueSlots = valueSlots
            self.isOneToOneTarget = isOneToOneTarget
        }
    }

    /// Whether any entity needs relationship checks at save.
    let needsValidation: Bool
    /// Relationships without an inverse: deleting their target clears them.
    let inverseLessLinks: [Relationship]
    /// Links held in rows whose inverse is to-one (one-to-one relationships).
    private let oneToOneLinks: [Relationship]
    private var plans = IdentityTable<Plan>()
    private var validatedRoots: [ObjectIdentifier: Bool] = [:]

    init(schema: Schema) {
        needsValidation = schema.entities.contains { $0.needsSaveValidation }
        inverseLessLinks = schema.entities.flatMap { $0.ownRelationships.filter { $0.inverse == nil } }
        oneToOneLinks = schema.entities.flatMap { $0.ownRelationships.filter { $0.isHeldInRow && $0.inverse.map { !$0.isToMany } == true } }
    }

    func plan(_ e: Entity) -> Plan {
        if let p = plans[ObjectIdentifier(e)] { return p }
        var linkSlots: [Int] = [], preservedSlots: [Int] = [], valueSlots: [Int] = []
        for (slot, c) in e.storedColumns.enumerated() {
            switch c {
            case .link: linkSlots.append(slot)
            case .attribute(let a):
                if a.preserveValueOnDeletion { preservedSlots.append(slot) }
                if a.historyValues { valueSlots.append(slot) }
            }
        }
        let p = Plan(linkSlots: linkSlots, preservedSlots: preservedSlots, valueSlots: valueSlots,
                     isOneToOneTarget: oneToOneLinks.contains { e.isKind(of: $0.destination) })
        plans.set(ObjectIdentifier(e), p)
        return p
    }

    func hierarchyNeedsValidation(_ root: Entity) -> Bool {
        if let v = validatedRoots[ObjectIdentifier(root)] { return v }
        let v = root.descendants.contains { $0.needsSaveValidation }
        validatedRoots[ObjectIdentifier(root)] = v
        return v
    }
}

extension Entity {
    /// Whether saving an object of this entity needs relationship checks (required to-one, min/max counts).
    var needsSaveValidation: Bool {
        relationships.contains { r in
            (!r.isToMany && !r.isOptional) || (r.isToMany && (r.minimumModelCount != nil || r.maximumModelCount != nil))
        }
    }
}
