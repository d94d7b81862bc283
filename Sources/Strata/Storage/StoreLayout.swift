/// How a schema is laid out in SQLite: the tables, their columns and column
/// types, and their indexes, computed from a schema. DDL is generated from a
/// layout (`SQLiteDialect.createSchema`), and a migration compares the layouts
/// of two schema versions; the schema itself (the registry) knows no SQL types.
///
/// - One table per hierarchy, named after its root entity: `_pk` (the key),
///   `_entity` (the concrete entity), then every stored attribute and every
///   link held in the row (a to-one's foreign key, named after the
///   relationship), the root's first and then each subentity's.
/// - One join table per many-to-many or inverse-less to-many relationship:
///   `(_source, _target)`, primary key both, plus an index the other way round.
/// - Indexes named `Table.kind(columns)` (`SQLiteDialect.indexName`).
struct StoreLayout: Equatable {
    struct Column: Equatable {
        let name: String
        let type: String
    }

    struct Index: Equatable {
        let name: String
        let columns: [String]
        let isUnique: Bool
    }

    struct Table: Equatable {
        let name: String
        let columns: [Column]
        let primaryKey: [String]
        /// Join tables have no rowid (their key is the pair).
        let withoutRowID: Bool
        let indexes: [Index]
        /// Columns whose values may name external-storage files.
        let externalColumns: [String]
    }

    let tables: [Table]

    init(_ schema: Schema) {
        var tables: [Table] = []
        for root in schema.rootEntities { tables.append(StoreLayout.entityTable(root)) }
        for (name, _) in schema.pairSets { tables.append(StoreLayout.joinTable(name)) }
        self.tables = tables
    }

    func table(named name: String) -> Table? { tables.first { $0.name == name } }

    // MARK: Names

    /// The key column of every entity table (an integer, the object's key).
    static let key = "_pk"
    /// The column naming each row's concrete entity.
    static let entity = "_entity"
    /// The columns of a set of pairs: its first end's key and its second end's.
    static let source = "_source", target = "_target"

    /// A hierarchy's table is named after its root entity.
    static func tableName(_ e: Entity) -> String { e.root.name }
    /// A slot's column is named after its attribute or relationship.
    static func columnName(_ slot: StoredColumn) -> String { slot.name }
    /// A set of pairs is a table named after the set, with `_source` (the first end) and `_target`.
    static func pairTable(_ rel: Relationship) -> (table: String, ownerColumn: String, targetColumn: String) {
        guard case .inPairs(let set, let ownerIsFirst) = rel.placement else {
            return ("", "", "")  // callers ask only for relationships kept in pairs
        }
        return (set, ownerIsFirst ? source : target, ownerIsFirst ? target : source)
    }

    /// The SQLite column type of a kind of value.
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .string, .uuid, .url, .decimal, .json: return "TEXT"
        case .int, .bool: return "INTEGER"
        case .double, .date: return "REAL"
        case .data: return "BLOB"
        }
    }

    private static func entityTable(_ root: Entity) -> Table {
        var columns = [Column(name: key, type: "INTEGER"), Column(name: entity, type: "TEXT NOT NULL")]
        var external: [String] = []
        for e in root.descendants {
            for a in e.ownAttributes where !a.isTransient {
                columns.append(Column(name: a.name, type: columnType(a.type)))
                if a.externalStorage { external.append(a.name) }
            }
            for r in e.ownRelationships {
                if r.isHeldInRow { columns.append(Column(name: columnName(.link(r)), type: "INTEGER")) }
            }
        }
        var indexes: [Index] = []
        var seen: Set<String> = []
        /// The column of an attribute or held link named in a constraint or index.
        func column(_ name: String) -> String {
            for e in root.descendants {
                if let slot = e.slotByName[name] { return columnName(e.storedColumns[slot]) }
            }
            return name
        }
        func add(_ kind: String, _ cols: [String]) {
            let key = kind + ":" + cols.joined(separator: ",")
            // A plain index on exactly the columns of a unique index would only cost writes.
            guard !seen.contains(key), !(kind != "unique" && seen.contains("unique:" + cols.joined(separator: ","))) else { return }
            seen.insert(key)
            indexes.append(Index(name: SQLiteDialect.indexName(root.name, kind, cols), columns: cols, isUnique: kind == "unique"))
        }
        if root.isInHierarchy { add("index", [entity]) }
        for e in root.descendants {
            for a in e.ownAttributes where a.isUnique { add("unique", [a.name]) }
            for u in e.uniqueConstraints { add("unique", u.map(column)) }
        }
        for e in root.descendants {
            for a in e.ownAttributes where a.isIndexed && !a.isUnique { add("index", [a.name]) }
            for i in e.indexes { add("index", i.map(column)) }
            for r in e.ownRelationships where r.isHeldInRow { add("fk", [columnName(.link(r))]) }
        }
        return Table(name: root.name, columns: columns, primaryKey: [key], withoutRowID: false, indexes: indexes, externalColumns: external)
    }

    private static func joinTable(_ name: String) -> Table {
        Table(name: name,
              columns: [Column(name: source, type: "INTEGER NOT NULL"), Column(name: target, type: "INTEGER NOT NULL")],
              primaryKey: [source, target], withoutRowID: true,
              indexes: [Index(name: SQLiteDialect.indexName(name, "index", [target, source]), columns: [target, source], isUnique: false)],
              externalColumns: [])
    }
}
