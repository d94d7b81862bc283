import ArgumentParser
import Strata

/// `strata fetch STORE ENTITY …`: objects, as a table on a terminal and as JSON otherwise.
struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch objects of an entity: an aligned table on a terminal, the JSON array when piped or with --json.",
        discussion: """
            The table has one row per object: _id (and _entity when the entity has subentities), \
            then the --fields or every attribute; long values are cut with …. The JSON is the array \
            strata_fetch returns (docs/JSON.md §4). --where takes #Predicate text (docs/predicates.md); \
            --bind gives its variables.

            Example:
              strata fetch trips.store Trip --where '$0.destination == city' \\
                  --bind city=Paris --sort startDate --limit 5 \\
                  --prefetch bucketList --fields name,startDate
            """)

    @OptionGroup var store: StoreArgument

    @Argument(help: "The entity whose objects are fetched (its subentities' objects too).")
    var entity: String

    @OptionGroup var query: QueryOptions
    @OptionGroup var shape: ShapeOptions

    @Flag(help: "The JSON array, also on a terminal.")
    var json = false

    func run() throws {
        let opened = try store.open()
        let descriptor = try fetchDescriptor(entity: entity, query: query, shape: shape)
        let context = try opened.makeContext()
        let result = try descriptor.withBytes { try context.fetchBuffer(descriptorJSON: $0) }.string
        if json || !Output.isTerminal {
            Output.write(result + "\n")
            return
        }
        Output.write(try table(result, entity: opened.entity(entity)))
    }

    /// The fetched objects as a table: _id, _entity for a hierarchy, then the columns.
    private func table(_ result: String, entity: Entity) throws -> String {
        guard case .array(let objects) = try JSONValue.parse(result) else { return result + "\n" }
        var columns = ["_id"]
        let hierarchy = !entity.subentities.isEmpty || entity.superentity != nil
        if hierarchy { columns.append("_entity") }
        if shape.fields != nil {
            columns += shape.fieldList
        } else {
            var names = entity.attributes.map(\.name)
            for d in entity.descendants where d !== entity {
                for a in d.ownAttributes where !names.contains(a.name) { names.append(a.name) }
            }
            columns += names + shape.prefetch.filter { !names.contains($0) }
        }
        var table = TextTable(header: columns)
        for object in objects { table.add(columns.map { TextTable.cell(object[$0]) }) }
        let count = objects.count
        return table.text + "(\(count) object\(count == 1 ? "" : "s"))\n"
    }
}
