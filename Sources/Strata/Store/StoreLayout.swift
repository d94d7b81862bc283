/// How a schema is laid out in tables, for every SQL store: the tables, their
/// columns and what each holds, and their indexes, computed from a schema. A
/// store's dialect gives each column its SQL type and writes the DDL
/// (`SQLiteDialect.createSchema`); a migration compares the layouts of two
/// schema versions. The schema itself (the registry) knows no tables.
///
/// - One table per hierarchy, named after its root entity: `_pk` (the key),
///   `_entity` (the concrete entity), then every stored attribute and every
///   link held in the row (a to-one's foreign key, named after the
///   relationship), the root's first and then each subentity's.
/// - One join table per many-to-many or inverse-less to-many relationship:
///   `(_source, _target)`, primary key both, plus an index the other way round.
/// - Indexes named `Table.kind(columns)` (``indexName(_:_:_:)``); the full-text index of a
///   searchable attribute `Table.search(column)` (``searchIndexName(_:)``).
struct StoreLayout: Equatable {
    struct Column: Equatable {
        /// What a column holds; each store's dialect gives it its SQL type.
        enum Content: Equatable {
            /// The row's key (the table's primary key).
            case key
            /// The row's concrete entity name (never null).
            case entityName
            /// An attribute's value.
            case value(AttributeType)
            /// A link held in the row: the linked row's key.
            case link
            /// One end of a pair of a join table (never null).
            case pairEnd
        }
        let name: String
        let content: Content
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
        /// The full-text indexes of the table's searchable columns (``SearchIndex``).
        var searchIndexes: [SearchIndex] = []
        /// The names a row's `_entity` may hold: the hierarchy's entities (none for a join table).
        var entities: [String] = []
    }

    /// The full-text index of one searchable string column (`Trip.search(name)`), which serves
    /// `matches`: each store keeps it its own way (SQLite: an FTS5 table of that name whose rowid
    /// is the row's key; PostgreSQL: a GIN index of that name over the column's tokens).
    struct SearchIndex: Equatable {
        let name: String
        let column: String
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

    /// `Trip.unique(name,startDate,endDate)`: '.', '(' and ',' cannot occur in entity,
    /// attribute or relationship names, so a generated index name never collides with a
    /// table (entity or join table) or with another index.
    static func indexName(_ table: String, _ kind: String, _ columns: [String]) -> String {
        "\(table).\(kind)(\(columns.joined(separator: ",")))"
    }

    /// The full-text index of a searchable attribute: `Trip.search(name)`.
    static func searchIndexName(_ a: Attribute) -> String { indexName(tableName(a.entity), "search", [columnName(.attribute(a))]) }

    private static func entityTable(_ root: Entity) -> Table {
        var columns = [Column(name: key, content: .key), Column(name: entity, content: .entityName)]
        var external: [String] = []
        // The hierarchy, listed once (`descendants` makes its list on every call).
        let family = root.descendants
        for e in family {
            for a in e.ownAttributes where !a.isTransient {
                columns.append(Column(name: a.name, content: .value(a.type)))
                if a.externalStorage { external.append(a.name) }
            }
            for r in e.ownRelationships {
                if r.isHeldInRow { columns.append(Column(name: columnName(.link(r)), content: .link)) }
            }
        }
        var indexes: [Index] = []
        var seen: Set<String> = []
        /// The column of an attribute or held link named in a constraint or index.
        func column(_ name: String) -> String {
            for e in family {
                if let slot = e.slotByName[name] { return columnName(e.storedColumns[slot]) }
            }
            return name
        }
        func add(_ kind: String, _ cols: [String]) {
            let key = kind + ":" + cols.joined(separator: ",")
            // A plain index on exactly the columns of a unique index would only cost writes.
            guard !seen.contains(key), !(kind != "unique" && seen.contains("unique:" + cols.joined(separator: ","))) else { return }
            seen.insert(key)
            indexes.append(Index(name: indexName(root.name, kind, cols), columns: cols, isUnique: kind == "unique"))
        }
        if root.isInHierarchy { add("index", [entity]) }
        for e in family {
            for a in e.ownAttributes where a.isUnique { add("unique", [a.name]) }
            for u in e.uniqueConstraints { add("unique", u.map(column)) }
        }
        for e in family {
            for a in e.ownAttributes where a.isIndexed && !a.isUnique { add("index", [a.name]) }
            for i in e.indexes { add("index", i.map(column)) }
            for r in e.ownRelationships where r.isHeldInRow { add("fk", [columnName(.link(r))]) }
        }
        var search: [SearchIndex] = []
        for e in family {
            for a in e.ownAttributes where a.isSearchable { search.append(SearchIndex(name: searchIndexName(a), column: a.name)) }
        }
        return Table(name: root.name, columns: columns, primaryKey: [key], withoutRowID: false, indexes: indexes, externalColumns: external,
                     searchIndexes: search, entities: family.map(\.name))
    }

    private static func joinTable(_ name: String) -> Table {
        Table(name: name,
              columns: [Column(name: source, content: .pairEnd), Column(name: target, content: .pairEnd)],
              primaryKey: [source, target], withoutRowID: true,
              indexes: [Index(name: indexName(name, "index", [target, source]), columns: [target, source], isUnique: false)],
              externalColumns: [])
    }
}
