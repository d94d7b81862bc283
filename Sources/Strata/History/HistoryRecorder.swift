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
        // Names first: every entity and property the save mentions, numbered once.
        var nameIndex: [HistoryName: Int] = [:]
        var names: [HistoryName] = []
        func note(_ n: HistoryName) -> Int {
            if let i = nameIndex[n] { return i }
            nameIndex[n] = names.count
            names.append(n)
            return names.count - 1
        }
        struct Pending {
            var kind: HistoryChangeRow.Kind
            var entity: Int
            var pk: Int64
            var count: Int64 = 1
            var keys: [Int64]?
            var attributes: [Int] = []
            var tombstone: [(Int, AttributeType?, SQLValue)] = []
            var old: [(Int, AttributeType?, SQLValue)] = []
            var new: [(Int, AttributeType?, SQLValue)] = []
        }
        var pending: [Pending] = []
        var lastEntity: ObjectIdentifier?
        var lastEntityIndex = 0
        changes.forEachChange { entity, pk, kind, details in
            let e: Int
            if lastEntity == ObjectIdentifier(entity) { e = lastEntityIndex } else {
                e = note(HistoryName(entity: entity.name))
                lastEntity = ObjectIdentifier(entity)
                lastEntityIndex = e
            }
            let k: HistoryChangeRow.Kind = switch kind { case .inserted: .insert; case .updated: .update; case .deleted: .delete }
            var p = Pending(kind: k, entity: e, pk: pk)
            if let d = details {
                p.attributes = d.attributes.map { note(HistoryName(entity: entity.name, property: $0)) }
                p.tombstone = d.tombstone.map { (note(HistoryName(entity: entity.name, property: $0.name)), entity.attributeByName[$0.name]?.type, $0.value) }
                p.old = d.old.map { (note(HistoryName(entity: entity.name, property: $0.name)), entity.attributeByName[$0.name]?.type, $0.value) }
                p.new = d.new.map { (note(HistoryName(entity: entity.name, property: $0.name)), entity.attributeByName[$0.name]?.type, $0.value) }
            }
            if p.tombstone.isEmpty && p.old.isEmpty && p.new.isEmpty, let last = pending.last,
               last.kind == p.kind, last.entity == p.entity, last.attributes == p.attributes,
               last.tombstone.isEmpty && last.old.isEmpty && last.new.isEmpty, last.count < HistoryChangeRow.maxObjects {
                let i = pending.count - 1
                // Keys come from the file: the largest key has no successor (no overflow).
                let end = last.pk.addingReportingOverflow(last.count)
                if last.keys == nil && !end.overflow && end.partialValue == pk {
                    pending[i].count += 1
                    return
                }
                // A consecutive run's last key is pk + count - 1: within range.
                if last.keys == nil { pending[i].keys = (0..<last.count).map { last.pk + $0 } }
                pending[i].keys?.append(pk)
                pending[i].count += 1
                return
            }
            pending.append(p)
        }
        let ids = try storage.historyNameIDs(names)
        var entityIDs: [Int64] = []
        var seen: Set<Int64> = []
        for p in pending where seen.insert(ids[p.entity]).inserted { entityIDs.append(ids[p.entity]) }

        func valuesJSON(_ list: [(Int, AttributeType?, SQLValue)]) -> String? {
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
        let rows = pending.map { p in
            HistoryChangeRow(kind: p.kind, entity: ids[p.entity], pk: p.pk, count: p.count, keys: p.keys, attributes: p.attributes.map { ids[$0] },
                             tombstone: valuesJSON(p.tombstone), old: valuesJSON(p.old), new: valuesJSON(p.new))
        }
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
}
