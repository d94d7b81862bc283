/// Updates and deletes of existing objects, and the unique keys they change.
extension ModelContext {
    /// Applies a patch: attribute values and relationship links by name.
    public func update(id text: String, patch: UnsafeBufferPointer<UInt8>) throws {
        try live {
            try requireWritable()
            let id = try resolve(text)
            try atomically(input: patch) {
                var r = JSONReader(patch)
                try applyPatch(&r, to: id)
            }
        }
    }

    public func update(id: String, patch: String) throws {
        var patch = patch
        try patch.withUTF8 { try update(id: id, patch: $0) }
    }

    /// Reads the patch at `r` (the whole input) and appends its changes to `id`: the attribute
    /// values and the links held in its row as one update, then the other links.
    private func applyPatch(_ r: inout JSONReader, to id: ObjectID) throws {
        let e = id.entity
        guard try r.peek() == .object else {
            throw StrataError(.invalid, "expected a JSON object with the values to change", entity: e.name, path: "")
        }
        var slots: [Int] = []
        var values: [SQLValue] = []
        let path = JSONPath()
        let keys = try readObjectKeys(&r, e, path, accepting: [.id, .entity], attribute: { slots.append($0); values.append($1) }) { key, v in
            switch key {
            case .id:
                guard v == id.description else {
                    throw StrataError(.invalid, "'_id' does not match the updated object \(id)", entity: e.name, path: "/_id")
                }
            case .entity:
                guard v == e.name else {
                    throw StrataError(.invalid, "'_entity' does not match the updated object \(id)", entity: e.name, path: "/_entity")
                }
            case .onConflict:
                break  // not accepted: an unknown key of an update
            }
        }
        try r.expectEnd()
        let later = try readRowLinks(keys.links, e) { slot, target, l in
            if target == id { throw StrataError(.validation, "\(id) cannot be linked to itself through '\(l.rel.name)'", entity: e.name, attribute: l.rel.name, path: l.path.description) }
            slots.append(slot)
            values.append(target.map { .int($0.pk) } ?? .null)
        }
        if !slots.isEmpty { try appendUpdate(id, slots: slots, values: values) }
        for l in later { try applyLink(l, owner: id, isNew: false) }
    }

    /// Appends an update and keeps the unique keys of `id` current when it touches one.
    func appendUpdate(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        changes.append(.update(id, slots: slots, values: values))
        try noteKeySlots(id, slots: slots, values: values)
    }

    /// Pending changes gave `values` to `slots` of `id`: recompute its unique keys if a key slot changed.
    func noteKeySlots(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        try unique.keySlotsChanged(id, slots: slots, values: values) { id, keySlots in try session.savedValues(id, slots: keySlots) }
    }

    /// Marks an object for deletion; delete rules apply when the change is saved.
    public func delete(id text: String) throws {
        try live {
            try requireWritable()
            markDeleted(try resolve(text))
        }
    }

    func markDeleted(_ id: ObjectID) {
        changes.append(.delete(id))
        noteDeleted(id)
    }

    /// `id` is marked for deletion by the last change: it holds no unique key any more.
    func noteDeleted(_ id: ObjectID) {
        pendingDeleted.insert(id)
        unique.deleted(id)
    }
}
