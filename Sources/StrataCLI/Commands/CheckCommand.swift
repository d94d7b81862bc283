import ArgumentParser
import Strata

/// `strata check STORE --plan plan.json`: what opening the store with the plan would do.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Tell whether a store is compatible with a migration plan, migratable (and by which stages), or incompatible (and why).",
        discussion: """
            Opens the store read-only and writes nothing (strata_check_store). A custom stage without \
            declarative operations needs C hooks: check marks it, and migrate refuses it. What depends \
            on the data (duplicates under a new unique constraint) shows only when migrating. Exits 1 \
            when the store is incompatible. --json prints strata_check_store's JSON.

            Example:
              strata check trips.store --plan plan.json
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var plan: PlanOptions

    @Flag(help: "strata_check_store's JSON.")
    var json = false

    func run() throws {
        let configuration = try plan.configuration()
        let check = try StoreCheck(location: store.location, configuration: configuration)
        if json {
            Output.write(check.json + "\n")
        } else {
            let needHooks = PlanOptions.stagesNeedingHooks(check.stages.map(\.name), plan: configuration.migrationPlan!)
            var out = "status           \(check.status)\n"
            out += "stored version   \(check.storedVersion ?? "none (an empty database)")\n"
            out += "current version  \(check.currentVersion)\n"
            if !check.stages.isEmpty {
                out += "stages\n"
                var table = TextTable(maxWidth: 80, indent: "  ")
                for s in check.stages {
                    var notes: [String] = []
                    if !s.changesStorage { notes.append("changes no table") }
                    if let stage = configuration.migrationPlan!.stages.first(where: { $0.name == s.name }), !stage.willMigrate.isEmpty {
                        notes.append("\(stage.willMigrate.count) operation\(stage.willMigrate.count == 1 ? "" : "s")")
                    }
                    if needHooks.contains(s.name) { notes.append("needs C hooks: strata migrate refuses it") }
                    table.add([s.name, s.kind, "\(s.from) -> \(s.to)", notes.joined(separator: ", ")])
                }
                out += table.text
            }
            if let reason = check.reason { out += "reason           \(reason)\n" }
            Output.write(out)
        }
        if check.status == "incompatible" {
            throw CommandFailure("\(store.displayName) cannot be opened with this plan: \(check.reason ?? "incompatible")")
        }
    }
}
