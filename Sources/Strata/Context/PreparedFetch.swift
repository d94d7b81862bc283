/// A fetch descriptor decoded, checked, planned and compiled once
/// (`strata_prepare`), then run many times with new values of its variables
/// (`strata_prepared_fetch`), as `sqlite3_prepare` is to `sqlite3_exec`.
///
/// Each variable the predicate compares with something typed (a key path, a
/// string it searches) becomes a parameter of the compiled query: a run only
/// converts its values and binds them. Where only a value can decide the shape
/// of the check — `$a == $b`, `$names.contains($0.name)` (an array or a string),
/// `$q.count` — and for a run that binds nil or an array to a parameter, that
/// run checks the descriptor with its values, as `strata_fetch` does, and gives
/// the same answer.
public final class PreparedFetch {
    let context: ModelContext
    /// The descriptor as given, and its own bindings (the values a run does not give).
    private let source: [(String, JSONValue)]
    private let defaults: [(String, JSONValue)]
    private let compiled: Compiled?
    /// The entity of a descriptor with `sectionBy` (its identifiers are refused), else nil.
    private let sectioned: String?
    /// Whether runs bind values to the compiled query (false: each run checks the descriptor).
    var isCompiled: Bool { compiled != nil }

    private struct Compiled {
        let descriptor: FetchDescriptor
        let read: PreparedRead
        /// Checks and converts a run's values (the schema the descriptor was decoded against).
        let checker: PredicateChecker
    }

    /// - Throws: `.invalid` for a malformed descriptor (as `strata_fetch` would report it,
    ///   except that a variable without a value is not an error until a run).
    public init(context: ModelContext, json: UnsafeBufferPointer<UInt8>) throws {
        self.context = context
        let value = try JSONValue.parse(json)
        guard case .object(let members) = value else {
            throw StrataError(.invalid, "expected a fetch descriptor object, found \(value.typeName)", path: "/")
        }
        source = members
        if let b = value["bindings"], b != .null {
            guard case .object(let given) = b else {
                throw StrataError(.invalid, "'bindings' must be an object of variable names to values", path: "/bindings")
            }
            defaults = given
        } else {
            defaults = []
        }
        do {
            let (d, session) = try context.live {
                let d = try context.descriptor(value, slotted: true)
                return (d, context.source(d).0)
            }
            let schema = d.fromVersion != nil ? (context.previousVersion?.schema ?? context.schema) : context.schema
            compiled = Compiled(descriptor: d, read: try session.prepare(d),
                                checker: PredicateChecker(schema: schema, root: d.entity, bindings: [:]))
            sectioned = d.sectionBy == nil ? nil : d.entity.name
        } catch is PredicateChecker.NeedsValues {
            // Each run checks the predicate with its values; everything else is checked now.
            let d = try context.live { try context.descriptor(.object(members.filter { $0.0 != "predicate" })) }
            compiled = nil
            sectioned = d.sectionBy == nil ? nil : d.entity.name
        }
    }

    /// The objects matching, as a JSON array (``ModelContext/fetch(_:)``).
    public func fetch(bindings: UnsafeBufferPointer<UInt8>?) throws -> [UInt8] {
        try fetchBuffer(bindings: bindings).bytes
    }

    /// The same, in one buffer the caller may take over.
    public func fetchBuffer(bindings: UnsafeBufferPointer<UInt8>?) throws -> JSONBuffer {
        try run(bindings, { try $0.fetchJSON($1, pending: $2) }, { try context.fetchBuffer($0) })
    }

    public func fetchCount(bindings: UnsafeBufferPointer<UInt8>?) throws -> Int64 {
        try run(bindings, { try $0.count($1, pending: $2) }, { try context.fetchCount($0) })
    }

    /// - Throws: `.invalid` for a descriptor with `sectionBy` (as ``ModelContext/fetchIdentifiers(_:)``).
    public func fetchIdentifiers(bindings: UnsafeBufferPointer<UInt8>?) throws -> [UInt8] {
        if let sectioned { throw ModelContext.sectionsRefused(entity: sectioned, in: "strata_prepared_fetch_identifiers") }
        return try run(bindings, { try $0.identifiersJSON($1, pending: $2) }, { try context.fetchIdentifiers($0) })
    }

    private func run<T>(_ json: UnsafeBufferPointer<UInt8>?, _ prepared: (PreparedRead, [SQLValue], PendingReplay?) throws -> T,
                        _ checked: (FetchDescriptor) throws -> T) throws -> T {
        let given = try PreparedFetch.bindings(json)
        if let compiled, let values = try values(compiled, given) {
            return try context.live {
                let (_, pending) = context.source(compiled.descriptor)
                return try prepared(compiled.read, values, pending)
            }
        }
        // The descriptor with this run's values, checked as strata_fetch checks it.
        var merged = defaults.filter { d in !given.contains { $0.0 == d.0 } }
        merged += given
        let value = JSONValue.object(source.filter { $0.0 != "bindings" } + [("bindings", .object(merged))])
        let d = try context.live { try context.descriptor(value) }
        return try checked(d)
    }

    /// A run's bindings: NULL or an object of variable names to values.
    private static func bindings(_ json: UnsafeBufferPointer<UInt8>?) throws -> [(String, JSONValue)] {
        guard let json else { return [] }
        let value = try JSONValue.parse(json)
        switch value {
        case .null: return []
        case .object(let members): return members
        default: throw StrataError(.invalid, "bindings must be an object of variable names to values, found \(value.typeName)", path: "/")
        }
    }

    /// The values of the compiled slots, in slot order; nil when one changes the shape of the check.
    private func values(_ c: Compiled, _ given: [(String, JSONValue)]) throws -> [SQLValue]? {
        var values: [SQLValue] = []
        values.reserveCapacity(c.descriptor.slots.count)
        for slot in c.descriptor.slots {
            guard let v = given.last(where: { $0.0 == slot.name })?.1 ?? defaults.last(where: { $0.0 == slot.name })?.1 else {
                let known = Set((defaults + given).map(\.0)).sorted().joined(separator: ", ")
                throw StrataError(.invalid, "no value for variable '\(slot.name)' (bindings: \(known))", entity: c.descriptor.entity.name, path: "/\(slot.name)")
            }
            do {
                guard let value = try c.checker.slotValue(slot, v) else { return nil }
                values.append(value)
            } catch var e as StrataError {
                if e.entity == nil { e.entity = c.descriptor.entity.name }
                e.path = "/\(slot.name)"
                throw e
            }
        }
        return values
    }
}

extension ModelContext {
    /// A fetch descriptor prepared once for many runs (``PreparedFetch``).
    public func prepare(_ json: UnsafeBufferPointer<UInt8>) throws -> PreparedFetch {
        try PreparedFetch(context: self, json: json)
    }

    /// The objects a descriptor matches, read in batches (``ObjectCursor/next(_:)``) on
    /// one snapshot, with this context's pending changes as they are now.
    public func cursor(_ d: FetchDescriptor) throws -> ObjectCursor {
        try live {
            let (s, p) = source(d)
            return try s.openCursor(d, pending: p)
        }
    }
}
