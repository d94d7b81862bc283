/// The schemas this process has decoded, by their JSON text (``Schema/jsonText``), so that
/// opening another container with the same schema (a configuration made again, a store
/// opened again) does not decode and check it again.
///
/// Sound because a schema is immutable once decoded and decoding is a function of the
/// text alone: the key is the text Strata itself wrote from the parsed JSON, never a hash
/// a file states. Only schemas that decoded without error are kept. Bounded: past
/// ``capacity`` schemas the oldest is forgotten.
final class DecodedSchemas: @unchecked Sendable {
    static let shared = DecodedSchemas()
    /// How many schemas are kept.
    static let capacity = 16

    private let lock = Lock()
    private var byText: [String: Schema] = [:]
    /// The keys of `byText`, oldest first.
    private var order: [String] = []

    /// The schema decoded from `text`, if this process decoded it.
    func schema(_ text: String) -> Schema? {
        lock.withLock { byText[text] }
    }

    func insert(_ schema: Schema) {
        lock.withLock {
            guard byText.updateValue(schema, forKey: schema.jsonText) == nil else { return }
            order.append(schema.jsonText)
            if order.count > DecodedSchemas.capacity { byText[order.removeFirst()] = nil }
        }
    }

    /// How many schemas are kept (for tests).
    var count: Int { lock.withLock { byText.count } }
}
