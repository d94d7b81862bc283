/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, CaseIterable, Sendable {
    case nullify, cascade, deny, noAction
}

/// One stored (or transient) value of an entity.
public final class Attribute: @unchecked Sendable {
    public let name: String
    public let type: AttributeType
    public let isOptional: Bool
    /// The default as given in the schema JSON.
    public let defaultJSON: JSONValue?
    /// The default as stored in SQLite.
    let defaultValue: SQLValue?
    public let isUnique: Bool
    public let originalName: String?
    public let externalStorage: Bool
    public let preserveValueOnDeletion: Bool
    /// Whether history records this attribute's old and new values in updates.
    public let historyValues: Bool
    public let isIndexed: Bool
    /// Whether a full-text index serves `matches` on this (string) attribute.
    public let isSearchable: Bool
    public let isTransient: Bool
    public let hashModifier: String?
    /// Allowed values (stored form), when the attribute is an enum.
    let enumValues: [SQLValue]?
    public let enumJSON: [JSONValue]?
    /// The JSON of this attribute as declared (for the stored schema).
    let declaration: JSONValue
    /// The entity that declares it.
    public internal(set) unowned(unsafe) var entity: Entity!
    /// A composite's fields, each stored as an attribute named `composite.field`, in declaration order.
    public internal(set) var fields: [Attribute] = []
    /// A field's composite (nil for any other attribute).
    public internal(set) unowned(unsafe) var composite: Attribute?
    /// A field: its name within the composite (`city` of `address.city`).
    public internal(set) var fieldName: String = ""
    /// A field: its value when a composite value leaves it out. (A field of an optional
    /// composite stores no default of its own: a nil composite has nil fields.)
    var fieldDefault: SQLValue?
    /// A field that must have a value whenever its composite has one.
    public internal(set) var isRequiredField = false

    /// Whether this is a composite attribute (its column says whether it has a value).
    public var isComposite: Bool { type == .composite }

    init(name: String, type: AttributeType, isOptional: Bool, defaultJSON: JSONValue?, defaultValue: SQLValue?,
         isUnique: Bool, originalName: String?, externalStorage: Bool, preserveValueOnDeletion: Bool,
         historyValues: Bool = false, isIndexed: Bool, isSearchable: Bool = false, isTransient: Bool, hashModifier: String?, enumValues: [SQLValue]?, enumJSON: [JSONValue]?,
         declaration: JSONValue) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultJSON = defaultJSON
        self.defaultValue = defaultValue
        self.isUnique = isUnique
        self.originalName = originalName
        self.externalStorage = externalStorage
        self.preserveValueOnDeletion = preserveValueOnDeletion
        self.historyValues = historyValues
        self.isIndexed = isIndexed
        self.isSearchable = isSearchable
        self.isTransient = isTransient
        self.hashModifier = hashModifier
        self.enumValues = enumValues
        self.enumJSON = enumJSON
        self.declaration = declaration
    }
}

/// Where a relationship's links are kept: a decision of the model (which end
/// of a one-to-one holds the link, which relationships need a set of pairs)
/// that every store shares. The store's layout names the tables and columns.
enum LinkPlacement: Equatable {
    /// In the owner's row: a to-one link, one per object.
    case inRow
    /// In the destination's rows: the inverse to-one holds the link.
    case inInverseRows
    /// In a set of (first, second) pairs: many-to-many, or a to-many without an
    /// inverse. `set` names it (`Entity_relationship` of the end that owns it,
    /// unique among entity and set names); `ownerIsFirst` says which end of a
    /// pair this relationship's owner is.
    case inPairs(set: String, ownerIsFirst: Bool)
}

/// A link from one entity to another.
public final class Relationship: @unchecked Sendable {
    public let name: String
    public let destinationName: String
    public let isToMany: Bool
    public let inverseName: String?
    public let deleteRule: DeleteRule
    public let minimumModelCount: Int?
    public let maximumModelCount: Int?
    public let originalName: String?
    public let isOptional: Bool
    public let hashModifier: String?
    let declaration: JSONValue

    public internal(set) unowned(unsafe) var entity: Entity!
    public internal(set) unowned(unsafe) var destination: Entity!
    public internal(set) unowned(unsafe) var inverse: Relationship?
    var placement: LinkPlacement = .inRow

    init(name: String, destinationName: String, isToMany: Bool, inverseName: String?, deleteRule: DeleteRule,
         minimumModelCount: Int?, maximumModelCount: Int?, originalName: String?, isOptional: Bool,
         hashModifier: String?, declaration: JSONValue) {
        self.name = name
        self.destinationName = destinationName
        self.isToMany = isToMany
        self.inverseName = inverseName
        self.deleteRule = deleteRule
        self.minimumModelCount = minimumModelCount
        self.maximumModelCount = maximumModelCount
        self.originalName = originalName
        self.isOptional = isOptional
        self.hashModifier = hashModifier
        self.declaration = declaration
    }

    /// Whether the owner's row holds the link (a stored slot of the entity).
    var isHeldInRow: Bool { placement == .inRow }
}

/// A value an object of an entity stores (a slot): an attribute, or a link held in its row.
public enum StoredColumn {
    case attribute(Attribute)
    case link(Relationship)

    /// The attribute's or relationship's name.
    var name: String {
        switch self {
        case .attribute(let a): return a.name
        case .link(let r): return r.name
        }
    }

    /// The name a change to it is reported under: a composite's field changes its composite.
    var changeName: String {
        if case .attribute(let a) = self, let c = a.composite { return c.name }
        return name
    }
}

/// An entity: SwiftData's `@Model` class, Core Data's NSEntityDescription.
public final class Entity: @unchecked Sendable {
    public let name: String
    public let superentityName: String?
    /// The entity's name in an earlier version (a rename that keeps its objects and their keys).
    public let originalName: String?
    public let ownAttributes: [Attribute]
    public let ownRelationships: [Relationship]
    /// Compound unique constraints declared on this entity (names of attributes / to-one relationships).
    public let uniqueConstraints: [[String]]
    /// Indexes declared on this entity.
    public let indexes: [[String]]
    let declaration: JSONValue

    public internal(set) unowned(unsafe) var superentity: Entity?
    public internal(set) var subentities: [Entity] = []
    /// All attributes, inherited ones first.
    public internal(set) var attributes: [Attribute] = []
    /// All relationships, inherited ones first.
    public internal(set) var relationships: [Relationship] = []
    var attributeByName: [String: Attribute] = [:]
    var relationshipByName: [String: Relationship] = [:]
    /// This entity and every entity below it (computed: an entity must not retain itself).
    public var descendants: [Entity] {
        var d: [Entity] = [self]
        for s in subentities { d += s.descendants }
        return d
    }
    /// Columns a row of this concrete entity writes, in slot order.
    var storedColumns: [StoredColumn] = []
    var slotByName: [String: Int] = [:]
    /// A new row before input: attribute defaults, else null (slot order).
    var defaultRow: [SQLValue] = []
    /// Unique constraints that apply to this entity (own and inherited), as slot lists.
    var uniqueSlotSets: [[Int]] = []
    public internal(set) var versionHash: String = ""

    init(name: String, superentityName: String?, originalName: String? = nil, ownAttributes: [Attribute], ownRelationships: [Relationship],
         uniqueConstraints: [[String]], indexes: [[String]], declaration: JSONValue) {
        self.name = name
        self.superentityName = superentityName
        self.originalName = originalName
        self.ownAttributes = ownAttributes
        self.ownRelationships = ownRelationships
        self.uniqueConstraints = uniqueConstraints
        self.indexes = indexes
        self.declaration = declaration
    }

    /// The root of this entity's hierarchy (a store keeps a hierarchy together).
    /// Identifiers hash and compare by it: known once the schema is decoded.
    @inline(__always) public var root: Entity {
        if let r = knownRoot { return r }
        var e = self
        while let s = e.superentity { e = s }
        return e
    }
    unowned(unsafe) var knownRoot: Entity?

    /// This entity or the subentity (at any depth) named `name`, if any.
    func descendant(named name: String) -> Entity? {
        if self.name == name { return self }
        for s in subentities { if let d = s.descendant(named: name) { return d } }
        return nil
    }

    /// True when `other` is this entity or one of its ancestors.
    public func isKind(of other: Entity) -> Bool {
        var e: Entity? = self
        while let x = e {
            if x === other { return true }
            e = x.superentity
        }
        return false
    }

    /// Whether the entity's table is shared with other entities.
    var isInHierarchy: Bool { superentity != nil || !subentities.isEmpty }

    /// Values of stored slots as history records them, by name: an attribute's as it is, a
    /// composite's (its slot and every field's among `values`) as one value, the JSON text
    /// of the object of its fields, or null when it is nil; a field never by itself.
    func compositeValues(_ values: [(slot: Int, value: SQLValue)]) -> [(name: String, value: SQLValue)] {
        var out: [(name: String, value: SQLValue)] = []
        for (slot, v) in values {
            guard case .attribute(let a) = storedColumns[slot] else { out.append((storedColumns[slot].name, v)); continue }
            if a.composite != nil { continue }
            guard a.isComposite, !v.isNull else { out.append((a.name, v)); continue }
            var w = JSONWriter()
            w.beginObject()
            for f in a.fields {
                w.key(f.fieldName)
                let fv = slotByName[f.name].flatMap { s in values.first { $0.slot == s }?.value } ?? .null
                ValueCodec.write(fv, type: f.type, to: &w)
            }
            w.endObject()
            out.append((a.name, .text(w.string)))
        }
        return out
    }
}

/// One version of a model: entities and their storage layout.
public final class Schema: @unchecked Sendable {
    public let version: String
    public let entities: [Entity]
    let entityByName: [String: Entity]
    /// SHA-256 over the entities' version hashes: equal hashes mean compatible storage.
    public let versionHash: String
    /// The schema as JSON (as declared, minified).
    public let json: JSONValue
    /// `json.text`, made once: what a store keeps as its declaration, and what decoded schemas are cached by.
    public let jsonText: String
    /// The sets of pairs of many-to-many and inverse-less to-many relationships (`LinkPlacement.inPairs`).
    let pairSets: [(name: String, relationship: Relationship)]

    init(version: String, entities: [Entity], json: JSONValue, versionHash: String,
         pairSets: [(name: String, relationship: Relationship)], jsonText: String? = nil, entityByName: [String: Entity]? = nil) {
        self.version = version
        self.entities = entities
        self.json = json
        self.jsonText = jsonText ?? json.text
        self.versionHash = versionHash
        self.pairSets = pairSets
        if let entityByName {
            assert(entityByName.count == entities.count && entities.allSatisfy { entityByName[$0.name] === $0 }, "entityByName is not the entities by name")
            self.entityByName = entityByName
        } else {
            var map: [String: Entity] = [:]
            for e in entities { map[e.name] = e }
            self.entityByName = map
        }
    }

    public func entity(named name: String) -> Entity? { entityByName[name] }

    /// Root entities: one table each.
    public var rootEntities: [Entity] { entities.filter { $0.superentity == nil } }
}
