/// The store seam (SwiftData's `DataStore`): contexts work through sessions
/// of a store; SQLite is the first implementation.
public protocol DataStore: AnyObject, Sendable {
    var schema: Schema { get }
    var isReadOnly: Bool { get }
    func makeSession() throws -> StoreSession
}

/// One connection's worth of work for a context.
public protocol StoreSession: AnyObject {
    var store: DataStore { get }
}

/// One pending change of a context, as the store replays it (in order) on save
/// and under reads that include pending changes.
enum PendingChange {
    /// A new row: every stored column of `id.entity`, in slot order.
    case insert(ObjectID, [SQLValue])
    /// New values for some slots of an existing row.
    case update(ObjectID, slots: [Int], values: [SQLValue])
    /// Replaces the objects related through a relationship whose link is not
    /// a column of the owner's row (inverse foreign key or join table).
    case setRelated(ObjectID, Relationship, [ObjectID])
    /// Deletes an object, applying delete rules.
    case delete(ObjectID)
}
