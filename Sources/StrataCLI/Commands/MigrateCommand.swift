import ArgumentParser
import Strata

/// `strata migrate STORE --plan plan.json [--dry-run]`: brings a store to the plan's current version.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the current version of a migration plan.",
        discussion: """
            Runs the stages opening the store with the plan runs (strata_open): lightweight stages and \
            custom stages made of declarative operations ("willMigrate": [{"op": "deduplicate", …}], \
            docs/JSON.md §1), each in its own transaction. A custom stage without operations needs C \
            hooks, which only a program can attach: such a plan is refused, naming the stage, before \
            the store is touched. --dry-run prints the stages and the storage steps each would run \
            (strata_infer_migration) and changes nothing. Progress: a bar on a terminal, one line per \
            event when piped.

            Example:
              strata migrate trips.store --plan plan.json --dry-run
              strata migrate trips.store --plan plan.json
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var plan: PlanOptions

    @Flag(help: "Print what would run, change nothing.")
    var dryRun = false

    func run() throws {
        var configuration = try plan.configuration()
        let migrationPlan = configuration.migrationPlan!
        let check = try StoreCheck(location: store.location, configuration: configuration)
        switch check.status {
        case "incompatible":
            throw CommandFailure("\(store.displayName) cannot be migrated with this plan: \(check.reason ?? "incompatible")")
        case "migratable":
            break
        default:
            guard check.storedVersion != nil else {
                throw CommandFailure("\(store.displayName) holds no Strata store (an empty database): migrate changes existing stores")
            }
            Output.write("\(store.displayName) is at version \(check.currentVersion), the plan's current version: nothing to migrate\n")
            return
        }
        let needHooks = PlanOptions.stagesNeedingHooks(check.stages.map(\.name), plan: migrationPlan)
        if let stage = needHooks.first {
            throw CommandFailure("stage '\(stage)' is custom without declarative operations: it needs C hooks "
                                 + "(strata_config_set_stage_hooks), which strata cannot run; give it \"willMigrate\" "
                                 + "operations, or migrate from the program that has the hooks (nothing was changed)")
        }
        if dryRun {
            Output.write(try dryRunText(check, plan: migrationPlan))
            return
        }
        let reporter = ProgressReporter(stageCount: check.stages.count, terminal: Output.isTerminal)
        configuration.progress = reporter.handler
        if configuration.author == nil { configuration.author = "strata migrate" }
        let container = try ModelContainer(path: store.location, configuration: configuration)
        Output.write("\(store.displayName) is at version \(container.schema.version) (from \(check.storedVersion ?? "?"); stages run: "
                     + check.stages.map(\.name).joined(separator: ", ") + ")\n")
    }

    /// The stages that would run and, for each, the storage steps inferred between its versions.
    private func dryRunText(_ check: StoreCheck, plan: MigrationPlan) throws -> String {
        var out = "\(store.displayName): version \(check.storedVersion ?? "?") -> \(check.currentVersion); would run:\n"
        for s in check.stages {
            out += "  \(s.name) (\(s.kind), \(s.from) -> \(s.to))\n"
            if let stage = plan.stages.first(where: { $0.name == s.name }) {
                for op in stage.willMigrate { out += "    willMigrate: \(op.summary)\n" }
            }
            guard let from = plan.schemas.first(where: { $0.version == s.from }) ?? storedSchema(s.from),
                  let to = plan.schemas.first(where: { $0.version == s.to }) else { continue }
            let steps = try JSONValue.parse(ModelContainer.inferMigration(from: from.json.text, to: to.json.text))
            var table = TextTable(maxWidth: 60, indent: "    ")
            if case .array(let list)? = steps["steps"] {
                for step in list {
                    var row = [TextTable.cell(step["kind"]), TextTable.cell(step["entity"])]
                    if let p = step["property"] { row.append(TextTable.cell(p)) }
                    table.add(row)
                }
            }
            out += table.rows.isEmpty ? "    (no storage change)\n" : table.text
        }
        out += "nothing was changed (--dry-run)\n"
        return out
    }

    /// The store's own schema when a stage starts from it (a lightweight stage outside the plan).
    private func storedSchema(_ version: String) -> Schema? {
        guard let stored = try? store.storedState(), stored.version == version, let json = stored.schemaJSON,
              let configuration = try? StoreConfiguration.decode("{\"schema\": \(json)}") else { return nil }
        return configuration.schema
    }
}
