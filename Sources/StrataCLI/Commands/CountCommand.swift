import ArgumentParser
import Strata

/// `strata count STORE ENTITY [--where …] [--bind …]`: how many objects match.
struct CountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "count",
        abstract: "Count the objects of an entity that match a predicate.",
        discussion: """
            Prints the number (strata_fetch_count), subentities' objects included.

            Example:
              strata count trips.store Trip --where '$0.destination == city' \\
                  --bind city=Paris
              strata count trips.store Trip --where '$0.startDate >= since' \\
                  --bind since='"2026-06-01T00:00:00Z"'
            """)

    @OptionGroup var store: StoreArgument

    @Argument(help: "The entity whose objects are counted.")
    var entity: String

    @OptionGroup var query: QueryOptions

    func run() throws {
        let opened = try store.open()
        let descriptor = try fetchDescriptor(entity: entity, query: query)
        let context = try opened.makeContext()
        let count = try descriptor.withBytes { try context.fetchCount(descriptorJSON: $0) }
        Output.write("\(count)\n")
    }
}
