import Glibc

/// A container's change observers: each hears, as JSON, of every save of the
/// container (after its commit, on the saving thread) and, when the program
/// polls, of every transaction other containers and processes recorded in
/// the store's history since the last one this container delivered.
///
/// The JSON is a change set's: `{"token": …, "inserted": {"Trip": ["Trip/1"]},
/// "updated": {"Trip": [{"id": …, "attributes": [...]}]}, "deleted": {"Trip":
/// [{"id": …, "tombstone": {...}}]}}`, only with the entities an observer
/// asked for. When the history no longer covers everything since the last
/// delivered transaction (pruned, or saved with history off), a poll delivers
/// `{"token": <latest>, "expired": true}` once: refetch everything.
public final class ChangeObservers: @unchecked Sendable {
    public typealias Callback = (String) -> Void

    private final class Entry {
        let id: Int
        /// Concrete entity names, or nil for every entity.
        let names: Set<String>?
        let callback: Callback
        var removed = false
        init(id: Int, names: Set<String>?, callback: @escaping Callback) { self.id = id; self.names = names; self.callback = callback }
    }

    private let schema: Schema
    private let lock = Lock()
    /// Serializes polls, so that transactions are delivered once and in order.
    private let pollLock = Lock()
    private var entries: [Entry] = []
    private var nextID = 0
    /// Set by `close`: no observer is added or called afterwards.
    private var closed = false
    /// Threads delivering now, each with how many deliveries it is inside (a callback may save).
    private var deliveringThreads: [pthread_t: Int] = [:]
    /// The newest sequence delivered (nil until the first observer starts the count).
    private var position: Int64?
    /// Recorded with each transaction of this container (whose saves are delivered as they
    /// commit): polls skip the transactions that carry it.
    let origin: String
    private var pollSession: StoreSession?
    private let makeSession: () throws -> StoreSession

    init(schema: Schema, origin: String, makeSession: @escaping () throws -> StoreSession) {
        self.schema = schema
        self.origin = origin
        self.makeSession = makeSession
    }

    /// Adds an observer of the named entities (and their subentities; nil: all).
    /// The first observer fixes where polling starts: transactions committed after it.
    ///
    /// - Throws: `.invalid` for a name the schema does not have.
    public func add(entityNames: [String]?, _ callback: @escaping Callback) throws -> Int {
        var names: Set<String>?
        if let list = entityNames {
            var all: Set<String> = []
            for (i, n) in list.enumerated() {
                guard let e = schema.entity(named: n) else {
                    throw StrataError(.invalid, "unknown entity '\(n)' in the observer's entityNames (the schema has: \(schema.entities.map(\.name).joined(separator: ", ")))",
                                      entity: n, path: "/entityNames/\(i)")
                }
                for d in e.descendants { all.insert(d.name) }
            }
            names = all
        }
        let start = try lock.withLock { position } == nil ? bounds() : nil
        return try lock.withLock {
            guard !closed else { throw StrataError(.misuse, "the container is closed: it takes no new observers") }
            if position == nil { position = start?.latest ?? 0 }
            nextID += 1
            entries.append(Entry(id: nextID, names: names, callback: callback))
            return nextID
        }
    }

    /// Adds an observer for a JSON filter: NULL, empty, `{}` (every entity) or
    /// `{"entityNames": ["Trip", …]}`.
    ///
    /// - Throws: `.invalid` naming the JSON path of a malformed filter or unknown entity.
    public func add(filter json: UnsafeBufferPointer<UInt8>?, _ callback: @escaping Callback) throws -> Int {
        guard let json, !json.isEmpty else { return try add(entityNames: nil, callback) }
        let value = try JSONValue.parse(json)
        var o = try ObjectReader(value, path: JSONPath(), what: "observer filter")
        var names: [String]?
        if let list = try o.array("entityNames") {
            names = try list.enumerated().map { i, v in
                guard case .string(let s) = v else {
                    throw StrataError(.invalid, "entityNames holds entity names (strings), found \(v.typeName)", path: "/entityNames/\(i)")
                }
                return s
            }
        }
        try o.finish()
        return try add(entityNames: names, callback)
    }

    /// Stops an observer. Safe from inside its own callback; a call already running on
    /// another thread may finish after this returns, and no new call starts.
    public func remove(_ id: Int) {
        let gone: [Entry] = lock.withLock {
            let g = entries.filter { $0.id == id }
            for e in g { e.removed = true }
            entries.removeAll { $0.id == id }
            return g
        }
        _ = gone  // released outside the lock: a callback may own user data
    }

    public var count: Int { lock.withLock { entries.count } }

    /// Ends every observer (the container closes): once this returns none is called again,
    /// a call running on another thread has finished, and the callbacks (with the user data
    /// they own) are released. Called from inside a callback, it cannot wait for that call.
    public func close() {
        let gone: [Entry] = lock.withLock {
            closed = true
            for e in entries { e.removed = true }
            defer { entries = [] }
            return entries
        }
        _ = gone
        let me = pthread_self()
        while lock.withLock({ deliveringThreads.contains { pthread_equal($0.key, me) == 0 } }) { usleep(500) }
    }

    private func deliver(_ json: (Set<String>?) -> String?) {
        let me = pthread_self()
        guard lock.withLock({ () -> Bool in
            guard !closed else { return false }
            deliveringThreads[me, default: 0] += 1
            return true
        }) else { return }
        // The list (and the callbacks it holds) is released before the delivery ends.
        deliverEach(json)
        lock.withLock {
            let n = (deliveringThreads[me] ?? 1) - 1
            deliveringThreads[me] = n > 0 ? n : nil
        }
    }

    private func deliverEach(_ json: (Set<String>?) -> String?) {
        for e in lock.withLock({ entries }) {
            guard lock.withLock({ !e.removed }), let text = json(e.names) else { continue }
            e.callback(text)
        }
    }

    /// A save of this container committed (a save hook's observer).
    func saved(_ changes: ChangeSet) {
        let delivering: Bool = lock.withLock {
            guard let p = position else { return false }
            // Delivered now: when it is the next transaction, polls need not look at it again
            // (nor call it missing if it is deleted before they run). Sequences come from the
            // file: the largest has no next.
            if let t = changes.token.flatMap(HistoryToken.parse), ChangeObservers.follows(t.sequence, p) { position = t.sequence }
            return !entries.isEmpty
        }
        guard delivering else { return }
        deliver { changes.json(entityNames: $0) }
    }

    private func session() throws -> StoreSession {
        if let s = pollSession { return s }
        let s = try makeSession()
        pollSession = s
        return s
    }

    private func bounds() throws -> (latest: Int64, completeFrom: Int64) {
        try pollLock.withLock {
            guard let storage = try session() as? HistoryStorage else { return (0, 0) }
            return try storage.readHistory { try $0.bounds() }
        }
    }

    /// Delivers the transactions recorded since the last delivered one that this container
    /// did not make, one callback per transaction, in order, on the calling thread.
    ///
    /// The transactions since then are complete unless one is missing (deleted: sequences
    /// are never skipped otherwise) or another container saved with history off (an
    /// unrecorded transaction); then observers hear `{"token": <latest>, "expired": true}` once.
    public func poll() throws {
        try pollLock.withLock {
            guard let start = lock.withLock({ position }) else { return }
            guard let storage = try session() as? HistoryStorage else { return }
            let tag = storage.historyStoreTag
            var found: [(Set<String>?) -> String?] = []
            var expired = false
            let newest: Int64 = try storage.readHistory { snap in
                let bounds = try snap.bounds()
                if start > bounds.latest {
                    expired = true
                    return bounds.latest
                }
                let names = try snap.names()
                var q = HistoryQuery()
                q.filter = .compare(.sequence, .greater, .int(start))
                q.sort = [(.sequence, true)]
                // Sequences come from the file: compared, never stepped past the largest.
                var previous = start
                try snap.transactions(q) { t, changes in
                    if !ChangeObservers.follows(t.sequence, previous) || (t.unrecorded && t.origin != origin) { expired = true }
                    previous = Swift.max(previous, t.sequence)
                    if expired || t.origin == origin { return }
                    found.append(try ChangeObservers.changeSetJSON(t, changes, names: names, store: tag))
                }
                if previous < bounds.latest { expired = true }
                return bounds.latest
            }
            lock.withLock { position = expired ? newest : max(start, newest) }
            if expired {
                let text = "{\"token\":\"\(HistoryToken(sequence: newest, store: tag))\",\"expired\":true}"
                deliver { _ in text }
                return
            }
            for json in found { deliver(json) }
        }
    }

    /// Whether sequence `n` comes right after `previous` (never stepping past the largest).
    static func follows(_ n: Int64, _ previous: Int64) -> Bool { previous < .max && n == previous + 1 }

    /// A recorded transaction in a change set's JSON, for an observer's entity names.
    static func changeSetJSON(_ t: HistoryTransactionRow, _ changes: [HistoryChangeRow], names: HistoryNameTable,
                              store: String) throws -> (Set<String>?) -> String? {
        struct Item { let kind: HistoryChangeRow.Kind; let entity: String; let row: HistoryChangeRow; let attributes: [String] }
        let items = try changes.map { c in
            Item(kind: c.kind, entity: try HistoryFetch.name(c.entity, names).entity, row: c,
                 attributes: try c.attributes.map { try HistoryFetch.name($0, names).property })
        }
        // Values are checked now: a bad row fails the poll, not a callback.
        var tombstones: [Int: String] = [:]
        for (i, item) in items.enumerated() {
            guard let json = item.row.tombstone else { continue }
            var w = JSONWriter()
            try HistoryFetch.writeValues(json, names, to: &w)
            tombstones[i] = w.string
        }
        let token = HistoryToken(sequence: t.sequence, store: store).description
        return { only in
            let chosen = items.indices.filter { only?.contains(items[$0].entity) ?? true }
            guard !chosen.isEmpty else { return nil }
            var w = JSONWriter()
            w.beginObject()
            w.key("token"); w.string(token)
            for (key, kind) in [("inserted", HistoryChangeRow.Kind.insert), ("updated", .update), ("deleted", .delete)] {
                w.key(key)
                w.beginObject()
                var order: [String] = []
                for i in chosen where items[i].kind == kind && !order.contains(items[i].entity) { order.append(items[i].entity) }
                for entity in order {
                    w.key(entity)
                    w.beginArray()
                    for i in chosen where items[i].kind == kind && items[i].entity == entity {
                        let item = items[i]
                        for k in 0..<item.row.count {
                            let id = "\(entity)/\(item.row.key(k))"
                            switch kind {
                            case .insert: w.string(id)
                            case .update:
                                w.beginObject()
                                w.key("id"); w.string(id)
                                w.key("attributes"); w.beginArray(); for a in item.attributes { w.string(a) }; w.endArray()
                                w.endObject()
                            case .delete:
                                w.beginObject()
                                w.key("id"); w.string(id)
                                if let t = tombstones[i] { w.key("tombstone"); w.raw(t) }
                                w.endObject()
                            }
                        }
                    }
                    w.endArray()
                }
                w.endObject()
            }
            w.endObject()
            return w.string
        }
    }
}
