import ArgumentParser

/// The subcommands of `strata`, in the order `strata --help` lists them. A new command is
/// one file of `Commands/` (a `ParsableCommand` with its help and an example) and one line here.
enum CommandTable {
    static let all: [ParsableCommand.Type] = [
        SchemaCommand.self,
        FetchCommand.self,
        CountCommand.self,
        ExplainCommand.self,
        HistoryCommand.self,
        CheckCommand.self,
        MigrateCommand.self,
        ExportCommand.self,
        ImportCommand.self,
        BackupCommand.self,
        IntegrityCommand.self,
    ]
}
