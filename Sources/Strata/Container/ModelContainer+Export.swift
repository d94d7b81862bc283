/// A whole store as JSON lines (`strata_export`, docs/JSON.md §10): the schema, every
/// object's attributes, then every link, read on one snapshot in pages of bounded size.
///
/// ```
/// {"strata": "export", "version": 1, "schemaVersion": "1.0.0", "versionHash": "…", "schema": {…}}
/// {"_id": "Trip/1", "_entity": "Trip", "name": "Paris", …}                 objects: attributes only
/// {"strata": "links"}
/// {"_id": "Trip/1", "livingAccommodation": "LivingAccommodation/3", …}    links each object keeps
/// {"strata": "end", "objects": 2, "links": 1}
/// ```
enum ExportFormat {
    /// The format this library writes and reads (the header's `version`).
    static let version: Int64 = 1
    /// The key of the header, section and end lines (object lines start with `_id`).
    static let marker = "strata"
    static let header = "export", links = "links", end = "end"
    /// Bytes gathered before each call of the write callback.
    static let chunkSize = 64 * 1024
    /// The longest line an import reads (an inline external-storage value counts).
    static let maxLineLength = 1 << 30

    /// The stored attributes of the entities of `root`'s hierarchy, each once, a composite by
    /// its own name (its fields come with it): what an object line holds.
    static func attributeNames(_ root: Entity) -> [String] {
        var names: [String] = []
        var seen: Set<String> = []
        for e in root.descendants {
            for a in e.attributes where !a.isTransient && a.composite == nil && seen.insert(a.name).inserted { names.append(a.name) }
        }
        return names
    }

    /// Whether the links section gives `rel`'s links: a to-one link held in its owner's row, or
    /// the pairs of a to-many kept in a set, from the set's first end. Each link is given once;
    /// the other end (an inverse) follows from it.
    static func givesLinks(_ rel: Relationship) -> Bool {
        switch rel.placement {
        case .inRow: return true
        case .inPairs(_, let ownerIsFirst): return ownerIsFirst
        case .inInverseRows: return false
        }
    }

    /// The relationships of the entities of `root`'s hierarchy that the links section gives, each once.
    static func linkNames(_ root: Entity) -> [String] {
        var names: [String] = []
        var seen: Set<String> = []
        for e in root.descendants {
            for r in e.relationships where givesLinks(r) && seen.insert(r.name).inserted { names.append(r.name) }
        }
        return names
    }
}

/// Gathers lines and hands them to the caller's write function in chunks.
private struct ExportSink {
    let write: (UnsafeRawBufferPointer) throws -> Void
    var bytes: [UInt8] = []

    mutating func line(_ body: (inout [UInt8]) -> Void) throws {
        body(&bytes)
        bytes.append(UInt8(ascii: "\n"))
        if bytes.count >= ExportFormat.chunkSize { try flush() }
    }

    mutating func flush() throws {
        guard !bytes.isEmpty else { return }
        try bytes.withUnsafeBytes { try write($0) }
        bytes.removeAll(keepingCapacity: true)
    }
}

extension ModelContainer {
    /// Writes the whole store as JSON lines (docs/JSON.md §10) to `write`, in chunks of about
    /// 64 KiB, each ending with a line's end: the header (the schema), every object with its
    /// attributes (external-storage values inline), then the links, then the end line.
    ///
    /// Everything is read on one snapshot of the store (one read transaction on SQLite, one
    /// REPEATABLE READ transaction on PostgreSQL) on a connection of its own: saves of other
    /// contexts and processes go on and are not seen. Each hierarchy is read in pages of at
    /// most `batchSize` objects (by key), so memory does not grow with the store. History is
    /// not exported.
    ///
    /// - Parameter batchSize: objects per read (1 ... 100,000).
    /// - Returns: the number of objects written.
    /// - Throws: what `write` throws (the export stops there); `.invalid` for a bad `batchSize`;
    ///   the errors of a fetch (`.corrupt` for a damaged store, `.incompatibleStore` when it was
    ///   migrated since this container opened it).
    @discardableResult
    public func export(batchSize: Int = 1_000, to write: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        guard (1...100_000).contains(batchSize) else {
            throw StrataError(.invalid, "the export's batch size must be between 1 and 100000, not \(batchSize)")
        }
        let session = try store.makeSession()
        return try withoutActuallyEscaping(write) { write in try export(session, batchSize, ExportSink(write: write)) }
    }

    /// The export on `session`, written to `sink`.
    private func export(_ session: StoreSession, _ batchSize: Int, _ sink: ExportSink) throws -> Int64 {
        var sink = sink
        var objects: Int64 = 0
        var links: Int64 = 0
        try session.readTransaction {
            try sink.line { out in
                var w = JSONWriter()
                w.beginObject()
                w.key(ExportFormat.marker); w.string(ExportFormat.header)
                w.key("version"); w.int(ExportFormat.version)
                w.key("schemaVersion"); w.string(schema.version)
                w.key("versionHash"); w.string(schema.versionHash)
                w.key("schema"); w.raw(schema.jsonText)
                w.endObject()
                out += w.bytes
            }
            for root in schema.rootEntities {
                try ModelContainer.pages(session, root, ExportFormat.attributeNames(root), batchSize) { object in
                    objects += 1
                    try sink.line { $0.append(contentsOf: object.raw) }
                }
            }
            try sink.line { $0 += Array("{\"\(ExportFormat.marker)\":\"\(ExportFormat.links)\"}".utf8) }
            for root in schema.rootEntities {
                let names = ExportFormat.linkNames(root)
                if names.isEmpty { continue }
                try ModelContainer.pages(session, root, names, batchSize) { object in
                    // Only the links an object has: no line for an object without any.
                    let given = object.members.filter { !$0.isEmpty }
                    guard !given.isEmpty else { return }
                    links += 1
                    try sink.line { out in
                        out += Array("{\"_id\":".utf8)
                        out.append(contentsOf: object.id)
                        for m in given {
                            out.append(UInt8(ascii: ","))
                            out.append(contentsOf: m.member)
                        }
                        out.append(UInt8(ascii: "}"))
                    }
                }
            }
            try sink.line { out in
                var w = JSONWriter()
                w.beginObject()
                w.key(ExportFormat.marker); w.string(ExportFormat.end)
                w.key("objects"); w.int(objects)
                w.key("links"); w.int(links)
                w.endObject()
                out += w.bytes
            }
        }
        try sink.flush()
        return objects
    }

    /// One object of a page, as the fetch wrote it.
    private struct PageObject {
        /// The whole object's text.
        var raw: ArraySlice<UInt8>
        /// The `_id` value's text (a JSON string).
        var id: ArraySlice<UInt8>
        /// Each member but `_id` and `_entity`: its `"key":value` text and whether its value is
        /// null or an empty array.
        var members: [(member: ArraySlice<UInt8>, isEmpty: Bool)]
    }

    /// Reads every object of `root`'s hierarchy with `properties`, in key order, a page of at
    /// most `limit` objects at a time, and hands each to `each`.
    private static func pages(_ session: StoreSession, _ root: Entity, _ properties: [String], _ limit: Int,
                              _ each: (PageObject) throws -> Void) throws {
        var after: Int64 = 0
        while true {
            let page = try session.fetchBuffer(FetchDescriptor.keyPage(root, after: after, limit: limit, properties: properties), pending: nil).bytes
            var count = 0
            try page.withUnsafeBufferPointer { buffer in
                var r = JSONReader(buffer)
                try r.readArray { r, _ in
                    count += 1
                    r.skipWhitespace()
                    let start = r.position
                    var object = PageObject(raw: [], id: [], members: [])
                    try r.readObject(checkDuplicates: false) { r, name in
                        r.skipWhitespace()
                        let valueStart = r.position
                        if name == "_id" {
                            let text = try r.readString()
                            guard let parsed = ObjectID.parse(text), parsed.pk > after else {
                                throw StrataError(.internal, "an export page of '\(root.name)' is out of key order at \(text)", entity: root.name)
                            }
                            after = parsed.pk
                            object.id = page[valueStart..<r.position]
                        } else {
                            let kind = try r.peek()
                            try r.skipValue()
                            if name != "_entity" {
                                let value = page[valueStart..<r.position]
                                var member = Array("\"".utf8) + Array(name.utf8) + Array("\":".utf8)
                                member += value
                                let empty = kind == .null || (kind == .array && value.elementsEqual("[]".utf8))
                                object.members.append((member[...], empty))
                            }
                        }
                    }
                    object.raw = page[start..<r.position]
                    try each(object)
                }
            }
            if count < limit { return }
        }
    }
}
