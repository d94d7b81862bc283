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
    }

    /// Every changed object, in the order first changed (gone entries are skipped).
    public var changes: [Change] { entries.filter { !$0.gone }.map(\.change) }
    public var isEmpty: Bool { live == 0 }

    public var inserted: [ObjectID] { ids(.inserted) }
    public var updated: [ObjectID] { ids(.updated) }
    public var deleted: [ObjectID] { ids(.deleted) }

    /// The change of one object, if it changed.
    public func change(of id: ObjectID) -> Change? {
        guard let i = index[id], !entries[i].gone else { return nil }
        return entries[i].change
    }

    /// Names of the entities with changes, in first-changed order.
    public var entityNames: [String] {
        var seen: Set<String> = []
        return changes.compactMap { seen.insert($0.id.entity.name).inserted ? $0.id.entity.name : nil }
    }

    public init() {}

    private struct Entry { var change: Change; var gone = false }
    private var entries: [Entry] = []
    private var index: [ObjectID: Int] = [:]
    private var live = 0

    private func ids(_ kind: Kind) -> [ObjectID] {
        entries.compactMap { !$0.gone && $0.change.kind == kind ? $0.change.id : nil }
    }

    mutating func recordInsert(_ id: ObjectID) {
        if let i = index[id] {
            // A key is never reused; a deleted-then-inserted object cannot occur. Keep the entry current.
            if entries[i].gone { live += 1 }
            entries[i] = Entry(change: Change(id: id, kind: .inserted, attributes: [], tombstone: []))
            return
        }
        index[id] = entries.count
        entries.append(Entry(change: Change(id: id, kind: .inserted, attributes: [], tombstone: [])))
        live += 1
    }

    /// Records changed names of `id` (nothing when it is inserted or deleted in this save).
    mutating func recordUpdate(_ id: ObjectID, _ names: [String]) {
        if let i = index[id] {
            guard !entries[i].gone, entries[i].change.kind == .updated else { return }
            for n in names where !entries[i].change.attributes.contains(n) { entries[i].change.attributes.append(n) }
            return
        }
        var unique: [String] = []
        for n in names where !unique.contains(n) { unique.append(n) }
        index[id] = entries.count
        entries.append(Entry(change: Change(id: id, kind: .updated, attributes: unique, tombstone: [])))
        live += 1
    }

    mutating func recordUpdate(_ id: ObjectID, _ name: String) { recordUpdate(id, [name]) }

    mutating func recordDelete(_ id: ObjectID, tombstone: [(name: String, value: SQLValue)]) {
        if let i = index[id] {
            if entries[i].gone { return }
            if entries[i].change.kind == .inserted {
                entries[i].gone = true
                live -= 1
                return
            }
            entries[i].change = Change(id: id, kind: .deleted, attributes: [], tombstone: tombstone)
            return
        }
        index[id] = entries.count
        entries.append(Entry(change: Change(id: id, kind: .deleted, attributes: [], tombstone: tombstone)))
        live += 1
    }

    /// Appends another save's changes (saves inside one outer transaction).
    mutating func merge(_ other: ChangeSet) {
        for c in other.changes {
            switch c.kind {
            case .inserted: recordInsert(c.id)
            case .updated: recordUpdate(c.id, c.attributes)
            case .deleted: recordDelete(c.id, tombstone: c.tombstone)
            }
        }
    }

    /// `{"inserted": {"Trip": ["Trip/1"]}, "updated": {"Trip": [{"id": "Trip/2",
    /// "attributes": ["name"]}]}, "deleted": {"Trip": [{"id": "Trip/3",
    /// "tombstone": {"name": "Paris"}}]}}`, entities in first-changed order.
    public var json: String {
        var w = JSONWriter()
        write(to: &w)
        return w.string
    }

    func write(to w: inout JSONWriter) {
        let all = changes
        w.beginObject()
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
