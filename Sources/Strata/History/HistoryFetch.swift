/// Reads and prunes a store's history: requests become store queries on one
/// snapshot, rows become JSON (names from the store's name table, so that
/// history written before a rename reads under the new names).
enum HistoryFetch {
    static func storage(_ session: StoreSession) throws -> HistoryStorage {
        guard let s = session as? HistoryStorage else { throw StrataError(.invalid, "this store keeps no persistent history") }
        return s
    }

    /// Fails when the request asks for every transaction after a sequence the history
    /// no longer covers completely (pruned, saved without history, or a replaced store).
    /// Messages name where the token is, never the caller's token.
    static func checkExpiry(_ after: [HistoryPredicateTranslator.After], latest: Int64, completeFrom: Int64, store: String) throws {
        for t in after {
            if t.sequence < completeFrom {
                throw StrataError(.historyExpired, "the token at \(t.path) has expired: "
                                  + "changes after it are no longer all in the history (deleted, or saved with history off); "
                                  + "fetch everything again and continue from the latest token", path: t.path)
            }
            if t.sequence > latest {
                throw StrataError(.historyExpired, "the token at \(t.path) is newer than this store's history "
                                  + "(latest \(HistoryToken(sequence: latest, store: store))): the store was replaced or restored; fetch everything again",
                                  path: t.path)
            }
        }
    }

    /// The transactions a request selects, as a JSON array (`strata_fetch_history`).
    static func fetch(_ session: StoreSession, _ request: HistoryRequest, schema: Schema) throws -> [UInt8] {
        let storage = try storage(session)
        let tag = storage.historyStoreTag
        return try storage.readHistory { snap in
            let names = try snap.names()
            let (query, after) = try request.query(names: names, schema: schema, storage: storage, store: tag)
            let bounds = try snap.bounds()
            try checkExpiry(after, latest: bounds.latest, completeFrom: bounds.completeFrom, store: tag)
            var w = JSONWriter()
            w.beginArray()
            try snap.transactions(query) { t, changes in try write(t, changes, names: names, store: tag, to: &w) }
            w.endArray()
            return w.bytes
        }
    }

    /// How the store runs a request, as JSON.
    static func explain(_ session: StoreSession, _ request: HistoryRequest, schema: Schema) throws -> [UInt8] {
        let storage = try storage(session)
        return try storage.readHistory { snap in
            try snap.explain(try request.query(names: try snap.names(), schema: schema, storage: storage, store: storage.historyStoreTag,
                                               anyStore: true).0)
        }
    }

    /// Deletes the transactions a request's predicate selects; returns how many.
    static func delete(_ session: StoreSession, _ request: HistoryRequest, schema: Schema) throws -> Int64 {
        // Refused when present at all, even empty ("sortBy": []).
        guard !request.hasSortBy, request.limit == nil else {
            throw StrataError(.invalid, "strata_delete_history takes a predicate and its bindings (no sortBy or fetchLimit)",
                              path: request.hasSortBy ? "/sortBy" : "/fetchLimit")
        }
        let storage = try storage(session)
        return try storage.deleteHistory { snap in
            try request.query(names: try snap.names(), schema: schema, storage: storage, store: storage.historyStoreTag).0.filter
        }
    }

    // MARK: JSON

    static func name(_ id: Int64, _ names: HistoryNameTable) throws -> HistoryName {
        guard let n = names.byID[id] else {
            throw StrataError(.corrupt, "the store's history names an entity or property (\(id)) its name table does not have")
        }
        return n
    }

    static func kindName(_ k: HistoryChangeRow.Kind) -> String {
        switch k { case .insert: "insert"; case .update: "update"; case .delete: "delete" }
    }

    /// `{"token", "timestamp", "author", "contextName", "changes": [...]}`, keys that do not apply left out.
    static func write(_ t: HistoryTransactionRow, _ changes: [HistoryChangeRow], names: HistoryNameTable, store: String,
                      to w: inout JSONWriter) throws {
        w.beginObject()
        w.key("token"); w.string(HistoryToken(sequence: t.sequence, store: store).description)
        w.key("timestamp"); ValueCodec.writeDate(t.timestamp, to: &w)
        if let a = t.author { w.key("author"); w.string(a) }
        if let c = t.contextName { w.key("contextName"); w.string(c) }
        // A save made with history off: something changed, but what is not known.
        if t.unrecorded { w.key("unrecorded"); w.bool(true) }
        w.key("changes")
        w.beginArray()
        for c in changes {
            let entity = try name(c.entity, names).entity
            let attributes = try c.attributes.map { try name($0, names).property }
            for k in 0..<c.count {
                w.beginObject()
                w.key("kind"); w.string(kindName(c.kind))
                w.key("id"); w.string("\(entity)/\(c.key(k))")
                w.key("entity"); w.string(entity)
                if c.kind == .update { w.key("attributes"); w.beginArray(); for a in attributes { w.string(a) }; w.endArray() }
                try writeValues("tombstone", c.tombstone, names, to: &w)
                try writeValues("old", c.old, names, to: &w)
                try writeValues("new", c.new, names, to: &w)
                w.endObject()
            }
        }
        w.endArray()
        w.endObject()
    }

    /// A stored values object (keys are name numbers) under `key`, with property names.
    static func writeValues(_ key: String, _ json: String?, _ names: HistoryNameTable, to w: inout JSONWriter) throws {
        guard let json else { return }
        w.key(key)
        try writeValues(json, names, to: &w)
    }

    static func writeValues(_ json: String, _ names: HistoryNameTable, to w: inout JSONWriter) throws {
        guard case .object(let members)? = try? JSONValue.parse(json) else {
            throw StrataError(.corrupt, "the store's history holds values that are not a JSON object")
        }
        w.beginObject()
        for (k, v) in members {
            guard let id = Int64(k) else { throw StrataError(.corrupt, "the store's history holds a value under '\(k.prefix(20))', not a name number") }
            w.key(try name(id, names).property)
            w.raw(v.text)
        }
        w.endObject()
    }
}
