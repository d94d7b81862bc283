/// One difference between two schema versions that changes the storage (the
/// version hashes), with the names and the old and new values. Errors render
/// it in words (``description``); inference itself follows `originalName`s
/// (``SchemaMapping``), which a comparison by name cannot.
///
/// Changes that keep the storage (defaults, delete rules, `originalName`,
/// enum lists) are not listed: they do not change a version hash. A rename
/// through `originalName` is one change (`entityRenamed`, `attributeRenamed`,
/// `relationshipRenamed`), not a removal and an addition.
public enum SchemaChange: Equatable, Sendable, CustomStringConvertible {
    case entityAdded(entity: String)
    case entityRemoved(entity: String)
    /// `entity` is the new name.
    case entityRenamed(entity: String, from: String)
    case superentityChanged(entity: String, old: String?, new: String?)

    case attributeAdded(entity: String, attribute: String)
    case attributeRemoved(entity: String, attribute: String)
    case attributeRenamed(entity: String, attribute: String, from: String)
    case attributeTypeChanged(entity: String, attribute: String, old: AttributeType, new: AttributeType)
    case attributeOptionalityChanged(entity: String, attribute: String, old: Bool, new: Bool)
    case attributeUniquenessChanged(entity: String, attribute: String, old: Bool, new: Bool)
    case attributeTransienceChanged(entity: String, attribute: String, old: Bool, new: Bool)
    case attributeExternalStorageChanged(entity: String, attribute: String, old: Bool, new: Bool)
    case attributeIndexChanged(entity: String, attribute: String, old: Bool, new: Bool)
    case attributeSearchableChanged(entity: String, attribute: String, old: Bool, new: Bool)
    case attributeHashModifierChanged(entity: String, attribute: String, old: String?, new: String?)

    case relationshipAdded(entity: String, relationship: String)
    case relationshipRemoved(entity: String, relationship: String)
    case relationshipRenamed(entity: String, relationship: String, from: String)
    case relationshipDestinationChanged(entity: String, relationship: String, old: String, new: String)
    /// `old` and `new` are `isToMany`.
    case relationshipCardinalityChanged(entity: String, relationship: String, old: Bool, new: Bool)
    case relationshipOptionalityChanged(entity: String, relationship: String, old: Bool, new: Bool)
    case relationshipInverseChanged(entity: String, relationship: String, old: String?, new: String?)
    case relationshipHashModifierChanged(entity: String, relationship: String, old: String?, new: String?)

    case uniqueConstraintsChanged(entity: String, old: [[String]], new: [[String]])
    case indexesChanged(entity: String, old: [[String]], new: [[String]])

    /// The entity the change belongs to.
    public var entity: String {
        switch self {
        case .entityAdded(let e), .entityRemoved(let e), .entityRenamed(let e, _), .superentityChanged(let e, _, _),
             .attributeAdded(let e, _), .attributeRemoved(let e, _), .attributeRenamed(let e, _, _), .attributeTypeChanged(let e, _, _, _),
             .attributeOptionalityChanged(let e, _, _, _), .attributeUniquenessChanged(let e, _, _, _),
             .attributeTransienceChanged(let e, _, _, _), .attributeExternalStorageChanged(let e, _, _, _),
             .attributeIndexChanged(let e, _, _, _), .attributeSearchableChanged(let e, _, _, _), .attributeHashModifierChanged(let e, _, _, _),
             .relationshipAdded(let e, _), .relationshipRemoved(let e, _), .relationshipRenamed(let e, _, _),
             .relationshipDestinationChanged(let e, _, _, _), .relationshipCardinalityChanged(let e, _, _, _),
             .relationshipOptionalityChanged(let e, _, _, _), .relationshipInverseChanged(let e, _, _, _),
             .relationshipHashModifierChanged(let e, _, _, _),
             .uniqueConstraintsChanged(let e, _, _), .indexesChanged(let e, _, _):
            return e
        }
    }

    /// The change in the words of an incompatible-store error.
    public var description: String {
        switch self {
        case .entityAdded(let e): return "entity '\(e)' added"
        case .entityRemoved(let e): return "entity '\(e)' removed"
        case .entityRenamed(let e, let from): return "entity '\(from)' renamed to '\(e)'"
        case .superentityChanged(let e, let old, let new):
            return "entity '\(e)': superentity changed from '\(old ?? "none")' to '\(new ?? "none")'"
        case .attributeAdded(let e, let a): return "entity '\(e)': attribute '\(a)' added"
        case .attributeRemoved(let e, let a): return "entity '\(e)': attribute '\(a)' removed"
        case .attributeRenamed(let e, let a, let from): return "entity '\(e)': attribute '\(from)' renamed to '\(a)'"
        case .attributeTypeChanged(let e, let a, let old, let new):
            return "entity '\(e)': attribute '\(a)' type changed from \(old.rawValue) to \(new.rawValue)"
        case .attributeOptionalityChanged(let e, let a, _, let new):
            return "entity '\(e)': attribute '\(a)' became \(new ? "optional" : "required")"
        case .attributeUniquenessChanged(let e, let a, _, let new):
            return "entity '\(e)': attribute '\(a)' \(new ? "became unique" : "is no longer unique")"
        case .attributeTransienceChanged(let e, let a, _, let new):
            return "entity '\(e)': attribute '\(a)' \(new ? "became transient" : "is no longer transient")"
        case .attributeExternalStorageChanged(let e, let a, _, _):
            return "entity '\(e)': attribute '\(a)' external storage changed"
        case .attributeIndexChanged(let e, let a, _, _): return "entity '\(e)': attribute '\(a)' index changed"
        case .attributeSearchableChanged(let e, let a, _, let new):
            return "entity '\(e)': attribute '\(a)' \(new ? "became searchable" : "is no longer searchable")"
        case .attributeHashModifierChanged(let e, let a, _, _): return "entity '\(e)': attribute '\(a)' hashModifier changed"
        case .relationshipAdded(let e, let r): return "entity '\(e)': relationship '\(r)' added"
        case .relationshipRemoved(let e, let r): return "entity '\(e)': relationship '\(r)' removed"
        case .relationshipRenamed(let e, let r, let from): return "entity '\(e)': relationship '\(from)' renamed to '\(r)'"
        case .relationshipDestinationChanged(let e, let r, _, _): return "entity '\(e)': relationship '\(r)' destination changed"
        case .relationshipCardinalityChanged(let e, let r, _, let new):
            return "entity '\(e)': relationship '\(r)' became \(new ? "to-many" : "to-one")"
        case .relationshipOptionalityChanged(let e, let r, _, _): return "entity '\(e)': relationship '\(r)' optionality changed"
        case .relationshipInverseChanged(let e, let r, _, _): return "entity '\(e)': relationship '\(r)' inverse changed"
        case .relationshipHashModifierChanged(let e, let r, _, _): return "entity '\(e)': relationship '\(r)' hashModifier changed"
        case .uniqueConstraintsChanged(let e, _, _): return "entity '\(e)': unique constraints changed"
        case .indexesChanged(let e, _, _): return "entity '\(e)': indexes changed"
        }
    }
}

/// Differences between two schema versions — the words of incompatible-store
/// errors, and the comparison migration inference builds on.
public enum SchemaDiff {
    /// The storage changes from `old` to `new`: removed entities first (in `old`'s order),
    /// then, entity by entity in `new`'s order, what was added or changed.
    public static func changes(from old: Schema, to new: Schema) -> [SchemaChange] {
        var out: [SchemaChange] = []
        // Entities pair up as inference pairs them: a rename through originalName first, then by name.
        let entityOrigin = pair(old.entities, new.entities, name: \.name, originalName: \.originalName)
        let renamedEntity = Dictionary(entityOrigin.map { ($0.value.name, $0.key) }, uniquingKeysWith: { a, _ in a })
        for e in old.entities where renamedEntity[e.name] == nil {
            out.append(.entityRemoved(entity: e.name))
        }
        for e in new.entities {
            guard let o = entityOrigin[e.name] else { out.append(.entityAdded(entity: e.name)); continue }
            entityChanges(from: o, to: e, renamedEntity: renamedEntity, into: &out)
        }
        return out
    }

    /// What changed in entity `e` paired with `o`, its old version: a rename; then, unless the
    /// version hashes agree, its superentity, attributes, relationships, constraints and indexes.
    /// `renamedEntity` maps an old entity's name to its new one (absent: it kept its name).
    private static func entityChanges(from o: Entity, to e: Entity, renamedEntity: [String: String],
                                      into out: inout [SchemaChange]) {
        let name = e.name
        if o.name != e.name { out.append(.entityRenamed(entity: name, from: o.name)) }
        if o.versionHash == e.versionHash { return }
        if o.superentityName.map({ renamedEntity[$0] ?? $0 }) != e.superentityName {
            out.append(.superentityChanged(entity: name, old: o.superentityName, new: e.superentityName))
        }
        // Old property name → new name, for the lists of constraints and indexes.
        var propertyName: [String: String] = [:]
        pairMembers(o.ownAttributes, e.ownAttributes, name: \.name, originalName: \.originalName, renames: &propertyName,
                    removed: { out.append(.attributeRemoved(entity: name, attribute: $0.name)) },
                    added: { out.append(.attributeAdded(entity: name, attribute: $0.name)) },
                    changed: { attributeChanges(entity: name, from: $0, to: $1, into: &out) })
        pairMembers(o.ownRelationships, e.ownRelationships, name: \.name, originalName: \.originalName, renames: &propertyName,
                    removed: { out.append(.relationshipRemoved(entity: name, relationship: $0.name)) },
                    added: { out.append(.relationshipAdded(entity: name, relationship: $0.name)) },
                    changed: { relationshipChanges(entity: name, from: $0, to: $1, renamedEntity: renamedEntity, into: &out) })
        // Constraints and indexes compared under the new names of the properties they list.
        func renamed(_ lists: [[String]]) -> [[String]] { lists.map { $0.map { propertyName[$0] ?? $0 } } }
        if renamed(o.uniqueConstraints) != e.uniqueConstraints {
            out.append(.uniqueConstraintsChanged(entity: name, old: o.uniqueConstraints, new: e.uniqueConstraints))
        }
        if renamed(o.indexes) != e.indexes { out.append(.indexesChanged(entity: name, old: o.indexes, new: e.indexes)) }
    }

    /// What changed in attribute `a` paired with `oa`, its old version, in the order of
    /// ``SchemaChange``'s attribute cases (a flat list of comparisons).
    private static func attributeChanges(entity name: String, from oa: Attribute, to a: Attribute, into out: inout [SchemaChange]) {
        let n = a.name
        if oa.name != n { out.append(.attributeRenamed(entity: name, attribute: n, from: oa.name)) }
        if oa.type != a.type { out.append(.attributeTypeChanged(entity: name, attribute: n, old: oa.type, new: a.type)) }
        if oa.isOptional != a.isOptional {
            out.append(.attributeOptionalityChanged(entity: name, attribute: n, old: oa.isOptional, new: a.isOptional))
        }
        if oa.isUnique != a.isUnique {
            out.append(.attributeUniquenessChanged(entity: name, attribute: n, old: oa.isUnique, new: a.isUnique))
        }
        if oa.isTransient != a.isTransient {
            out.append(.attributeTransienceChanged(entity: name, attribute: n, old: oa.isTransient, new: a.isTransient))
        }
        if oa.externalStorage != a.externalStorage {
            out.append(.attributeExternalStorageChanged(entity: name, attribute: n, old: oa.externalStorage, new: a.externalStorage))
        }
        if oa.isIndexed != a.isIndexed {
            out.append(.attributeIndexChanged(entity: name, attribute: n, old: oa.isIndexed, new: a.isIndexed))
        }
        if oa.isSearchable != a.isSearchable {
            out.append(.attributeSearchableChanged(entity: name, attribute: n, old: oa.isSearchable, new: a.isSearchable))
        }
        if oa.hashModifier != a.hashModifier {
            out.append(.attributeHashModifierChanged(entity: name, attribute: n, old: oa.hashModifier, new: a.hashModifier))
        }
    }

    /// What changed in relationship `r` paired with `orr`, its old version, in the order of
    /// ``SchemaChange``'s relationship cases; a destination or inverse that only followed a
    /// rename is no change.
    private static func relationshipChanges(entity name: String, from orr: Relationship, to r: Relationship,
                                            renamedEntity: [String: String], into out: inout [SchemaChange]) {
        let n = r.name
        if orr.name != n { out.append(.relationshipRenamed(entity: name, relationship: n, from: orr.name)) }
        if (renamedEntity[orr.destinationName] ?? orr.destinationName) != r.destinationName {
            out.append(.relationshipDestinationChanged(entity: name, relationship: n, old: orr.destinationName, new: r.destinationName))
        }
        if orr.isToMany != r.isToMany {
            out.append(.relationshipCardinalityChanged(entity: name, relationship: n, old: orr.isToMany, new: r.isToMany))
        }
        if orr.isOptional != r.isOptional {
            out.append(.relationshipOptionalityChanged(entity: name, relationship: n, old: orr.isOptional, new: r.isOptional))
        }
        // The inverse by its own pairing (renamed with its entity, or through its originalName).
        let inverseNow = r.inverse.map { inv in (inv.originalName.map { [$0, inv.name] } ?? [inv.name]) }
        if let oldInverse = orr.inverse?.name, let names = inverseNow {
            if !names.contains(oldInverse) {
                out.append(.relationshipInverseChanged(entity: name, relationship: n, old: oldInverse, new: r.inverse?.name))
            }
        } else if (orr.inverse == nil) != (r.inverse == nil) {
            out.append(.relationshipInverseChanged(entity: name, relationship: n, old: orr.inverse?.name, new: r.inverse?.name))
        }
        if orr.hashModifier != r.hashModifier {
            out.append(.relationshipHashModifierChanged(entity: name, relationship: n, old: orr.hashModifier, new: r.hashModifier))
        }
    }

    /// New elements by name → the old element each comes from: the one its `originalName`
    /// names (a rename, which wins over an old element of its own name), else the one of its
    /// own name; each old element goes to one new element.
    /// Pairs an entity's old and new members (``pair(_:_:name:originalName:)``): each old one
    /// left unpaired is `removed`, then, in the new order, each new one is `added` or `changed`
    /// from its old version, whose name `renames` maps to the new one.
    private static func pairMembers<T>(_ old: [T], _ new: [T], name: (T) -> String, originalName: (T) -> String?,
                                       renames: inout [String: String], removed: (T) -> Void, added: (T) -> Void,
                                       changed: (T, T) -> Void) {
        let origin = pair(old, new, name: name, originalName: originalName)
        let paired = Set(origin.values.map(name))
        for o in old where !paired.contains(name(o)) { removed(o) }
        for n in new {
            guard let o = origin[name(n)] else { added(n); continue }
            renames[name(o)] = name(n)
            changed(o, n)
        }
    }

    static func pair<T>(_ old: [T], _ new: [T], name: (T) -> String, originalName: (T) -> String?) -> [String: T] {
        var byName: [String: T] = [:]
        for o in old { byName[name(o)] = o }
        var out: [String: T] = [:]
        var taken: Set<String> = []
        for n in new {
            guard let original = originalName(n), original != name(n), let o = byName[original], !taken.contains(original) else { continue }
            out[name(n)] = o
            taken.insert(original)
        }
        for n in new where out[name(n)] == nil {
            guard let o = byName[name(n)], !taken.contains(name(n)) else { continue }
            out[name(n)] = o
            taken.insert(name(n))
        }
        return out
    }

    /// The changes in words, for errors; "storage layout changed" when the hashes differ
    /// in nothing the list names.
    public static func describe(from old: Schema, to new: Schema) -> [String] {
        let words = changes(from: old, to: new).map(\.description)
        return words.isEmpty ? ["storage layout changed"] : words
    }
}
