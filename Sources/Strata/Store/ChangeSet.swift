/// What one save did to the store: every inserted, updated and deleted
/// object, including what delete rules (cascade, nullify), one-to-one links
/// taken from another object and inverse relationships changed.
///
/// Each object appears once, with its net effect: inserted then updated is
/// inserted; updated then deleted is deleted; inserted then deleted in the
/// same save is not there at all. An update lists the names of the changed
/// attributes and relationships (both ends of a changed link are updated).
/// A deleted object carries the values of its `preserveValueOnDeletion`
/// attributes as they were saved (its tombstone).
public struct ChangeSet: Sendable {
    public enum Kind: String, Sendable { case inserted, updated, deleted }

    public struct Change: @unchecked Sendable {
        public let id: ObjectID
        public internal(set) var kind: Kind
        /// For updates: changed attribute and relationship names, in the order first changed.
        public internal(set) var attributes: [String]
        /// For deletions: the `preserveValueOnDeletion` attributes and their saved values.
        public internal(set) var tombstone: [(name: String, value: SQLValue)]
        /// For updates of `historyValues` attributes: their values before the save and after it.
        public internal(set) var old: [(name: String, value: SQLValue)] = []
        public internal(set) var new: [(name: String, value: SQLValue)] = []
    }

    /// Who saved: the context's author (or the configuration's) and the context's name.
    public internal(set) var author: String?
    public internal(set) var contextName: String?
    /// The history token of the save: of its transaction, or with history off of the
    /// unrecorded transaction that marks it (nil when the store keeps no history).
    public internal(set) var token: String?

    /// Every changed object, in the order first changed.
    public var changes: [Change] { records.indices.compactMap(change(at:)) }
    public var isEmpty: Bool { live == 0 }

    public var inserted: [ObjectID] { ids(.inserted) }
    public var updated: [ObjectID] { ids(.updated) }
    public var deleted: [ObjectID] { ids(.deleted) }

    /// The change of one object, if it changed.
    public func change(of id: ObjectID) -> Change? {
        index[id].flatMap(change(at:))
    }

    /// How one object changed, if it did (without building its `Change`).
    func kind(of id: ObjectID) -> Kind? {
        guard let i = index[id], !records[i].gone else { return nil }
        return records[i].kind
    }

    /// Names of the entities with changes, in first-changed order.
    public var entityNames: [String] {
        var seen: Set<String> = []
        return records.compactMap { r in !r.gone && seen.insert(r.entity.name).inserted ? r.entity.name : nil }
    }

    public init() {}

    /// Room for `n` changes (a save knows roughly how many it makes).
    mutating func reserveCapacity(_ n: Int) {
        records.reserveCapacity(n)
    }

    // A save may change a million objects: each is a plain record (no reference
    // counted per object); names and tombstones are kept aside for the few that have them.
    private struct Record {
        unowned(unsafe) let entity: Entity
        let pk: Int64
        var kind: Kind
        var gone = false
    }
    private var records: [Record] = []
    /// Each record's index by object: a save's inserts come in key order, so finding or
    /// adding one hashes nothing (``PendingObjectTable``).
    private var index = PendingObjectTable<Int>()
    private var names: [Int: [String]] = [:]
    private var tombstones: [Int: [(name: String, value: SQLValue)]] = [:]
    private var values: [Int: (old: [(name: String, value: SQLValue)], new: [(name: String, value: SQLValue)])] = [:]
    /// Keeps every entity a record names alive as long as the change set.
    private var entities = IdentityTable<Entity>()
    private var live = 0

    private func change(at i: Int) -> Change? {
        let r = records[i]
        guard !r.gone else { return nil }
        let v = values[i]
        return Change(id: ObjectID(entity: r.entity, pk: r.pk), kind: r.kind, attributes: names[i] ?? [], tombstone: tombstones[i] ?? [],
                      old: v?.old ?? [], new: v?.new ?? [])
    }

    /// Walks the changes in order; `details` is built only for an object with changed
    /// names, a tombstone or values (a bulk insert builds none).
    func forEachChange(_ body: (_ entity: Entity, _ pk: Int64, _ kind: Kind, _ details: Change?) throws -> Void) rethrows {
        let anyDetails = !names.isEmpty || !tombstones.isEmpty || !values.isEmpty
        for i in records.indices where !records[i].gone {
            let r = records[i]
            let detailed = anyDetails && (names[i] != nil || tombstones[i] != nil || values[i] != nil)
            try body(r.entity, r.pk, r.kind, detailed ? change(at: i) : nil)
        }
    }

    private func ids(_ kind: Kind) -> [ObjectID] {
        records.compactMap { !$0.gone && $0.kind == kind ? ObjectID(entity: $0.entity, pk: $0.pk) : nil }
    }

    private mutating func append(_ id: ObjectID, _ kind: Kind) -> Int {
        let e = id.entity
        if entities[ObjectIdentifier(e)] == nil { entities.set(ObjectIdentifier(e), e) }
        index[id] = records.count
        records.append(Record(entity: e, pk: id.pk, kind: kind))
        live += 1
        return records.count - 1
    }

    mutating func recordInsert(_ id: ObjectID) {
        if let i = index[id] {
            // A key is never reused, so this is the object inserted before: it stays inserted.
            if records[i].gone { records[i].gone = false; live += 1 }
            records[i].kind = .inserted
            return
        }
        _ = append(id, .inserted)
    }

    /// Records changed names of `id` (nothing when it is inserted or deleted in this save).
    mutating func recordUpdate(_ id: ObjectID, _ changed: [String]) {
        let i: Int
        if let existing = index[id] {
            guard !records[existing].gone, records[existing].kind == .updated else { return }
            i = existing
        } else {
            i = append(id, .updated)
        }
        var list = names[i] ?? []
        for n in changed where !list.contains(n) { list.append(n) }
        names[i] = list
    }

    mutating func recordUpdate(_ id: ObjectID, _ name: String) { recordUpdate(id, [name]) }

    /// Records values of an updated object's attributes before and after a change (recorded
    /// first with `recordUpdate`): the first old value of each name stays, the new one is the last.
    mutating func recordValues(_ id: ObjectID, old: [(name: String, value: SQLValue)], new: [(name: String, value: SQLValue)]) {
        guard let i = index[id], !records[i].gone, records[i].kind == .updated else { return }
        var v = values[i] ?? (old: [], new: [])
        for o in old where !v.old.contains(where: { $0.name == o.name }) { v.old.append(o) }
        for n in new {
            if let k = v.new.firstIndex(where: { $0.name == n.name }) { v.new[k] = n } else { v.new.append(n) }
        }
        values[i] = v
    }

    mutating func recordDelete(_ id: ObjectID, tombstone: [(name: String, value: SQLValue)]) {
        let i: Int
        if let existing = index[id] {
            if records[existing].gone { return }
            if records[existing].kind == .inserted {
                records[existing].gone = true
                live -= 1
                return
            }
            i = existing
            records[i].kind = .deleted
            names[i] = nil
            values[i] = nil
        } else {
            i = append(id, .deleted)
        }
        if !tombstone.isEmpty { tombstones[i] = tombstone }
    }

    /// Appends another save's changes (saves inside one outer transaction).
    mutating func merge(_ other: ChangeSet) {
        if let t = other.token { token = t }
        if other.author != nil { author = other.author }
        if other.contextName != nil { contextName = other.contextName }
        for c in other.changes {
            switch c.kind {
            case .inserted: recordInsert(c.id)
            case .updated:
                recordUpdate(c.id, c.attributes)
                if !c.old.isEmpty || !c.new.isEmpty { recordValues(c.id, old: c.old, new: c.new) }
            case .deleted: recordDelete(c.id, tombstone: c.tombstone)
            }
        }
    }

    /// `{"token": "12@5f0c…", "inserted": {"Trip": ["Trip/1"]}, "updated": {"Trip": [{"id": "Trip/2",
    /// "attributes": ["name"]}]}, "deleted": {"Trip": [{"id": "Trip/3",
    /// "tombstone": {"name": "Paris"}}]}}`, entities in first-changed order ("token" only
    /// when the save was recorded in history).
    public var json: String {
        var w = JSONWriter()
        write(to: &w)
        return w.string
    }

    /// The JSON of the changes of the named entities only, or nil when there are none.
    public func json(entityNames: Set<String>?) -> String? {
        guard let names = entityNames else { return json }
        guard records.contains(where: { !$0.gone && names.contains($0.entity.name) }) else { return nil }
        var w = JSONWriter()
        write(to: &w, only: names)
        return w.string
    }

    func write(to w: inout JSONWriter, only: Set<String>? = nil) {
        let all = only.map { names in changes.filter { names.contains($0.id.entity.name) } } ?? changes
        w.beginObject()
        if let token { w.key("token"); w.string(token) }
        for kind in [Kind.inserted, .updated, .deleted] {
            w.key(kind.rawValue)
            w.beginObject()
            var order: [String] = []
            var byEntity: [String: [Change]] = [:]
            for c in all where c.kind == kind {
                if byEntity[c.id.entity.name] == nil { order.append(c.id.entity.name) }
                byEntity[c.id.entity.name, default: []].append(c)
            }
            for name in order {
                w.key(name)
                w.beginArray()
                for c in byEntity[name] ?? [] {
                    switch kind {
                    case .inserted:
                        c.id.write(to: &w)
                    case .updated:
                        w.beginObject()
                        w.key("id"); c.id.write(to: &w)
                        w.key("attributes"); w.beginArray(); for a in c.attributes { w.string(a) }; w.endArray()
                        w.endObject()
                    case .deleted:
                        w.beginObject()
                        w.key("id"); c.id.write(to: &w)
                        if !c.tombstone.isEmpty {
                            w.key("tombstone")
                            w.beginObject()
                            for (n, v) in c.tombstone {
                                w.key(n)
                                if let a = c.id.entity.attributeByName[n] { ValueCodec.write(v, type: a.type, to: &w) } else { w.null() }
                            }
                            w.endObject()
                        }
                        w.endObject()
                    }
                }
                w.endArray()
            }
            w.endObject()
        }
        w.endObject()
    }
}
