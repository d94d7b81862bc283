/// What an integrity check found (``StoreMaintenance/checkIntegrity(_:)``,
/// `strata_check_integrity`): a list of problems, each of one kind, naming the
/// entity, attribute and object where they apply. docs/JSON.md, "Backup and integrity" gives its JSON.
///
/// The list is bounded (``limit``): a store damaged everywhere reports the first
/// problems and `truncated`, never a report as large as the store.
public struct IntegrityReport: Sendable {
    /// One finding.
    public struct Problem: Sendable, Equatable {
        public enum Kind: String, Sendable, CaseIterable {
            /// SQLite's own check (`PRAGMA integrity_check`): pages, indexes, records.
            case sqlite
            /// The tables, columns or indexes do not match the stored schema.
            case table
            /// A link held in a row points at no object, or at one outside the relationship's destination.
            case link
            /// A join-table row whose owner or target is missing (or of another entity).
            case pair
            /// An external-storage name whose file is missing, or a file no row names.
            case external
            /// A history row that does not parse.
            case history
            /// A stored value of the wrong storage class or content (the object writer's checks).
            case value
        }
        public let kind: Kind
        public let message: String
        public var entity: String?
        public var attribute: String?
        /// The object, as its identifier (`Entity/key`).
        public var id: String?

        public init(_ kind: Kind, _ message: String, entity: String? = nil, attribute: String? = nil, id: String? = nil) {
            self.kind = kind
            self.message = message
            self.entity = entity
            self.attribute = attribute
            self.id = id
        }
    }

    /// At most this many problems are kept; more set ``truncated``.
    public static let limit = 1000

    public private(set) var problems: [Problem] = []
    /// More problems were found than the report keeps.
    public private(set) var truncated = false
    public var ok: Bool { problems.isEmpty }
    /// How many more problems the report keeps (a check asks for one more, to know it truncated).
    var room: Int { IntegrityReport.limit - problems.count }

    public init() {}

    /// Adds a problem (or marks the report truncated when it is full).
    mutating func add(_ p: Problem) {
        if problems.count >= IntegrityReport.limit { truncated = true; return }
        problems.append(p)
    }

    mutating func add(_ kind: Problem.Kind, _ message: String, entity: String? = nil, attribute: String? = nil, id: String? = nil) {
        add(Problem(kind, message, entity: entity, attribute: attribute, id: id))
    }

    /// A check that failed on damage (`.corrupt`) becomes a problem of its kind; other errors go on.
    mutating func recording(_ kind: Problem.Kind, _ body: (inout IntegrityReport) throws -> Void) throws {
        do {
            try body(&self)
        } catch let e as StrataError where e.code == .corrupt {
            add(kind, e.message, entity: e.entity, attribute: e.attribute)
        }
    }

    /// `{"ok": …, "problems": [{"kind", "message", "entity"?, "attribute"?, "id"?}, …], "truncated": …}`.
    public var json: [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("ok"); w.bool(ok)
        w.key("problems"); w.beginArray()
        for p in problems {
            w.beginObject()
            w.key("kind"); w.string(p.kind.rawValue)
            w.key("message"); w.string(p.message)
            if let e = p.entity { w.key("entity"); w.string(e) }
            if let a = p.attribute { w.key("attribute"); w.string(a) }
            if let id = p.id { w.key("id"); w.string(id) }
            w.endObject()
        }
        w.endArray()
        w.key("truncated"); w.bool(truncated)
        w.endObject()
        return Array(w.string.utf8)
    }
}

/// What a store does besides reading and writing objects: an online backup, an
/// integrity check, a vacuum (`strata_backup`, `strata_check_integrity`,
/// `strata_vacuum`). Both stores implement it; the container calls it.
public protocol StoreMaintenance: AnyObject {
    /// Copies the store, on one snapshot, to `destination` (which must not exist unless
    /// `overwrite`); a failed backup leaves no destination behind.
    func backup(to destination: String, overwrite: Bool) throws
    /// Adds to `report` what the store's own checks and the shared ones
    /// (``IntegrityCheck``) find on one snapshot; history is the container's to check.
    func checkIntegrity(_ report: inout IntegrityReport) throws
    /// Rebuilds the store's files or tables to reclaim space and refresh statistics.
    func vacuum() throws
}
