/// Decodes and validates schema JSON (DESIGN §4) into a ``Schema``.
///
/// Every problem is a `.schema` error naming its JSON path, e.g.
/// `/entities/0/attributes/2/type`.
enum SchemaDecoder {
    static let attributeKeys = ["name", "type", "optional", "default", "unique", "originalName", "externalStorage",
                                "preserveValueOnDeletion", "historyValues", "index", "searchable", "transient", "hashModifier", "enum"]
    static let relationshipKeys = ["name", "destination", "toMany", "inverse", "deleteRule", "minimumModelCount",
                                   "maximumModelCount", "originalName", "optional", "hashModifier"]
    static let entityKeys = ["name", "superentity", "originalName", "attributes", "relationships", "uniqueConstraints", "indexes"]

    static func decode(_ text: String) throws -> Schema {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch let e as StrataError {
            throw StrataError(.schema, "schema is not valid JSON: \(e.message)", path: "/")
        }
        return try decode(json, path: JSONPath())
    }

    /// Decodes `json`, or returns the schema this process decoded from the same text before
    /// (``DecodedSchemas``: a schema is immutable once decoded, and equal texts decode alike).
    ///
    /// - Parameter text: `json.text` when the caller has it (copied from the parsed bytes).
    static func decode(_ json: JSONValue, path: JSONPath, text known: String? = nil) throws -> Schema {
        assert(known == nil || known == json.text, "the schema's text differs from its JSON's")
        let text = known ?? json.text
        if let known = DecodedSchemas.shared.schema(text) { return known }
        do {
            let schema = try decodeUnchecked(json, text: text, path: path)
            DecodedSchemas.shared.insert(schema)
            return schema
        } catch var e as StrataError {
            if e.code == .invalid { e.code = .schema }
            throw e
        }
    }

    static func fail(_ message: String, _ path: JSONPath, entity: String? = nil, attribute: String? = nil) -> StrataError {
        StrataError(.schema, message, entity: entity, attribute: attribute, path: path.description)
    }

    /// Names usable as SQL identifiers: letters, digits and '_', not starting with a digit or '_'.
    static func checkIdentifier(_ name: String, _ what: String, _ path: JSONPath, entity: String? = nil) throws {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 128 else {
            throw fail("\(what) name must be 1 to 128 characters", path, entity: entity)
        }
        for (i, c) in bytes.enumerated() {
            let ok = (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || (i > 0 && c >= 0x30 && c <= 0x39)
            guard ok else {
                throw fail("\(what) name '\(name)' is not a valid identifier (letters, digits and '_', starting with a letter)", path, entity: entity)
            }
        }
        if bytes.first == 0x5F {
            throw fail("\(what) name '\(name)' must not start with '_' (reserved for Strata)", path, entity: entity)
        }
        // The name is ASCII letters, digits and '_' (checked above): a prefix compares byte by byte, folding case.
        func hasPrefix(_ prefix: String) -> Bool {
            bytes.count >= prefix.utf8.count && zip(bytes, prefix.utf8).allSatisfy { c, p in c | 0x20 == p || c == p }
        }
        if hasPrefix("sqlite_") || hasPrefix("strata_") {
            throw fail("\(what) name '\(name)' uses a reserved prefix (sqlite_, strata_)", path, entity: entity)
        }
    }

    /// Decodes a schema in passes, each relying on the ones before it: declarations
    /// first, then the graph they form (hierarchies, properties, links), then what a
    /// store needs (where links are kept, slots, unique sets, version hashes).
    /// Errors are detected in this order, so the first problem a schema has is the one reported.
    private static func decodeUnchecked(_ json: JSONValue, text: String, path: JSONPath) throws -> Schema {
        let (version, entityJSON) = try decodeTop(json, path: path)
        let graph = Graph(try decodeEntities(entityJSON, path: path), path: path)
        try graph.checkSuperentities()
        graph.linkHierarchies()
        graph.inheritProperties()
        try graph.checkPropertyNamesPerTable()
        try graph.resolveDestinations()
        try graph.resolveNamedInverses()
        graph.pairImplicitInverses()
        let pairSets = graph.placeLinks()
        try graph.checkPairSetNames(pairSets)
        try graph.checkModelCounts()
        graph.assignSlots()
        try graph.checkColumnLimits()
        try graph.checkKeyLists()
        graph.collectUniqueSlotSets()
        let versionHash = graph.hashVersions()
        return Schema(version: version, entities: graph.entities, json: json, versionHash: versionHash, pairSets: pairSets, jsonText: text,
                      entityByName: graph.byName)
    }

    /// The top level is an object of exactly a non-empty `version` and an `entities` array.
    static func decodeTop(_ json: JSONValue, path: JSONPath) throws -> (version: String, entities: [JSONValue]) {
        var top = try ObjectReader(json, path: path, what: "schema")
        guard let version = try top.string("version") else {
            throw fail("schema is missing 'version' (e.g. \"1.0.0\")", path / "version")
        }
        guard !version.isEmpty else { throw fail("schema version must not be empty", path / "version") }
        guard let entityJSON = try top.array("entities") else {
            throw fail("schema is missing 'entities'", path / "entities")
        }
        try top.finish()
        return (version, entityJSON)
    }
}
