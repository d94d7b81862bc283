/// A context compiles its reads: each descriptor becomes a ``CompiledFetch`` in the
/// store's own dialect, and the session runs what it is given.
extension StoreSession {
    func compile(_ d: FetchDescriptor) -> CompiledFetch { CompiledFetch(d, dialect: store.queryDialect) }

    func fetchJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] { try fetchJSON(compile(d), pending: pending) }
    func fetchBuffer(_ d: FetchDescriptor, pending: PendingReplay?) throws -> JSONBuffer { try fetchBuffer(compile(d), pending: pending) }
    func count(_ d: FetchDescriptor, pending: PendingReplay?) throws -> Int64 { try count(compile(d), pending: pending) }
    func identifiersJSON(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] { try identifiersJSON(compile(d), pending: pending) }
    func identifierList(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [ObjectID] { try identifierList(compile(d), pending: pending) }
    func explain(_ d: FetchDescriptor, pending: PendingReplay?) throws -> [UInt8] { try explain(compile(d), pending: pending) }
    func prepare(_ d: FetchDescriptor) throws -> PreparedRead { try prepare(compile(d)) }
    func openCursor(_ d: FetchDescriptor, pending: PendingReplay?) throws -> ObjectCursor { try openCursor(compile(d), pending: pending) }
}
