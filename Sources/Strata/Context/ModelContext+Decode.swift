import Glibc

/// The object decoder inserts and updates share: one dispatch over the keys of a
/// JSON object, and the values of attributes and of links held in the row.
extension ModelContext {
    /// A deferred relationship value: where it starts in the input.
    /// (The relationship is the schema's, which the context keeps alive: a copy counts no reference to it.)
    struct PendingLink { unowned(unsafe) let rel: Relationship; let reader: JSONReader; let path: JSONPath }

    /// The keys of an object besides its attributes and relationships; each takes a string.
    enum MetaKey: String { case entity = "_entity", id = "_id", onConflict = "_onConflict" }

    /// What the keys of one object gave besides the attribute values.
    struct ObjectKeys {
        /// `provided[slot]`: the object gave stored attribute `slot` a value.
        var provided: SlotFlags
        /// The relationship values in key order, to read from where each starts.
        var links: [PendingLink] = []
    }

    /// Reads the keys of the JSON object at `r` for entity `e` at `path`, in input order:
    /// a stored attribute's value goes to `attribute` with its slot; a relationship's value
    /// is skipped and kept in `links`; a transient attribute's value is checked and dropped;
    /// a key of `accepted` has its string value go to `meta` (which checks it). Any other
    /// key, and a key given twice, is `.invalid` at its path, found when it is read.
    func readObjectKeys(_ r: inout JSONReader, _ e: Entity, _ path: JSONPath, accepting accepted: [MetaKey],
                        attribute: (Int, SQLValue) -> Void, meta: (MetaKey, String) throws -> Void) throws -> ObjectKeys {
        var read = ObjectKeys(provided: SlotFlags(count: e.storedColumns.count))
        var seenOther: Set<String> = []
        var seenMeta: [MetaKey] = []
        let members = memberTable(e)
        try r.readMembers { r, name in
            // A name spelled without escapes is matched as bytes; the key is then the schema's own string.
            let key: String
            var slot: Int?
            var rel: Relationship?
            var metaKey: MetaKey?
            if let raw = name.raw, let m = members.member(raw) {
                key = m.name
                slot = m.slot
                rel = m.relationship
                metaKey = m.meta
            } else {
                key = name.string
                if let s = e.slotByName[key], case .attribute(let a) = e.storedColumns[s], a.composite == nil { slot = s } else { rel = e.relationshipByName[key] }
                // Schema names never start with '_': the meta keys are no attribute's.
                if slot == nil && rel == nil { metaKey = MetaKey(rawValue: key) }
            }
            if let slot, case .attribute(let a) = e.storedColumns[slot] {
                if read.provided[slot] {
                    throw duplicateKey(key, e, path)
                }
                if a.isComposite {
                    let present = try readComposite(&r, a, e, path / key) { field, value in
                        guard let s = e.slotByName[field.name] else { return }
                        attribute(s, value)
                        read.provided[s] = true
                    }
                    attribute(slot, present ? .int(1) : .null)
                } else {
                    attribute(slot, try readAttribute(&r, a, e, path, key))
                }
                read.provided[slot] = true
                return
            }
            if let rel {
                if read.links.contains(where: { $0.rel === rel }) {
                    throw duplicateKey(key, e, path)
                }
                // Room for every relationship at once: one allocation, not one per growth.
                if read.links.isEmpty { read.links.reserveCapacity(members.relationshipCount) }
                read.links.append(PendingLink(rel: rel, reader: r, path: path / key))
                try r.skipValue()
                return
            }
            if let m = metaKey {
                guard !seenMeta.contains(m) else { throw duplicateKey(key, e, path) }
                seenMeta.append(m)
                guard accepted.contains(m) else { throw noMember(key, e, path) }
                try meta(m, try readString(&r, path / key, e))
                return
            }
            // Stored attributes, relationships and meta keys check duplicates above; the rest here.
            guard seenOther.insert(key).inserted else {
                throw duplicateKey(key, e, path)
            }
            guard let a = e.attributeByName[key], a.isTransient else { throw noMember(key, e, path) }
            _ = try readAttribute(&r, a, e, path, key)  // validated, not stored
        }
        return read
    }

    private func noMember(_ key: String, _ e: Entity, _ path: JSONPath) -> StrataError {
        StrataError(.invalid, "'\(e.name)' has no attribute or relationship '\(key)'", entity: e.name, attribute: key, path: (path / key).description)
    }

    /// The member table of `e` (made once per context and entity).
    func memberTable(_ e: Entity) -> MemberTable {
        if let t = memberTables[ObjectIdentifier(e)] { return t }
        let t = MemberTable(e)
        memberTables.set(ObjectIdentifier(e), t)
        return t
    }

    /// Reads the to-one values of `links` held in the owner's row, in key order, handing each
    /// to `set` with its slot and link (they may be part of a unique key, so they are read
    /// before the owner's keys are resolved); returns the other links, to apply once the
    /// owner exists.
    func readRowLinks(_ links: [PendingLink], _ e: Entity, _ set: (Int, ObjectID?, PendingLink) throws -> Void) throws -> [PendingLink] {
        var later: [PendingLink] = []
        for l in links {
            if l.rel.isHeldInRow, let slot = e.slotByName[l.rel.name] {
                var lr = l.reader
                try set(slot, try readToOne(&lr, l.rel, e, l.path), l)
            } else {
                if later.isEmpty { later.reserveCapacity(links.count) }
                later.append(l)
            }
        }
        return later
    }

    /// Fails with `.validation`, naming it, at the first required attribute of `e` that `values`
    /// (a row of `e`, slot order) leaves without a value.
    func checkRequired(_ values: [SQLValue], _ e: Entity, _ path: JSONPath) throws {
        for slot in memberTable(e).requiredSlots where values[slot].isNull {
            guard case .attribute(let a) = e.storedColumns[slot] else { continue }
            let at = a.composite.map { path / $0.name / a.fieldName } ?? path / a.name
            throw StrataError(.validation, "'\(e.name)' requires a value for '\(a.name)'", entity: e.name, attribute: a.name, path: at.description)
        }
    }

    /// - Parameter attribute: the attribute the key names, when it is not the key itself (a composite's field).
    func duplicateKey(_ key: String, _ e: Entity, _ path: JSONPath, attribute: String? = nil) -> StrataError {
        StrataError(.invalid, "duplicate key '\(key)' in JSON object", entity: e.name, attribute: attribute ?? key, path: (path / key).description)
    }

    func readString(_ r: inout JSONReader, _ path: @autoclosure () -> JSONPath, _ e: Entity) throws -> String {
        guard try r.peek() == .string else {
            let path = path()  // made only for the message
            throw StrataError(.invalid, "expected a string at \(path)", entity: e.name, path: path.description)
        }
        return try r.readString()
    }

    /// Reads the value of composite `a` at `path`: null (nil, when `a` is optional; every field
    /// nil), or an object of its fields, each read as an attribute. A field left out takes its
    /// default, else nil; a required field without a value is a validation error. Every field
    /// is handed to `field` with its value (a composite value replaces the whole composite).
    /// - Returns: whether the composite has a value.
    func readComposite(_ r: inout JSONReader, _ a: Attribute, _ e: Entity, _ path: JSONPath,
                       field: (Attribute, SQLValue) -> Void) throws -> Bool {
        let kind = try r.peek()
        if kind == .null {
            guard a.isOptional else {
                throw StrataError(.validation, "'\(e.name).\(a.name)' is required and cannot be null", entity: e.name, attribute: a.name, path: path.description)
            }
            try r.readNull()
            for f in a.fields { field(f, .null) }
            return false
        }
        guard kind == .object else {
            var err = ValueCodec.mismatch(kind, "an object of the fields of composite '\(e.name).\(a.name)'")
            err.message = "'\(e.name).\(a.name)' (composite): \(err.message)"
            throw err.with(entity: e.name, attribute: a.name, path: path.description)
        }
        var values = [SQLValue?](repeating: nil, count: a.fields.count)
        try r.readObject(checkDuplicates: false) { r, key in
            guard let i = a.fields.firstIndex(where: { $0.fieldName == key }) else {
                let known = a.fields.map(\.fieldName).joined(separator: ", ")
                throw StrataError(.invalid, "composite '\(e.name).\(a.name)' has no field '\(key)' (its fields: \(known))",
                                  entity: e.name, attribute: a.name, path: (path / key).description)
            }
            guard values[i] == nil else { throw duplicateKey(key, e, path, attribute: a.fields[i].name) }
            values[i] = try readAttribute(&r, a.fields[i], e, path, key)
        }
        for (i, f) in a.fields.enumerated() {
            let v = values[i] ?? f.fieldDefault ?? .null
            if v.isNull && f.isRequiredField {
                let at = values[i] == nil ? path : path / f.fieldName
                throw StrataError(.validation, "'\(e.name).\(f.name)' is required and cannot be null", entity: e.name, attribute: f.name, path: at.description)
            }
            field(f, v)
        }
        return true
    }

    /// Reads the value of attribute `a` at `parent / key` (the path is made only for an error or a `json` value).
    func readAttribute(_ r: inout JSONReader, _ a: Attribute, _ e: Entity, _ parent: JSONPath, _ key: String) throws -> SQLValue {
        let v: SQLValue
        do { v = try ValueCodec.read(&r, type: a.type, path: a.type == .json ? parent / key : JSONPath()) } catch var err as StrataError {
            err.message = "'\(e.name).\(a.name)' (\(a.type.rawValue)): \(err.message)"
            if err.code == .invalid && err.reason != .malformedJSON { err.code = .validation }
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
}

/// The names of an entity's stored attributes (not composite fields), relationships and the
/// meta keys as UTF-8 bytes, so that an object's keys are matched without making strings of them.
final class MemberTable {
    struct Member {
        let name: String
        /// The stored attribute's slot, or nil for a relationship or a meta key.
        let slot: Int?
        let relationship: Relationship?
        /// The meta key (`_entity`, `_id`, `_onConflict`), which no attribute's name can be.
        let meta: ModelContext.MetaKey?
    }

    /// The slots of the entity's required attributes (composite fields included), in slot order.
    let requiredSlots: [Int]
    /// The entity's links held in its row: each relationship's name and slot, in slot order.
    private let rowLinks: [(name: String, slot: Int)]
    /// How many relationships the entity has.
    let relationshipCount: Int

    private let bytes: [UInt8]
    private let ranges: [Range<Int>]
    /// Each name's first eight bytes (fewer: zero-filled), little-endian: most names differ there.
    private let prefixes: [UInt64]
    private let members: [Member]

    init(_ e: Entity) {
        var members: [Member] = []
        var required: [Int] = []
        var rowLinks: [(name: String, slot: Int)] = []
        for (slot, column) in e.storedColumns.enumerated() {
            guard case .attribute(let a) = column else {
                rowLinks.append((column.name, slot))
                continue
            }
            if a.composite == nil { members.append(Member(name: a.name, slot: slot, relationship: nil, meta: nil)) }
            if !a.isOptional { required.append(slot) }
        }
        requiredSlots = required
        self.rowLinks = rowLinks
        relationshipCount = e.relationshipByName.count
        for rel in e.relationshipByName.values.sorted(by: { $0.name < $1.name }) {
            members.append(Member(name: rel.name, slot: nil, relationship: rel, meta: nil))
        }
        for m in [ModelContext.MetaKey.entity, .id, .onConflict] {
            members.append(Member(name: m.rawValue, slot: nil, relationship: nil, meta: m))
        }
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        var prefixes: [UInt64] = []
        for m in members {
            let start = bytes.count
            bytes.append(contentsOf: m.name.utf8)
            ranges.append(start..<bytes.count)
            prefixes.append(bytes.withUnsafeBufferPointer { MemberTable.prefix(UnsafeBufferPointer(rebasing: $0[start...])) })
        }
        self.bytes = bytes
        self.ranges = ranges
        self.prefixes = prefixes
        self.members = members
    }

    @inline(__always) private static func prefix(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var p: UInt64 = 0
        for k in 0..<min(name.count, 8) { p |= UInt64(name[k]) << (8 * UInt64(k)) }
        return p
    }

    /// The slot of the link named `name` held in the entity's row (nil: it has none), found
    /// without hashing the name (an entity has few such links).
    func rowSlot(named name: String) -> Int? {
        for l in rowLinks where l.name == name { return l.slot }
        return nil
    }

    /// The member named exactly `name` (nil: none; the caller then reads the key as text).
    func member(_ name: UnsafeBufferPointer<UInt8>) -> Member? {
        let p = MemberTable.prefix(name)
        let n = name.count
        return bytes.withUnsafeBufferPointer { all in
            for i in prefixes.indices where prefixes[i] == p && ranges[i].count == n {
                if n <= 8 || memcmp(all.baseAddress! + ranges[i].lowerBound, name.baseAddress!, n) == 0 { return members[i] }
            }
            return nil
        }
    }
}
