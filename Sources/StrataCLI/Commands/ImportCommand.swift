import ArgumentParser
import Glibc
import Strata

/// `strata import STORE < trips.jsonl`: an export read into an empty store (docs/JSON.md §10).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read an export (JSON lines) from standard input into an empty store.",
        discussion: """
            A store that does not exist yet is created with the schema the export carries; an \
            existing one must be empty and have the same schema. All or nothing: on any error \
            (naming the line) the store is left as it was. Identifiers are kept (strata_import).

            Example:
              strata import copy.store < trips.jsonl
              strata export trips.store | strata import copy.store
            """)

    @OptionGroup var store: StoreArgument

    func run() throws {
        let input = StandardInput()
        let header = try input.firstLine()
        let schema: String
        // An existing store keeps its schema (the import checks the export's against it); a
        // missing file is created with the export's.
        if let stored = (try? ModelContainer.storedState(at: store.location)) ?? nil, let json = stored.schemaJSON {
            schema = json
        } else {
            guard case .object(let members)? = try? JSONValue.parse(header),
                  let s = members.first(where: { $0.0 == "schema" })?.1 else {
                throw CommandFailure("line 1: not an export of Strata (its first line holds no schema)")
            }
            schema = s.text
        }
        let configuration = try StoreConfiguration.decode("{\"schema\": \(schema)}")
        let container = try ModelContainer(path: store.location, configuration: configuration)
        let count = try container.importObjects(from: input.read)
        Output.errorLine("imported \(count) objects")
    }
}

/// Standard input read in chunks, its first line kept aside so that it is read again.
final class StandardInput {
    private var pending: [UInt8] = []

    /// The first line (without reading past what the next reads return again).
    func firstLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !pending.contains(UInt8(ascii: "\n")) {
            let n = fread(&chunk, 1, chunk.count, stdin)
            if n == 0 {
                if ferror(stdin) != 0 { throw CommandFailure("cannot read standard input: \(String(cString: strerror(errno)))") }
                break
            }
            pending.append(contentsOf: chunk[0..<n])
        }
        let end = pending.firstIndex(of: UInt8(ascii: "\n")) ?? pending.count
        return String(decoding: pending[0..<end], as: UTF8.self)
    }

    /// Fills `buffer`: what `firstLine` kept first, then standard input; 0 at the end.
    func read(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if !pending.isEmpty {
            let n = min(pending.count, buffer.count)
            pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
            pending.removeFirst(n)
            return n
        }
        let n = fread(buffer.baseAddress, 1, buffer.count, stdin)
        if n == 0 && ferror(stdin) != 0 { throw CommandFailure("cannot read standard input: \(String(cString: strerror(errno)))") }
        return n
    }
}
