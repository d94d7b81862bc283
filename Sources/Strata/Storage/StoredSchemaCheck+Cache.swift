/// The stored schemas this process has checked and found right (``StoredSchemaCheck``): each as
/// the schema's JSON text and every row of the file's `sqlite_master` as read when it was checked.
/// A store opened again, by this container or another, whose rows are the same, byte for byte,
/// for the same schema, is not parsed and compared again; any difference (another row, another
/// definition, another order) is checked in full. Bounded: past ``capacity`` entries the oldest is
/// forgotten.
final class VerifiedStorage: @unchecked Sendable {
    static let shared = VerifiedStorage()
    /// How many checked stored schemas are kept.
    static let capacity = 16

    private let lock = Lock()
    private var keys: Set<String> = []
    /// `keys`, oldest first.
    private var order: [String] = []

    /// The text an entry is kept by: the schema's JSON text (one JSON object: it ends where its
    /// braces close), then each row's fields, each preceded by its length in bytes, a missing one
    /// written `-;` (so that no two different schemas and lists of rows make the same text).
    static func key(_ schema: Schema, _ objects: [StoredSchemaCheck.Object]) -> String {
        var out = schema.jsonText
        func field(_ s: String?) {
            guard let s else { out += "-;"; return }
            out += String(s.utf8.count) + ":" + s
        }
        for o in objects {
            field(o.type); field(o.name); field(o.table); field(o.sql)
        }
        return out
    }

    func contains(_ key: String) -> Bool { lock.withLock { keys.contains(key) } }

    func insert(_ key: String) {
        lock.withLock {
            guard keys.insert(key).inserted else { return }
            order.append(key)
            if order.count > VerifiedStorage.capacity { keys.remove(order.removeFirst()) }
        }
    }
}
