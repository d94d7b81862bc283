/// The reads a prepared fetch runs each time: a session's statements of a compiled fetch,
/// run again with new arguments, on one snapshot plus the pending changes.
protocol CompiledReads: AnyObject {
    func fetchBuffer(_ f: ObjectQueries, args: [SQLValue], pending: PendingReplay?) throws -> JSONBuffer
    func count(sql: String, args: [SQLValue], pending: PendingReplay?) throws -> Int64
    func identifiersJSON(root: Entity, sql: String, args: [SQLValue], pending: PendingReplay?) throws -> [UInt8]
}

/// A fetch compiled once, for any store's session: the SQL of its objects, count and
/// identifiers, the plans, and which arguments take the variables' values; each run only
/// binds them (each store keeps the statements prepared).
final class StorePreparedRead<Session: CompiledReads>: PreparedRead {
    let session: Session
    let compiled: CompiledFetch
    let queries: ObjectQueries
    let countSQL: String
    let identifiersSQL: String

    init(session: Session, compiled: CompiledFetch) {
        self.session = session
        self.compiled = compiled
        queries = compiled.objectQueries
        countSQL = compiled.countSQL
        identifiersSQL = compiled.identifiersSQL
    }

    func fetchJSON(_ values: [SQLValue], pending: PendingReplay?) throws -> JSONBuffer {
        try session.fetchBuffer(queries, args: compiled.arguments(values), pending: pending)
    }

    func count(_ values: [SQLValue], pending: PendingReplay?) throws -> Int64 {
        try session.count(sql: countSQL, args: compiled.arguments(values), pending: pending)
    }

    func identifiersJSON(_ values: [SQLValue], pending: PendingReplay?) throws -> [UInt8] {
        try session.identifiersJSON(root: compiled.root, sql: identifiersSQL, args: compiled.arguments(values), pending: pending)
    }

    /// The SQL texts (held here and in the fetch's clauses), the object plans' name pools and
    /// about 32 bytes per argument and plan column.
    var footprint: Int {
        let sql = queries.objectsSQL.utf8.count + (queries.prefetchedSQL + queries.prefetchedOnceSQL).reduce(0) { $0 + $1.utf8.count }
        let clauses = compiled.joins.utf8.count + (compiled.condition?.utf8.count ?? 0) + compiled.order.utf8.count
            + (compiled.countCondition?.utf8.count ?? 0)
        return sql + clauses + countSQL.utf8.count + identifiersSQL.utf8.count + plans
    }

    private var plans: Int {
        ([queries.plan] + queries.prefetchedPlans).reduce(32 * compiled.args.count) { $0 + $1.pool.count + 32 * $1.columns.count }
    }
}
