/// How one schema version's entities, attributes and relationships come from
/// another's: the inference of a lightweight migration (Core Data's inferred
/// mapping model), in model terms. The store turns a mapping into storage
/// steps (`Store/StorageMigration.swift`, spelled by each store's dialect).
///
/// An element of the new version comes from the element of the old version
/// its `originalName` names (so two elements may swap names), else the one that
/// has its name, else one renamed from the same original name; with a plan,
/// `originalName` may name the element in any earlier version of the plan (the
/// names an element had are followed through every version given as `history`).
///
/// What cannot be inferred throws `.migration`, naming the entity, the
/// property and the change: a type change, two elements claiming one origin,
/// entities of two hierarchies brought into one, a relationship whose
/// destination becomes an unrelated entity, two relationships made inverses
/// of each other. What depends on the data (a required attribute without a
/// default over rows without a value, a unique constraint over duplicates) is
/// checked by the store when the step runs.
public struct SchemaMapping: @unchecked Sendable {
    public let old: Schema
    public let new: Schema
    private var entityOrigins: [ObjectIdentifier: Entity] = [:]
    private var attributeOrigins: [ObjectIdentifier: Attribute] = [:]
    private var relationshipOrigins: [ObjectIdentifier: Relationship] = [:]
    private var entitySuccessors: [ObjectIdentifier: Entity] = [:]
    /// The new attributes and relationships that take an old one's values, by the old one.
    private var attributeClaims: [ObjectIdentifier: [Attribute]] = [:]
    private var relationshipClaims: [ObjectIdentifier: [Relationship]] = [:]

    /// The old entity `e` (of `new`) comes from; nil for an added entity.
    public func origin(of e: Entity) -> Entity? { entityOrigins[ObjectIdentifier(e)] }
    /// The old attribute `a` (of `new`) takes its values from; nil for an added attribute.
    public func origin(of a: Attribute) -> Attribute? { attributeOrigins[ObjectIdentifier(a)] }
    /// The old relationship whose links `r` (of `new`) keeps; nil for an added relationship.
    public func origin(of r: Relationship) -> Relationship? { relationshipOrigins[ObjectIdentifier(r)] }
    /// The new entity old entity `e` becomes; nil when it is removed.
    public func successor(of e: Entity) -> Entity? { entitySuccessors[ObjectIdentifier(e)] }

    /// True when the two versions have the same storage (equal version hashes):
    /// the step changes no table and only records the new version.
    public var isIdentity: Bool { old.versionHash == new.versionHash }

    /// Infers the mapping from `old` to `new`.
    ///
    /// - Parameter history: every version of the plan, oldest first (may be empty);
    ///   `originalName` chains are followed through them.
    /// - Throws: `.migration` naming what cannot be inferred.
    public static func infer(from old: Schema, to new: Schema, history: [Schema] = []) throws -> SchemaMapping {
        var m = SchemaMapping(old: old, new: new)
        let versions = history.isEmpty ? [old, new] : history
        try m.mapEntities(versions)
        try m.checkHierarchies()
        for e in new.entities {
            try m.mapAttributes(of: e, versions)
            try m.mapRelationships(of: e, versions)
        }
        try m.checkRelationships()
        return m
    }

    private init(old: Schema, new: Schema) {
        self.old = old
        self.new = new
    }

    // MARK: Names through versions

    /// Every name an element was known by: its name and original name, and, through the
    /// versions, the names of elements renamed from or to any of them.
    static func aliases(name: String, originalName: String?, among versions: [[(name: String, originalName: String?)]]) -> Set<String> {
        var names: Set<String> = [name]
        if let o = originalName { names.insert(o) }
        var grew = true
        while grew {
            grew = false
            for version in versions {
                for el in version {
                    let linked = names.contains(el.name) || (el.originalName.map { names.contains($0) } ?? false)
                    guard linked else { continue }
                    if names.insert(el.name).inserted { grew = true }
                    if let o = el.originalName, names.insert(o).inserted { grew = true }
                }
            }
        }
        return names
    }

    /// The one candidate an element comes from: the one its original name names (Core Data's
    /// renaming identifier wins over the name, so two elements may swap names), unless it still
    /// has its own name there and a sibling keeps the original name (`kept`: names of other new
    /// elements declared without a rename; the original name is then a stale one, reused);
    /// then the one with its own name; then one known by another of its names (`others`: names
    /// other new elements have, whose old namesakes are theirs).
    static func pick<T>(_ candidates: [T], name: (T) -> String, own: String, original: String?, aliases: Set<String>,
                        kept: Set<String> = [], others: Set<String> = []) -> T? {
        let mine = candidates.first(where: { name($0) == own })
        if let original, original != own, let c = candidates.first(where: { name($0) == original }), mine == nil || !kept.contains(original) {
            return c
        }
        if let mine { return mine }
        // Not one another new element has by its own name.
        return candidates.first(where: { aliases.contains(name($0)) && !others.contains(name($0)) })
    }

    /// Whether an element named `name` with `originalName` is renamed from `from`.
    static func isRename(_ name: String, _ originalName: String?, from: String) -> Bool { name != from && originalName == from }

    /// The names of `elements` declared without a rename (no original name, or their own), but `except`.
    static func kept(_ elements: [(name: String, originalName: String?)], except: String) -> Set<String> {
        Set(elements.filter { $0.name != except && ($0.originalName == nil || $0.originalName == $0.name) }.map(\.name))
    }

    // MARK: Entities

    private mutating func mapEntities(_ versions: [Schema]) throws {
        let table = versions.map { s in s.entities.map { (name: $0.name, originalName: $0.originalName) } }
        var claimedBy: [ObjectIdentifier: Entity] = [:]
        for e in new.entities {
            let names = SchemaMapping.aliases(name: e.name, originalName: e.originalName, among: table)
            let kept = SchemaMapping.kept(new.entities.map { ($0.name, $0.originalName) }, except: e.name)
            let others = Set(new.entities.map(\.name)).subtracting([e.name])
            guard let o = SchemaMapping.pick(old.entities, name: \.name, own: e.name, original: e.originalName, aliases: names, kept: kept,
                                             others: others) else {
                continue
            }
            if let other = claimedBy[ObjectIdentifier(o)] {
                // A rename through originalName wins over an entity that only has the old name (a new entity).
                switch (SchemaMapping.isRename(e.name, e.originalName, from: o.name), SchemaMapping.isRename(other.name, other.originalName, from: o.name)) {
                case (false, true):
                    continue
                case (true, false):
                    entityOrigins[ObjectIdentifier(other)] = nil
                default:
                    throw StrataError(.migration, "entities '\(other.name)' and '\(e.name)' of version \(new.version) both come from entity '\(o.name)' of "
                                      + "version \(old.version); an entity's objects can go to one entity only (check originalName)", entity: e.name)
                }
            }
            claimedBy[ObjectIdentifier(o)] = e
            entityOrigins[ObjectIdentifier(e)] = o
            entitySuccessors[ObjectIdentifier(o)] = e
        }
    }

    /// Objects keep their keys, which are unique within one old table only: the old
    /// entities whose objects go to one new table must all come from one old table.
    private func checkHierarchies() throws {
        for root in new.rootEntities {
            var from: [String: Entity] = [:]
            for e in root.descendants {
                guard let o = origin(of: e) else { continue }
                from[o.root.name] = from[o.root.name] ?? e
            }
            guard from.count > 1 else { continue }
            let parts = from.sorted { $0.key < $1.key }.map { "'\($0.value.name)' (from the hierarchy of '\($0.key)')" }
            throw StrataError(.migration, "entity '\(root.name)' of version \(new.version) brings together the objects of two hierarchies of version "
                              + "\(old.version): \(parts.joined(separator: " and ")); merging hierarchies cannot be inferred (their objects' keys "
                              + "may collide): write a custom stage that copies one hierarchy's objects into the other", entity: root.name)
        }
    }

    /// The old entities whose properties a new entity's properties may come from: its
    /// origin's whole old hierarchy (properties move up and down a hierarchy).
    private func oldScope(of e: Entity) -> [Entity] {
        guard let o = origin(of: e) else { return [] }
        return o.root.descendants
    }

    // MARK: Attributes

    private mutating func mapAttributes(of e: Entity, _ versions: [Schema]) throws {
        let scope = oldScope(of: e)
        guard !scope.isEmpty else { return }
        let candidates = scope.flatMap(\.ownAttributes).filter { !$0.isTransient }
        let scopes = versions.map { hierarchy(of: e, in: $0, versions) }
        for a in e.ownAttributes where !a.isTransient {
            guard let oa = origin(a.name, a.originalName, of: e, scopes: scopes, candidates: candidates, name: \.name,
                                  properties: { $0.ownAttributes.map { ($0.name, $0.originalName) } }) else { continue }
            // Two attributes of one new hierarchy cannot share an origin; the same attribute
            // in two hierarchies can (an entity that leaves a hierarchy keeps its inherited values).
            // A rename through originalName wins over an attribute that only has the old name (a
            // name reused for a new attribute): that one is added.
            if let claimant = attributeClaims[ObjectIdentifier(oa)]?.first(where: { $0.entity.root === e.root }) {
                switch (SchemaMapping.isRename(a.name, a.originalName, from: oa.name), SchemaMapping.isRename(claimant.name, claimant.originalName, from: oa.name)) {
                case (false, true):
                    continue
                case (true, false):
                    attributeClaims[ObjectIdentifier(oa)]?.removeAll { $0 === claimant }
                    attributeOrigins[ObjectIdentifier(claimant)] = nil
                default:
                    throw StrataError(.migration, "entity '\(e.name)': attributes '\(claimant.name)' and '\(a.name)' both come from attribute '\(oa.name)' "
                                      + "of '\(oa.entity.name)' in version \(old.version) (check originalName)", entity: e.name, attribute: a.name)
                }
            }
            attributeClaims[ObjectIdentifier(oa), default: []].append(a)
            guard oa.type == a.type else {
                let how = oa.name == a.name ? "" : " (from '\(oa.name)')"
                throw StrataError(.migration, "entity '\(e.name)': attribute '\(a.name)'\(how) changes type from \(oa.type.rawValue) to "
                                  + "\(a.type.rawValue) between versions \(old.version) and \(new.version); a type change cannot be inferred: add an "
                                  + "attribute of the new type and fill it in a custom stage's didMigrate", entity: e.name, attribute: a.name)
            }
            attributeOrigins[ObjectIdentifier(a)] = oa
        }
    }

    /// The old property (among `candidates`) a property named `name` of `e`'s hierarchy comes
    /// from: its names followed through the versions' properties of the same hierarchy
    /// (`properties` lists an entity's own ones), renames among its siblings respected.
    /// - Parameter scopes: `e`'s hierarchy in each version (``hierarchy(of:in:_:)``), computed once per entity.
    private func origin<T>(_ name: String, _ originalName: String?, of e: Entity, scopes: [[Entity]], candidates: [T],
                           name candidateName: (T) -> String, properties: (Entity) -> [(String, String?)]) -> T? {
        let table = scopes.map { $0.flatMap(properties).map { (name: $0.0, originalName: $0.1) } }
        let names = SchemaMapping.aliases(name: name, originalName: originalName, among: table)
        let siblings = e.root.descendants.flatMap(properties)
        let kept = SchemaMapping.kept(siblings.map { (name: $0.0, originalName: $0.1) }, except: name)
        let others = Set(siblings.map(\.0)).subtracting([name])
        return SchemaMapping.pick(candidates, name: candidateName, own: name, original: originalName, aliases: names, kept: kept, others: others)
    }

    /// The entities of `s` (one of the versions) in the hierarchy `e` (of `new`) belongs to in
    /// that version: those of a hierarchy holding an entity known by a name an entity of
    /// `e`'s hierarchy had. Property names are followed through these only.
    private func hierarchy(of e: Entity, in s: Schema, _ versions: [Schema]) -> [Entity] {
        let table = versions.map { v in v.entities.map { (name: $0.name, originalName: $0.originalName) } }
        var names: Set<String> = []
        for d in e.root.descendants { names.formUnion(SchemaMapping.aliases(name: d.name, originalName: d.originalName, among: table)) }
        return s.rootEntities.filter { r in r.descendants.contains { names.contains($0.name) } }.flatMap(\.descendants)
    }

    // MARK: Relationships

    private mutating func mapRelationships(of e: Entity, _ versions: [Schema]) throws {
        let scope = oldScope(of: e)
        guard !scope.isEmpty else { return }
        let candidates = scope.flatMap(\.ownRelationships)
        let scopes = versions.map { hierarchy(of: e, in: $0, versions) }
        for r in e.ownRelationships {
            guard let or = origin(r.name, r.originalName, of: e, scopes: scopes, candidates: candidates, name: \.name,
                                  properties: { $0.ownRelationships.map { ($0.name, $0.originalName) } }) else { continue }
            if let claimant = relationshipClaims[ObjectIdentifier(or)]?.first(where: { $0.entity.root === e.root }) {
                throw StrataError(.migration, "entity '\(e.name)': relationships '\(claimant.name)' and '\(r.name)' both come from '\(or.name)' "
                                  + "of '\(or.entity.name)' in version \(old.version) (check originalName)", entity: e.name, attribute: r.name)
            }
            // The links keep their ends: the destination must be (or descend from, or lead to) the old destination's successor.
            let target = successor(of: or.destination)
            let related = target.map { t in r.destination.isKind(of: t) || t.isKind(of: r.destination) } ?? false
            guard related else {
                throw StrataError(.migration, "entity '\(e.name)': relationship '\(r.name)' changes destination from '\(or.destinationName)' to "
                                  + "'\(r.destinationName)' between versions \(old.version) and \(new.version), and '\(r.destinationName)' does not "
                                  + "come from '\(or.destinationName)'; this cannot be inferred: add a relationship and fill it in a custom stage",
                                  entity: e.name, attribute: r.name)
            }
            relationshipOrigins[ObjectIdentifier(r)] = or
            relationshipClaims[ObjectIdentifier(or), default: []].append(r)
        }
    }

    /// A relationship and its inverse share their links: they must come from one old
    /// relationship and its inverse (or one of them be new).
    private func checkRelationships() throws {
        for e in new.entities {
            for r in e.ownRelationships {
                guard let inv = r.inverse, let or = origin(of: r), let oinv = origin(of: inv) else { continue }
                if or.inverse === oinv { continue }
                throw StrataError(.migration, "entity '\(e.name)': relationships '\(r.name)' and '\(inv.entity.name).\(inv.name)' become inverses of "
                                  + "each other, but in version \(old.version) '\(or.entity.name).\(or.name)' and '\(oinv.entity.name).\(oinv.name)' "
                                  + "hold separate links; joining two sets of links cannot be inferred", entity: e.name, attribute: r.name)
            }
        }
    }

    /// The old relationship whose links `r` (of `new`) holds, and whether they are read the
    /// other way round (when only `r`'s inverse has an origin, `r`'s links are its reversed links).
    public func linkOrigin(of r: Relationship) -> (relationship: Relationship, reversed: Bool)? {
        if let o = origin(of: r) { return (o, false) }
        if let inv = r.inverse, let o = origin(of: inv) {
            if let oi = o.inverse { return (oi, false) }
            return (o, true)
        }
        return nil
    }
}
