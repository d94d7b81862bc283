import ArgumentParser
import Strata

/// `strata history STORE [--after TOKEN] [--entity E …] [--limit N] [--json]`: the store's transactions.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the store's persistent history: transactions and their changes, oldest first.",
        discussion: """
            --after gives the transactions after a token (a reader's last one), --entity those that \
            changed objects of these entities (subentities included). On a terminal: one block per \
            transaction (token, time, author, context name) with a line per change; when piped or with \
            --json: strata_fetch_history's JSON array (docs/JSON.md §8). A token the history no longer \
            covers fails (history_token_expired): list everything again.

            Example:
              strata history trips.store --after 41@5f0c9a1e --entity Trip
            """)

    @OptionGroup var store: StoreArgument

    @Option(help: ArgumentHelp("Only the transactions after this token.", valueName: "token"))
    var after: String?

    @Option(name: .customLong("entity"), parsing: .singleValue,
            help: ArgumentHelp("Only transactions that changed objects of this entity. Repeat for more.", valueName: "entity"))
    var entities: [String] = []

    @Option(help: "At most this many transactions (the oldest first).")
    var limit: Int?

    @Flag(help: "strata_fetch_history's JSON, also on a terminal.")
    var json = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    /// The history descriptor of the options (docs/JSON.md §8).
    var descriptor: String {
        var w = JSONWriter()
        w.beginObject()
        var conditions: [String] = []
        if after != nil { conditions.append("$0.token > after") }
        if !entities.isEmpty { conditions.append("$0.changes.contains { names.contains($0.changedPersistentIdentifier.entityName) }") }
        if !conditions.isEmpty {
            w.key("predicate"); w.string(conditions.joined(separator: " && "))
            w.key("bindings"); w.beginObject()
            if let after { w.key("after"); w.string(after) }
            if !entities.isEmpty { w.key("names"); w.beginArray(); for e in entities { w.string(e) }; w.endArray() }
            w.endObject()
        }
        if let limit { w.key("fetchLimit"); w.int(Int64(limit)) }
        w.endObject()
        return w.string
    }

    func run() throws {
        let opened = try store.open()
        let context = try opened.makeContext()
        let result = try context.fetchHistory(descriptor)
        if json || !Output.isTerminal {
            Output.write(result + "\n")
            return
        }
        Output.write(try listing(result))
    }

    /// The transactions as text: a header line each, then its changes in aligned columns.
    private func listing(_ result: String) throws -> String {
        guard case .array(let transactions) = try JSONValue.parse(result) else { return result + "\n" }
        if transactions.isEmpty { return "(no transactions)\n" }
        var out = ""
        for t in transactions {
            var head = ["token " + TextTable.cell(t["token"]), TextTable.cell(t["timestamp"])]
            if let a = t["author"] { head.append("author " + TextTable.cell(a)) }
            if let c = t["contextName"] { head.append("context " + TextTable.cell(c)) }
            if t["unrecorded"] == .bool(true) { head.append("unrecorded (saved with history off)") }
            out += head.joined(separator: "  ") + "\n"
            var table = TextTable(maxWidth: 60, indent: "  ")
            if case .array(let changes)? = t["changes"] {
                for c in changes {
                    var row = [TextTable.cell(c["kind"]), TextTable.cell(c["id"])]
                    var details: [String] = []
                    if case .array(let names)? = c["attributes"] { details.append(names.map { TextTable.cell($0) }.joined(separator: ", ")) }
                    if let old = c["old"] { details.append("old " + old.text) }
                    if let new = c["new"] { details.append("new " + new.text) }
                    if let tomb = c["tombstone"] { details.append("tombstone " + tomb.text) }
                    row.append(details.joined(separator: "  "))
                    table.add(row)
                }
            }
            out += table.text
        }
        let n = transactions.count
        return out + "(\(n) transaction\(n == 1 ? "" : "s"))\n"
    }
}
