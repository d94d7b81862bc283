/// The stored schemas this process has checked and found right (``StoredSchemaCheck``): each as
/// the schema's JSON text and every row of the file's `sqlite_master` as read when it was checked.
/// A store opened again, by this container or another, whose rows are the same, byte for byte,
/// for the same schema, is not parsed and compared again; any difference (another row, another
/// definition, another order) is checked in full. Bounded: past ``capacity`` entries the oldest is
/// forgotten.
///
/// The entries are compared field by field, not through one key text made of them: a process that
/// opens one store once (the common case) neither makes nor hashes such a text.
final class VerifiedStorage: @unchecked Sendable {
    static let shared = VerifiedStorage()
    /// How many checked stored schemas are kept.
    static let capacity = 16

    /// One checked stored schema.
    private struct Entry {
        let schemaText: String
        let objects: [StoredSchemaCheck.Object]

        func matches(_ schema: Schema, _ objects: [StoredSchemaCheck.Object]) -> Bool {
            schemaText == schema.jsonText && self.objects.count == objects.count
                && zip(self.objects, objects).allSatisfy { $0 == $1 }
        }
    }

    private let lock = Lock()
    /// Oldest first.
    private var entries: [Entry] = []

    /// Whether `schema` was found right for exactly these rows of `sqlite_master`.
    func contains(_ schema: Schema, _ objects: [StoredSchemaCheck.Object]) -> Bool {
        lock.withLock { entries.contains { $0.matches(schema, objects) } }
    }

    /// Keeps that `schema` was found right for these rows.
    func insert(_ schema: Schema, _ objects: [StoredSchemaCheck.Object]) {
        lock.withLock {
            guard !entries.contains(where: { $0.matches(schema, objects) }) else { return }
            entries.append(Entry(schemaText: schema.jsonText, objects: objects))
            if entries.count > VerifiedStorage.capacity { entries.removeFirst() }
        }
    }
}
