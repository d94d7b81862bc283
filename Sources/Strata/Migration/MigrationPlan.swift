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
            stages.append(stage)
        }
        return MigrationPlan(schemas: schemas, stages: stages, currentSchema: schemas[schemas.count - 1])
    }
}

/// One step of a plan, between two consecutive schemas (SwiftData's `MigrationStage`).
public struct MigrationStage: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Inferred from the two schemas.
        case lightweight
        /// willMigrate hooks (old schema), the inferred step, didMigrate hooks (new schema).
        case custom
    }

    public let name: String
    public let kind: Kind
    public let fromVersion: String
    public let toVersion: String

    /// Stage keys for operations this version does not run yet: a plan using them is
    /// refused with an error that says so (never accepted silently).
    static let unimplementedKeys = ["willMigrate", "didMigrate", "onDuplicates"]

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
        for key in unimplementedKeys {
            guard o.value(key) != nil else { continue }
            throw StrataError(.invalid, "stage '\(name)': '\(key)' is not implemented in this version of Strata", path: (path / key).description)
        }
        try o.finish()
        return MigrationStage(name: name, kind: kind, fromVersion: from, toVersion: to)
    }
}
