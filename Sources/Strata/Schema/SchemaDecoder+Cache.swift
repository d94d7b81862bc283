/// The schemas in use in this process (held by a configuration, a container or a context),
/// by their JSON text (``Schema/jsonText``), so that decoding a schema already in use (a
/// configuration made again, a store opened again, another container on the same schema)
/// returns it instead of decoding and checking it again.
///
/// Sound because a schema is immutable once decoded and decoding is a function of the
/// text alone: the key is the text Strata itself wrote from the parsed JSON, never a hash
/// a file states. Only schemas that decoded without error are kept. Entries are weak: a
/// schema nothing uses any more is freed as before (the cache never keeps one alive), and
/// its entry is dropped at the next insert. Bounded: past ``capacity`` entries the oldest
/// is forgotten.
final class DecodedSchemas: @unchecked Sendable {
    static let shared = DecodedSchemas()
    /// How many schemas are kept.
    static let capacity = 16

    private struct Entry { weak var schema: Schema? }
    private let lock = Lock()
    private var byText: [String: Entry] = [:]
    /// The keys of `byText`, oldest first.
    private var order: [String] = []

    /// The schema decoded from `text`, if one is in use.
    func schema(_ text: String) -> Schema? {
        lock.withLock { byText[text]?.schema }
    }

    func insert(_ schema: Schema) {
        lock.withLock {
            order.removeAll { key in
                guard byText[key]?.schema == nil else { return false }
                byText[key] = nil
                return true
            }
            if byText.updateValue(Entry(schema: schema), forKey: schema.jsonText) == nil { order.append(schema.jsonText) }
            if order.count > DecodedSchemas.capacity { byText[order.removeFirst()] = nil }
        }
    }

    /// How many entries are kept (for tests).
    var count: Int { lock.withLock { byText.count } }
}
