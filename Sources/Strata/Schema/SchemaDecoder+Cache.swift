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

    /// One kept schema: a class, so that the list of them is an array of references (a struct
    /// holding a weak reference, or a dictionary of them, sets up its type at run time on first use).
    private final class Entry {
        let text: String
        weak var schema: Schema?
        init(_ schema: Schema) { text = schema.jsonText; self.schema = schema }
    }
    private let lock = Lock()
    /// Oldest first; at most ``capacity``, so a look-up compares at most that many texts and hashes none.
    private var entries: [Entry] = []

    /// The schema decoded from `text`, if one is in use.
    func schema(_ text: String) -> Schema? {
        lock.withLock {
            for e in entries where e.text == text { return e.schema }
            return nil
        }
    }

    func insert(_ schema: Schema) {
        lock.withLock {
            entries.removeAll { $0.schema == nil || $0.text == schema.jsonText }
            entries.append(Entry(schema))
            if entries.count > DecodedSchemas.capacity { entries.removeFirst() }
        }
    }

    /// How many entries are kept (for tests).
    var count: Int { lock.withLock { entries.count } }
}
