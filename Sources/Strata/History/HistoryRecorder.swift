import Glibc

/// Records every save in the store's history, inside the save's transaction
/// (a save participant): one transaction row, and one change row per changed
/// object, where objects changed one after another, of one entity and kind, with
/// the same changed attributes and no values share one row: consecutive keys as a
/// count, others as a list of keys; a row holds at most `HistoryChangeRow.maxObjects`
/// objects (a bulk insert of 100,000 objects is 25 rows).
enum HistoryRecorder {
    /// Seconds since 1970, exactly as the ISO-8601 text history returns reads back
    /// (microseconds): a transaction's own timestamp, given back in a predicate, selects it.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let seconds = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        return ISO8601.format(seconds).flatMap { ISO8601.parse($0.utf8) } ?? seconds
    }

    /// The participant of a container that records history; `origin` tells the
    /// container's own transactions apart (`ChangeObservers`).
    static func record(_ changes: inout ChangeSet, _ session: StoreSession, origin: String?) throws {
        guard let storage = session as? HistoryStorage else { return }
        let (names, pending) = collect(changes)
        let ids = try storage.historyNameIDs(names)
        let entityIDs = distinctEntities(pending, ids)
        let rows = pending.map { $0.row(ids) }
        let t = HistoryTransactionRow(timestamp: now(), author: changes.author, contextName: changes.contextName, entities: entityIDs,
                                      origin: origin)
        let sequence = try storage.appendHistory(t, changes: rows)
        changes.token = HistoryToken(sequence: sequence, store: storage.historyStoreTag).description
    }

    /// The participant of a container that does not record history: the store's
    /// history (if another container keeps one) gets a transaction marked unrecorded,
    /// without changes, and tokens before it expire (their readers must refetch).
    static func skip(_ changes: inout ChangeSet, _ session: StoreSession, origin: String?) throws {
        guard let storage = session as? HistoryStorage else { return }
        let t = HistoryTransactionRow(timestamp: now(), author: changes.author, contextName: changes.contextName, entities: [], origin: origin)
        if let sequence = try storage.noteUnrecordedSave(t) {
            changes.token = HistoryToken(sequence: sequence, store: storage.historyStoreTag).description
        }
    }

    /// The save's change rows in order, and every entity and property name they mention,
    /// numbered once in the order first seen; a change without values joins the row
    /// before it when it can (``PendingRow/takes(_:)``).
    private static func collect(_ changes: ChangeSet) -> (names: [HistoryName], rows: [PendingRow]) {
        var names = NameTable()
        var pending: [PendingRow] = []
        var lastEntity: ObjectIdentifier?
        var lastEntityIndex = 0
        changes.forEachChange { entity, pk, kind, details in
            let e: Int
            if lastEntity == ObjectIdentifier(entity) { e = lastEntityIndex } else {
                e = names.note(HistoryName(entity: entity.name))
                lastEntity = ObjectIdentifier(entity)
                lastEntityIndex = e
            }
            let p = PendingRow(entity, number: e, pk: pk, kind: kind, details: details, names: &names)
            if let last = pending.last, last.takes(p) {
                pending[pending.count - 1].add(pk)
            } else {
                pending.append(p)
            }
        }
        return (names.names, pending)
    }

    /// The stored numbers of the rows' entities, each once, in the order first seen.
    private static func distinctEntities(_ pending: [PendingRow], _ ids: [Int64]) -> [Int64] {
        var entityIDs: [Int64] = []
        var seen: Set<Int64> = []
        for p in pending where seen.insert(ids[p.entity]).inserted { entityIDs.append(ids[p.entity]) }
        return entityIDs
    }

    /// The entity and property names of one save, each numbered once, in the order first noted.
    private struct NameTable {
        private var index: [HistoryName: Int] = [:]
        private(set) var names: [HistoryName] = []

        /// The number of `n`: its position in ``names``, where it is added when new.
        mutating func note(_ n: HistoryName) -> Int {
            if let i = index[n] { return i }
            index[n] = names.count
            names.append(n)
            return names.count - 1
        }
    }

    /// A change row whose names are still numbers of the save's ``NameTable``.
    private struct PendingRow {
        /// Values by name number, with the attribute's type (nil: not an attribute of the entity).
        typealias Values = [(Int, AttributeType?, SQLValue)]

        var kind: HistoryChangeRow.Kind
        var entity: Int
        var pk: Int64
        var count: Int64 = 1
        var keys: [Int64]?
        var attributes: [Int] = []
        var tombstone: Values = []
        var old: Values = []
        var new: Values = []

        /// One object's change, its entity already numbered `e`; the names of `details` are noted in `names`.
        init(_ entity: Entity, number e: Int, pk: Int64, kind: ChangeSet.Kind, details: ChangeSet.Change?, names: inout NameTable) {
            self.kind = switch kind { case .inserted: .insert; case .updated: .update; case .deleted: .delete }
            self.entity = e
            self.pk = pk
            guard let d = details else { return }
            attributes = d.attributes.map { names.note(HistoryName(entity: entity.name, property: $0)) }
            tombstone = d.tombstone.map { (names.note(HistoryName(entity: entity.name, property: $0.name)), entity.attributeByName[$0.name]?.type, $0.value) }
            old = d.old.map { (names.note(HistoryName(entity: entity.name, property: $0.name)), entity.attributeByName[$0.name]?.type, $0.value) }
            new = d.new.map { (names.note(HistoryName(entity: entity.name, property: $0.name)), entity.attributeByName[$0.name]?.type, $0.value) }
        }

        /// Whether the next object's change `p` can join this row: neither has values, both are
        /// of one kind, entity and changed attributes, and this row is not full.
        func takes(_ p: PendingRow) -> Bool {
            p.tombstone.isEmpty && p.old.isEmpty && p.new.isEmpty
                && kind == p.kind && entity == p.entity && attributes == p.attributes
                && tombstone.isEmpty && old.isEmpty && new.isEmpty && count < HistoryChangeRow.maxObjects
        }

        /// Adds the object `pk` to the row: to the count while keys stay consecutive, else to a list of keys.
        mutating func add(_ pk: Int64) {
            // Keys come from the file: the largest key has no successor (no overflow).
            let end = self.pk.addingReportingOverflow(count)
            if keys == nil && !end.overflow && end.partialValue == pk {
                count += 1
                return
            }
            // A consecutive run's last key is pk + count - 1: within range.
            if keys == nil { keys = (0..<count).map { self.pk + $0 } }
            keys?.append(pk)
            count += 1
        }

        /// The row to store, names as their stored numbers `ids`.
        func row(_ ids: [Int64]) -> HistoryChangeRow {
            HistoryChangeRow(kind: kind, entity: ids[entity], pk: pk, count: count, keys: keys, attributes: attributes.map { ids[$0] },
                             tombstone: Self.json(tombstone, ids), old: Self.json(old, ids), new: Self.json(new, ids))
        }

        /// Values as a JSON object keyed by stored name numbers; nil for none.
        private static func json(_ list: Values, _ ids: [Int64]) -> String? {
            guard !list.isEmpty else { return nil }
            var w = JSONWriter()
            w.beginObject()
            for (i, type, v) in list {
                w.key(String(ids[i]))
                if let type { ValueCodec.write(v, type: type, to: &w) } else { w.null() }
            }
            w.endObject()
            return w.string
        }
    }
}
