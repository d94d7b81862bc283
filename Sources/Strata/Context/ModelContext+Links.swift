/// Identifiers and relationship values: resolving an identifier as this context sees it
/// (pending inserts and deletes included), reading a to-one value, applying a
/// relationship value whose link is not held in the owner's row.
extension ModelContext {
    /// Resolves an identifier string of an existing object (saved or pending, not deleted).
    func resolve(_ text: String) throws -> ObjectID {
        guard let parsed = ObjectID.parse(text) else {
            throw StrataError(.invalid, "the identifier given is not one like \"Trip/1\" (the concrete entity, '/', and the key without leading zeros)")
        }
        let named = try entity(named: parsed.entity)
        switch try lookup(named, parsed.pk) {
        case .found(let id):
            guard id.entity === named else {
                throw StrataError(.invalid, "'\(text)' is not the object's identifier: it is \(id) (identifiers name the concrete entity)", entity: named.name)
            }
            return id
        case .deleted: throw StrataError(.notFound, "\(text) was deleted in this context", entity: named.name)
        case .missing: throw StrataError(.notFound, "no object \(text)", entity: named.name)
        }
    }

    /// Resolves an identifier string to an existing (saved or pending) object of `destination`'s kind.
    private func resolveReference(_ text: String, destination: Entity, path: JSONPath, from e: Entity, rel: String) throws -> ObjectID {
        guard let parsed = ObjectID.parse(text) else {
            throw StrataError(.invalid, "the value is not an identifier like \"\(destination.name)/1\" (the concrete entity, '/', and the key without leading zeros)",
                              entity: e.name, attribute: rel, path: path.description)
        }
        guard let named = schema.entity(named: parsed.entity) else {
            throw StrataError(.invalid, "the identifier names an entity the schema does not have", entity: e.name, attribute: rel, path: path.description)
        }
        guard named.isKind(of: destination) else {
            throw StrataError(.validation, "'\(e.name).\(rel)' links to '\(destination.name)' objects, not '\(named.name)'", entity: e.name, attribute: rel, path: path.description)
        }
        switch try lookup(named, parsed.pk) {
        case .found(let id):
            guard id.entity === named else {
                throw StrataError(.invalid, "'\(text)' is not the object's identifier: it is \(id) (identifiers name the concrete entity)",
                                  entity: e.name, attribute: rel, path: path.description)
            }
            return id
        case .deleted: throw StrataError(.notFound, "\(text) is deleted in this context", entity: e.name, attribute: rel, path: path.description)
        case .missing: throw StrataError(.notFound, "no object \(text)", entity: e.name, attribute: rel, path: path.description)
        }
    }

    private enum Lookup { case found(ObjectID), deleted, missing }

    /// An object of `named`'s kind with key `pk`, as this context sees it (pending inserts and deletes included).
    private func lookup(_ named: Entity, _ pk: Int64) throws -> Lookup {
        let probe = ObjectID(entity: named, pk: pk)
        if pendingDeleted.contains(probe) { return .deleted }
        if let concrete = pendingInserted[probe]?.entity {
            return concrete.isKind(of: named) ? .found(ObjectID(entity: concrete, pk: pk)) : .missing
        }
        guard let concrete = try session.concreteEntity(root: named.root, pk: pk), concrete.isKind(of: named) else { return .missing }
        return .found(ObjectID(entity: concrete, pk: pk))
    }

    /// A to-one value: null, an identifier, or a nested object to insert.
    func readToOne(_ r: inout JSONReader, _ rel: Relationship, _ e: Entity, _ path: JSONPath, link: (column: String, owner: ObjectID)? = nil) throws -> ObjectID? {
        switch try r.peek() {
        case .null:
            try r.readNull()
            return nil
        case .string:
            return try resolveReference(try r.readString(), destination: rel.destination, path: path, from: e, rel: rel.name)
        case .object:
            return try decodeInsert(&r, declared: rel.destination, path: path, link: link)
        default:
            throw StrataError(.validation, "'\(e.name).\(rel.name)' takes an identifier string, an object\(rel.isToMany ? "" : " or null")", entity: e.name, attribute: rel.name, path: path.description)
        }
    }

    /// Applies a relationship value whose link is not a column of the owner's row.
    func applyLink(_ l: PendingLink, owner: ObjectID, isNew: Bool) throws {
        var r = l.reader
        let rel = l.rel
        var nestedLink: (column: String, owner: ObjectID)?
        if rel.placement == .inInverseRows, let inv = rel.inverse { nestedLink = (inv.name, owner) }
        var targets: [ObjectID] = []
        var needsSet = !isNew
        if rel.isToMany {
            guard try r.peek() == .array else {
                if try r.peek() == .null, !isNew {
                    try r.readNull()
                    changes.append(.setRelated(owner, rel, []))
                    return
                }
                throw StrataError(.validation, "'\(owner.entity.name).\(rel.name)' is to-many and takes an array", entity: owner.entity.name, attribute: rel.name, path: l.path.description)
            }
            try r.readArray { r, i in
                if try r.peek() == .null {
                    throw StrataError(.validation, "'\(owner.entity.name).\(rel.name)' cannot hold null", entity: owner.entity.name, attribute: rel.name, path: (l.path / i).description)
                }
                let nested = try r.peek() == .object
                guard let t = try readToOne(&r, rel, owner.entity, l.path / i, link: nestedLink) else { return }
                if !nested || nestedLink == nil { needsSet = true }
                // Room for a few at once (most lists are short): one allocation, not one per growth.
                if targets.isEmpty { targets.reserveCapacity(8) }
                if !targets.contains(t) { targets.append(t) }
            }
        } else {
            let nested = try r.peek() == .object
            if let t = try readToOne(&r, rel, owner.entity, l.path, link: nestedLink) {
                targets.append(t)
                if !nested || nestedLink == nil { needsSet = true }
            }
        }
        if needsSet { try relate(owner, rel, targets) }
    }

    /// Replaces the objects related through a relationship whose link is not a column of the owner's row.
    func relate(_ owner: ObjectID, _ rel: Relationship, _ targets: [ObjectID]) throws {
        changes.append(.setRelated(owner, rel, targets))
        // The link lives in the targets' rows: it may be part of their unique keys.
        if rel.placement == .inInverseRows, let col = rel.inverse?.name {
            for t in targets {
                if let slot = t.entity.slotByName[col] { try noteKeySlots(t, slots: [slot], values: [.int(owner.pk)]) }
            }
        }
    }

    /// The objects `id` is related to through `rel`, as this context sees them (pending
    /// changes included), in key order.
    func related(_ id: ObjectID, _ rel: Relationship) throws -> [ObjectID] {
        try live {
            guard let ids = try session.related(id, rel, pending: pendingReplay()) else {
                throw StrataError(.notFound, "no object \(id)", entity: id.entity.name)
            }
            return ids
        }
    }

    /// Relates `id` to `targets` (existing objects) through `rel`, a relationship of its entity,
    /// as a patch naming `rel` with their identifiers does: a to-one takes one, or none to clear it.
    func setRelated(_ id: ObjectID, _ rel: Relationship, to targets: [ObjectID]) throws {
        try live {
            try requireWritable()
            try atomically {
                guard rel.isHeldInRow, let slot = id.entity.slotByName[rel.name] else { return try relate(id, rel, targets) }
                if targets.first == id {
                    throw StrataError(.validation, "\(id) cannot be linked to itself through '\(rel.name)'", entity: id.entity.name,
                                      attribute: rel.name, path: (JSONPath() / rel.name).description)
                }
                try appendUpdate(id, slots: [slot], values: [targets.first.map { .int($0.pk) } ?? .null])
            }
        }
    }
}
