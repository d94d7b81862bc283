/// Reads an export (``ModelContainer/export(batchSize:to:)``, docs/JSON.md §10) line by line
/// from the caller's read function, holding one line at a time.
private struct LineReader {
    let read: (UnsafeMutableRawBufferPointer) throws -> Int
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// The number of the line last returned (1-based).
    private(set) var number = 0

    init(_ read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) { self.read = read }

    /// The next line without its end (`\n`, or `\r\n`), or nil at the end of the input.
    mutating func next() throws -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if start < end {
                if let nl = chunk[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                    line += chunk[start..<nl]
                    start = nl + 1
                    return finish(line)
                }
                line += chunk[start..<end]
                start = end
                guard line.count <= ExportFormat.maxLineLength else {
                    throw StrataError(.invalid, "line \(number + 1): longer than \(ExportFormat.maxLineLength) bytes")
                }
            }
            if atEnd { return line.isEmpty ? nil : finish(line) }
            let n = try chunk.withUnsafeMutableBytes { try read($0) }
            guard n >= 0, n <= chunk.count else {
                throw StrataError(.callback, "the read function returned \(n) (not a count of bytes between 0 and \(chunk.count))")
            }
            if n == 0 { atEnd = true }
            start = 0
            end = n
        }
    }

    private mutating func finish(_ line: [UInt8]) -> [UInt8] {
        number += 1
        return line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line
    }
}

/// One import, inside the save's transaction: the lines, the writer they go to, and what the
/// end line is checked against.
private final class Importer {
    let context: ModelContext
    let writer: StoreWriter
    var schema: Schema { context.schema }
    var lines: LineReader
    var objects: Int64 = 0
    var links: Int64 = 0
    /// The largest key imported per root entity (by name): the key counters move past them.
    var largestKeys: [String: (root: Entity, key: Int64)] = [:]

    init(context: ModelContext, writer: StoreWriter, lines: LineReader) {
        self.context = context
        self.writer = writer
        self.lines = lines
    }

    /// A line's `strata` member, when it is a header, section or end line.
    func marker(_ value: JSONValue) -> String? {
        if case .string(let s)? = value[ExportFormat.marker] { return s }
        return nil
    }

    /// Runs `body` on the text of a line; an error names the line (malformed JSON anywhere in
    /// it first, as for every input).
    func onLine<T>(_ line: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T {
        try line.withUnsafeBufferPointer { buffer in
            do {
                return try body(buffer)
            } catch var e as StrataError {
                if e.reason != .malformedJSON {
                    var scan = JSONReader(buffer)
                    do { try scan.skipValue(); try scan.expectEnd() } catch let syntax as StrataError { e = syntax }
                }
                e.message = "line \(lines.number): " + e.message
                throw e
            }
        }
    }

    /// The object an identifier names: its entity must be `kind` or below it, and the
    /// object must have been imported (an earlier object line).
    func existing(_ text: String, kind: Entity, what: String) throws -> ObjectID {
        guard let parsed = ObjectID.parse(text) else {
            throw StrataError(.invalid, "\(what): \"\(text)\" is not an identifier like \"\(kind.name)/1\"", entity: kind.name)
        }
        guard let named = schema.entity(named: parsed.entity) else {
            throw StrataError(.invalid, "\(what): \"\(text)\" names an entity the schema does not have", entity: kind.name)
        }
        guard named.isKind(of: kind) else {
            throw StrataError(.validation, "\(what): \(text) is not a '\(kind.name)'", entity: named.name)
        }
        guard let concrete = try writer.concreteEntity(root: named.root, pk: parsed.pk), concrete === named else {
            throw StrataError(.invalid, "\(what): no object \(text) was imported (a dangling identifier)", entity: named.name)
        }
        return ObjectID(entity: named, pk: parsed.pk)
    }

    /// The `_id` of an object or link line, before its other members are read.
    func identifier(_ buffer: UnsafeBufferPointer<UInt8>) throws -> String {
        var r = JSONReader(buffer)
        guard try r.peek() == .object else { throw StrataError(.invalid, "expected a JSON object") }
        var found: String?
        try r.readObject(checkDuplicates: false) { r, key in
            if key == "_id", found == nil, try r.peek() == .string { found = try r.readString() } else { try r.skipValue() }
        }
        guard let found else { throw StrataError(.invalid, "the line has no '_id' (an identifier like \"Trip/1\")", path: "/_id") }
        return found
    }

    /// An object line: its row, with the key of its identifier and no links.
    func object(_ buffer: UnsafeBufferPointer<UInt8>) throws {
        let text = try identifier(buffer)
        guard let parsed = ObjectID.parse(text), let e = schema.entity(named: parsed.entity) else {
            throw StrataError(.invalid, "'_id': \"\(text)\" is not an identifier of an entity of the schema (like \"Trip/1\")", path: "/_id")
        }
        guard parsed.pk < Int64.max else { throw StrataError(.invalid, "'_id': the key of \(text) leaves no key after it", entity: e.name, path: "/_id") }
        var values = e.defaultRow
        var r = JSONReader(buffer)
        let read = try context.readObjectKeys(&r, e, JSONPath(), accepting: [.entity, .id], attribute: { values[$0] = $1 }) { key, value in
            if key == .entity, value != e.name {
                throw StrataError(.invalid, "'_entity' \"\(value)\" is not the entity of \(text)", entity: e.name, path: "/_entity")
            }
        }
        try r.expectEnd()
        if let l = read.links.first {
            throw StrataError(.invalid, "'\(e.name).\(l.rel.name)': an object line holds attributes only; links come after the \"links\" line",
                              entity: e.name, attribute: l.rel.name, path: l.path.description)
        }
        try context.checkRequired(values, e, JSONPath())
        try writer.insert(ObjectID(entity: e, pk: parsed.pk), values)
        objects += 1
        if parsed.pk > largestKeys[e.root.name]?.key ?? 0 { largestKeys[e.root.name] = (e.root, parsed.pk) }
    }

    /// A link line: the links an object keeps (``ExportFormat/givesLinks(_:)``), each to an
    /// imported object.
    func link(_ buffer: UnsafeBufferPointer<UInt8>) throws {
        let text = try identifier(buffer)
        guard let parsed = ObjectID.parse(text), let named = schema.entity(named: parsed.entity) else {
            throw StrataError(.invalid, "'_id': \"\(text)\" is not an identifier of an entity of the schema (like \"Trip/1\")", path: "/_id")
        }
        let owner = try existing(text, kind: named, what: "'_id'")
        let e = owner.entity
        var r = JSONReader(buffer)
        var seen: Set<String> = []
        try r.readObject(checkDuplicates: false) { r, key in
            guard seen.insert(key).inserted else { throw context.duplicateKey(key, e, JSONPath()) }
            if key == "_id" { try r.skipValue(); return }
            let path = "/" + key
            guard let rel = e.relationshipByName[key] else {
                throw StrataError(.invalid, "'\(e.name)' has no relationship '\(key)' (a link line gives an object's links only)",
                                  entity: e.name, attribute: key, path: path)
            }
            guard ExportFormat.givesLinks(rel) else {
                let other = rel.inverse.map { "'\($0.entity.name).\($0.name)'" } ?? "its other end"
                throw StrataError(.invalid, "'\(e.name).\(rel.name)': its links are given by \(other), not here", entity: e.name, attribute: key, path: path)
            }
            let what = "'\(e.name).\(rel.name)'"
            if rel.isToMany {
                var targets: [Int64] = []
                var unique: Set<Int64> = []
                guard try r.peek() == .array else {
                    throw StrataError(.validation, "\(what) takes an array of identifiers", entity: e.name, attribute: key, path: path)
                }
                try r.readArray { r, i in
                    guard try r.peek() == .string else {
                        throw StrataError(.validation, "\(what) takes an array of identifiers", entity: e.name, attribute: key, path: path + "/\(i)")
                    }
                    let target = try existing(try r.readString(), kind: rel.destination, what: what)
                    guard unique.insert(target.pk).inserted else {
                        throw StrataError(.invalid, "\(what) gives \(target) twice", entity: e.name, attribute: key, path: path + "/\(i)")
                    }
                    targets.append(target.pk)
                }
                try writer.addPairs(rel, owner: owner.pk, targets: targets)
            } else {
                switch try r.peek() {
                case .null: try r.readNull()
                case .string:
                    let target = try existing(try r.readString(), kind: rel.destination, what: what)
                    try writer.setLinks(rel, rows: [owner.pk], to: target.pk)
                    // One-to-one: no other object may link to the same one.
                    if let inverse = rel.inverse, !inverse.isToMany,
                       let other = try writer.clearLinks(rel, to: target.pk, keeping: [owner.pk]).first {
                        throw StrataError(.validation, "\(what): \(target) is linked by \(other) as well, and '\(inverse.entity.name).\(inverse.name)' is to-one",
                                          entity: e.name, attribute: key, path: path)
                    }
                default:
                    throw StrataError(.validation, "\(what) takes an identifier or null", entity: e.name, attribute: key, path: path)
                }
            }
        }
        try r.expectEnd()
        links += 1
    }

    /// The end line: it counts what the lines before it gave.
    func end(_ value: JSONValue) throws {
        for (name, expected) in [("objects", objects), ("links", links)] {
            guard case .number(let n)? = value[name], Int64(n) == expected else {
                throw StrataError(.invalid, "the end line counts \(value[name]?.text ?? "no") \(name), and \(expected) were read (a damaged export)", path: "/" + name)
            }
        }
    }

    /// After every line: the required to-one links every object must have, each checked by one
    /// fetch (the objects of the entity that declares it, without that link).
    func checkRequiredLinks() throws {
        for e in schema.entities {
            for rel in e.ownRelationships where !rel.isToMany && !rel.isOptional && rel.isHeldInRow {
                let d = try FetchDescriptor.decode(.object([("entity", .string(e.name)), ("fetchLimit", .number("1")),
                                                            ("predicate", .object([("==", .array([.object([("key", .string(rel.name))]), .null]))]))]),
                                                   schema: schema)
                if let id = try context.session.identifierList(d, pending: nil).first {
                    throw StrataError(.validation, "\(id) has no '\(rel.name)', which is required (its link line gives none)", entity: e.name, attribute: rel.name)
                }
            }
        }
    }
}

extension ModelContainer {
    /// Imports an export (``export(batchSize:to:)``, docs/JSON.md §10) into this store, which
    /// must hold no object and the export's schema (equal version hashes): every object keeps
    /// its identifier, and the key counters move past the imported keys, so later inserts get
    /// new ones. `read` fills the buffer it is given and returns the number of bytes, 0 at the
    /// end; lines are read one at a time, so memory does not grow with the export.
    ///
    /// All or nothing: everything is written in one transaction (one save), committed after
    /// the end line; on any failure nothing is written. The import is not recorded in the
    /// store's history, and observers are not told of it. Contexts that reserved keys before
    /// the import may hold keys it used: make contexts after importing.
    ///
    /// - Returns: the number of objects imported.
    /// - Throws: each naming the line (`line 3: …`): `.incompatibleStore` for an export of
    ///   another schema (naming the entities that differ) or a store that holds objects;
    ///   `.invalid` for malformed JSON, a line out of place, an unknown entity, attribute or
    ///   relationship, an identifier of no imported object, a missing or wrong end line;
    ///   `.validation` for a bad value; `.constraint` for a unique value or an identifier given
    ///   twice; `.callback` when `read` returns more than it was given room for (or less than 0);
    ///   what `read` throws.
    @discardableResult
    public func importObjects(from read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws -> Int64 {
        let context = try makeContext()
        try context.requireWritable()
        var lines = LineReader(read)
        guard let first = try lines.next() else { throw StrataError(.invalid, "line 1: the input is empty (an export starts with its header line)") }
        let header: JSONValue
        do { header = try first.withUnsafeBufferPointer { try JSONValue.parse($0) } } catch var e as StrataError {
            e.message = "line 1: " + e.message
            throw e
        }
        try checkHeader(header)
        var imported: Int64 = 0
        var started = false
        try context.session.save { writer in
            // A store that starts a save over (PostgreSQL, after a conflict) cannot read the input again.
            guard !started else {
                throw StrataError(.busy, "the import conflicted with another transaction and cannot read its input again (nothing was imported)")
            }
            started = true
            let importer = Importer(context: context, writer: writer, lines: lines)
            for root in schema.rootEntities {
                guard try context.session.count(FetchDescriptor(entity: root), pending: nil) == 0 else {
                    throw StrataError(.incompatibleStore, "the store holds '\(root.name)' objects: an import goes into a store without objects (nothing was imported)",
                                      entity: root.name)
                }
            }
            var section = ExportFormat.header
            while let line = try importer.lines.next() {
                if section == ExportFormat.end {
                    throw StrataError(.invalid, "line \(importer.lines.number): a line after the end line")
                }
                let isObject = line.first == UInt8(ascii: "{") && line.dropFirst().starts(with: "\"_id\"".utf8)
                if isObject, section == ExportFormat.header {
                    try importer.onLine(line) { try importer.object($0) }
                } else if isObject, section == ExportFormat.links {
                    try importer.onLine(line) { try importer.link($0) }
                } else {
                    let value = try importer.onLine(line) { try JSONValue.parse($0) }
                    let marker = importer.marker(value)
                    switch (section, marker) {
                    case (ExportFormat.header, ExportFormat.links?):
                        section = ExportFormat.links
                    case (ExportFormat.links, ExportFormat.end?):
                        try importer.onLine(line) { _ in try importer.end(value) }
                        section = ExportFormat.end
                    case (ExportFormat.header, _) where marker == nil:
                        try importer.onLine(line) { try importer.object($0) }
                    case (ExportFormat.links, _) where marker == nil:
                        try importer.onLine(line) { try importer.link($0) }
                    default:
                        let expected = section == ExportFormat.header ? "an object line or {\"strata\": \"links\"}" : "a link line or the end line"
                        throw StrataError(.invalid, "line \(importer.lines.number): expected \(expected), found a \(marker.map { "\"\($0)\"" } ?? "") line out of place")
                    }
                }
            }
            guard section == ExportFormat.end else {
                throw StrataError(.invalid, "line \(importer.lines.number + 1): the input ends before the end line ({\"strata\": \"end\", …}): a truncated export (nothing was imported)")
            }
            try importer.checkRequiredLinks()
            for (_, largest) in importer.largestKeys { try writer.keepKeys(root: largest.root, through: largest.key) }
            imported = importer.objects
            // No change set: the import is not history, and observers are not told.
            return ChangeSet()
        }
        return imported
    }

    /// Checks the header line: the format and version, and the schema, which must be this
    /// store's (equal version hashes); otherwise names the entities that differ.
    private func checkHeader(_ header: JSONValue) throws {
        guard case .string(ExportFormat.header)? = header[ExportFormat.marker] else {
            throw StrataError(.invalid, "line 1: not a Strata export (its first line is {\"strata\": \"export\", …})", path: "/strata")
        }
        guard case .number(let v)? = header["version"], Int64(v) == ExportFormat.version else {
            throw StrataError(.invalid, "line 1: export format version \(header["version"]?.text ?? "(none)") is not read by this Strata (it reads \(ExportFormat.version))",
                              path: "/version")
        }
        guard let declared = header["schema"] else { throw StrataError(.invalid, "line 1: the header has no 'schema'", path: "/schema") }
        let exported: Schema
        do { exported = try SchemaDecoder.decode(declared, path: JSONPath() / "schema") } catch var e as StrataError {
            e.message = "line 1: the export's schema: " + e.message
            throw e
        }
        guard exported.versionHash != schema.versionHash else { return }
        var differences: [String] = []
        for e in exported.entities {
            guard let mine = schema.entity(named: e.name) else { differences.append("'\(e.name)' is only in the export"); continue }
            if mine.versionHash != e.versionHash { differences.append("'\(e.name)' differs") }
        }
        for e in schema.entities where exported.entity(named: e.name) == nil { differences.append("'\(e.name)' is only in the store") }
        throw StrataError(.incompatibleStore,
                          "line 1: the export's schema (version \(exported.version)) is not the store's (version \(schema.version)): "
                          + "\(differences.isEmpty ? "their version hashes differ" : differences.joined(separator: ", ")); nothing was imported",
                          path: "/schema")
    }
}
