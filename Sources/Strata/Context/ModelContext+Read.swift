/// Reads: fetch descriptors (of this version or, in a didMigrate hook, the one before),
/// one object, fetches, counts, identifiers and query plans, pending changes included
/// unless a descriptor opts out.
extension ModelContext {
    /// Decodes a fetch descriptor: against this context's schema, or, with
    /// `"fromVersion"`, against the version before the running migration stage.
    ///
    /// - Throws: `.invalid` for a malformed descriptor, and for a `fromVersion` other than
    ///   the stage's old version or outside a didMigrate hook.
    public func descriptor(_ json: UnsafeBufferPointer<UInt8>) throws -> FetchDescriptor {
        try descriptor(try JSONValue.parse(json))
    }

    /// - Parameter slotted: variables become slots each run of a prepared fetch binds.
    func descriptor(_ value: JSONValue, slotted: Bool = false) throws -> FetchDescriptor {
        guard let from = value["fromVersion"], from != .null else {
            return try FetchDescriptor.decode(value, schema: schema, predicatePath: JSONPath() / "predicate", slotted: slotted)
        }
        guard case .string(let version) = from else {
            throw StrataError(.invalid, "'fromVersion' must be a version string, found \(from.typeName)", path: "/fromVersion")
        }
        guard let previous = previousVersion, previous.schema.version == version else {
            let hint = previousVersion.map { "this hook's stage comes from version \($0.schema.version)" }
                ?? "only a didMigrate hook reads an earlier version"
            throw StrataError(.invalid, "'fromVersion': \"\(version)\" cannot be read here (\(hint))", path: "/fromVersion")
        }
        guard previous.session != nil else {
            throw StrataError(.invalid, "'fromVersion': \"\(version)\" cannot be read while this stage runs: an in-memory store does not keep "
                              + "the version before a stage readable until the stage commits; read what didMigrate needs in willMigrate",
                              path: "/fromVersion")
        }
        return try FetchDescriptor.decode(value, schema: previous.schema, predicatePath: JSONPath() / "predicate", slotted: slotted)
    }

    /// The session a descriptor reads through, and the pending changes it sees (none in an earlier version).
    func source(_ d: FetchDescriptor) -> (StoreSession, PendingReplay?) {
        if d.fromVersion != nil, let previous = previousVersion?.session { return (previous, nil) }
        return (session, pendingReplay(d.includePendingChanges))
    }

    /// One object as JSON (pending changes included).
    public func get(id text: String) throws -> [UInt8] {
        try live {
            let id = try resolve(text)
            guard let json = try session.objectJSON(id, pending: pendingReplay()) else {
                throw StrataError(.notFound, "no object \(text)", entity: id.entity.name)
            }
            return json
        }
    }

    public func fetch(_ descriptor: FetchDescriptor) throws -> [UInt8] {
        try live { let (s, p) = source(descriptor); return try s.fetchJSON(descriptor, pending: p) }
    }

    /// The fetch's JSON in one buffer the caller may take over (the C layer hands it out as is).
    public func fetchBuffer(_ descriptor: FetchDescriptor) throws -> JSONBuffer {
        try live { let (s, p) = source(descriptor); return try s.fetchBuffer(descriptor, pending: p) }
    }

    public func fetchCount(_ descriptor: FetchDescriptor) throws -> Int64 {
        try live { let (s, p) = source(descriptor); return try s.count(descriptor, pending: p) }
    }

    /// - Throws: `.invalid` for a descriptor with `sectionBy` (identifiers come in one array).
    public func fetchIdentifiers(_ descriptor: FetchDescriptor) throws -> [UInt8] {
        if descriptor.sectionBy != nil { throw ModelContext.sectionsRefused(entity: descriptor.entity.name, in: "strata_fetch_identifiers") }
        return try live { let (s, p) = source(descriptor); return try s.identifiersJSON(descriptor, pending: p) }
    }

    /// The SQL, parameter count and SQLite query plan of a fetch, as JSON.
    public func explain(_ descriptor: FetchDescriptor) throws -> [UInt8] {
        try live { let (s, p) = source(descriptor); return try s.explain(descriptor, pending: p) }
    }

    /// `.invalid`, naming `/sectionBy`: a descriptor of `entity` with sections given to `call`,
    /// which answers without them.
    static func sectionsRefused(entity: String, in call: String) -> StrataError {
        StrataError(.invalid, "'sectionBy' sections objects; \(call) does not take it (fetch the identifiers without it, or fetch the objects in sections)",
                          entity: entity, path: "/sectionBy")
    }

    /// `["Trip/1","Trip/2"]`
    public static func identifierArray(_ ids: [ObjectID]) -> [UInt8] {
        var w = JSONWriter(capacity: ids.count * 12 + 2)
        w.beginArray()
        for id in ids { id.write(to: &w) }
        w.endArray()
        return w.bytes
    }
}
