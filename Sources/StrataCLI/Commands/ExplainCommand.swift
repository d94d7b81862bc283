import ArgumentParser
import Strata

/// `strata explain STORE ENTITY …`: the SQL a fetch runs and the database's plan for it.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show the SQL of a fetch and the query plan the database chooses for it.",
        discussion: """
            Takes the options of fetch. The text shows the SQL, the number of bound parameters and \
            the plan as a tree; --json prints strata_explain's {"sql", "parameterCount", "queryPlan"}.

            Example:
              strata explain trips.store Trip --where '$0.endDate >= now' \\
                  --bind now='"2026-11-22T00:00:00Z"' --sort endDate
            """)

    @OptionGroup var store: StoreArgument

    @Argument(help: "The entity whose fetch is explained.")
    var entity: String

    @OptionGroup var query: QueryOptions
    @OptionGroup var shape: ShapeOptions

    @Flag(help: "strata_explain's JSON.")
    var json = false

    func run() throws {
        let opened = try store.open()
        let descriptor = try fetchDescriptor(entity: entity, query: query, shape: shape)
        let context = try opened.makeContext()
        let result = String(decoding: try descriptor.withBytes { try context.explain(descriptorJSON: $0) }, as: UTF8.self)
        if json {
            Output.write(result + "\n")
            return
        }
        let explained = try JSONValue.parse(result)
        var out = "SQL:\n  " + TextTable.cell(explained["sql"]) + "\n"
        out += "parameters: " + TextTable.cell(explained["parameterCount"]) + "\n"
        out += "plan:\n"
        if case .array(let rows)? = explained["queryPlan"] {
            // Rows name their parent by id: indent each under it.
            var depth: [String: Int] = [:]
            for row in rows {
                let id = TextTable.cell(row["id"]), parent = TextTable.cell(row["parent"])
                let d = (depth[parent] ?? -1) + 1
                depth[id] = d
                out += "  " + String(repeating: "  ", count: d) + TextTable.cell(row["detail"]) + "\n"
            }
        }
        Output.write(out)
    }
}
