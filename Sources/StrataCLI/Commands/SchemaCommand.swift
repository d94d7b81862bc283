import ArgumentParser
import Strata

/// `strata schema STORE [--json]`: the schema the store carries.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show the schema a store carries: entities, attributes, relationships, constraints, indexes, version.",
        discussion: """
            The text lists the entities with their subentities as a tree, each with its attributes \
            (type, optional, unique, index, searchable, default), relationships (destination, to-many, \
            inverse, delete rule), unique constraints and indexes, and the version hashes. With --json: \
            the stored schema JSON with its hashes, {"schema": …, "version": …, "versionHash": …, \
            "entityHashes": {…}, "formatVersion": …}.

            Example:
              strata schema trips.store
              strata schema 'postgresql://app@db/trips' --json
            """)

    @OptionGroup var store: StoreArgument

    @Flag(help: "The stored schema JSON and its hashes.")
    var json = false

    func run() throws {
        if json {
            Output.write(try SchemaListing.json(store.storedState()) + "\n")
        } else {
            let opened = try store.open()
            Output.write(SchemaListing.text(opened.schema, stored: opened.stored))
        }
    }
}
