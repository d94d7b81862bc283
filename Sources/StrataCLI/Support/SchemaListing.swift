import Strata

/// The schema listing of `strata schema`: readable text, or the stored JSON with its hashes.
enum SchemaListing {
    /// `{"schema": <stored JSON>, "version", "versionHash", "entityHashes", "formatVersion"}`.
    static func json(_ stored: StoredState) throws -> String {
        var w = JSONWriter()
        w.beginObject()
        w.key("schema"); w.raw(try JSONValue.parse(stored.schemaJSON ?? "null").text)
        w.key("version"); optional(stored.version, &w)
        w.key("versionHash"); optional(stored.versionHash, &w)
        w.key("entityHashes")
        if let hashes = stored.entityHashes {
            w.beginObject()
            for name in hashes.keys.sorted() { w.key(name); w.string(hashes[name] ?? "") }
            w.endObject()
        } else {
            w.null()
        }
        w.key("formatVersion"); if let f = stored.formatVersion { w.int(f) } else { w.null() }
        w.endObject()
        return w.string
    }

    private static func optional(_ text: String?, _ w: inout JSONWriter) {
        if let text { w.string(text) } else { w.null() }
    }

    /// The schema as aligned text: a block per entity, subentities indented under their superentity.
    static func text(_ schema: Schema, stored: StoredState) -> String {
        var out = "version       \(schema.version)\n"
        out += "version hash  \(schema.versionHash)\n"
        if let f = stored.formatVersion { out += "store format  \(f)\n" }
        for root in schema.rootEntities { entity(root, depth: 0, &out) }
        return out
    }

    private static func entity(_ e: Entity, depth: Int, _ out: inout String) {
        let pad = String(repeating: "    ", count: depth)
        out += "\n" + pad + (depth == 0 ? "entity " : "└─ entity ") + e.name
        if let s = e.superentity { out += " : \(s.name)" }
        out += "   (version hash \(e.versionHash))\n"
        let inner = pad + (depth == 0 ? "  " : "     ")
        if let s = e.superentity, !s.attributes.isEmpty || !s.relationships.isEmpty {
            out += inner + "inherits the properties of \(s.name)\n"
        }
        if !e.ownAttributes.isEmpty {
            out += inner + "attributes\n"
            var table = TextTable(maxWidth: 60, indent: inner + "  ")
            for a in e.ownAttributes { attribute(a, prefix: "", &table) }
            out += table.text
        }
        if !e.ownRelationships.isEmpty {
            out += inner + "relationships\n"
            var table = TextTable(maxWidth: 60, indent: inner + "  ")
            for r in e.ownRelationships {
                let destination = r.isToMany ? "[\(r.destinationName)]" : r.destinationName + (r.isOptional ? "?" : "")
                var notes = [r.isToMany ? "to-many" : "to-one", "delete rule \(r.deleteRule.rawValue)"]
                notes.insert(r.inverse.map { "inverse \($0.name)" } ?? r.inverseName.map { "inverse \($0)" } ?? "no inverse", at: 1)
                if let n = r.minimumModelCount { notes.append("min \(n)") }
                if let n = r.maximumModelCount { notes.append("max \(n)") }
                if let o = r.originalName { notes.append("was \(o)") }
                table.add([r.name, "-> " + destination, notes.joined(separator: ", ")])
            }
            out += table.text
        }
        if !e.uniqueConstraints.isEmpty {
            out += inner + "unique        " + e.uniqueConstraints.map { "(" + $0.joined(separator: ", ") + ")" }.joined(separator: " ") + "\n"
        }
        if !e.indexes.isEmpty {
            out += inner + "indexes       " + e.indexes.map { "(" + $0.joined(separator: ", ") + ")" }.joined(separator: " ") + "\n"
        }
        for sub in e.subentities { entity(sub, depth: depth + 1, &out) }
    }

    /// An attribute's row (a composite's fields follow it as `name.field`).
    private static func attribute(_ a: Attribute, prefix: String, _ table: inout TextTable) {
        var notes: [String] = []
        if a.isUnique { notes.append("unique") }
        if a.isIndexed { notes.append("index") }
        if a.isSearchable { notes.append("searchable") }
        if a.externalStorage { notes.append("external storage") }
        if a.isTransient { notes.append("transient") }
        if a.historyValues { notes.append("history values") }
        if a.preserveValueOnDeletion { notes.append("kept on delete") }
        if let d = a.defaultJSON { notes.append("default \(d.text)") }
        if let values = a.enumJSON { notes.append("one of " + values.map(\.text).joined(separator: ", ")) }
        if let o = a.originalName { notes.append("was \(o)") }
        table.add([prefix + a.name, a.type.rawValue + (a.isOptional ? "?" : ""), notes.joined(separator: ", ")])
        for f in a.fields { attribute(f, prefix: "  ", &table) }
    }
}
