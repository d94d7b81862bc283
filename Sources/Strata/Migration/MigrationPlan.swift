/// SwiftData's `SchemaMigrationPlan`: the versions of a schema, oldest first
/// (the last is current), and the stages between consecutive versions.
///
/// JSON form (DESIGN §4, docs/JSON.md §1):
///
///     {"schemas": [{"version": "1.0.0", …}, {"version": "2.0.0", …}],
///      "stages": [{"name": "migrateV1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0"}]}
///
/// A plan is valid when its versions are unique, its stage names are unique,
/// and every stage goes from one schema to the next one in the list, the
/// stages following the schemas' order. Two consecutive schemas may have the
/// same storage (equal version hashes): their stage changes no table.
public struct MigrationPlan: Sendable {
    /// Every version, oldest first; never empty.
    public let schemas: [Schema]
    public let stages: [MigrationStage]

    /// The last schema of the plan: the one a store opens with.
    public let currentSchema: Schema

    /// The newest schema of the plan whose storage has `versionHash`, if any.
    public func schema(withVersionHash versionHash: String) -> Schema? {
        schemas.last(where: { $0.versionHash == versionHash })
    }

    /// The stage that starts at `version`, if the plan has one.
    public func stage(from version: String) -> MigrationStage? {
        stages.first(where: { $0.fromVersion == version })
    }

    /// Decodes and validates a plan.
    ///
    /// - Throws: `.invalid` for a malformed plan or stage, naming its JSON path
    ///   (such as `/migrationPlan/stages/1/to`); `.schema` for an invalid schema
    ///   (`/migrationPlan/schemas/1/entities/0/…`).
    static func decode(_ json: JSONValue, path: JSONPath) throws -> MigrationPlan {
        var o = try ObjectReader(json, path: path, what: "migration plan")
        guard let schemaList = try o.array("schemas"), !schemaList.isEmpty else {
            throw StrataError(.invalid, "migration plan needs a non-empty 'schemas' array", path: (path / "schemas").description)
        }
        let stageList = try o.array("stages") ?? []
        try o.finish()
        var schemas: [Schema] = []
        var indexOfVersion: [String: Int] = [:]
        for (i, s) in schemaList.enumerated() {
            let schema = try SchemaDecoder.decode(s, path: path / "schemas" / i)
            if let first = indexOfVersion[schema.version] {
                throw StrataError(.invalid, "version '\(schema.version)' appears twice in the migration plan (schemas \(first) and \(i)); "
                                  + "every schema of a plan needs its own version", path: (path / "schemas" / i / "version").description)
            }
            indexOfVersion[schema.version] = i
            schemas.append(schema)
        }
        var stages: [MigrationStage] = []
        var stageOfName: [String: Int] = [:]
        var previousFrom = -1
        for (i, s) in stageList.enumerated() {
            let at = path / "stages" / i
            let stage = try MigrationStage.decode(s, path: at)
            if let first = stageOfName[stage.name] {
                throw StrataError(.invalid, "stage name '\(stage.name)' is used by stages \(first) and \(i); stage names must be unique",
                                  path: (at / "name").description)
            }
            stageOfName[stage.name] = i
            guard let from = indexOfVersion[stage.fromVersion] else {
                throw StrataError(.invalid, "stage '\(stage.name)' starts from version '\(stage.fromVersion)', which is not a schema of the plan "
                                  + "(versions: \(schemas.map(\.version).joined(separator: ", ")))", path: (at / "from").description)
            }
            guard from + 1 < schemas.count else {
                throw StrataError(.invalid, "stage '\(stage.name)' starts from version '\(stage.fromVersion)', the plan's current (last) schema: "
                                  + "no stage can start there", path: (at / "from").description)
            }
            guard from > previousFrom else {
                throw StrataError(.invalid, "stage '\(stage.name)' (from '\(stage.fromVersion)') comes after the stage from "
                                  + "'\(schemas[previousFrom].version)': stages must follow the order of the schemas, one per pair of versions",
                                  path: (at / "from").description)
            }
            let next = schemas[from + 1].version
            guard stage.toVersion == next else {
                throw StrataError(.invalid, "stage '\(stage.name)' goes from '\(stage.fromVersion)' to '\(stage.toVersion)', but the schema after "
                                  + "'\(stage.fromVersion)' in the plan is '\(next)': a stage goes from one schema to the next",
                                  path: (at / "to").description)
            }
            previousFrom = from
            for (k, op) in stage.willMigrate.enumerated() {
                try op.check(against: schemas[from], path: at / "willMigrate" / k, stage: stage.name)
            }
            stages.append(stage)
        }
        return MigrationPlan(schemas: schemas, stages: stages, currentSchema: schemas[schemas.count - 1])
    }
}

/// One step of a plan, between two consecutive schemas (SwiftData's `MigrationStage`).
///
/// JSON: `{"name": "migrateV1toV2", "kind": "custom", "from": "1.0.0", "to": "2.0.0",
/// "willMigrate": [{"op": "deduplicate", …}], "onDuplicates": "error"}`.
public struct MigrationStage: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Inferred from the two schemas.
        case lightweight
        /// willMigrate (hooks and operations, old schema), the inferred step, didMigrate hooks (new schema).
        case custom
    }

    public let name: String
    public let kind: Kind
    public let fromVersion: String
    public let toVersion: String
    /// Declarative operations run before the storage change, on the old schema (custom stages).
    public let willMigrate: [MigrationOperation]
    /// What adopting a unique constraint does with rows that already share its values.
    public let onDuplicates: DuplicatePolicy

    public init(name: String, kind: Kind, fromVersion: String, toVersion: String,
                willMigrate: [MigrationOperation] = [], onDuplicates: DuplicatePolicy = .error) {
        self.name = name
        self.kind = kind
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.willMigrate = willMigrate
        self.onDuplicates = onDuplicates
    }

    static func decode(_ json: JSONValue, path: JSONPath) throws -> MigrationStage {
        var o = try ObjectReader(json, path: path, what: "migration stage")
        guard let name = try o.string("name", required: true), !name.isEmpty else {
            throw StrataError(.invalid, "a migration stage needs a non-empty 'name'", path: (path / "name").description)
        }
        guard let kindText = try o.string("kind", required: true) else {
            throw StrataError(.invalid, "migration stage\(path.at) is missing required key 'kind'", path: (path / "kind").description)
        }
        guard let kind = Kind(rawValue: kindText) else {
            throw StrataError(.invalid, "stage '\(name)': unknown kind '\(kindText)' (known kinds: lightweight, custom)",
                              path: (path / "kind").description)
        }
        let from = try o.string("from", required: true) ?? ""
        let to = try o.string("to", required: true) ?? ""
        var operations: [MigrationOperation] = []
        if let list = try o.array("willMigrate") {
            guard kind == .custom else {
                throw StrataError(.invalid, "stage '\(name)' is lightweight: operations run only in a stage of \"kind\": \"custom\"",
                                  path: (path / "willMigrate").description)
            }
            for (i, item) in list.enumerated() {
                operations.append(try MigrationOperation.decode(item, path: path / "willMigrate" / i, stage: name))
            }
        }
        if o.value("didMigrate") != nil {
            throw StrataError(.invalid, "stage '\(name)': declarative operations run in 'willMigrate' only; "
                              + "code that runs after the storage change is a didMigrate hook (strata_config_set_stage_hooks)",
                              path: (path / "didMigrate").description)
        }
        var policy = DuplicatePolicy.error
        if let text = try o.string("onDuplicates") {
            guard let p = DuplicatePolicy(rawValue: text) else {
                throw StrataError(.invalid, "stage '\(name)': unknown onDuplicates '\(text)' (known: error, keepFirst, keepLast)",
                                  path: (path / "onDuplicates").description)
            }
            policy = p
        }
        try o.finish()
        return MigrationStage(name: name, kind: kind, fromVersion: from, toVersion: to, willMigrate: operations, onDuplicates: policy)
    }
}

/// What adopting a unique constraint does with rows that already share its
/// values: fail naming one duplicated value (`error`), or keep the first or the
/// last row of each group (by identifier order) and delete the others, with
/// their delete rules.
public enum DuplicatePolicy: String, Sendable, CaseIterable {
    case error, keepFirst, keepLast
}

/// A declarative operation of a custom stage's willMigrate, written in JSON.
public enum MigrationOperation: Sendable, Equatable {
    public enum Keep: String, Sendable { case first, last }

    /// `{"op": "deduplicate", "entity": "Trip", "by": ["name"], "keep": "first", "mergeRelationships": true}`:
    /// among objects of `entity` (and its subentities) with equal values of `by`, keeps the
    /// first (or last) by identifier order and deletes the others with their delete rules;
    /// with `mergeRelationships`, the deleted objects' related objects move to the kept one first.
    case deduplicate(entity: String, by: [String], keep: Keep, mergeRelationships: Bool)

    static func decode(_ json: JSONValue, path: JSONPath, stage: String) throws -> MigrationOperation {
        var o = try ObjectReader(json, path: path, what: "migration operation")
        guard let op = try o.string("op", required: true) else {
            throw StrataError(.invalid, "stage '\(stage)': an operation needs 'op'", path: (path / "op").description)
        }
        guard op == "deduplicate" else {
            throw StrataError(.invalid, "stage '\(stage)': unknown operation '\(op)' (known: deduplicate)", path: (path / "op").description)
        }
        guard let entity = try o.string("entity", required: true), !entity.isEmpty else {
            throw StrataError(.invalid, "stage '\(stage)': deduplicate needs an 'entity'", path: (path / "entity").description)
        }
        guard let list = try o.array("by"), !list.isEmpty else {
            throw StrataError(.invalid, "stage '\(stage)': deduplicate needs a non-empty 'by' array of property names",
                              path: (path / "by").description)
        }
        var by: [String] = []
        for (i, item) in list.enumerated() {
            guard case .string(let n) = item else {
                throw StrataError(.invalid, "stage '\(stage)': 'by' holds property names, found \(item.typeName)", path: (path / "by" / i).description)
            }
            by.append(n)
        }
        var keep = Keep.first
        if let k = try o.string("keep") {
            guard let v = Keep(rawValue: k) else {
                throw StrataError(.invalid, "stage '\(stage)': unknown keep '\(k)' (known: first, last)", path: (path / "keep").description)
            }
            keep = v
        }
        let merge = try o.bool("mergeRelationships") ?? false
        try o.finish()
        return .deduplicate(entity: entity, by: by, keep: keep, mergeRelationships: merge)
    }

    /// Checks the operation against the schema it runs on (the stage's old schema).
    func check(against schema: Schema, path: JSONPath, stage: String) throws {
        switch self {
        case .deduplicate(let entityName, let by, _, _):
            guard let e = schema.entity(named: entityName) else {
                throw StrataError(.invalid, "stage '\(stage)': deduplicate names entity '\(entityName)', which version \(schema.version) does not have",
                                  entity: entityName, path: (path / "entity").description)
            }
            for (i, n) in by.enumerated() {
                if let a = e.attributeByName[n], !a.isTransient { continue }
                if let r = e.relationshipByName[n], !r.isToMany { continue }
                throw StrataError(.invalid, "stage '\(stage)': deduplicate 'by' names '\(n)', which is not a stored attribute or to-one "
                                  + "relationship of '\(entityName)' in version \(schema.version)",
                                  entity: entityName, attribute: n, path: (path / "by" / i).description)
            }
        }
    }
}
