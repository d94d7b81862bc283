/// SwiftData's ModelContext: pending inserts, updates and deletes, applied
/// to the store in one transaction by ``save()``.
///
/// Objects go in and come out as JSON. Input is read with a pull parser
/// straight into stored values (no intermediate tree); changes wait in
/// memory as an ordered list until ``save()`` replays them in one
/// transaction. Reads see pending changes unless a request opts out.
///
/// A context is used by one thread at a time; its methods are serialized by
/// a lock, so misuse from several threads is safe but not concurrent.
public final class ModelContext {
    public let schema: Schema
    let session: StoreSession
    /// The replay's knowledge of the schema (link slots, tombstones, checks).
    let rules: SaveRules
    private(set) var changes: [PendingChange] = []
    /// The concrete entity of each pending insert; each has its `.insert` in `changes`.
    private var pendingInserted: [ObjectID: Entity] = [:]
    private var pendingDeleted: Set<ObjectID> = []
    /// The unique keys of pending inserts and of saved objects whose keys pending updates changed.
    private var unique = PendingUniqueIndex()
    let lock = Lock()

    /// A context on a store session and a schema. A container's contexts (made by
    /// `ModelContainer.makeContext`) record the configuration's `"author"` with their
    /// saves; a migration stage's hooks work on the stage's schema inside the stage's
    /// transaction (`StoreSession.transaction`), and their saves become part of it.
    public init(session: StoreSession, schema: Schema, author: String? = nil) {
        self.session = session
        self.schema = schema
        self.rules = SaveRules(schema: schema)
        self.savedAuthor = author
    }

    private var savedAuthor: String?
    private var savedName: String?

    /// The author history records with this context's saves: the configuration's
    /// `"author"` unless set here (nil: none).
    public var author: String? {
        get { lock.withLock { savedAuthor } }
        set { lock.withLock { savedAuthor = newValue } }
    }

    /// The context name history records with this context's saves (nil: none).
    public var name: String? {
        get { lock.withLock { savedName } }
        set { lock.withLock { savedName = newValue } }
    }

    /// True when there are changes not yet saved.
    public var hasChanges: Bool { lock.withLock { !changes.isEmpty } }

    // MARK: Lent contexts

    /// Set once the migration stage that lent this context to its hooks is done with it.
    private var expired = false

    /// Ends a context lent to a migration stage's hooks: its pending changes are dropped and
    /// every later call (through prepared fetches and cursors made on it too) is `.misuse`,
    /// since its session is the stage's, on the stage's schema and connection.
    func expire() {
        lock.withLock {
            expired = true
            clearPending()
        }
    }

    /// Runs `body` under the context's lock, unless the context expired.
    func live<T>(_ body: () throws -> T) throws -> T {
        try lock.withLock {
            if expired {
                throw StrataError(.misuse, "this context was lent to a migration stage's hook, which has returned: it cannot be used "
                                  + "afterwards, nor the prepared fetches made on it")
            }
            return try body()
        }
    }

    // MARK: Atomic groups

    /// Runs `body` over JSON input; if it throws, every change it made is undone.
    /// When the input is not well-formed JSON, that is the error reported
    /// (even if a value before the syntax error was already rejected).
    private func atomically<T>(input: UnsafeBufferPointer<UInt8>, _ body: () throws -> T) throws -> T {
        do {
            return try atomically(body)
        } catch let e as StrataError where !e.message.hasPrefix("malformed JSON") {
            var scan = JSONReader(input)
            try scan.skipValue()
            try scan.expectEnd()
            throw e
        }
    }

    /// Runs `body`; if it throws, every change it made is undone: its changes, its
    /// inserts (those of its `.insert` changes) and what it did to the unique keys.
    private func atomically<T>(_ body: () throws -> T) throws -> T {
        let start = changes.count
        unique.beginGroup()
        do {
            let result = try body()
            unique.endGroup()
            return result
        } catch {
            for case .insert(let id, _) in changes[start...] { pendingInserted[id] = nil }
            changes.removeSubrange(start...)
            unique.undoGroup()
            throw error
        }
    }

    // MARK: Unique keys of pending changes

    /// Appends an update and keeps the unique keys of `id` current when it touches one.
    private func appendUpdate(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        changes.append(.update(id, slots: slots, values: values))
        try noteKeySlots(id, slots: slots, values: values)
    }

    /// Pending changes gave `values` to `slots` of `id`: recompute its unique keys if a key slot changed.
    private func noteKeySlots(_ id: ObjectID, slots: [Int], values: [SQLValue]) throws {
        try unique.keySlotsChanged(id, slots: slots, values: values) { id, keySlots in try session.savedValues(id, slots: keySlots) }
    }

    func requireWritable() throws {
        if session.store.isReadOnly {
            throw StrataError(.readOnly, "the store was opened read-only")
        }
    }

    func entity(named name: String, path: String? = nil) throws -> Entity {
        guard let e = schema.entity(named: name) else {
            throw StrataError(.invalid, "unknown entity '\(name)' (the schema has: \(schema.entities.map(\.name).joined(separator: ", ")))", entity: name, path: path)
        }
        return e
    }

    // MARK: Insert

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
                try r.readArray { r, i in
                    guard try r.peek() == .object else {
                        throw StrataError(.invalid, "expected a JSON object at /\(i)", entity: name, path: "/\(i)")
                    }
                    ids.append(try decodeInsert(&r, declared: e, path: JSONPath() / i, link: nil))
                }
                try r.expectEnd()
                return ids
            }
        }
    }

    /// A deferred relationship value: where it starts in the input.
    private struct PendingLink { let rel: Relationship; let reader: JSONReader; let path: JSONPath }

    private struct FoundEntity: Error {}

    /// Reads the concrete entity named by `_entity`, if the object has one.
    private func concreteEntity(_ r: JSONReader, declared: Entity, path: JSONPath) throws -> Entity {
        var scan = r
        var found: String?
        // Up to the first `_entity` string (a second `_entity` key is an error of the decode that follows).
        do {
            try scan.readObject(checkDuplicates: false) { s, key in
                if key == "_entity", try s.peek() == .string {
                    found = try s.readString()
                    throw FoundEntity()
                }
                try s.skipValue()
            }
        } catch is FoundEntity {}
        guard let name = found else { return declared }
        guard let e = schema.entity(named: name), e.isKind(of: declared) else {
            // A name the schema has is shown; other text given is not (errors do not repeat values).
            let named = schema.entity(named: name).map { "'\($0.name)'" } ?? "an entity the schema does not have"
            throw StrataError(.invalid, "'_entity' names \(named), which is not '\(declared.name)' or one of its subentities",
                              entity: declared.name, path: (path / "_entity").description)
        }
        return e
    }

    /// Levels of nested objects being inserted right now.
    private var insertDepth = 0
    /// How deep objects may nest in one insert or update: every level costs stack
    /// (several kilobytes in a debug build), and no input may exhaust a thread's stack.
    static let maxNestedObjects = 48

    private func decodeInsert(_ r: inout JSONReader, declared: Entity, path: JSONPath, link: (column: String, owner: ObjectID)?) throws -> ObjectID {
        insertDepth += 1
        defer { insertDepth -= 1 }
        guard insertDepth <= ModelContext.maxNestedObjects else {
            throw StrataError(.invalid, "objects nested deeper than \(ModelContext.maxNestedObjects) levels; insert the deeper ones separately and link them by identifier",
                              entity: declared.name, path: path.description)
        }
        let e = declared.subentities.isEmpty ? declared : try concreteEntity(r, declared: declared, path: path)
        var values = e.defaultRow
        var provided = [Bool](repeating: false, count: values.count)
        var policy = ConflictPolicy.upsert
        var links: [PendingLink] = []
        var seenOther: Set<String> = []
        var givenID: String?
        try r.readObject(checkDuplicates: false) { r, key in
            if let slot = e.slotByName[key], case .attribute(let a) = e.storedColumns[slot] {
                if provided[slot] {
                    throw duplicateKey(key, e, path)
                }
                values[slot] = try readAttribute(&r, a, e, path, key)
                provided[slot] = true
                return
            }
            if let rel = e.relationshipByName[key] {
                if links.contains(where: { $0.rel === rel }) {
                    throw duplicateKey(key, e, path)
                }
                links.append(PendingLink(rel: rel, reader: r, path: path / key))
                try r.skipValue()
                return
            }
            // Stored attributes and relationships check duplicates above; the rest here.
            guard seenOther.insert(key).inserted else {
                throw duplicateKey(key, e, path)
            }
            if let a = e.attributeByName[key], a.isTransient {
                _ = try readAttribute(&r, a, e, path, key)  // validated, not stored
                return
            }
            switch key {
            case "_entity":
                let v = try readString(&r, path / key, e)
                if v != e.name && !(declared.subentities.isEmpty && v == declared.name) {
                    throw StrataError(.invalid, "'_entity' names another entity than '\(e.name)', as which the object is inserted", entity: e.name, path: (path / key).description)
                }
            case "_id":
                let v = try readString(&r, path / key, e)
                guard let parsed = ObjectID.parse(v) else {
                    throw StrataError(.invalid, "'_id' is not an identifier like \"\(e.name)/1\" (the concrete entity, '/', and the key without leading zeros)",
                                      entity: e.name, path: (path / key).description)
                }
                guard parsed.entity == e.name else {
                    throw StrataError(.invalid, "'_id' names another entity than '\(e.name)', as which the object is inserted", entity: e.name, path: (path / key).description)
                }
                givenID = v
            case "_onConflict":
                let v = try readString(&r, path / key, e)
                guard let p = ConflictPolicy(rawValue: v) else {
                    throw StrataError(.invalid, "'_onConflict' must be \"upsert\", \"error\" or \"ignore\"", entity: e.name, path: (path / key).description)
                }
                policy = p
            default:
                throw StrataError(.invalid, "'\(e.name)' has no attribute or relationship '\(key)'", entity: e.name, attribute: key, path: (path / key).description)
            }
        }
        // To-one links held in this row first: they may be part of a unique key.
        var later: [PendingLink] = []
        var fkSlots: [Int] = []
        for l in links {
            if l.rel.isHeldInRow, let slot = e.slotByName[l.rel.name] {
                var lr = l.reader
                values[slot] = try readToOne(&lr, l.rel, e, l.path).map { .int($0.pk) } ?? .null
                provided[slot] = true
                fkSlots.append(slot)
            } else {
                later.append(l)
            }
        }
        if let link = link, let slot = e.slotByName[link.column] {
            // The object nested in `link.owner`'s relationship: an explicit inverse value must agree.
            if provided[slot], values[slot] != .int(link.owner.pk), let l = links.first(where: { $0.rel.isHeldInRow && $0.rel.name == link.column }) {
                throw StrataError(.invalid, "'\(e.name).\(l.rel.name)' contradicts the object this one is nested in (\(link.owner)); leave it out or name that object",
                                  entity: e.name, attribute: l.rel.name, path: l.path.description)
            }
            values[slot] = .int(link.owner.pk)
            provided[slot] = true
        }
        for (slot, column) in e.storedColumns.enumerated() {
            guard case .attribute(let a) = column, !a.isOptional, values[slot].isNull else { continue }
            throw StrataError(.validation, "'\(e.name)' requires a value for '\(a.name)'", entity: e.name, attribute: a.name,
                              path: (path / a.name).description)
        }
        // Unique constraints: against pending inserts (and keys pending updates set), then saved rows.
        let keys = unique.keys(e) { values[$0] }
        for k in keys {
            let slots = k.slots
            var existing = unique.holder(of: k)
            if existing == nil, let saved = try session.findUnique(e, slots: slots, values: k.values),
               !pendingDeleted.contains(saved), !unique.isRekeyed(saved) {
                existing = saved
            }
            guard let other = existing else { continue }
            let names = slots.map { e.storedColumns[$0].name }.joined(separator: ", ")
            if policy != .error, let given = givenID, given != other.description {
                throw StrataError(.invalid, "'_id' names another object than \(other), which this insert \(policy == .ignore ? "matches" : "updates") on unique (\(names))",
                                  entity: e.name, path: (path / "_id").description)
            }
            switch policy {
            case .ignore:
                return other
            case .error:
                throw StrataError(.constraint, "'\(e.name)' collides with \(other) on unique (\(names))", entity: e.name,
                                  attribute: slots.count == 1 ? names : nil, path: path.description)
            case .upsert:
                guard other.entity === e else {
                    throw StrataError(.constraint, "'\(e.name)' collides with \(other), an object of another entity, on unique (\(names))",
                                      entity: e.name, path: path.description)
                }
                let slotsSet = provided.indices.filter { provided[$0] }
                if !slotsSet.isEmpty {
                    changes.append(.update(other, slots: slotsSet, values: slotsSet.map { values[$0] }))
                    // The matched key keeps its values; only slots outside it can move another unique key.
                    let moved = slotsSet.filter { !k.slots.contains($0) }
                    try noteKeySlots(other, slots: moved, values: moved.map { values[$0] })
                }
                for l in later { try applyLink(l, owner: other, isNew: false) }
                return other
            }
        }
        if givenID != nil {
            throw StrataError(.invalid, "'_id' names an object, but this insert creates a new '\(e.name)' (Strata assigns identifiers); '_id' is accepted only where it names the object an upsert updates",
                              entity: e.name, path: (path / "_id").description)
        }
        let pk = try session.reserveKeys(root: e.root, count: 1)
        let id = ObjectID(entity: e, pk: pk)
        changes.append(.insert(id, values))
        pendingInserted[id] = e
        // No pending object holds these keys (a collision returned above).
        unique.inserted(id, e, row: values, keys: keys, policy: policy, provided: provided)
        for l in later { try applyLink(l, owner: id, isNew: true) }
        return id
    }

    private func duplicateKey(_ key: String, _ e: Entity, _ path: JSONPath) -> StrataError {
        StrataError(.invalid, "duplicate key '\(key)' in JSON object", entity: e.name, attribute: key, path: (path / key).description)
    }

    private func readString(_ r: inout JSONReader, _ path: JSONPath, _ e: Entity) throws -> String {
        guard try r.peek() == .string else {
            throw StrataError(.invalid, "expected a string at \(path)", entity: e.name, path: path.description)
        }
        return try r.readString()
    }

    /// Reads the value of attribute `a` at `parent / key` (the path is made only for an error or a `json` value).
    private func readAttribute(_ r: inout JSONReader, _ a: Attribute, _ e: Entity, _ parent: JSONPath, _ key: String) throws -> SQLValue {
        let v: SQLValue
        do { v = try ValueCodec.read(&r, type: a.type, path: a.type == .json ? parent / key : JSONPath()) } catch var err as StrataError {
            err.message = "'\(e.name).\(a.name)' (\(a.type.rawValue)): \(err.message)"
            if err.code == .invalid && err.message.contains("malformed JSON") == false { err.code = .validation }
            throw err.with(entity: e.name, attribute: a.name, path: (parent / key).description)
        }
        if v.isNull {
            if !a.isOptional && !a.isTransient {
                throw StrataError(.validation, "'\(e.name).\(a.name)' is required and cannot be null", entity: e.name, attribute: a.name, path: (parent / key).description)
            }
            return v
        }
        if let allowed = a.enumValues, !allowed.contains(v) {
            let list = (a.enumJSON ?? []).map(\.text).joined(separator: ", ")
            throw StrataError(.validation, "'\(e.name).\(a.name)' must be one of \(list)", entity: e.name, attribute: a.name, path: (parent / key).description)
        }
        return v
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
        if let concrete = pendingInserted[probe] {
            return concrete.isKind(of: named) ? .found(ObjectID(entity: concrete, pk: pk)) : .missing
        }
        guard let concrete = try session.concreteEntity(root: named.root, pk: pk), concrete.isKind(of: named) else { return .missing }
        return .found(ObjectID(entity: concrete, pk: pk))
    }

    /// A to-one value: null, an identifier, or a nested object to insert.
    private func readToOne(_ r: inout JSONReader, _ rel: Relationship, _ e: Entity, _ path: JSONPath, link: (column: String, owner: ObjectID)? = nil) throws -> ObjectID? {
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
    private func applyLink(_ l: PendingLink, owner: ObjectID, isNew: Bool) throws {
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
                if !targets.contains(t) { targets.append(t) }
            }
        } else {
            let nested = try r.peek() == .object
            if let t = try readToOne(&r, rel, owner.entity, l.path, link: nestedLink) {
                targets.append(t)
                if !nested || nestedLink == nil { needsSet = true }
            }
        }
        if needsSet {
            changes.append(.setRelated(owner, rel, targets))
            // The link lives in the targets' rows: it may be part of their unique keys.
            if rel.placement == .inInverseRows, let col = rel.inverse?.name {
                for t in targets {
                    if let slot = t.entity.slotByName[col] { try noteKeySlots(t, slots: [slot], values: [.int(owner.pk)]) }
                }
            }
        }
    }

    // MARK: Update and delete

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

    /// Applies a patch: attribute values and relationship links by name.
    public func update(id text: String, patch: UnsafeBufferPointer<UInt8>) throws {
        try live {
            try requireWritable()
            let id = try resolve(text)
            let e = id.entity
            try atomically(input: patch) {
                var r = JSONReader(patch)
                guard try r.peek() == .object else {
                    throw StrataError(.invalid, "expected a JSON object with the values to change", entity: e.name, path: "")
                }
                var slots: [Int] = []
                var values: [SQLValue] = []
                var links: [PendingLink] = []
                var seen: Set<String> = []
                let path = JSONPath()
                try r.readObject(checkDuplicates: false) { r, key in
                    guard seen.insert(key).inserted else {
                        throw duplicateKey(key, e, path)
                    }
                    if let slot = e.slotByName[key], case .attribute(let a) = e.storedColumns[slot] {
                        slots.append(slot)
                        values.append(try readAttribute(&r, a, e, path, key))
                        return
                    }
                    if let rel = e.relationshipByName[key] {
                        links.append(PendingLink(rel: rel, reader: r, path: path / key))
                        try r.skipValue()
                        return
                    }
                    if let a = e.attributeByName[key], a.isTransient {
                        _ = try readAttribute(&r, a, e, path, key)
                        return
                    }
                    switch key {
                    case "_id":
                        let v = try readString(&r, path / key, e)
                        guard v == id.description else {
                            throw StrataError(.invalid, "'_id' does not match the updated object \(id)", entity: e.name, path: "/_id")
                        }
                    case "_entity":
                        let v = try readString(&r, path / key, e)
                        guard v == e.name else {
                            throw StrataError(.invalid, "'_entity' does not match the updated object \(id)", entity: e.name, path: "/_entity")
                        }
                    default:
                        throw StrataError(.invalid, "'\(e.name)' has no attribute or relationship '\(key)'", entity: e.name, attribute: key, path: (path / key).description)
                    }
                }
                try r.expectEnd()
                var later: [PendingLink] = []
                for l in links {
                    if l.rel.isHeldInRow, let slot = e.slotByName[l.rel.name] {
                        var lr = l.reader
                        let target = try readToOne(&lr, l.rel, e, l.path)
                        if target == id { throw StrataError(.validation, "\(id) cannot be linked to itself through '\(l.rel.name)'", entity: e.name, attribute: l.rel.name, path: l.path.description) }
                        slots.append(slot)
                        values.append(target.map { .int($0.pk) } ?? .null)
                    } else {
                        later.append(l)
                    }
                }
                if !slots.isEmpty { try appendUpdate(id, slots: slots, values: values) }
                for l in later { try applyLink(l, owner: id, isNew: false) }
            }
        }
    }

    public func update(id: String, patch: String) throws {
        var patch = patch
        try patch.withUTF8 { try update(id: id, patch: $0) }
    }

    /// Marks an object for deletion; delete rules apply when the change is saved.
    public func delete(id text: String) throws {
        try live {
            try requireWritable()
            markDeleted(try resolve(text))
        }
    }

    private func markDeleted(_ id: ObjectID) {
        changes.append(.delete(id))
        pendingDeleted.insert(id)
        unique.deleted(id)
    }

    // MARK: Save and rollback

    /// Writes every pending change in one transaction (a savepoint when the
    /// session is inside `StoreSession.transaction`) and returns what the save
    /// did, cascades and nullified links included. On failure nothing is
    /// written and the pending changes stay, so the caller can fix and retry
    /// or roll back.
    @discardableResult
    public func save() throws -> ChangeSet {
        try live {
            guard !changes.isEmpty else { return ChangeSet() }
            try requireWritable()
            let rules = self.rules
            let pending = changes
            let (author, name) = (savedAuthor, savedName)
            let policies = unique.insertPolicies
            let done = try session.save { writer in
                var replay = ChangeReplay(writer: writer, rules: rules) { [unowned self] id, row in
                    try self.savedCollision(id, row, policies[id])
                }
                try replay.apply(pending)
                var changes = replay.changeSet
                changes.author = author
                changes.contextName = name
                return changes
            }
            clearPending()
            return done
        }
    }

    /// Inside a save's write transaction, for a pending insert whose row a unique index
    /// refused: the object another context or process saved with the same unique values
    /// since the insert looked (nil: none), resolved as the insert would have resolved it —
    /// an upsert updates it with the values the insert gave, `"ignore"` keeps it, `"error"`
    /// (or a saved object of another entity) fails with `.constraint`.
    private func savedCollision(_ id: ObjectID, _ row: [SQLValue], _ p: InsertPolicy?) throws -> SavedCollision? {
        guard let p else { return nil }
        let e = id.entity
        for k in unique.keys(e, { row[$0] }) {
            guard let other = try session.findUnique(e, slots: k.slots, values: k.values) else { continue }
            let names = k.slots.map { e.storedColumns[$0].name }.joined(separator: ", ")
            if p.policy == .error || other.entity !== e {
                let what = other.entity === e ? "" : ", an object of another entity,"
                throw StrataError(.constraint, "cannot save \(id): '\(e.name)' collides on unique (\(names)) with \(other)\(what) saved meanwhile by another context or process",
                                  entity: e.name, attribute: k.slots.count == 1 ? names : nil)
            }
            return p.policy == .ignore ? .keep(other) : .update(other, slots: p.provided)
        }
        return nil
    }

    /// The replay of the pending changes for a read that includes them (nil: nothing pending).
    func pendingReplay(_ include: Bool = true) -> PendingReplay? {
        guard include, !changes.isEmpty else { return nil }
        let rules = self.rules
        let pending = changes
        return { writer in
            var replay = ChangeReplay(writer: writer, rules: rules)
            try replay.apply(pending)
        }
    }

    /// Discards every pending change.
    public func rollback() {
        lock.withLock { clearPending() }
    }

    private func clearPending() {
        changes.removeAll(keepingCapacity: true)
        pendingInserted.removeAll()
        pendingDeleted.removeAll()
        unique.removeAll()
    }

    // MARK: Reads

    /// The version before a migration stage, in a didMigrate hook: its schema and a
    /// session on the store as committed before the stage began.
    var previousVersion: (schema: Schema, session: StoreSession)?

    /// Decodes a fetch descriptor: against this context's schema, or, with
    /// `"fromVersion"`, against the version before the running migration stage.
    ///
    /// - Throws: `.invalid` for a malformed descriptor, and for a `fromVersion` other than
    ///   the stage's old version or outside a didMigrate hook.
    public func descriptor(_ json: UnsafeBufferPointer<UInt8>) throws -> FetchDescriptor {
        try descriptor(try JSONValue.parse(json))
    }

    /// - Parameter slotted: variables become slots each run of a prepared fetch binds.
    func descriptor(_ value: JSONValue, slotted: Bool = false) throws -> FetchDescriptor {
        guard let from = value["fromVersion"], from != .null else {
            return try FetchDescriptor.decode(value, schema: schema, predicatePath: JSONPath() / "predicate", slotted: slotted)
        }
        guard case .string(let version) = from else {
            throw StrataError(.invalid, "'fromVersion' must be a version string, found \(from.typeName)", path: "/fromVersion")
        }
        guard let previous = previousVersion, previous.schema.version == version else {
            let hint = previousVersion.map { "this hook's stage comes from version \($0.schema.version)" }
                ?? "only a didMigrate hook reads an earlier version"
            throw StrataError(.invalid, "'fromVersion': \"\(version)\" cannot be read here (\(hint))", path: "/fromVersion")
        }
        return try FetchDescriptor.decode(value, schema: previous.schema, predicatePath: JSONPath() / "predicate", slotted: slotted)
    }

    /// The session a descriptor reads through, and the pending changes it sees (none in an earlier version).
    func source(_ d: FetchDescriptor) -> (StoreSession, PendingReplay?) {
        if d.fromVersion != nil, let previous = previousVersion { return (previous.session, nil) }
        return (session, pendingReplay(d.includePendingChanges))
    }

    /// One object as JSON (pending changes included).
    public func get(id text: String) throws -> [UInt8] {
        try live {
            let id = try resolve(text)
            guard let json = try session.objectJSON(id, pending: pendingReplay()) else {
                throw StrataError(.notFound, "no object \(text)", entity: id.entity.name)
            }
            return json
        }
    }

    public func fetch(_ descriptor: FetchDescriptor) throws -> [UInt8] {
        try live { let (s, p) = source(descriptor); return try s.fetchJSON(descriptor, pending: p) }
    }

    /// The fetch's JSON in one buffer the caller may take over (the C layer hands it out as is).
    public func fetchBuffer(_ descriptor: FetchDescriptor) throws -> JSONBuffer {
        try live { let (s, p) = source(descriptor); return try s.fetchBuffer(descriptor, pending: p) }
    }

    public func fetchCount(_ descriptor: FetchDescriptor) throws -> Int64 {
        try live { let (s, p) = source(descriptor); return try s.count(descriptor, pending: p) }
    }

    public func fetchIdentifiers(_ descriptor: FetchDescriptor) throws -> [UInt8] {
        try live { let (s, p) = source(descriptor); return try s.identifiersJSON(descriptor, pending: p) }
    }

    /// The SQL, parameter count and SQLite query plan of a fetch, as JSON.
    public func explain(_ descriptor: FetchDescriptor) throws -> [UInt8] {
        try live { let (s, p) = source(descriptor); return try s.explain(descriptor, pending: p) }
    }

    /// Marks every object matching a descriptor for deletion (delete rules
    /// apply when saved), all or nothing. Returns how many objects matched.
    @discardableResult
    public func delete(matching descriptor: FetchDescriptor) throws -> Int {
        try live {
            try requireWritable()
            let ids = try session.identifierList(descriptor, pending: pendingReplay(descriptor.includePendingChanges))
            for id in ids where !pendingDeleted.contains(id) { markDeleted(id) }
            return ids.count
        }
    }
}

/// What to do when an inserted object collides with an existing one on a unique constraint.
enum ConflictPolicy: String {
    case upsert, error, ignore
}

extension ModelContext {
    /// `["Trip/1","Trip/2"]`
    public static func identifierArray(_ ids: [ObjectID]) -> [UInt8] {
        var w = JSONWriter(capacity: ids.count * 12 + 2)
        w.beginArray()
        for id in ids { id.write(to: &w) }
        w.endArray()
        return w.bytes
    }
}
