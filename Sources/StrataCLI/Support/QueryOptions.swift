import ArgumentParser
import Strata

/// `--where` and `--bind`: which objects a fetch, count or explain reads.
struct QueryOptions: ParsableArguments {
    @Option(name: .customLong("where"), help: ArgumentHelp("A #Predicate text over the entity's objects ($0).", valueName: "predicate"))
    var predicate: String?

    @Option(name: .customLong("bind"), parsing: .singleValue,
            help: ArgumentHelp("A value of a predicate variable: name=value; the value is read as JSON when it is JSON (3, true, \"text\"), else as a string. Repeat for more.",
                               valueName: "name=value"))
    var bindings: [String] = []

    func validate() throws { _ = try parsedBindings() }

    /// The bindings as (name, JSON value), in the order given.
    func parsedBindings() throws -> [(String, JSONValue)] {
        try bindings.map { item in
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw ValidationError("--bind takes name=value, not '\(item)'")
            }
            let text = String(item[item.index(after: eq)...])
            return (String(item[..<eq]), (try? JSONValue.parse(text)) ?? .string(text))
        }
    }

    /// Writes `predicate` and `bindings` into a descriptor being written.
    func write(to w: inout JSONWriter) throws {
        if let predicate { w.key("predicate"); w.string(predicate) }
        let values = try parsedBindings()
        if !values.isEmpty {
            w.key("bindings"); w.beginObject()
            for (name, value) in values { w.key(name); value.write(to: &w) }
            w.endObject()
        }
    }
}

/// `--sort`, `--limit`, `--offset`, `--prefetch`, `--fields`: the order and shape of a fetch.
struct ShapeOptions: ParsableArguments {
    @Option(name: .customLong("sort"), parsing: .singleValue,
            help: ArgumentHelp("A sort key, key or key:reverse (key:forward is the default). Repeat for more.", valueName: "key[:reverse]"))
    var sortKeys: [String] = []

    @Option(help: "At most this many objects.")
    var limit: Int?

    @Option(help: "Skip this many objects first (after sorting).")
    var offset: Int?

    @Option(parsing: .singleValue, help: ArgumentHelp("A relationship whose related objects come with each object. Repeat for more.", valueName: "relationship"))
    var prefetch: [String] = []

    @Option(help: ArgumentHelp("Only these properties (comma-separated), besides _id and _entity.", valueName: "a,b,…"))
    var fields: String?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if let offset, offset < 0 { throw ValidationError("--offset must not be negative") }
        _ = try sortDescriptors()
        if fields != nil, fieldList.isEmpty { throw ValidationError("--fields needs at least one property name") }
    }

    /// The properties of `--fields`, in order.
    var fieldList: [String] {
        (fields ?? "").split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }

    /// `--sort` as (key, order).
    func sortDescriptors() throws -> [(key: String, order: String)] {
        try sortKeys.map { item in
            guard let colon = item.lastIndex(of: ":") else { return (item, "forward") }
            let key = String(item[..<colon]), suffix = item[item.index(after: colon)...]
            switch suffix {
            case "reverse", "forward": return (key, String(suffix))
            default: throw ValidationError("--sort takes key or key:reverse, not '\(item)'")
            }
        }
    }

    /// Writes the order and shape into a descriptor being written.
    func write(to w: inout JSONWriter) throws {
        let sorts = try sortDescriptors()
        if !sorts.isEmpty {
            w.key("sortBy"); w.beginArray()
            for s in sorts { w.beginObject(); w.key("key"); w.string(s.key); w.key("order"); w.string(s.order); w.endObject() }
            w.endArray()
        }
        if let limit { w.key("fetchLimit"); w.int(Int64(limit)) }
        if let offset { w.key("fetchOffset"); w.int(Int64(offset)) }
        if !prefetch.isEmpty {
            w.key("relationshipKeyPathsForPrefetching"); w.beginArray()
            for p in prefetch { w.string(p) }
            w.endArray()
        }
        if fields != nil {
            w.key("propertiesToFetch"); w.beginArray()
            for f in fieldList { w.string(f) }
            w.endArray()
        }
    }
}

/// A fetch descriptor (docs/JSON.md §5) for `entity` with the options given.
func fetchDescriptor(entity: String, query: QueryOptions, shape: ShapeOptions? = nil) throws -> String {
    var w = JSONWriter()
    w.beginObject()
    w.key("entity"); w.string(entity)
    try query.write(to: &w)
    try shape?.write(to: &w)
    w.endObject()
    return w.string
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }
}
