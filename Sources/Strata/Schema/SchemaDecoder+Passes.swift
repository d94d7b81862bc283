// The passes over the decoded entities, in the order `decodeUnchecked` runs them.
// Each states, in its first doc line, what holds once it has run; each relies on
// the ones before it (a pass that links entities runs only after the pass that
// checks the names it follows).
extension SchemaDecoder {
    /// The entities of a schema being decoded, in declaration order, with what the passes look them up by.
    struct Graph {
        let entities: [Entity]
        let byName: [String: Entity]
        /// Each entity's position in `/entities` (for the JSON paths of errors).
        let indexByName: [String: Int]
        let path: JSONPath

        /// `entities` must have unique names (`decodeEntities` checks it).
        init(_ entities: [Entity], path: JSONPath) {
            self.entities = entities
            // Filled in place: no array of pairs (a type of its own to set up at run time) made only to be converted.
            var byName: [String: Entity] = [:], indexByName: [String: Int] = [:]
            byName.reserveCapacity(entities.count)
            indexByName.reserveCapacity(entities.count)
            for (i, e) in entities.enumerated() {
                byName[e.name] = e
                indexByName[e.name] = i
            }
            self.byName = byName
            self.indexByName = indexByName
            self.path = path
        }

        // MARK: Hierarchies

        /// Every superentity is a defined entity, and no chain of superentities comes back to where it started.
        ///
        /// Checked before `linkHierarchies` (subentities are strong references: a cycle would leak).
        func checkSuperentities() throws {
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
        }

        /// Every entity knows its superentity, its subentities (in declaration order) and the root of its hierarchy.
        func linkHierarchies() {
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
        }

        /// Every entity lists its attributes and relationships inherited ones first (ancestors first), then its own, and finds them by name.
        func inheritProperties() {
            for e in entities { Graph.inheritProperties(of: e) }
        }

        /// Resolves `e` after its superentity; an entity resolved already is left as it is.
        private static func inheritProperties(of e: Entity) {
            if !e.attributes.isEmpty || !e.relationships.isEmpty || e.attributeByName.count > 0 { return }
            var attrs: [Attribute] = []
            var rels: [Relationship] = []
            if let s = e.superentity {
                inheritProperties(of: s)
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

        /// No two properties of a hierarchy share a name, ignoring case (the hierarchy shares one table, and SQLite column names ignore case).
        func checkPropertyNamesPerTable() throws {
            for root in entities where root.superentity == nil {
                // Keyed by the lowercased name: SQLite column names ignore case.
                var owner: [String: Entity] = [:]
                for e in root.descendants {
                    let ei = indexByName[e.name] ?? 0
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
        }

        // MARK: Relationships

        /// Every property knows the entity that declares it, and every relationship's destination is a defined entity.
        func resolveDestinations() throws {
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
        }

        /// A named inverse is another relationship of the destination that points back, and the pairing is mutual: each end is the other's only inverse.
        func resolveNamedInverses() throws {
            for (ei, e) in entities.enumerated() {
                for (ri, r) in e.ownRelationships.enumerated() {
                    let rp = path / "entities" / ei / "relationships" / ri
                    let dest: Entity = r.destination
                    guard let invName = r.inverseName else { continue }
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

        /// A relationship naming no inverse pairs with the one relationship that points back and names none, when each is the other's only candidate.
        ///
        /// Pairing is mutual: Trip.owner and Trip.driver both pointing at Person leave Person.trips without an inverse.
        func pairImplicitInverses() {
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
        }

        /// Every relationship says where its links are kept (`LinkPlacement`); returns each set of pairs once, with the relationship that owns it.
        ///
        /// A to-one whose inverse is to-many holds the link in its row; of a one-to-one, the end whose
        /// `Entity\0relationship` sorts first; many-to-many and inverse-less to-many keep a set of pairs
        /// named `Entity_relationship` after the end that sorts first (or the only end).
        func placeLinks() -> [(name: String, relationship: Relationship)] {
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
            return pairSets
        }

        /// No set of pairs has the name of an entity or of another set, ignoring case (a store keeps each hierarchy and each set under its name).
        func checkPairSetNames(_ pairSets: [(name: String, relationship: Relationship)]) throws {
            var names = Set(entities.map { $0.name.lowercased() })
            for (table, r) in pairSets {
                guard names.insert(table.lowercased()).inserted else {
                    throw fail("join table '\(table)' of relationship '\(r.entity.name).\(r.name)' has the name of an entity or of another join table; rename one of them",
                               path / "entities", entity: r.entity.name, attribute: r.name)
                }
            }
        }

        /// Minimum and maximum model counts are on to-many relationships only, the minimum at most the maximum (a maximum of 0 is no maximum).
        func checkModelCounts() throws {
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
        }

        // MARK: Storage

        /// Every entity's slots are its stored attributes, then the links its row holds (inherited ones first), each found by name, with a default row.
        func assignSlots() {
            for e in entities {
                var cols: [StoredColumn] = []
                for a in e.attributes where !a.isTransient { cols.append(.attribute(a)) }
                for r in e.relationships where r.isHeldInRow { cols.append(.link(r)) }
                e.storedColumns = cols
                for (i, c) in cols.enumerated() { e.slotByName[c.name] = i }
                e.defaultRow = cols.map { c in
                    if case .attribute(let a) = c { return a.defaultValue ?? .null }
                    return .null
                }
            }
        }

        /// Every hierarchy's table fits SQLite's column limit (`maxColumns`).
        ///
        /// A hierarchy's table holds `_pk`, `_entity` and every stored attribute and to-one link of its
        /// entities; a read selects those, an owner key, and the concrete entity of each to-one link.
        /// All of it must fit, or the store could not be created or read.
        func checkColumnLimits() throws {
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

        /// Every unique constraint and index names stored properties of its entity: attributes that are neither transient nor external, and to-one links held in the row.
        func checkKeyLists() throws {
            for (ei, e) in entities.enumerated() {
                let ep = path / "entities" / ei
                for (ci, names) in e.uniqueConstraints.enumerated() {
                    try checkKeyList(names, of: e, path: ep / "uniqueConstraints" / ci, what: "unique constraint")
                }
                for (ci, names) in e.indexes.enumerated() {
                    try checkKeyList(names, of: e, path: ep / "indexes" / ci, what: "index")
                }
            }
        }

        /// Every entity's unique slot sets are the unique attributes and unique constraints of its ancestors and itself, root first, each set once.
        func collectUniqueSlotSets() {
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
        }

        /// Every entity has its version hash (`hashDescription`); returns the schema's, over all entities' names and hashes.
        func hashVersions() -> String {
            // Each text is written as bytes into one buffer (no String per piece, no generic join).
            var text = HashText()
            for e in entities {
                text.bytes.removeAll(keepingCapacity: true)
                hashDescription(e, into: &text)
                e.versionHash = SHA256.hex(text.bytes)
            }
            // `name:hash` of every entity, in byte order (names and hashes are ASCII), joined by ";".
            text.bytes.removeAll(keepingCapacity: true)
            for (i, part) in entities.map({ $0.name + ":" + $0.versionHash }).sorted().enumerated() {
                if i > 0 { text.add(";") }
                text.add(part)
            }
            return SHA256.hex(text.bytes)
        }
    }


    /// SQLite's column limit (SQLITE_MAX_COLUMN, 2000 in every build Strata supports).
    static let maxColumns = 2000

    /// One unique constraint or index (`what`) of `e`: at least one name, none twice, each a stored
    /// attribute (neither transient nor external) or a to-one link held in the row.
    static func checkKeyList(_ names: [String], of e: Entity, path: JSONPath, what: String) throws {
        guard !names.isEmpty else { throw fail("\(what) must name at least one property", path, entity: e.name) }
        var seen: Set<String> = []
        for (i, n) in names.enumerated() {
            if seen.contains(n) { throw fail("\(what) names '\(n)' twice", path / i, entity: e.name, attribute: n) }
            seen.insert(n)
            if let a = e.attributeByName[n] {
                if a.isTransient { throw fail("\(what) cannot use transient attribute '\(n)'", path / i, entity: e.name, attribute: n) }
                if a.isComposite {
                    let example = a.fields.first.map { "'\($0.name)'" } ?? "its fields"
                    throw fail("\(what) cannot use composite attribute '\(n)' itself; name its fields (e.g. \(example))", path / i, entity: e.name, attribute: n)
                }
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

    /// The UTF-8 text a version hash is taken over, written piece by piece into one buffer.
    struct HashText {
        var bytes: [UInt8] = []
        init() { bytes.reserveCapacity(2048) }
        mutating func add(_ piece: String) {
            var piece = piece
            piece.withUTF8 { bytes.append(contentsOf: $0) }
        }
        mutating func add(_ flag: Bool) { add(flag ? "true" : "false") }
    }

    /// Appends the text hashed into `e`'s version hash to `out`, one line per part: everything
    /// that shapes storage (names, types, optionality, uniqueness, indexes, relationships, hash
    /// modifiers, full-text search), never originalName, defaults or delete rules. A searchable
    /// attribute adds `:search` (so that the hashes of schemas without one stay as they were).
    static func hashDescription(_ e: Entity, into out: inout HashText) {
        out.add("entity:"); out.add(e.name); out.add("\nsuper:"); out.add(e.superentityName ?? "")
        for a in e.ownAttributes.sorted(by: { $0.name < $1.name }) {
            out.add("\nattr:"); out.add(a.name); out.add(":"); out.add(a.type.rawValue)
            out.add(":opt="); out.add(a.isOptional); out.add(":tr="); out.add(a.isTransient); out.add(":uniq="); out.add(a.isUnique)
            out.add(":ext="); out.add(a.externalStorage); out.add(":idx="); out.add(a.isIndexed); out.add(":hm="); out.add(a.hashModifier ?? "")
            if a.isSearchable { out.add(":search") }
        }
        for r in e.ownRelationships.sorted(by: { $0.name < $1.name }) {
            out.add("\nrel:"); out.add(r.name); out.add(":"); out.add(r.destinationName); out.add(":many="); out.add(r.isToMany)
            out.add(":opt="); out.add(r.isOptional); out.add(":inv="); out.add(r.inverse?.name ?? ""); out.add(":hm="); out.add(r.hashModifier ?? "")
        }
        // Each key list as its names joined by ",", the lists in order of that text (appended: the
        // standard library's generic joined cost more than the rest of the text).
        func commaJoined(_ names: [String]) -> String {
            var s = ""
            for (i, n) in names.enumerated() { if i > 0 { s += "," }; s += n }
            return s
        }
        for u in e.uniqueConstraints.map(commaJoined).sorted() { out.add("\nunique:"); out.add(u) }
        for i in e.indexes.map(commaJoined).sorted() { out.add("\nindex:"); out.add(i) }
    }
}
