import ArgumentParser
import Glibc
import Strata

/// The `strata` command: looks at a store through its model (schema, fetches, history)
/// and migrates it with a plan. Each subcommand is one file of `Commands/`, listed in
/// ``CommandTable``.
///
/// Exit codes: 0 done; 1 the operation failed (the library's error message on stderr);
/// 2 a usage error (the usage on stderr). ArgumentParser's own code for usage errors, 64,
/// is mapped to 2 here.
@main
struct StrataTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Look at a Strata store through its model, and migrate it with a plan.",
        discussion: """
            STORE is a store file or a PostgreSQL URI (postgresql://…). Every command reads the \
            schema the store carries: no configuration is needed to look at a store.

            Exit codes: 0 done, 1 the operation failed (the library's message on stderr), 2 usage.

            Example:
              strata schema trips.store
              strata fetch trips.store Trip --where '$0.destination == city' --bind city=Paris
            """,
        version: StrataInfo.version,
        subcommands: CommandTable.all)

    /// Parses the arguments and runs the command, with the exit codes above.
    static func main() {
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitParsing(error)
        }
        do {
            var running = command
            try running.run()
        } catch let error as StrataError {
            Output.error(error.message)
            Glibc.exit(1)
        } catch let error as CommandFailure {
            Output.error(error.message)
            Glibc.exit(1)
        } catch {
            exitParsing(error)
        }
    }

    /// Help and version (0), usage errors (2 with the usage) and anything else ArgumentParser reports.
    private static func exitParsing(_ error: Error) -> Never {
        let code = exitCode(for: error)
        let text = fullMessage(for: error)
        if code == .success {
            if !text.isEmpty { print(text) }
            Glibc.exit(0)
        }
        if !text.isEmpty { Output.errorLine(text) }
        Glibc.exit(code == .validationFailure ? 2 : code.rawValue)
    }
}
