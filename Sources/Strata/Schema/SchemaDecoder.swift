/// Decodes and validates schema JSON (DESIGN §4) into a ``Schema``.
///
/// Every problem is a `.schema` error naming its JSON path, e.g.
/// `/entities/0/attributes/2/type`.
enum SchemaDecoder {
    static let attributeKeys = ["name", "type", "optional", "default", "unique", "originalName", "externalStorage",
                                "preserveValueOnDeletion", "historyValues", "index", "transient", "hashModifier", "enum"]
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

    static func decode(_ json: JSONValue, path: JSONPath) throws -> Schema {
        do {
            return try decodeUnchecked(json, path: path)
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
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 128 else {
            throw fail("\(what) name must be 1 to 128 characters", path, entity: entity)
        }
        for (i, c) in bytes.enumerated() {
            let ok = (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || (i > 0 && c >= 0x30 && c <= 0x39)
            guard ok else {
                throw fail("\(what) name '\(name)' is not a valid identifier (letters, digits and '_', starting with a letter)", path, entity: entity)
            }
        }
        if bytes[0] == 0x5F {
            throw fail("\(what) name '\(name)' must not start with '_' (reserved for Strata)", path, entity: entity)
        }
        let lower = name.lowercased()
        if lower.hasPrefix("sqlite_") || lower.hasPrefix("strata_") {
            throw fail("\(what) name '\(name)' uses a reserved prefix (sqlite_, strata_)", path, entity: entity)
        }
    }

    private static func decodeUnchecked(_ json: JSONValue, path: JSONPath) throws -> Schema {
        var top = try ObjectReader(json, path: path, what: "schema")
        guard let version = try top.string("version") else {
            throw fail("schema is missing 'version' (e.g. \"1.0.0\")", path / "version")
        }
        guard !version.isEmpty else { throw fail("schema version must not be empty", path / "version") }
        guard let entityJSON = try top.array("entities") else {
            throw fail("schema is missing 'entities'", path / "entities")
        }
        try top.finish()

        var entities: [Entity] = []
        var seenEntities: [String: Int] = [:]
        // SQLite table names ignore case: "Trip" and "trip" would be one table.
        var seenFolded: [String: Int] = [:]
        for (i, ej) in entityJSON.enumerated() {
            let ep = path / "entities" / i
            let entity = try decodeEntity(ej, path: ep)
            if let first = seenEntities[entity.name] {
                throw fail("duplicate entity name '\(entity.name)' (also at /entities/\(first))", ep / "name", entity: entity.name)
            }
            if let first = seenFolded[entity.name.lowercased()] {
                throw fail("entity name '\(entity.name)' differs from '\(entities[first].name)' (at /entities/\(first)) only in case; SQLite table names ignore case",
                           ep / "name", entity: entity.name)
            }
            seenEntities[entity.name] = i
            seenFolded[entity.name.lowercased()] = i
            entities.append(entity)
        }
        let byName = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })

        // Inheritance: check names and cycles before linking (subentities are strong references).
        for (i, e) in entities.enumerated() {
            guard let s = e.superentityName else { continue }
            guard byName[s] != nil else {
                throw fail("superentity '\(s)' of entity '\(e.name)' is not defined", path / "entities" / i / "superentity", entity: e.name)
            }
            var seen: Set<String> = [e.name]
            var next: String? = s
            while let x = next {
                if seen.contains(x) {
                    throw fail("inheritance cycle through entity '\(e.name)'", path / "entities" / i / "superentity", entity: e.name)
                }
                seen.insert(x)
                next = byName[x]?.superentityName
            }
        }
        for e in entities {
            guard let s = e.superentityName, let sup = byName[s] else { continue }
            e.superentity = sup
            sup.subentities.append(e)
        }
        for e in entities {
            var r = e
            while let s = r.superentity { r = s }
            e.knownRoot = r
        }
        // Inherited properties, in hierarchy order (ancestors first).
        func resolveProperties(_ e: Entity) throws {
            if !e.attributes.isEmpty || !e.relationships.isEmpty || e.attributeByName.count > 0 { return }
            var attrs: [Attribute] = []
            var rels: [Relationship] = []
            if let s = e.superentity {
                try resolveProperties(s)
                attrs = s.attributes
                rels = s.relationships
            }
            attrs += e.ownAttributes
            rels += e.ownRelationships
            e.attributes = attrs
            e.relationships = rels
            for a in attrs { e.attributeByName[a.name] = a }
            for r in rels { e.relationshipByName[r.name] = r }
        }
        for e in entities { try resolveProperties(e) }
        // Names must be unique within a whole table (a hierarchy shares one).
        for root in entities where root.superentity == nil {
            // Keyed by the lowercased name: SQLite column names ignore case.
            var owner: [String: Entity] = [:]
            for e in root.descendants {
                let ei = seenEntities[e.name] ?? 0
                for (ai, a) in e.ownAttributes.enumerated() {
                    if let o = owner[a.name.lowercased()] {
                        throw fail("duplicate property name '\(a.name)' in entity '\(e.name)' (already declared by '\(o.name)', which shares table '\(root.name)'; column names ignore case)",
                                   path / "entities" / ei / "attributes" / ai / "name", entity: e.name, attribute: a.name)
                    }
                    owner[a.name.lowercased()] = e
                }
                for (ri, r) in e.ownRelationships.enumerated() {
                    if let o = owner[r.name.lowercased()] {
                        throw fail("duplicate property name '\(r.name)' in entity '\(e.name)' (already declared by '\(o.name)', which shares table '\(root.name)'; column names ignore case)",
                                   path / "entities" / ei / "relationships" / ri / "name", entity: e.name, attribute: r.name)
                    }
                    owner[r.name.lowercased()] = e
                }
            }
        }
        // Relationship destinations and inverses.
        for (ei, e) in entities.enumerated() {
            for (ri, r) in e.ownRelationships.enumerated() {
                r.entity = e
                let rp = path / "entities" / ei / "relationships" / ri
                guard let dest = byName[r.destinationName] else {
                    throw fail("destination '\(r.destinationName)' of relationship '\(e.name).\(r.name)' is not defined", rp / "destination", entity: e.name, attribute: r.name)
                }
                r.destination = dest
            }
            for a in e.ownAttributes { a.entity = e }
        }
        for (ei, e) in entities.enumerated() {
            for (ri, r) in e.ownRelationships.enumerated() {
                let rp = path / "entities" / ei / "relationships" / ri
                let dest: Entity = r.destination
                if let invName = r.inverseName {
                    guard let inv = dest.relationshipByName[invName] else {
                        throw fail("inverse '\(invName)' of relationship '\(e.name).\(r.name)' is not a relationship of '\(dest.name)'", rp / "inverse", entity: e.name, attribute: r.name)
                    }
                    if inv === r {
                        throw fail("relationship '\(e.name).\(r.name)' cannot be its own inverse", rp / "inverse", entity: e.name, attribute: r.name)
                    }
                    guard e.isKind(of: inv.destination) || inv.destination.isKind(of: e) else {
                        throw fail("inverse mismatch: '\(dest.name).\(invName)' points to '\(inv.destinationName)', not back to '\(e.name)'", rp / "inverse", entity: e.name, attribute: r.name)
                    }
                    if let back = inv.inverseName, back != r.name {
                        throw fail("inverse mismatch: '\(e.name).\(r.name)' names '\(invName)' as inverse, but '\(dest.name).\(invName)' names '\(back)'", rp / "inverse", entity: e.name, attribute: r.name)
                    }
                    if let existing = inv.inverse, existing !== r {
                        throw fail("inverse mismatch: '\(dest.name).\(invName)' is already the inverse of '\(existing.entity.name).\(existing.name)'", rp / "inverse", entity: e.name, attribute: r.name)
                    }
                    r.inverse = inv
                    inv.inverse = r
                }
            }
        }
        // Implicit inverses: exactly one relationship that points back and names no other inverse,
        // and seen from that one, `r` is the only relationship pointing its way (pairing is mutual:
        // Trip.owner and Trip.driver both pointing at Person leave Person.trips without an inverse).
        for e in entities {
            for r in e.ownRelationships where r.inverse == nil && r.inverseName == nil {
                let dest: Entity = r.destination
                let candidates = dest.relationships.filter { c in
                    c !== r && c.inverse == nil && c.inverseName == nil && (e.isKind(of: c.destination))
                }
                let pointingBack = dest.relationships.filter { c in c !== r && e.isKind(of: c.destination) }
                guard candidates.count == 1, pointingBack.count == 1, let c = candidates.first else { continue }
                let pointingThere = e.relationships.filter { x in x !== c && dest.isKind(of: x.destination) }
                if pointingThere.count == 1 {
                    r.inverse = c
                    c.inverse = r
                }
            }
        }
        // Where links are kept.
        var pairSets: [(name: String, relationship: Relationship)] = []
        func key(_ r: Relationship) -> String { r.entity.name + "\u{0}" + r.name }
        for e in entities {
            for r in e.ownRelationships {
                if let inv = r.inverse {
                    switch (r.isToMany, inv.isToMany) {
                    case (false, true): r.placement = .inRow
                    case (true, false): r.placement = .inInverseRows
                    case (false, false): r.placement = key(r) < key(inv) ? .inRow : .inInverseRows
                    case (true, true):
                        let canonical = key(r) < key(inv)
                        let owner = canonical ? r : inv
                        let set = owner.entity.name + "_" + owner.name
                        r.placement = .inPairs(set: set, ownerIsFirst: canonical)
                        if canonical { pairSets.append((set, r)) }
                    }
                } else if r.isToMany {
                    let set = e.name + "_" + r.name
                    r.placement = .inPairs(set: set, ownerIsFirst: true)
                    pairSets.append((set, r))
                } else {
                    r.placement = .inRow
                }
            }
        }
        // A store keeps each hierarchy and each set of pairs under its name: no two may clash.
        var names = Set(entities.map { $0.name.lowercased() })
        for (table, r) in pairSets {
            guard names.insert(table.lowercased()).inserted else {
                throw fail("join table '\(table)' of relationship '\(r.entity.name).\(r.name)' has the name of an entity or of another join table; rename one of them",
                           path / "entities", entity: r.entity.name, attribute: r.name)
            }
        }
        // Relationship-level checks that need the resolved graph.
        for (ei, e) in entities.enumerated() {
            for (ri, r) in e.ownRelationships.enumerated() {
                let rp = path / "entities" / ei / "relationships" / ri
                if !r.isToMany && (r.minimumModelCount != nil || r.maximumModelCount != nil) {
                    throw fail("minimumModelCount/maximumModelCount apply to to-many relationships only ('\(e.name).\(r.name)' is to-one)", rp, entity: e.name, attribute: r.name)
                }
                if let mn = r.minimumModelCount, let mx = r.maximumModelCount, mn > mx, mx > 0 {
                    throw fail("minimumModelCount \(mn) is greater than maximumModelCount \(mx)", rp, entity: e.name, attribute: r.name)
                }
            }
        }
        // Per-entity layout: stored columns (slots), unique constraints, indexes.
        for (ei, e) in entities.enumerated() {
            var cols: [StoredColumn] = []
            for a in e.attributes where !a.isTransient { cols.append(.attribute(a)) }
            for r in e.relationships where r.isHeldInRow { cols.append(.link(r)) }
            e.storedColumns = cols
            for (i, c) in cols.enumerated() { e.slotByName[c.name] = i }
            e.defaultRow = cols.map { c in
                if case .attribute(let a) = c { return a.defaultValue ?? .null }
                return .null
            }
            _ = ei
        }
        try checkColumnLimits(entities, path: path)
        for (ei, e) in entities.enumerated() {
            let ep = path / "entities" / ei
            for (ci, names) in e.uniqueConstraints.enumerated() {
                try checkKeyList(names, of: e, path: ep / "uniqueConstraints" / ci, what: "unique constraint")
            }
            for (ci, names) in e.indexes.enumerated() {
                try checkKeyList(names, of: e, path: ep / "indexes" / ci, what: "index")
            }
        }
        for e in entities {
            var sets: [[Int]] = []
            var chain: [Entity] = []
            var x: Entity? = e
            while let y = x { chain.insert(y, at: 0); x = y.superentity }
            for anc in chain {
                for a in anc.ownAttributes where a.isUnique {
                    if let s = e.slotByName[a.name] { sets.append([s]) }
                }
                for names in anc.uniqueConstraints {
                    let slots = names.compactMap { e.slotByName[$0] }
                    if slots.count == names.count && !sets.contains(slots) { sets.append(slots) }
                }
            }
            e.uniqueSlotSets = sets
        }
        // Version hashes.
        for e in entities { e.versionHash = SHA256.hex(hashDescription(e)) }
        let schemaHash = SHA256.hex(entities.map { $0.name + ":" + $0.versionHash }.sorted().joined(separator: ";"))
        return Schema(version: version, entities: entities, json: json, versionHash: schemaHash, pairSets: pairSets)
    }

    /// SQLite's column limit (SQLITE_MAX_COLUMN, 2000 in every build Strata supports).
    static let maxColumns = 2000

    /// A hierarchy's table holds `_pk`, `_entity` and every stored attribute and to-one link of its
    /// entities; a read selects those, an owner key, and the concrete entity of each to-one link.
    /// All of it must fit SQLite's column limit, or the store could not be created or read.
    static func checkColumnLimits(_ entities: [Entity], path: JSONPath) throws {
        for (ei, e) in entities.enumerated() where e.superentity == nil {
            var attributes = 0, links = 0
            for d in e.descendants {
                attributes += d.ownAttributes.filter { !$0.isTransient }.count
                links += d.ownRelationships.filter(\.isHeldInRow).count
            }
            let needed = 3 + attributes + 2 * links
            guard needed <= maxColumns else {
                throw fail("entity '\(e.name)'\(e.subentities.isEmpty ? "" : " and its subentities") store \(attributes) attributes and \(links) to-one links: "
                           + "at most \(maxColumns - 3) columns fit (each stored attribute counts 1, each to-one link held in the row 2; this needs \(needed - 3)); "
                           + "move some attributes to a related entity", path / "entities" / ei, entity: e.name)
            }
        }
    }

    static func checkKeyList(_ names: [String], of e: Entity, path: JSONPath, what: String) throws {
        guard !names.isEmpty else { throw fail("\(what) must name at least one property", path, entity: e.name) }
        var seen: Set<String> = []
        for (i, n) in names.enumerated() {
            if seen.contains(n) { throw fail("\(what) names '\(n)' twice", path / i, entity: e.name, attribute: n) }
            seen.insert(n)
            if let a = e.attributeByName[n] {
                if a.isTransient { throw fail("\(what) cannot use transient attribute '\(n)'", path / i, entity: e.name, attribute: n) }
                if a.externalStorage {
                    throw fail("\(what) cannot use attribute '\(n)': it uses externalStorage (its value may live in a file; the column holds the file's name)",
                               path / i, entity: e.name, attribute: n)
                }
                continue
            }
            if let r = e.relationshipByName[n] {
                if r.isToMany { throw fail("\(what) cannot use to-many relationship '\(n)'", path / i, entity: e.name, attribute: n) }
                if !r.isHeldInRow {
                    throw fail("\(what) cannot use to-one relationship '\(n)': its inverse '\(r.inverse?.name ?? "")' holds the link", path / i, entity: e.name, attribute: n)
                }
                continue
            }
            throw fail("\(what) names '\(n)', which is not an attribute or relationship of '\(e.name)'", path / i, entity: e.name, attribute: n)
        }
    }

    /// The text hashed into an entity's version hash: everything that shapes
    /// storage (names, types, optionality, uniqueness, indexes, relationships,
    /// hash modifiers), never originalName, defaults or delete rules.
    static func hashDescription(_ e: Entity) -> String {
        var parts: [String] = ["entity:\(e.name)", "super:\(e.superentityName ?? "")"]
        for a in e.ownAttributes.sorted(by: { $0.name < $1.name }) {
            parts.append("attr:\(a.name):\(a.type.rawValue):opt=\(a.isOptional):tr=\(a.isTransient):uniq=\(a.isUnique):ext=\(a.externalStorage):idx=\(a.isIndexed):hm=\(a.hashModifier ?? "")")
        }
        for r in e.ownRelationships.sorted(by: { $0.name < $1.name }) {
            parts.append("rel:\(r.name):\(r.destinationName):many=\(r.isToMany):opt=\(r.isOptional):inv=\(r.inverse?.name ?? ""):hm=\(r.hashModifier ?? "")")
        }
        for u in e.uniqueConstraints.map({ $0.joined(separator: ",") }).sorted() { parts.append("unique:\(u)") }
        for i in e.indexes.map({ $0.joined(separator: ",") }).sorted() { parts.append("index:\(i)") }
        return parts.joined(separator: "\n")
    }
}
