/// Inserts and upserts: a new object's JSON, its unique keys against pending and saved
/// objects, and what an insert does when it meets an object saved meanwhile.
extension ModelContext {
    /// Inserts one object (with nested related objects) and returns its identifier.
    ///
    /// A collision on a unique constraint updates the existing object and
    /// returns its identifier (upsert), unless `_onConflict` says otherwise.
    public func insert(entity name: String, json: UnsafeBufferPointer<UInt8>) throws -> ObjectID {
        try live {
            try requireWritable()
            let e = try entity(named: name)
            return try atomically(input: json) {
                var r = JSONReader(json)
                guard try r.peek() == .object else {
                    throw StrataError(.invalid, "expected a JSON object for a new '\(name)'", entity: name, path: "")
                }
                let id = try decodeInsert(&r, declared: e, path: JSONPath(), link: nil)
                try r.expectEnd()
                return id
            }
        }
    }

    public func insert(entity name: String, json: String) throws -> ObjectID {
        var json = json
        return try json.withUTF8 { try insert(entity: name, json: $0) }
    }

    /// Inserts every object of a JSON array, all or nothing, returning identifiers in order.
    public func insertMany(entity name: String, json: UnsafeBufferPointer<UInt8>) throws -> [ObjectID] {
        try live {
            try requireWritable()
            let e = try entity(named: name)
            return try atomically(input: json) {
                var r = JSONReader(json)
                guard try r.peek() == .array else {
                    throw StrataError(.invalid, "expected a JSON array of '\(name)' objects", entity: name, path: "")
                }
                var ids: [ObjectID] = []
                try session.probingUniqueKeys {
                    try r.readArray { r, i in
                        guard try r.peek() == .object else {
                            throw StrataError(.invalid, "expected a JSON object at /\(i)", entity: name, path: "/\(i)")
                        }
                        ids.append(try decodeInsert(&r, declared: e, path: JSONPath() / i, link: nil))
                    }
                }
                try r.expectEnd()
                return ids
            }
        }
    }

    /// How deep objects may nest in one insert or update: every level costs stack
    /// (several kilobytes in a debug build), and no input may exhaust a thread's stack.
    static let maxNestedObjects = 48

    /// A new object as its JSON gives it, before its unique keys are resolved.
    private struct NewObject {
        /// The row: the entity's defaults, then the values given.
        var values: [SQLValue]
        /// The slots given a value: attributes, links held in the row, the link to the owner.
        var provided: SlotFlags
        /// `_onConflict`.
        var policy: ConflictPolicy
        /// `_id`, accepted only where it names the object an upsert updates.
        var givenID: String?
        /// Every relationship value, in key order.
        var links: [PendingLink]
        /// The relationship values whose links are not held in the row, applied once the
        /// object (or the one it meets on a unique key) exists.
        var later: [PendingLink]
    }

    /// Inserts the object at `r` as a `declared` (or as the subentity its `_entity` names), or
    /// resolves it to the object it meets on a unique key; returns the identifier. `link`: the
    /// object it is nested in and the column of its row that links to that owner.
    ///
    /// Passes, each on the one before: read the keys and the links held in the row; link to
    /// the owner; check required values; meet a holder of one of its unique keys, or add it.
    func decodeInsert(_ r: inout JSONReader, declared: Entity, path: JSONPath, link: (column: String, owner: ObjectID)?) throws -> ObjectID {
        insertDepth += 1
        defer { insertDepth -= 1 }
        guard insertDepth <= ModelContext.maxNestedObjects else {
            throw StrataError(.invalid, "objects nested deeper than \(ModelContext.maxNestedObjects) levels; insert the deeper ones separately and link them by identifier",
                              entity: declared.name, path: path.description)
        }
        let e = declared.subentities.isEmpty ? declared : try concreteEntity(r, declared: declared, path: path)
        var new = try readNewObject(&r, e, declared: declared, path: path)
        if let link { try linkToOwner(&new, e, link) }
        try checkRequired(new.values, e, path)
        // Unique constraints: against pending inserts (and keys pending updates set), then saved rows.
        let keys = unique.keys(e) { new.values[$0] }
        if let (other, key) = try holder(of: keys, e) {
            return try meet(other, on: key, new, e, path)
        }
        return try add(new, e, keys: keys, path)
    }

    private struct FoundEntity: Error {}

    /// Reads the concrete entity named by `_entity`, if the object has one.
    private func concreteEntity(_ r: JSONReader, declared: Entity, path: JSONPath) throws -> Entity {
        // Most inputs name the entity first: then that is the first `_entity` string, found without a scan.
        var found = r.leadingString(member: "_entity")
        // Else up to the first `_entity` string (a second `_entity` key is an error of the decode that follows).
        if found == nil {
            var scan = r
            do {
                try scan.readMembers { s, key in
                    if key.raw.map({ $0.elementsEqual(MetaKey.entity.rawValue.utf8) }) ?? (key.string == MetaKey.entity.rawValue), try s.peek() == .string {
                        found = try s.readString()
                        throw FoundEntity()
                    }
                    try s.skipValue()
                }
            } catch is FoundEntity {}
        }
        guard let name = found else { return declared }
        guard let e = schema.entity(named: name), e.isKind(of: declared) else {
            // A name the schema has is shown; other text given is not (errors do not repeat values).
            let named = schema.entity(named: name).map { "'\($0.name)'" } ?? "an entity the schema does not have"
            throw StrataError(.invalid, "'_entity' names \(named), which is not '\(declared.name)' or one of its subentities",
                              entity: declared.name, path: (path / "_entity").description)
        }
        return e
    }

    /// Reads the keys of a new `e` (declared as a `declared`), then the links held in its row.
    private func readNewObject(_ r: inout JSONReader, _ e: Entity, declared: Entity, path: JSONPath) throws -> NewObject {
        var values = e.defaultRow
        var policy = ConflictPolicy.upsert
        var givenID: String?
        let keys = try readObjectKeys(&r, e, path, accepting: [.entity, .id, .onConflict], attribute: { values[$0] = $1 }) { key, v in
            switch key {
            case .entity:
                if v != e.name && !(declared.subentities.isEmpty && v == declared.name) {
                    throw StrataError(.invalid, "'_entity' names another entity than '\(e.name)', as which the object is inserted", entity: e.name, path: (path / key.rawValue).description)
                }
            case .id:
                guard let parsed = ObjectID.parse(v) else {
                    throw StrataError(.invalid, "'_id' is not an identifier like \"\(e.name)/1\" (the concrete entity, '/', and the key without leading zeros)",
                                      entity: e.name, path: (path / key.rawValue).description)
                }
                guard parsed.entity == e.name else {
                    throw StrataError(.invalid, "'_id' names another entity than '\(e.name)', as which the object is inserted", entity: e.name, path: (path / key.rawValue).description)
                }
                givenID = v
            case .onConflict:
                guard let p = ConflictPolicy(rawValue: v) else {
                    throw StrataError(.invalid, "'_onConflict' must be \"upsert\", \"error\" or \"ignore\"", entity: e.name, path: (path / key.rawValue).description)
                }
                policy = p
            }
        }
        var provided = keys.provided
        // To-one links held in this row first: they may be part of a unique key.
        let later = try readRowLinks(keys.links, e) { slot, target, _ in
            values[slot] = target.map { .int($0.pk) } ?? .null
            provided[slot] = true
        }
        return NewObject(values: values, provided: provided, policy: policy, givenID: givenID, links: keys.links, later: later)
    }

    /// Links the object nested in `link.owner`'s relationship to its owner: an explicit inverse value must agree.
    private func linkToOwner(_ new: inout NewObject, _ e: Entity, _ link: (column: String, owner: ObjectID)) throws {
        guard let slot = memberTable(e).rowSlot(named: link.column) else { return }
        if new.provided[slot], new.values[slot] != .int(link.owner.pk), let l = new.links.first(where: { $0.rel.isHeldInRow && $0.rel.name == link.column }) {
            throw StrataError(.invalid, "'\(e.name).\(l.rel.name)' contradicts the object this one is nested in (\(link.owner)); leave it out or name that object",
                              entity: e.name, attribute: l.rel.name, path: l.path.description)
        }
        new.values[slot] = .int(link.owner.pk)
        new.provided[slot] = true
    }

    /// The first of `keys` an object of this context holds — a pending one, else a saved one
    /// neither deleted nor re-keyed here — with that object (nil: none).
    private func holder(of keys: [UniqueKey], _ e: Entity) throws -> (ObjectID, UniqueKey)? {
        for k in keys {
            if let other = unique.holder(of: k) { return (other, k) }
            if let saved = try session.findUnique(e, slots: k.slots, values: k.values),
               !pendingDeleted.contains(saved), !unique.isRekeyed(saved) {
                return (saved, k)
            }
        }
        return nil
    }

    /// A new object meets `other` on `key`, by its policy: `ignore` returns `other`, `error`
    /// fails, an upsert updates `other` (of the same entity) with the values given and returns it.
    private func meet(_ other: ObjectID, on key: UniqueKey, _ new: NewObject, _ e: Entity, _ path: JSONPath) throws -> ObjectID {
        let policy = new.policy
        let names = key.slots.map { e.storedColumns[$0].name }.joined(separator: ", ")
        if policy != .error, let given = new.givenID, given != other.description {
            throw StrataError(.invalid, "'_id' names another object than \(other), which this insert \(policy == .ignore ? "matches" : "updates") on unique (\(names))",
                              entity: e.name, path: (path / "_id").description)
        }
        switch policy {
        case .ignore:
            return other
        case .error:
            throw StrataError(.constraint, "'\(e.name)' collides with \(other) on unique (\(names))",
                              reason: .uniqueViolation(attributes: key.slots.map { e.storedColumns[$0].name }), entity: e.name,
                              attribute: key.slots.count == 1 ? names : nil, path: path.description)
        case .upsert:
            guard other.entity === e else {
                throw StrataError(.constraint, "'\(e.name)' collides with \(other), an object of another entity, on unique (\(names))",
                                  reason: .uniqueViolation(attributes: key.slots.map { e.storedColumns[$0].name }), entity: e.name, path: path.description)
            }
            let slotsSet = InsertPolicy(policy: policy, provided: new.provided).providedSlots
            if !slotsSet.isEmpty {
                changes.append(.update(other, slots: slotsSet, values: slotsSet.map { new.values[$0] }))
                // The matched key keeps its values; only slots outside it can move another unique key.
                let moved = slotsSet.filter { !key.slots.contains($0) }
                try noteKeySlots(other, slots: moved, values: moved.map { new.values[$0] })
            }
            for l in new.later { try applyLink(l, owner: other, isNew: false) }
            return other
        }
    }

    /// Adds `new` as a pending insert holding `keys` (no object of this context holds them),
    /// then applies its other links.
    private func add(_ new: NewObject, _ e: Entity, keys: [UniqueKey], _ path: JSONPath) throws -> ObjectID {
        if new.givenID != nil {
            throw StrataError(.invalid, "'_id' names an object, but this insert creates a new '\(e.name)' (Strata assigns identifiers); '_id' is accepted only where it names the object an upsert updates",
                              entity: e.name, path: (path / "_id").description)
        }
        let pk = try session.reserveKeys(root: e.root, count: 1)
        let id = ObjectID(entity: e, pk: pk)
        changes.append(.insert(id, new.values))
        pendingInserted[id] = UnownedEntity(entity: e)
        unique.inserted(id, e, row: new.values, keys: keys, policy: new.policy, provided: new.provided)
        for l in new.later { try applyLink(l, owner: id, isNew: true) }
        return id
    }

    /// Inside a save's write transaction, for a pending insert whose row a unique index
    /// refused: the object another context or process saved with the same unique values
    /// since the insert looked (nil: none), resolved as the insert would have resolved it —
    /// an upsert updates it with the values the insert gave, `"ignore"` keeps it, `"error"`
    /// (or a saved object of another entity) fails with `.constraint`.
    func savedCollision(_ id: ObjectID, _ row: [SQLValue], _ p: InsertPolicy?) throws -> SavedCollision? {
        guard let p else { return nil }
        let e = id.entity
        for k in unique.keys(e, { row[$0] }) {
            guard let other = try session.findUnique(e, slots: k.slots, values: k.values) else { continue }
            let names = k.slots.map { e.storedColumns[$0].name }.joined(separator: ", ")
            if p.policy == .error || other.entity !== e {
                let what = other.entity === e ? "" : ", an object of another entity,"
                throw StrataError(.constraint, "cannot save \(id): '\(e.name)' collides on unique (\(names)) with \(other)\(what) saved meanwhile by another context or process",
                                  reason: .uniqueViolation(attributes: k.slots.map { e.storedColumns[$0].name }), entity: e.name, attribute: k.slots.count == 1 ? names : nil)
            }
            return p.policy == .ignore ? .keep(other) : .update(other, slots: p.providedSlots)
        }
        return nil
    }
}

/// What to do when an inserted object collides with an existing one on a unique constraint.
enum ConflictPolicy: String {
    case upsert, error, ignore
}
