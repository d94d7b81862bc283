import ArgumentParser
import Strata

/// `strata integrity STORE`: SQLite's integrity check and Strata's own.
struct IntegrityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "integrity",
        abstract: "Check a store: its file, its tables, links, join tables, external files and history.",
        discussion: """
            SQLite's integrity check (store files), then Strata's: tables match the stored schema, \
            links point at existing objects of the right entity, join tables hold no orphans, every \
            external-storage name exists and no file is orphaned, history rows parse, stored values \
            are of their attribute's type (strata_check_integrity). Exits 0 when the store is sound, \
            1 when a problem is found (each named: kind, object, attribute).

            Example:
              strata integrity trips.store
              strata integrity trips.store --json | jq '.problems[].kind'
            """)

    @OptionGroup var store: StoreArgument

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() throws {
        let opened = try store.open()
        let report = try opened.container.checkIntegrity()
        if json {
            Output.write(String(decoding: report.json, as: UTF8.self) + "\n")
        } else if report.ok {
            Output.write("ok: no problem found in \(store.displayName)\n")
        } else {
            for p in report.problems {
                let id = p.id.map { " \($0)" } ?? ""
                Output.write("\(p.kind.rawValue)\(id): \(p.message)\n")
            }
            Output.write("(\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")\(report.truncated ? ", more not listed" : ""))\n")
        }
        if !report.ok { throw ExitCode(1) }
    }
}
