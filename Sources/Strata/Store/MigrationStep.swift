import Glibc

/// One step of a migration's storage change, as a dry run reports it
/// (`strata_infer_migration`) and `STRATA_MIGRATION_DEBUG=1` prints it:
/// what changes (``Kind``: renameAttribute, addEntity, copyRows, addIndex, …),
/// where, and the SQL that does it (values appear as `?N` parameters).
public struct MigrationStep: Sendable, Equatable {
    /// What a step does; the raw value is the `kind` of its JSON (docs/JSON.md) and the
    /// first word of its STRATA_MIGRATION_DEBUG line.
    public enum Kind: String, Sendable, CaseIterable {
        // Entities and the rows of their tables.
        case addEntity, removeEntity, renameEntity
        /// Into or out of a hierarchy.
        case moveEntity
        /// A table rebuilt: created under another name, rows copied in key ranges.
        case copyRows
        /// Rows of removed or moved entities deleted from a table altered in place.
        case deleteRows
        case renameEntityRows, renameTable
        // Attributes and relationships.
        case addAttribute, removeAttribute, renameAttribute
        case addRelationship, removeRelationship, renameRelationship
        /// Links moved between a column and a join table.
        case changeRelationship
        case inlineExternalStorage
        // Tables dropped, and renamed to their final names.
        case dropTable, renameTables
        // Values.
        case fillDefault, checkRequired
        /// A property moved down a hierarchy: its values outside the entities that have it now.
        case clearValues
        /// Links to objects that are gone.
        case clearLinks
        /// A relationship became one-to-one: the row with the smallest key keeps the link.
        case keepOneLink
        // Indexes.
        case addIndex, removeIndex, addUniqueConstraint, removeUniqueConstraint
        /// An index kept in place takes the name the new layout gives it (stores whose
        /// index names follow their tables).
        case renameIndex
        /// Full-text indexes: every one of the old layout is dropped before the tables change,
        /// every one of the new layout made and filled once they hold their final rows.
        case addSearchIndex, removeSearchIndex
        // Key sequences.
        case continueSequence, dropSequence
        /// The check that a table's rows name only its hierarchy's entities (stores whose tables
        /// carry one, never SQLite's): dropped before a table altered in place changes its
        /// entities, made again once its rows are final.
        case removeEntityCheck, addEntityCheck

        /// Whether the step takes something of the old model away (`remove…`): among the index
        /// steps, the drops that run before any index is created.
        var isRemoval: Bool {
            switch self {
            case .removeEntity, .removeAttribute, .removeRelationship, .removeIndex, .removeUniqueConstraint: return true
            default: return false
            }
        }
    }

    public var kind: Kind
    public var entity: String?
    /// The attribute, relationship or index columns the step is about.
    public var property: String?
    public var from: String?
    public var to: String?
    public var sql: [String]

    public init(kind: Kind, entity: String? = nil, property: String? = nil, from: String? = nil, to: String? = nil, sql: [String] = []) {
        self.kind = kind
        self.entity = entity
        self.property = property
        self.from = from
        self.to = to
        self.sql = sql
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("kind"); w.string(kind.rawValue)
        if let entity { w.key("entity"); w.string(entity) }
        if let property { w.key("property"); w.string(property) }
        if let from { w.key("from"); w.string(from) }
        if let to { w.key("to"); w.string(to) }
        w.key("sql"); w.beginArray()
        for s in sql { w.string(s) }
        w.endArray()
        w.endObject()
    }

    /// `{"steps": [...]}`.
    public static func json(_ steps: [MigrationStep]) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.key("steps"); w.beginArray()
        for s in steps { s.write(to: &w) }
        w.endArray()
        w.endObject()
        return w.string
    }

    /// The step in one line, for STRATA_MIGRATION_DEBUG.
    public var line: String {
        var parts = [kind.rawValue]
        if let entity { parts.append(entity + (property.map { "." + $0 } ?? "")) }
        if let from, let to { parts.append("\(from) -> \(to)") }
        return parts.joined(separator: " ")
    }
}

/// Whether `STRATA_MIGRATION_DEBUG=1` asks for each migration step (and its SQL) on stderr.
let migrationDebug: Bool = {
    guard let v = getenv("STRATA_MIGRATION_DEBUG") else { return false }
    return String(cString: v) == "1"
}()

/// Prints a line of STRATA_MIGRATION_DEBUG output: the runner's stage lines and the
/// store's step and SQL lines alike.
func migrationLog(_ line: @autoclosure () -> String) {
    if migrationDebug { fputs("[strata migration] \(line())\n", stderr) }
}
