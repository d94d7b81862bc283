/// The reads of the C surface, each in one call: the context decodes the
/// descriptor's JSON, compiles it with the store's dialect and runs it, so
/// that no decoded request crosses the C shim or outlives the call.
extension ModelContext {
    /// `strata_fetch`: the matching objects as a JSON array, in a buffer the caller may take over.
    /// A descriptor text seen before runs the plan compiled then (``DescriptorCache``).
    public func fetchBuffer(descriptorJSON json: UnsafeBufferPointer<UInt8>) throws -> JSONBuffer {
        if let cached = try cachedRead(json, { try $0.fetchJSON($1, pending: $2) }) { return cached }
        return try fetchBuffer(descriptor(json))
    }

    /// `strata_fetch_count` (cached as `strata_fetch` is).
    public func fetchCount(descriptorJSON json: UnsafeBufferPointer<UInt8>) throws -> Int64 {
        if let cached = try cachedRead(json, { try $0.count($1, pending: $2) }) { return cached }
        return try fetchCount(descriptor(json))
    }

    /// `strata_fetch_identifiers`: the matching identifiers as a JSON array.
    public func fetchIdentifiers(descriptorJSON json: UnsafeBufferPointer<UInt8>) throws -> [UInt8] {
        try fetchIdentifiers(descriptor(json))
    }

    /// `strata_explain`.
    public func explain(descriptorJSON json: UnsafeBufferPointer<UInt8>) throws -> [UInt8] {
        try explain(descriptor(json))
    }

    /// `strata_fetch_cursor`.
    public func cursor(descriptorJSON json: UnsafeBufferPointer<UInt8>) throws -> ObjectCursor {
        try cursor(descriptor(json))
    }

    /// `strata_delete_where`: deletes every object of `entity` (and its subentities) that
    /// `predicateJSON` matches (nil: all of them); returns how many were marked deleted.
    @discardableResult
    public func delete(entity: String, predicateJSON: UnsafeBufferPointer<UInt8>?) throws -> Int {
        try delete(matching: FetchDescriptor.decodeDeletion(entity: entity, predicate: predicateJSON, schema: schema))
    }
}
