import ArgumentParser
import Strata

/// `strata backup STORE DEST`: an online, consistent copy of a store file.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store file while other processes use it.",
        discussion: """
            One snapshot of the store, copied while others read and write it, with the \
            external-storage files its rows name (strata_backup). The destination must not exist \
            unless --overwrite; a failed backup leaves nothing behind. A PostgreSQL store is backed \
            up with pg_dump.

            Example:
              strata backup trips.store trips-2026-11-27.store
              strata integrity trips-2026-11-27.store
            """)

    @OptionGroup var store: StoreArgument

    @Argument(help: ArgumentHelp("The copy's path.", valueName: "destination"))
    var destination: String

    @Flag(help: "Replace an existing destination once the copy is complete.")
    var overwrite = false

    func run() throws {
        let opened = try store.open()
        try opened.container.backup(to: destination, overwrite: overwrite)
        Output.errorLine("backed up \(store.displayName) to \(destination)")
    }
}
