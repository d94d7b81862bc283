// Decoding the declarations: the schema's entities, each with its attributes,
// relationships, unique constraints and indexes, checked one by one (names,
// types, options). What needs the whole graph is in SchemaDecoder+Passes.swift.
extension SchemaDecoder {
    /// Every entity's declaration decodes, and entity names are unique, also ignoring case.
    static func decodeEntities(_ entityJSON: [JSONValue], path: JSONPath) throws -> [Entity] {
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
        return entities
    }

    /// One entity: a valid name, known keys only, property names unique within it (also ignoring case).
    static func decodeEntity(_ json: JSONValue, path: JSONPath) throws -> Entity {
        var o = try ObjectReader(json, path: path, what: "entity")
        guard let name = try o.string("name") else { throw fail("entity is missing 'name'", path / "name") }
        try checkIdentifier(name, "entity", path / "name", entity: name)
        let sup = try o.string("superentity")
        let original = try o.string("originalName")
        if let original { try checkIdentifier(original, "originalName", path / "originalName", entity: name) }
        var attrs: [Attribute] = []
        // Property names (in `declared`) by their lowercased form (SQLite column names ignore case).
        var names: [String: Int] = [:]
        var declared: [String] = []
        func checkNew(_ property: String, _ p: JSONPath) throws {
            let folded = property.lowercased()
            guard let at = names[folded] else {
                names[folded] = declared.count
                declared.append(property)
                return
            }
            let other = declared[at]
            if other == property {
                throw fail("duplicate property name '\(property)' in entity '\(name)'", p / "name", entity: name, attribute: property)
            }
            throw fail("property name '\(property)' in entity '\(name)' differs from '\(other)' only in case; SQLite column names ignore case",
                       p / "name", entity: name, attribute: property)
        }
        let attributeJSON = try o.array("attributes") ?? []
        // Room for the attributes and a few relationships at once (grown key by key, the table was rehashed at each doubling).
        names.reserveCapacity(attributeJSON.count + 4)
        declared.reserveCapacity(attributeJSON.count + 4)
        for (i, aj) in attributeJSON.enumerated() {
            let a = try decodeAttribute(aj, path: path / "attributes" / i, entity: name)
            try checkNew(a.name, path / "attributes" / i)
            // A composite's fields are attributes of their own, right after it.
            attrs.append(a)
            attrs += a.fields
        }
        var rels: [Relationship] = []
        for (i, rj) in (try o.array("relationships") ?? []).enumerated() {
            let r = try decodeRelationship(rj, path: path / "relationships" / i, entity: name)
            try checkNew(r.name, path / "relationships" / i)
            rels.append(r)
        }
        let uniques = try stringLists(o.array("uniqueConstraints") ?? [], path / "uniqueConstraints", entity: name)
        let indexes = try stringLists(o.array("indexes") ?? [], path / "indexes", entity: name)
        do { try o.finish() } catch var e as StrataError { e.code = .schema; e.entity = name; throw e }
        return Entity(name: name, superentityName: sup, originalName: original, ownAttributes: attrs, ownRelationships: rels,
                      uniqueConstraints: uniques, indexes: indexes, declaration: json)
    }

    /// Unique constraints or indexes as declared: arrays of names (what they name is checked by `checkKeyLists`).
    static func stringLists(_ items: [JSONValue], _ path: JSONPath, entity: String) throws -> [[String]] {
        try items.enumerated().map { i, item in
            guard case .array(let names) = item else {
                throw fail("expected an array of property names, found \(item.typeName)", path / i, entity: entity)
            }
            return try names.enumerated().map { j, n in
                guard case .string(let s) = n else { throw fail("expected a property name, found \(n.typeName)", path / i / j, entity: entity) }
                return s
            }
        }
    }

    /// One attribute: a valid name, a known type, options that go together, a default and enum values of its type.
    static func decodeAttribute(_ json: JSONValue, path: JSONPath, entity: String) throws -> Attribute {
        var o = try ObjectReader(json, path: path, what: "attribute")
        guard let name = try o.string("name") else { throw fail("attribute is missing 'name'", path / "name", entity: entity) }
        try checkIdentifier(name, "attribute", path / "name", entity: entity)
        func err(_ m: String, _ p: JSONPath) -> StrataError { fail(m, p, entity: entity, attribute: name) }
        guard let typeName = try o.string("type") else { throw err("attribute '\(name)' is missing 'type'", path / "type") }
        guard let type = AttributeType(rawValue: typeName) else {
            throw err("unknown type '\(typeName)' for attribute '\(entity).\(name)' (known: \(AttributeType.allCases.map(\.rawValue).joined(separator: ", ")))", path / "type")
        }
        if type == .composite { return try decodeComposite(json, name: name, path: path, entity: entity) }
        let optional = try o.bool("optional") ?? false
        let unique = try o.bool("unique") ?? false
        let original = try o.string("originalName")
        if let original { try checkIdentifier(original, "originalName", path / "originalName", entity: entity) }
        let external = try o.bool("externalStorage") ?? false
        let preserve = try o.bool("preserveValueOnDeletion") ?? false
        let historyValues = try o.bool("historyValues") ?? false
        let index = try o.bool("index") ?? false
        let searchable = try o.bool("searchable") ?? false
        let transient = try o.bool("transient") ?? false
        let hashModifier = try o.string("hashModifier")
        let defaultJSON = o.value("default")
        let enumItems = try o.array("enum")
        do { try o.finish() } catch var e as StrataError { e.code = .schema; e.entity = entity; e.attribute = name; throw e }

        if external && type != .data {
            throw err("externalStorage applies to 'data' attributes only ('\(name)' is \(type.rawValue))", path / "externalStorage")
        }
        if transient && unique { throw err("transient attribute '\(name)' cannot be unique", path / "unique") }
        if transient && index { throw err("transient attribute '\(name)' cannot be indexed", path / "index") }
        if transient && external { throw err("transient attribute '\(name)' cannot use external storage", path / "externalStorage") }
        if historyValues && transient { throw err("transient attribute '\(name)' cannot record historyValues (it is not saved)", path / "historyValues") }
        if historyValues && external {
            throw err("attribute '\(name)' uses externalStorage and cannot record historyValues (large values stay out of the history)", path / "historyValues")
        }
        if unique && type == .json { throw err("json attribute '\(name)' cannot be unique", path / "unique") }
        // The column of an external-storage value holds a file name once the value moves to a file:
        // a unique index or an index over it would compare names, not values.
        if external && unique {
            throw err("attribute '\(name)' uses externalStorage and cannot be unique (its value may live in a file; the column holds the file's name)", path / "unique")
        }
        if external && index {
            throw err("attribute '\(name)' uses externalStorage and cannot be indexed (its value may live in a file; the column holds the file's name)", path / "index")
        }
        if searchable && type != .string {
            throw err("searchable applies to 'string' attributes only ('\(name)' is \(type.rawValue))", path / "searchable")
        }
        if searchable && transient { throw err("transient attribute '\(name)' cannot be searchable (it is not saved)", path / "searchable") }


        var defaultValue: SQLValue?
        var defaultJ: JSONValue?
        if let d = defaultJSON, d != .null {
            do { defaultValue = try ValueCodec.convert(d, type: type) } catch let e as StrataError {
                throw err("default of '\(entity).\(name)' is not a valid \(type.rawValue): \(e.message)", path / "default")
            }
            defaultJ = d
        }
        if transient && defaultValue == nil && !optional {
            throw err("transient attribute '\(entity).\(name)' needs a default (or optional: true)", path / "transient")
        }
        let enumValues = try enumItems.map {
            try decodeEnumValues($0, type: type, defaultValue: defaultValue, path: path, entity: entity, attribute: name)
        }
        return Attribute(name: name, type: type, isOptional: optional, defaultJSON: defaultJ, defaultValue: defaultValue,
                         isUnique: unique, originalName: original, externalStorage: external, preserveValueOnDeletion: preserve,
                         historyValues: historyValues, isIndexed: index, isSearchable: searchable, isTransient: transient, hashModifier: hashModifier, enumValues: enumValues,
                         enumJSON: enumItems, declaration: json)
    }

    /// A composite attribute: its fields, each decoded as an attribute (no composite among
    /// them), stored as attributes named `name.field` that follow it.
    ///
    /// The composite's own column holds 1 when it has a value (a required composite always
    /// does). A field of an optional composite is optional in storage (a nil composite has
    /// nil fields); whether it must have a value when the composite has one is
    /// ``Attribute/isRequiredField``, and its default is applied where a composite value
    /// leaves it out (``Attribute/fieldDefault``).
    static func decodeComposite(_ json: JSONValue, name: String, path: JSONPath, entity: String) throws -> Attribute {
        func err(_ m: String, _ p: JSONPath) -> StrataError { fail(m, p, entity: entity, attribute: name) }
        guard case .object(let members) = json else { throw err("expected an attribute object", path) }
        let unsupported = [
            "unique": "mark its fields unique, or name them in uniqueConstraints (\"\(name).field\")",
            "index": "mark its fields indexed, or name them in indexes (\"\(name).field\")",
            "default": "give its fields defaults",
            "enum": "give its fields enums",
            "transient": "a composite is stored",
            "externalStorage": "give a data field a related entity instead",
            "searchable": "mark its string fields searchable",
            "hashModifier": "not supported for composite attributes yet",
        ]
        for (key, _) in members {
            if let why = unsupported[key] { throw err("composite attribute '\(entity).\(name)' does not take '\(key)' (\(why))", path / key) }
        }
        var o = try ObjectReader(json, path: path, what: "attribute")
        _ = try o.string("name")
        _ = try o.string("type")
        let optional = try o.bool("optional") ?? false
        let original = try o.string("originalName")
        if let original { try checkIdentifier(original, "originalName", path / "originalName", entity: entity) }
        // History keeps the whole composite (an object of its fields), never a field alone.
        let preserve = try o.bool("preserveValueOnDeletion") ?? false
        let historyValues = try o.bool("historyValues") ?? false
        guard let fieldJSON = try o.array("fields") else {
            throw err("composite attribute '\(entity).\(name)' is missing 'fields' (e.g. [{\"name\": \"city\", \"type\": \"string\"}])", path / "fields")
        }
        do { try o.finish() } catch var e as StrataError { e.code = .schema; e.entity = entity; e.attribute = name; throw e }
        guard !fieldJSON.isEmpty else { throw err("composite attribute '\(entity).\(name)' must have at least one field", path / "fields") }

        let composite = Attribute(name: name, type: .composite, isOptional: optional, defaultJSON: nil,
                                  defaultValue: optional ? nil : .int(1), isUnique: false, originalName: original,
                                  externalStorage: false, preserveValueOnDeletion: preserve, historyValues: historyValues,
                                  isIndexed: false, isTransient: false,
                                  hashModifier: nil, enumValues: nil, enumJSON: nil, declaration: json)
        var seen: [String: String] = [:]
        for (i, fj) in fieldJSON.enumerated() {
            let fp = path / "fields" / i
            if case .object(let m) = fj, m.contains(where: { $0.0 == "fields" || ($0.0 == "type" && $0.1 == .string("composite")) }) {
                throw err("field \(i) of composite '\(entity).\(name)' is itself composite; composites do not nest", fp)
            }
            let f = try decodeAttribute(fj, path: fp, entity: entity)
            let full = "\(name).\(f.name)"
            func ferr(_ m: String, _ p: JSONPath) -> StrataError { fail(m, p, entity: entity, attribute: full) }
            if let other = seen[f.name.lowercased()] {
                throw ferr(other == f.name ? "duplicate field name '\(f.name)' in composite '\(entity).\(name)'"
                           : "field name '\(f.name)' in composite '\(entity).\(name)' differs from '\(other)' only in case; column names ignore case", fp / "name")
            }
            seen[f.name.lowercased()] = f.name
            if f.isTransient { throw ferr("field '\(full)' cannot be transient (a composite is stored whole)", fp / "transient") }
            if f.externalStorage { throw ferr("field '\(full)' cannot use externalStorage", fp / "externalStorage") }
            if f.preserveValueOnDeletion {
                throw ferr("field '\(full)' cannot take preserveValueOnDeletion; give it to the composite '\(name)' (history keeps the whole composite)", fp / "preserveValueOnDeletion")
            }
            if f.historyValues {
                throw ferr("field '\(full)' cannot take historyValues; give it to the composite '\(name)' (history keeps the whole composite)", fp / "historyValues")
            }
            if f.hashModifier != nil { throw ferr("field '\(full)' cannot take a hashModifier (not supported for composite fields yet)", fp / "hashModifier") }
            var fieldOriginal: String?
            if original != nil || f.originalName != nil { fieldOriginal = "\(original ?? name).\(f.originalName ?? f.name)" }
            let leaf = Attribute(name: full, type: f.type, isOptional: f.isOptional || optional,
                                 defaultJSON: optional ? nil : f.defaultJSON, defaultValue: optional ? nil : f.defaultValue,
                                 isUnique: f.isUnique, originalName: fieldOriginal, externalStorage: false, preserveValueOnDeletion: preserve,
                                 historyValues: historyValues, isIndexed: f.isIndexed, isSearchable: f.isSearchable, isTransient: false, hashModifier: nil,
                                 enumValues: f.enumValues, enumJSON: f.enumJSON,
                                 declaration: fj)
            leaf.composite = composite
            leaf.fieldName = f.name
            leaf.fieldDefault = f.defaultValue
            leaf.isRequiredField = !f.isOptional
            composite.fields.append(leaf)
        }
        return composite
    }

    /// An enum belongs to a string or int attribute and lists at least one value of its type,
    /// none null, none twice, the attribute's default (if any) among them.
    static func decodeEnumValues(_ items: [JSONValue], type: AttributeType, defaultValue: SQLValue?, path: JSONPath,
                                 entity: String, attribute name: String) throws -> [SQLValue] {
        func err(_ m: String, _ p: JSONPath) -> StrataError { fail(m, p, entity: entity, attribute: name) }
        guard type == .string || type == .int else {
            throw err("enum applies to string and int attributes only ('\(name)' is \(type.rawValue))", path / "enum")
        }
        guard !items.isEmpty else { throw err("enum of '\(name)' must list at least one value", path / "enum") }
        var values: [SQLValue] = []
        for (i, item) in items.enumerated() {
            do {
                let v = try ValueCodec.convert(item, type: type)
                if v.isNull { throw StrataError(.schema, "null is not an enum value") }
                if values.contains(v) { throw StrataError(.schema, "duplicate enum value") }
                values.append(v)
            } catch let e as StrataError {
                throw err("enum value of '\(entity).\(name)' is not valid: \(e.message)", path / "enum" / i)
            }
        }
        if let dv = defaultValue, !values.contains(dv) {
            throw err("default of '\(entity).\(name)' is not one of its enum values", path / "default")
        }
        return values
    }

    /// One relationship: a valid name, a destination, a known delete rule, counts that are not negative.
    static func decodeRelationship(_ json: JSONValue, path: JSONPath, entity: String) throws -> Relationship {
        var o = try ObjectReader(json, path: path, what: "relationship")
        guard let name = try o.string("name") else { throw fail("relationship is missing 'name'", path / "name", entity: entity) }
        try checkIdentifier(name, "relationship", path / "name", entity: entity)
        func err(_ m: String, _ p: JSONPath) -> StrataError { fail(m, p, entity: entity, attribute: name) }
        guard let dest = try o.string("destination") else { throw err("relationship '\(name)' is missing 'destination'", path / "destination") }
        let toMany = try o.bool("toMany") ?? false
        let inverse = try o.string("inverse")
        let ruleName = try o.string("deleteRule") ?? "nullify"
        guard let rule = DeleteRule(rawValue: ruleName) else {
            throw err("unknown deleteRule '\(ruleName)' (known: nullify, cascade, deny, noAction)", path / "deleteRule")
        }
        let minCount = try o.int("minimumModelCount")
        let maxCount = try o.int("maximumModelCount")
        if let m = minCount, m < 0 { throw err("minimumModelCount must not be negative", path / "minimumModelCount") }
        if let m = maxCount, m < 0 { throw err("maximumModelCount must not be negative", path / "maximumModelCount") }
        let original = try o.string("originalName")
        if let original { try checkIdentifier(original, "originalName", path / "originalName", entity: entity) }
        // To-many relationships are optional by nature (an empty set); to-one default to optional as SwiftData's `Trip?`.
        let optional = try o.bool("optional") ?? true
        let hashModifier = try o.string("hashModifier")
        do { try o.finish() } catch var e as StrataError { e.code = .schema; e.entity = entity; e.attribute = name; throw e }
        return Relationship(name: name, destinationName: dest, isToMany: toMany, inverseName: inverse, deleteRule: rule,
                            minimumModelCount: minCount.map { Int($0) }, maximumModelCount: maxCount.map { Int($0) },
                            originalName: original, isOptional: optional, hashModifier: hashModifier, declaration: json)
    }
}
