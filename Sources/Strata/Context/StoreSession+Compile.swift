/// A context compiles its reads: each descriptor becomes a ``CompiledFetch`` in the
/// store's own dialect, and the session runs what it is given.
extension StoreSession {
    func compile(_ d: FetchDescriptor) -> CompiledFetch { CompiledFetch(d, dialect: store.queryDialect) }

    /// Objects, or an aggregation's dictionaries.
    func fetchBuffer(_ d: FetchDescriptor, pending: PendingReplay?) throws -> JSONBuffer {
        let q = compile(d)
        if let r = q.result { return try resultBuffer(r, pending: pending) }
        return try fetchBuffer(q, pending: pending)
    }
    func fetchJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        d.aggregation == nil ? try fetchJSON(compile(d), pending: pending) : try fetchBuffer(d, pending: pending).bytes
    }
    func count(_ d: FetchDescriptor, pending: PendingReplay?) throws -> Int64 { try count(compile(d), pending: pending) }
    func identifiersJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] {
        try identifiersJSON(compile(objects(d, "fetching identifiers")), pending: pending)
    }
    func identifierList(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [ObjectID] {
        try identifierList(compile(objects(d, "fetching identifiers")), pending: pending)
    }
    func explain(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] { try explain(compile(d), pending: pending) }
    func prepare(_ d: FetchDescriptor) throws -> PreparedRead { try prepare(compile(objects(d, "a prepared fetch"))) }
    func openCursor(_ d: FetchDescriptor, pending: PendingReplay?) throws -> ObjectCursor {
        try openCursor(compile(objects(d, "a cursor")), pending: pending)
    }

    /// `d`, when it fetches objects; an aggregation gives dictionaries, which `what` does not read.
    private func objects(_ d: FetchDescriptor, _ what: String) throws -> FetchDescriptor {
        guard d.aggregation == nil else {
            throw StrataError(.invalid, "\(what) reads objects, and this descriptor is an aggregation (groupBy, aggregates, having or distinct): run it with strata_fetch",
                              entity: d.entity.name)
        }
        return d
    }
}
