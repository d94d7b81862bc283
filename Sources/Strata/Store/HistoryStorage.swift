/// The store side of persistent history (`History/` is the other): the rows a
/// store keeps for every recorded save, and the filters it selects them by.
///
/// A store keeps, per recorded save, one transaction (its sequence number,
/// timestamp, author, context name and the entities it changed) and its
/// changes. Names of entities and properties are kept as numbers of a name
/// table, so that a migration that renames an entity or attribute renames its
/// history with one row, and a change row stays a few integers.
public protocol HistoryStorage: AnyObject {
    /// The tag of the store's tokens (`HistoryName.storeTag` of its UUID).
    var historyStoreTag: String { get }
    /// Numbers for `names` (in order), made when missing; inside the caller's transaction.
    func historyNameIDs(_ names: [HistoryName]) throws -> [Int64]
    /// Appends one transaction and its changes inside the save's transaction; returns
    /// the transaction's sequence number (greater than any the store gave before).
    func appendHistory(_ transaction: HistoryTransactionRow, changes: [HistoryChangeRow]) throws -> Int64
    /// Records that a save was not recorded (history off): a transaction without
    /// changes, marked unrecorded, that tokens before it cannot see past (they expire);
    /// returns its sequence. Does nothing (nil) when the store keeps no history.
    func noteUnrecordedSave(_ transaction: HistoryTransactionRow) throws -> Int64?

    /// Runs `body` on one committed snapshot of the history.
    func readHistory<T>(_ body: (HistorySnapshot) throws -> T) throws -> T
    /// Deletes, in one transaction, the transactions (and their changes) of the filter
    /// `select` makes from the snapshot inside it; returns how many were deleted.
    /// Tokens before the newest deleted transaction expire.
    func deleteHistory(_ select: (HistorySnapshot) throws -> HistoryFilter) throws -> Int64
    /// Why the store cannot run `filter` in one query (nested too deeply, too many values),
    /// as a sentence for an `.invalid` error; nil when it can.
    func historyFilterProblem(_ filter: HistoryFilter) -> String?
}

/// What a history read sees, on one snapshot.
public protocol HistorySnapshot {
    /// The name table (empty when the store keeps no history).
    func names() throws -> HistoryNameTable
    /// The newest sequence number the store ever gave (0: none), and the lowest
    /// sequence a token may have to be complete: a token below it missed changes.
    func bounds() throws -> (latest: Int64, completeFrom: Int64)
    /// The transactions `query` selects, in its order, each with its changes.
    func transactions(_ query: HistoryQuery, _ each: (HistoryTransactionRow, [HistoryChangeRow]) throws -> Void) throws
    /// How the store runs `query` (SQLite: the SQL and its query plan), as JSON.
    func explain(_ query: HistoryQuery) throws -> [UInt8]
}

/// An entity name, or a property of an entity (`property` empty for the entity itself).
public struct HistoryName: Hashable, Sendable {
    public var entity: String
    public var property: String
    public init(entity: String, property: String = "") { self.entity = entity; self.property = property }

    /// The tag of a store's history tokens: the first eight hexadecimal digits of its UUID
    /// (read from the file, untrusted: only hex digits count), or "0" for a store without
    /// one (a damaged or edited file): never empty, so that every token it hands out parses.
    public static func storeTag(_ uuid: String) -> String {
        let tag = String(uuid.lowercased().filter { $0.isASCII && $0.isHexDigit }.prefix(8))
        return tag.isEmpty ? "0" : tag
    }

    /// The name this entity or property has after a migration's `mapping`: its successor's
    /// (which may be the same), or nil when the new schema has none (the name retires).
    /// Every store's `rename` of its history names follows it.
    public func successor(in mapping: SchemaMapping) -> HistoryName? {
        guard let old = mapping.old.entity(named: entity), let new = mapping.successor(of: old) else { return nil }
        if property.isEmpty { return HistoryName(entity: new.name) }
        if let a = old.attributeByName[property] {
            guard let n = new.attributes.first(where: { mapping.origin(of: $0) === a }) else { return nil }
            return HistoryName(entity: new.name, property: n.name)
        }
        if let r = old.relationshipByName[property] {
            guard let n = new.relationships.first(where: { mapping.origin(of: $0) === r }) else { return nil }
            return HistoryName(entity: new.name, property: n.name)
        }
        return nil
    }
}

/// The name table of a store's history: number → name, and the numbers of
/// current names.
public struct HistoryNameTable: Sendable {
    public var byID: [Int64: HistoryName] = [:]
    public init() {}
    /// Numbers of the entity names in `names` (unknown names have none).
    public func entityIDs(_ names: some Sequence<String>) -> [Int64] {
        let wanted = Set(names)
        return byID.compactMap { id, n in n.property.isEmpty && wanted.contains(n.entity) ? id : nil }.sorted()
    }
}

/// One recorded save.
public struct HistoryTransactionRow: Sendable {
    /// The sequence number (0 before the store gives one).
    public var sequence: Int64
    /// Seconds since 1970.
    public var timestamp: Double
    public var author: String?
    public var contextName: String?
    /// Numbers of the entities the save changed.
    public var entities: [Int64]
    /// Which container instance recorded it (its observers heard of it at once; its polls skip it).
    public var origin: String?
    /// A save made with history off: its changes are not known.
    public var unrecorded: Bool

    public init(sequence: Int64 = 0, timestamp: Double, author: String?, contextName: String?, entities: [Int64], origin: String? = nil,
                unrecorded: Bool = false) {
        self.origin = origin
        self.unrecorded = unrecorded
        self.sequence = sequence
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.entities = entities
    }
}

/// One change row: a run of `count` objects (at most ``maxObjects``) of one entity and
/// kind, with the same changed attributes and no values — keys `pk`, `pk + 1`, … (a bulk
/// insert is one row per ``maxObjects`` objects), or the listed `keys` — or one object with
/// its values.
public struct HistoryChangeRow: Sendable {
    /// The most objects one row describes: a store's row with more is damaged.
    public static let maxObjects: Int64 = 4096

    public enum Kind: Int64, Sendable { case insert = 1, update = 2, delete = 3 }
    public var kind: Kind
    /// Number of the (concrete) entity's name.
    public var entity: Int64
    public var pk: Int64
    public var count: Int64
    /// The keys of a run whose keys are not consecutive (`count` of them; `pk` is the first).
    public var keys: [Int64]?
    /// Numbers of the changed property names (updates).
    public var attributes: [Int64]
    /// JSON objects keyed by property-name numbers: `{"7": "Paris"}`.
    public var tombstone: String?
    public var old: String?
    public var new: String?

    /// The key of the run's `i`th object.
    public func key(_ i: Int64) -> Int64 { keys.map { $0[Int(i)] } ?? pk + i }

    public init(kind: Kind, entity: Int64, pk: Int64, count: Int64 = 1, keys: [Int64]? = nil, attributes: [Int64] = [],
                tombstone: String? = nil, old: String? = nil, new: String? = nil) {
        self.keys = keys
        self.kind = kind
        self.entity = entity
        self.pk = pk
        self.count = count
        self.attributes = attributes
        self.tombstone = tombstone
        self.old = old
        self.new = new
    }
}

/// Which transactions a history request selects (names already numbers).
public indirect enum HistoryFilter: Sendable, Equatable {
    case constant(Bool)
    case and([HistoryFilter])
    case or([HistoryFilter])
    case not(HistoryFilter)
    /// `field op value`; a null value compares as SQL's IS / IS NOT for == and !=.
    case compare(HistoryField, ComparisonOperator, HistoryFieldValue)
    case isIn(HistoryField, [HistoryFieldValue])
    /// Some change (`all`: every change) passes a test of its entity.
    case changes(all: Bool, HistoryEntityTest)
}

/// A test of a change's entity.
public indirect enum HistoryEntityTest: Sendable, Equatable {
    case constant(Bool)
    case isIn([Int64])
    case and([HistoryEntityTest])
    case or([HistoryEntityTest])
    case not(HistoryEntityTest)
}

extension HistoryFilter {
    /// How many values a store binds for the filter: one a comparison, one a list.
    var parameterCount: Int {
        switch self {
        case .constant: return 0
        case .and(let parts), .or(let parts): return parts.reduce(0) { $0 + $1.parameterCount }
        case .not(let inner): return inner.parameterCount
        case .compare, .isIn: return 1
        case .changes(_, let test): return test.parameterCount
        }
    }
}

extension HistoryEntityTest {
    /// How many values a store binds for the test: one a list.
    var parameterCount: Int {
        switch self {
        case .constant: return 0
        case .isIn: return 1
        case .and(let parts), .or(let parts): return parts.reduce(0) { $0 + $1.parameterCount }
        case .not(let inner): return inner.parameterCount
        }
    }
}

public enum HistoryField: String, Sendable, Equatable {
    case sequence, timestamp, author, contextName
}

public enum HistoryFieldValue: Sendable, Equatable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
}

extension HistoryFieldValue {
    /// The value as a store binds it.
    var sqlValue: SQLValue {
        switch self {
        case .null: return .null
        case .int(let n): return .int(n)
        case .double(let d): return .double(d)
        case .text(let s): return .text(s)
        }
    }
}

/// A selection of transactions: filter, order and limit.
public struct HistoryQuery: Sendable {
    public var filter: HistoryFilter = .constant(true)
    /// Sort keys in order; `sequence` ascending breaks ties.
    public var sort: [(field: HistoryField, ascending: Bool)] = []
    public var limit: Int64?
    public init() {}
}
