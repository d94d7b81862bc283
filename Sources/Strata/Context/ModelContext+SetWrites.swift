/// Set-based writes (`strata_update_where`, `strata_delete_where`): the objects a predicate
/// matches when the call is made (pending changes included) get the same values, or are
/// marked for deletion, as one pending change, which a save (and a read's overlay) writes
/// with one statement per table; the rules of ordinary updates and deletes apply to each
/// object (validation, unique keys, delete rules, history).
extension ModelContext {
    /// The keys of an update request besides `set` (those of `strata_delete_where`'s request).
    private static let selectionKeys = ["predicate", "bindings", "includeSubentities"]

    /// `strata_update_where`: gives every object of `entity` (and, unless
    /// `"includeSubentities": false`, its subentities) that the request's predicate matches the
    /// values of its `"set"` object, read as `update(id:patch:)` reads a patch (attributes,
    /// composites whole, to-one relationships whose link the object's row holds). All or
    /// nothing; returns how many objects matched (and were updated).
    @discardableResult
    public func update(entity name: String, requestJSON json: UnsafeBufferPointer<UInt8>) throws -> Int {
        try live {
            try requireWritable()
            let e = try entity(named: name)
            return try atomically(input: json) {
                var r = JSONReader(json)
                let (descriptor, setReader) = try readSetRequest(&r, e)
                return try applySet(setReader, to: descriptor)
            }
        }
    }

    public func update(entity name: String, request: String) throws -> Int {
        var request = request
        return try request.withUTF8 { try update(entity: name, requestJSON: $0) }
    }

    /// Reads an update request: the selection (`predicate`, `bindings`, `includeSubentities`)
    /// as a fetch descriptor of `e`, and where the `set` object starts.
    private func readSetRequest(_ r: inout JSONReader, _ e: Entity) throws -> (FetchDescriptor, JSONReader) {
        guard try r.peek() == .object else {
            throw StrataError(.invalid, "expected a JSON object {\"predicate\": …, \"set\": {…}} as the update request", entity: e.name, path: "")
        }
        var members: [(String, JSONValue)] = [("entity", .string(e.name))]
        var set: JSONReader?
        var seen: Set<String> = []
        try r.readObject(checkDuplicates: false) { r, key in
            guard seen.insert(key).inserted else {
                throw StrataError(.invalid, "duplicate key '\(key)' in the update request", entity: e.name, path: (JSONPath() / key).description)
            }
            if key == "set" {
                set = r
                try r.skipValue()
            } else if ModelContext.selectionKeys.contains(key) {
                members.append((key, try r.readValue(at: JSONPath() / key)))
            } else {
                throw StrataError(.invalid, "unknown key '\(key)' in the update request (known: predicate, bindings, includeSubentities, set)",
                                  entity: e.name, path: (JSONPath() / key).description)
            }
        }
        try r.expectEnd()
        guard let set else {
            throw StrataError(.invalid, "the update request has no 'set' (an object of the attributes to change and their values)", entity: e.name, path: "/set")
        }
        return (try FetchDescriptor.decode(.object(members), schema: schema, predicatePath: JSONPath() / "predicate"), set)
    }

    /// Reads the `set` object at `r` and appends one change giving its values to every object
    /// `descriptor` matches; returns their number.
    private func applySet(_ reader: JSONReader, to descriptor: FetchDescriptor) throws -> Int {
        let e = descriptor.entity
        var r = reader
        let path = JSONPath() / "set"
        guard try r.peek() == .object else {
            throw StrataError(.invalid, "'set' must be an object of the attributes to change and their values", entity: e.name, path: path.description)
        }
        var slots: [Int] = []
        var values: [SQLValue] = []
        let keys = try readObjectKeys(&r, e, path, accepting: [], attribute: { slots.append($0); values.append($1) }) { _, _ in }
        for l in keys.links where !(l.rel.isHeldInRow && e.slotByName[l.rel.name] != nil) {
            let kind = l.rel.isToMany ? "a to-many relationship" : "a to-one relationship whose link the related object's row holds"
            throw StrataError(.invalid, "'\(e.name).\(l.rel.name)' is \(kind): strata_update_where sets attributes and to-one relationships "
                              + "held in the object's row; set it on each object with strata_update", entity: e.name, attribute: l.rel.name, path: l.path.description)
        }
        guard !slots.isEmpty || !keys.links.isEmpty else {
            throw StrataError(.invalid, "'set' names no stored attribute or relationship to change", entity: e.name, path: path.description)
        }
        // The matched objects, as the context sees them now.
        let ids = try session.identifierList(descriptor, pending: pendingReplay())
        if !keys.links.isEmpty {
            let matched = Set(ids)
            _ = try readRowLinks(keys.links, e) { slot, target, l in
                if let target, matched.contains(target) {
                    throw StrataError(.validation, "\(target) cannot be linked to itself through '\(l.rel.name)' (it is one of the objects updated)",
                                      entity: e.name, attribute: l.rel.name, path: l.path.description)
                }
                slots.append(slot)
                values.append(target.map { .int($0.pk) } ?? .null)
            }
        }
        guard !ids.isEmpty else { return 0 }
        for id in ids where !id.entity.uniqueSlotSets.isEmpty {
            try noteKeySlots(id, slots: id.entity.slots(slots, of: e), values: values)
        }
        changes.append(.updateSet(e, ids, slots: slots, values: values))
        return ids.count
    }

    /// Marks every object matching a descriptor for deletion as one change (delete rules
    /// apply when saved), all or nothing. Returns how many objects matched (not counting
    /// those their cascades reach).
    @discardableResult
    public func delete(matching descriptor: FetchDescriptor) throws -> Int {
        try live {
            try requireWritable()
            let ids = try session.identifierList(descriptor, pending: pendingReplay(descriptor.includePendingChanges))
            let marked = ids.filter { !pendingDeleted.contains($0) }
            if marked.count == 1 {
                markDeleted(marked[0])
            } else if !marked.isEmpty {
                changes.append(.deleteSet(marked))
                for id in marked { noteDeleted(id) }
            }
            return ids.count
        }
    }
}

extension Entity {
    /// The slots in this entity (of `e`'s kind) of the columns `slots` are in `e`: a
    /// subentity numbers its own attributes before the links it inherits.
    func slots(_ slots: [Int], of e: Entity) -> [Int] {
        self === e ? slots : slots.map { slotByName[e.storedColumns[$0].name] ?? $0 }
    }
}
