/// A context's history calls: fetch, explain and delete the transactions a history
/// descriptor selects, through the context's session (so that `Context/` names
/// nothing of `History/`).
extension ModelContext {
    /// The transactions a history descriptor selects, as a JSON array (`HistoryRequest`).
    ///
    /// - Throws: `.invalid` for a malformed descriptor; `.historyExpired` when the
    ///   predicate asks for everything after a token the history no longer covers.
    public func fetchHistory(_ json: UnsafeBufferPointer<UInt8>?) throws -> [UInt8] {
        let request = try HistoryRequest.decode(json)
        return try live { try HistoryFetch.fetch(session, request, schema: schema) }
    }

    /// How the store runs a history descriptor (SQL and query plan), as JSON.
    public func explainHistory(_ json: UnsafeBufferPointer<UInt8>?) throws -> [UInt8] {
        let request = try HistoryRequest.decode(json)
        return try live { try HistoryFetch.explain(session, request, schema: schema) }
    }

    /// Deletes the transactions a history descriptor's predicate selects (all without one);
    /// returns how many. Fetching after a token older than the newest deleted one then fails
    /// with `.historyExpired`.
    ///
    /// - Warning: the deleted transactions are gone for every reader of the store.
    @discardableResult
    public func deleteHistory(_ json: UnsafeBufferPointer<UInt8>?) throws -> Int64 {
        let request = try HistoryRequest.decode(json)
        return try live {
            try requireWritable()
            return try HistoryFetch.delete(session, request, schema: schema)
        }
    }

    public func fetchHistory(_ json: String) throws -> String {
        var json = json
        return String(decoding: try json.withUTF8 { try fetchHistory($0) }, as: UTF8.self)
    }

    @discardableResult
    public func deleteHistory(_ json: String) throws -> Int64 {
        var json = json
        return try json.withUTF8 { try deleteHistory($0) }
    }
}
