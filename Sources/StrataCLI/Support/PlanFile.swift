import ArgumentParser
import Glibc
import Strata

/// `--plan FILE`: a migration plan (docs/JSON.md §1), `{"schemas": […], "stages": […]}`, or a
/// whole configuration holding one, `{"migrationPlan": {…}, …}` (the form the demo builds with
/// --json-ops).
struct PlanOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The migration plan: a JSON file holding a plan, or a configuration with \"migrationPlan\".",
                               valueName: "plan.json"))
    var plan: String

    /// The configuration the plan file makes (its own keys kept), for the store at `store`.
    func configuration() throws -> StoreConfiguration {
        let text = try readFile(plan)
        let json = try JSONValue.parse(text)
        let configuration = json["migrationPlan"] != nil ? text : "{\"migrationPlan\": \(text)}"
        let decoded = try StoreConfiguration.decode(configuration)
        guard decoded.migrationPlan != nil else { throw CommandFailure("'\(plan)' holds no migration plan") }
        return decoded
    }

    /// The stages of a store check that need C hooks: custom stages of the plan without
    /// declarative operations, which only a program can run (it attaches the hooks).
    static func stagesNeedingHooks(_ stageNames: [String], plan: MigrationPlan) -> [String] {
        stageNames.filter { name in
            guard let stage = plan.stages.first(where: { $0.name == name }) else { return false }
            return stage.kind == .custom && stage.willMigrate.isEmpty
        }
    }
}

/// The text of the file at `path`, or a failure naming it.
func readFile(_ path: String) throws -> String {
    guard let f = fopen(path, "rb") else {
        throw CommandFailure("cannot read '\(path)': \(String(cString: strerror(errno)))")
    }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n > 0 { bytes += buffer[0..<n] }
        if n < buffer.count {
            if ferror(f) != 0 { throw CommandFailure("cannot read '\(path)': \(String(cString: strerror(errno)))") }
            break
        }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else { throw CommandFailure("'\(path)' is not UTF-8 text") }
    return text
}

/// A store check's answer (`strata_check_store`, docs/JSON.md §7).
struct StoreCheck {
    struct Stage { let name, kind, from, to: String; let changesStorage: Bool }
    let json: String
    let status: String
    let storedVersion: String?
    let currentVersion: String
    let stages: [Stage]
    let reason: String?

    /// Checks the store at `location` against `configuration` (read-only).
    init(location: String, configuration: StoreConfiguration) throws {
        json = try ModelContainer.checkStore(path: location, configuration: configuration)
        let v = try JSONValue.parse(json)
        status = TextTable.cell(v["status"])
        if case .string(let s)? = v["storedVersion"] { storedVersion = s } else { storedVersion = nil }
        currentVersion = TextTable.cell(v["currentVersion"])
        if case .string(let r)? = v["reason"] { reason = r } else { reason = nil }
        var stages: [Stage] = []
        if case .array(let list)? = v["stages"] {
            for s in list {
                stages.append(Stage(name: TextTable.cell(s["name"]), kind: TextTable.cell(s["kind"]), from: TextTable.cell(s["from"]),
                                    to: TextTable.cell(s["to"]), changesStorage: s["changesStorage"] != .bool(false)))
            }
        }
        self.stages = stages
    }
}

extension MigrationOperation {
    /// One line saying what the operation does.
    var summary: String {
        switch self {
        case .deduplicate(let entity, let by, let keep, let merge):
            return "deduplicate \(entity) by (\(by.joined(separator: ", "))), keep \(keep.rawValue)"
                + (merge ? ", relationships merged into the kept object" : "")
        }
    }
}
