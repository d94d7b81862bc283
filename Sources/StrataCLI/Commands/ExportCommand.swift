import ArgumentParser
import Glibc
import Strata

/// `strata export STORE > trips.jsonl`: the whole store as JSON lines (docs/JSON.md §10).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the whole store as JSON lines on standard output.",
        discussion: """
            The schema first, then every object with its identifier and attributes (external-storage \
            values inline), then the links, then an end line with the counts (strata_export, \
            docs/JSON.md §10). One snapshot, read in pages: memory stays flat however large the store. \
            `strata import` reads it back into an empty store with the same identifiers.

            Example:
              strata export trips.store > trips.jsonl
              strata export trips.store | strata import copy.store
            """)

    @OptionGroup var store: StoreArgument

    @Option(help: "Objects read per page (1 to 100,000).")
    var batchSize: Int = 1_000

    func run() throws {
        let opened = try store.open()
        try opened.container.export(batchSize: batchSize) { chunk in
            guard fwrite(chunk.baseAddress, 1, chunk.count, stdout) == chunk.count else {
                throw CommandFailure("cannot write the export: \(String(cString: strerror(errno)))")
            }
        }
        fflush(stdout)
    }
}
