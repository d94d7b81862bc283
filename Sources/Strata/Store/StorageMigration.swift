/// Turns a ``SchemaMapping`` into the steps that carry a SQL store from the old
/// layout to the new one, for any engine: which tables change how, in which
/// order, the checks the data must pass and the progress of copies are decided
/// here; every statement is spelled by the store's ``MigrationDialect``, and
/// the steps run on its ``MigrationConnection`` (`StorageMigration+Run.swift`),
/// inside the caller's transaction.
///
/// Per table of the new version:
/// - a table whose rows all come from one old table, changed only by renamed,
///   added and (where the engine drops columns in place) removed columns, is
///   altered in place (`ALTER TABLE … RENAME TO / RENAME COLUMN / ADD COLUMN /
///   DROP COLUMN`): no row is rewritten, so a rename-only step costs
///   milliseconds whatever the store's size;
/// - otherwise (a column goes where the engine cannot drop one, a link changes
///   its place, entities join a hierarchy from another table) it is rebuilt as
///   SQLite documents it (sqlite.org/lang_altertable.html#otheralter): created
///   under another name, filled with `INSERT … SELECT` in key ranges (progress
///   between ranges, memory flat), the old table dropped, the new one renamed;
/// - then defaults fill required values, links to objects that are gone are
///   cleared, indexes are dropped, renamed and created to match the layout (a
///   unique index over duplicates fails naming one duplicated value), and key
///   sequences continue past every key (identifiers survive).
struct StorageMigration {
    /// One statement (or statement pattern) of a step.
    enum Action {
        /// Runs once with its arguments.
        case run(String, [SQLValue])
        /// Copies rows of entities `entities` (old names) of `table` in key ranges:
        /// `sql` binds the range ($1, $2], the entities ($3) and the renames ($4).
        case copy(String, table: String, entities: [String], renames: SQLValue, entity: String)
        /// A query whose first row means the step cannot run.
        case check(String, [SQLValue], failure: ([SQLValue]) -> StrataError)
        /// Creates a unique index; duplicates make it fail naming one duplicated value.
        case uniqueIndex(String, table: String, columns: [String], entity: String, names: [String])
        /// Moves external-storage files of a column back into the rows (external storage
        /// turned off); `sql` selects the rows that name a file.
        case inlineFiles(String, table: String, column: String, attribute: Attribute)
        /// Makes the check that the rows of `table` name only `entities`; a row naming
        /// another makes it fail naming that row (`root`: the hierarchy).
        case entityCheck(String, table: String, entities: [String], root: String)
    }

    struct Step {
        var description: MigrationStep
        var actions: [Action] = []
    }

    let mapping: SchemaMapping
    var old: Schema { mapping.old }
    var new: Schema { mapping.new }
    let dialect: any MigrationDialect
    let oldLayout: StoreLayout
    let newLayout: StoreLayout
    /// The indexes an old table has (the store's own, whatever their names).
    let existingIndexes: (String) throws -> [StoreLayout.Index]

    /// - Parameter existingIndexes: reads the indexes an old table has; without it (a dry
    ///   run), the old layout's, under the names the dialect gives them.
    init(_ mapping: SchemaMapping, dialect: any MigrationDialect, existingIndexes: ((String) throws -> [StoreLayout.Index])? = nil) {
        self.mapping = mapping
        self.dialect = dialect
        let oldLayout = StoreLayout(mapping.old)
        self.oldLayout = oldLayout
        newLayout = StoreLayout(mapping.new)
        self.existingIndexes = existingIndexes ?? { table in
            (oldLayout.table(named: table)?.indexes ?? []).map {
                StoreLayout.Index(name: dialect.storedIndexName($0.name), columns: $0.columns, isUnique: $0.isUnique)
            }
        }
    }

    // MARK: Planning

    private enum Source: Equatable {
        case none
        case column(String)
        case expression(String)
    }

    private enum Mode {
        case create
        case copy(from: Entity)
        case inPlace(from: Entity)
    }

    /// Where the links of an old relationship are: a table and its owner and target columns.
    private func storage(of r: Relationship, reversed: Bool) -> (table: String, owner: String, target: String) {
        var s: (table: String, owner: String, target: String)
        switch r.placement {
        case .inRow: s = (r.entity.root.name, StoreLayout.key, r.name)
        case .inInverseRows: s = (r.destination.root.name, r.inverse?.name ?? "", StoreLayout.key)
        case .inPairs(let set, let first): s = (set, first ? StoreLayout.source : StoreLayout.target, first ? StoreLayout.target : StoreLayout.source)
        }
        if reversed { s = (s.table, s.target, s.owner) }
        return s
    }

    /// Where a column of a new table takes its values from, in the old table `oldRoot`'s rows.
    private func source(of column: StoredColumn, oldRoot: Entity) -> Source {
        switch column {
        case .attribute(let a):
            guard let oa = mapping.origin(of: a), !oa.isTransient else { return .none }
            return .column(oa.name)
        case .link(let r):
            guard let (or, reversed) = mapping.linkOrigin(of: r) else { return .none }
            let s = storage(of: or, reversed: reversed)
            if s.owner == StoreLayout.key && s.table == oldRoot.name { return .column(s.target) }
            return .expression(dialect.linkTarget(s.table, owner: s.owner, target: s.target))
        }
    }

    /// The stored columns of a new hierarchy, by column name.
    private func columns(of root: Entity) -> [(name: String, column: StoredColumn, entity: Entity)] {
        var out: [(String, StoredColumn, Entity)] = []
        for e in root.descendants {
            for a in e.ownAttributes where !a.isTransient { out.append((a.name, .attribute(a), e)) }
            for r in e.ownRelationships where r.isHeldInRow { out.append((r.name, .link(r), e)) }
        }
        return out.map { (name: $0.0, column: $0.1, entity: $0.2) }
    }

    private func oldColumns(of root: Entity) -> [String] {
        (oldLayout.table(named: root.name)?.columns ?? []).map(\.name).filter { $0 != StoreLayout.key && $0 != StoreLayout.entity }
    }

    private func mode(of root: Entity) -> Mode {
        let origins = root.descendants.compactMap { mapping.origin(of: $0) }
        guard let first = origins.first else { return .create }
        let oldRoot = first.root
        guard let heir = mapping.successor(of: oldRoot), heir.root === root else { return .copy(from: oldRoot) }
        var used: Set<String> = []
        for c in columns(of: root) {
            switch source(of: c.column, oldRoot: oldRoot) {
            case .none: break
            case .column(let name): used.insert(name)
            case .expression: return .copy(from: oldRoot)
            }
        }
        // Every old column must stay, unless the engine drops columns in place (where dropping
        // one rewrites the table anyway, it is rebuilt once).
        if dialect.dropsColumnsInPlace { return .inPlace(from: oldRoot) }
        return Set(oldColumns(of: oldRoot)).isSubset(of: used) ? .inPlace(from: oldRoot) : .copy(from: oldRoot)
    }

    /// Old entity names of the objects a new hierarchy takes, and the renames of their entities.
    private func entities(of root: Entity) -> (names: [String], renames: [(String, String)]) {
        var names: [String] = []
        var renames: [(String, String)] = []
        for e in root.descendants {
            guard let o = mapping.origin(of: e) else { continue }
            names.append(o.name)
            if o.name != e.name { renames.append((o.name, e.name)) }
        }
        return (names, renames)
    }

    private func step(_ kind: MigrationStep.Kind, entity: String? = nil, property: String? = nil, from: String? = nil, to: String? = nil,
                      _ actions: [Action] = []) -> Step {
        Step(description: MigrationStep(kind: kind, entity: entity, property: property, from: from, to: to,
                                        sql: actions.map(StorageMigration.sql)), actions: actions)
    }

    static func sql(_ a: Action) -> String {
        switch a {
        case .run(let s, _), .copy(let s, _, _, _, _), .check(let s, _, _), .uniqueIndex(let s, _, _, _, _), .inlineFiles(let s, _, _, _),
             .entityCheck(let s, _, _, _): return s
        }
    }

    /// A table of the new layout, without its indexes, under the name it is built by.
    private func createBuilding(_ t: StoreLayout.Table) -> String {
        dialect.createTable(StoreLayout.Table(name: dialect.buildingName(t.name), columns: t.columns, primaryKey: t.primaryKey,
                                              withoutRowID: t.withoutRowID, indexes: [], externalColumns: [], entities: t.entities))
    }

    /// The steps, in the order they run (each function below says what its steps guarantee):
    ///
    /// 0. removed, renamed and moved entities, described;
    /// 1. tables rebuilt or made for new entities, under their building names;
    /// 2. join tables kept, or built from the old links;
    /// 3. tables altered in place;
    /// 4. old tables dropped, every table renamed to its final name;
    /// 5. values, once every table has its final name: defaults, values outside their entities,
    ///    links to objects that are gone; then the entity checks of tables altered in place
    ///    whose entities changed (dropped in 3, before their rows changed), over the final rows;
    /// 6. indexes matched by their columns, every drop before any create;
    /// 7. one link kept per object of a relationship that became one-to-one;
    /// 8. key sequences continued;
    ///
    /// full-text indexes: every one of the old layout dropped first, every one of the new made
    /// and filled from the final rows after the indexes (6): a rename, a removal, a value
    /// filled in or a row copied all leave them right.
    func plan() throws -> [Step] {
        let modes = tableModes()
        var tables = TableChanges()
        var steps = searchIndexDrops()
        steps += entityChanges()
        steps += rebuiltTables(modes, &tables)
        steps += joinTables(&tables)
        steps += try tablesAlteredInPlace(modes, &tables)
        steps += finalTableNames(tables)
        steps += valueChanges(modes)
        steps += entityChecks(modes)
        steps += try indexChanges(modes, tables)
        steps += searchIndexCreations()
        steps += oneToOneLinks()
        steps += sequences(modes)
        return steps
    }

    private func searchIndexDrops() -> [Step] {
        oldLayout.tables.flatMap { t in
            t.searchIndexes.map { s in step(.removeSearchIndex, entity: t.name, property: s.column, [.run(dialect.dropSearchIndex(s, on: t.name), [])]) }
        }
    }

    private func searchIndexCreations() -> [Step] {
        newLayout.tables.flatMap { t in
            t.searchIndexes.map { s in step(.addSearchIndex, entity: t.name, property: s.column, dialect.createSearchIndex(s, on: t.name).map { .run($0, []) }) }
        }
    }

    /// What the table steps (1–3) leave to the later ones.
    private struct TableChanges {
        /// Old tables no new table keeps, in the order they are dropped.
        var drops: [String] = []
        /// Tables built under their building name, and kept join tables whose name changed.
        var renames: [(from: String, to: String)] = []
        /// Tables altered in place under a new name (renamed through their building name).
        var renamedInPlace: [(String, String)] = []
        /// Old join tables kept as they are (perhaps renamed), by their old names.
        var keptPairs: Set<String> = []
    }

    /// How each new hierarchy's table comes to be, by the name of its root.
    private func tableModes() -> [String: Mode] {
        var modes: [String: Mode] = [:]
        for root in new.rootEntities { modes[root.name] = mode(of: root) }
        return modes
    }

    /// Each old entity that is removed, renamed or moved is reported (no SQL: its rows keep their keys).
    private func entityChanges() -> [Step] {
        var steps: [Step] = []
        for o in old.entities {
            if let e = mapping.successor(of: o) {
                if e.name != o.name { steps.append(step(.renameEntity, entity: e.name, from: o.name, to: e.name)) }
                if e.root.name != o.root.name || (e.superentity?.name != o.superentity.flatMap { mapping.successor(of: $0)?.name }) {
                    steps.append(step(.moveEntity, entity: e.name, from: o.root.name, to: e.root.name))
                }
            } else {
                steps.append(step(.removeEntity, entity: o.name))
            }
        }
        return steps
    }

    /// Each new table not altered in place is complete under its building name; old tables no in-place table adopts are to drop.
    private func rebuiltTables(_ modes: [String: Mode], _ tables: inout TableChanges) -> [Step] {
        var steps: [Step] = []
        var adopted: Set<String> = []
        for root in new.rootEntities { if case .inPlace(let o) = modes[root.name] { adopted.insert(o.name) } }
        for root in new.rootEntities {
            guard let t = newLayout.table(named: root.name) else { continue }
            let building = dialect.buildingName(t.name)
            let create = createBuilding(t)
            switch modes[root.name] {
            case .create?:
                steps.append(step(.addEntity, entity: root.name, [.run(create, [])]))
                tables.renames.append((building, t.name))
            case .copy(let oldRoot)?:
                steps.append(contentsOf: describeColumns(root, oldRoot: oldRoot))
                steps.append(step(.copyRows, entity: root.name, from: oldRoot.name, to: root.name,
                                  [.run(create, []), copyRows(root, from: oldRoot, into: building)]))
                tables.renames.append((building, t.name))
                if !adopted.contains(oldRoot.name) && !tables.drops.contains(oldRoot.name) { tables.drops.append(oldRoot.name) }
            case .inPlace?, nil:
                break
            }
        }
        // Old tables whose every entity is removed.
        for oldRoot in old.rootEntities where !adopted.contains(oldRoot.name) && !tables.drops.contains(oldRoot.name) {
            tables.drops.append(oldRoot.name)
        }
        return steps
    }

    /// The copy of an old table's rows into the table `building` of the new hierarchy `root`.
    private func copyRows(_ root: Entity, from oldRoot: Entity, into building: String) -> Action {
        var names: [String] = []
        var values: [String] = []
        for c in columns(of: root) {
            switch source(of: c.column, oldRoot: oldRoot) {
            case .none: continue
            case .column(let n): names.append(c.name); values.append(dialect.sourceColumn(n))
            case .expression(let x): names.append(c.name); values.append(x)
            }
        }
        let (entityNames, entityRenames) = entities(of: root)
        let copy = dialect.copyRows(into: building, columns: names, from: oldRoot.name, values: values)
        return .copy(copy, table: oldRoot.name, entities: entityNames, renames: dialect.nameMap(entityRenames), entity: root.name)
    }

    /// Each new join table is an old one kept (renamed if need be) or complete under its building name; the others are to drop.
    private func joinTables(_ tables: inout TableChanges) -> [Step] {
        var steps: [Step] = []
        for (set, r) in new.pairSets {
            let building = dialect.buildingName(set)
            guard let t = newLayout.table(named: set) else { continue }
            let create = createBuilding(t)
            guard let (or, reversed) = mapping.linkOrigin(of: r) else {
                steps.append(step(.addRelationship, entity: r.entity.name, property: r.name, [.run(create, [])]))
                tables.renames.append((building, set))
                continue
            }
            let s = storage(of: or, reversed: reversed)
            if case .inPairs = or.placement, s.owner == StoreLayout.source, !tables.keptPairs.contains(s.table) {
                tables.keptPairs.insert(s.table)
                if s.table != set {
                    steps.append(step(.renameRelationship, entity: r.entity.name, property: r.name, from: s.table, to: set))
                    tables.renames.append((s.table, set))
                }
                continue
            }
            let copy = dialect.copyPairs(into: building, from: s.table, owner: s.owner, target: s.target)
            steps.append(step(.changeRelationship, entity: r.entity.name, property: r.name, from: or.name, to: r.name,
                              [.run(create, []), .run(copy, [])]))
            tables.renames.append((building, set))
        }
        for (set, _) in old.pairSets where !tables.keptPairs.contains(set) { tables.drops.append(set) }
        return steps
    }

    /// Each table whose rows all stay and whose columns are only renamed, added or (where the engine drops columns in
    /// place) removed is altered in place (no row rewritten).
    private func tablesAlteredInPlace(_ modes: [String: Mode], _ tables: inout TableChanges) throws -> [Step] {
        var steps: [Step] = []
        for root in new.rootEntities {
            guard case .inPlace(let oldRoot)? = modes[root.name] else { continue }
            steps.append(contentsOf: try alterInPlace(root, from: oldRoot, renamedTables: &tables.renamedInPlace))
        }
        return steps
    }

    /// Old tables no new table keeps are dropped, then every table takes its final name.
    private func finalTableNames(_ tables: TableChanges) -> [Step] {
        var steps: [Step] = []
        for table in tables.drops { steps.append(step(.dropTable, entity: table, [.run(dialect.dropTable(table), [])])) }
        var renameActions: [Action] = []
        for (from, to) in tables.renamedInPlace + tables.renames where from != to {
            renameActions += dialect.renameTable(from, to: to).map { .run($0, []) }
        }
        if !renameActions.isEmpty { steps.append(step(.renameTables, renameActions)) }
        return steps
    }

    /// Required values are set (by a default, or the stage fails naming an object); stray values and dangling links are cleared.
    private func valueChanges(_ modes: [String: Mode]) -> [Step] {
        var steps: [Step] = []
        for root in new.rootEntities { steps.append(contentsOf: values(root, mode: modes[root.name] ?? .create)) }
        steps.append(contentsOf: danglingLinks(modes))
        return steps
    }

    /// The check of a table altered in place whose hierarchy's entities changed: a table's rows name
    /// only its entities, a row of none fails the stage (the engines that keep such a check).
    private func entityChecks(_ modes: [String: Mode]) -> [Step] {
        var steps: [Step] = []
        for root in new.rootEntities {
            guard case .inPlace(let oldRoot)? = modes[root.name], let check = changedEntityCheck(root, from: oldRoot, table: root.name) else { continue }
            steps.append(step(.addEntityCheck, entity: root.name,
                              [.entityCheck(check.add, table: root.name, entities: root.descendants.map(\.name), root: root.name)]))
        }
        return steps
    }

    /// The statements of the entity check of a table of `oldRoot`'s altered in place into `root`'s,
    /// when the hierarchy's entities change and the engine keeps such a check.
    private func changedEntityCheck(_ root: Entity, from oldRoot: Entity, table: String) -> (drop: String, add: String)? {
        let names = root.descendants.map(\.name)
        guard Set(names) != Set(oldRoot.descendants.map(\.name)) else { return nil }
        return dialect.entityCheck(table, names)
    }

    /// Each table has exactly the new layout's indexes, matched by their columns; every drop runs before any create.
    private func indexChanges(_ modes: [String: Mode], _ tables: TableChanges) throws -> [Step] {
        // Drops first: a table renamed in place keeps its indexes' names, which an index of another table may now need.
        var steps: [Step] = []
        for root in new.rootEntities { steps.append(contentsOf: try indexes(root, mode: modes[root.name] ?? .create)) }
        for (set, _) in new.pairSets { steps.append(contentsOf: try pairIndexes(set, kept: tables.keptPairs, renames: tables.renames)) }
        return steps.filter { $0.description.kind.isRemoval } + steps.filter { !$0.description.kind.isRemoval }
    }

    /// Steps that describe what a rebuilt table's columns become (their SQL is the copy's).
    private func describeColumns(_ root: Entity, oldRoot: Entity) -> [Step] {
        var out: [Step] = []
        var used: Set<String> = []
        for c in columns(of: root) {
            switch (c.column, source(of: c.column, oldRoot: oldRoot)) {
            case (.attribute(let a), .column(let n)):
                used.insert(n)
                if n != a.name { out.append(step(.renameAttribute, entity: c.entity.name, property: a.name, from: n, to: a.name)) }
            case (.attribute(let a), _):
                out.append(step(.addAttribute, entity: c.entity.name, property: a.name))
            case (.link(let r), .column(let n)):
                used.insert(n)
                if n != r.name { out.append(step(.renameRelationship, entity: c.entity.name, property: r.name, from: n, to: r.name)) }
            case (.link(let r), .expression):
                out.append(step(.changeRelationship, entity: c.entity.name, property: r.name))
            case (.link(let r), .none):
                out.append(step(.addRelationship, entity: c.entity.name, property: r.name))
            }
        }
        for n in oldColumns(of: oldRoot) where !used.contains(n) {
            let owner = oldRoot.descendants.first { $0.ownAttributes.contains { $0.name == n } || $0.ownRelationships.contains { $0.name == n } }
            let isAttribute = owner?.ownAttributes.contains { $0.name == n } ?? true
            if let owner, mapping.successor(of: owner) == nil { continue }  // the entity's removal says it
            out.append(step(isAttribute ? .removeAttribute : .removeRelationship, entity: owner.flatMap { mapping.successor(of: $0)?.name } ?? oldRoot.name,
                            property: n))
        }
        return out
    }

    /// The in-place changes of a table: rows of entities that left, renamed entities,
    /// removed (where the engine drops columns in place), renamed and added columns, the
    /// table's name.
    private func alterInPlace(_ root: Entity, from oldRoot: Entity, renamedTables: inout [(String, String)]) throws -> [Step] {
        var out: [Step] = []
        let table = oldRoot.name
        let (entityNames, entityRenames) = entities(of: root)
        // The check of the old entities goes before rows take new names (made again by ``entityChecks(_:)``).
        if let check = changedEntityCheck(root, from: oldRoot, table: table) {
            out.append(step(.removeEntityCheck, entity: root.name, [.run(check.drop, [])]))
        }
        if entityNames.count < oldRoot.descendants.count {
            out.append(step(.deleteRows, entity: root.name, [.run(dialect.deleteRowsOutside(table), [dialect.nameList(entityNames)])]))
        }
        if !entityRenames.isEmpty {
            out.append(step(.renameEntityRows, entity: root.name,
                            [.run(dialect.renameEntities(table), [dialect.nameMap(entityRenames)])]))
        }
        // Columns no new column takes its values from go first (only where the engine drops
        // columns in place: elsewhere such a table is rebuilt), freeing their names.
        let dropped = droppedColumns(root, from: oldRoot)
        for n in dropped {
            let owner = oldRoot.descendants.first { $0.ownAttributes.contains { $0.name == n } || $0.ownRelationships.contains { $0.name == n } }
            let isAttribute = owner?.ownAttributes.contains { $0.name == n } ?? true
            out.append(step(isAttribute ? .removeAttribute : .removeRelationship, entity: owner.flatMap { mapping.successor(of: $0)?.name } ?? root.name,
                            property: n, [.run(dialect.dropColumn(table, n), [])]))
        }
        // Column renames: straight when no name is in the way, else through a temporary name.
        var renames: [(from: String, to: String, entity: String, isLink: Bool)] = []
        var adds: [(StoreLayout.Column, String, Bool)] = []
        let newTable = newLayout.table(named: root.name)
        for c in columns(of: root) {
            let isLink: Bool = if case .link = c.column { true } else { false }
            switch source(of: c.column, oldRoot: oldRoot) {
            case .column(let n) where n != c.name: renames.append((n, c.name, c.entity.name, isLink))
            case .none:
                if let col = newTable?.columns.first(where: { $0.name == c.name }) { adds.append((col, c.entity.name, isLink)) }
            default: break
            }
        }
        let existing = Set(oldColumns(of: oldRoot).filter { !dropped.contains($0) }.map { $0.lowercased() })
        let clash = renames.contains { r in existing.contains(r.to.lowercased()) }
        for (i, r) in renames.enumerated() {
            var actions: [Action] = []
            if clash {
                actions.append(.run(dialect.renameColumn(table, from: r.from, to: dialect.renamingName(i)), []))
            } else {
                actions.append(.run(dialect.renameColumn(table, from: r.from, to: r.to), []))
            }
            out.append(step(r.isLink ? .renameRelationship : .renameAttribute, entity: r.entity, property: r.to, from: r.from, to: r.to, actions))
        }
        if clash {
            // Every column takes its temporary name before any takes its final one (a swap): the
            // second renames run after the last step's first one. Each step describes its two.
            let first = out.count - renames.count
            for (i, r) in renames.enumerated() {
                let final = Action.run(dialect.renameColumn(table, from: dialect.renamingName(i), to: r.to), [])
                out[out.count - 1].actions.append(final)
                out[first + i].description.sql = [dialect.renameColumn(table, from: r.from, to: dialect.renamingName(i)),
                                                  StorageMigration.sql(final)]
            }
        }
        for (col, entity, isLink) in adds {
            out.append(step(isLink ? .addRelationship : .addAttribute, entity: entity, property: col.name,
                            [.run(dialect.addColumn(table, col), [])]))
        }
        if table != root.name {
            // Through the building name: the new name may still be an old table's until those are dropped.
            let building = dialect.buildingName(root.name)
            out.append(step(.renameTable, entity: root.name, from: table, to: root.name, dialect.renameTable(table, to: building).map { .run($0, []) }))
            renamedTables.append((building, root.name))
        }
        return out
    }

    /// The columns of an old table that no column of the new hierarchy `root`, altered in
    /// place, takes its values from (always none where the engine cannot drop columns in place).
    private func droppedColumns(_ root: Entity, from oldRoot: Entity) -> [String] {
        var used: Set<String> = []
        for c in columns(of: root) { if case .column(let n) = source(of: c.column, oldRoot: oldRoot) { used.insert(n) } }
        return oldColumns(of: oldRoot).filter { !used.contains($0) }
    }

    /// Defaults into required values that may be missing, values cleared outside the entities
    /// that have them now, external storage turned off.
    private func values(_ root: Entity, mode: Mode) -> [Step] {
        var out: [Step] = []
        let oldRoot: Entity? = switch mode { case .create: nil; case .copy(let o), .inPlace(let o): o }
        guard let oldRoot else { return out }
        for c in columns(of: root) {
            let having = c.entity.descendants.map(\.name)
            let src = source(of: c.column, oldRoot: oldRoot)
            // The old entities whose rows held this column's values, by their new names.
            var before: Set<String> = []
            if case .column(let n) = src {
                for o in oldRoot.descendants {
                    let has = o.attributes.contains { $0.name == n && !$0.isTransient } || o.relationships.contains { $0.name == n && $0.isHeldInRow }
                    if has, let e = mapping.successor(of: o) { before.insert(e.name) }
                }
                if !before.isSubset(of: Set(having)) {
                    out.append(step(.clearValues, entity: c.entity.name, property: c.name,
                                    [.run(dialect.clearOutside(root.name, c.name), [dialect.nameList(having)])]))
                }
            }
            guard case .attribute(let a) = c.column else { continue }
            if let oa = mapping.origin(of: a), oa.externalStorage, !a.externalStorage, let rows = dialect.externalRows(root.name, a.name) {
                out.append(step(.inlineExternalStorage, entity: c.entity.name, property: a.name,
                                [.inlineFiles(rows, table: root.name, column: a.name, attribute: a)]))
            }
            // A field of an optional composite is required only where the composite has a value.
            func requirement(_ a: Attribute) -> Int { !a.isOptional ? 2 : a.isRequiredField ? 1 : 0 }
            let wasRequired = mapping.origin(of: a).map { requirement($0) >= requirement(a) } ?? false
            let present = requirement(a) == 1 ? a.composite?.name : nil
            // Only entities with objects from the old version can lack a value (added entities have none).
            let populated = c.entity.descendants.filter { mapping.origin(of: $0) != nil }.map(\.name)
            let grew = !Set(populated).isSubset(of: before)
            guard requirement(a) > 0, !populated.isEmpty, !wasRequired || grew else { continue }
            if let d = a.defaultValue ?? a.fieldDefault, d != .null {
                out.append(step(.fillDefault, entity: c.entity.name, property: a.name,
                                [.run(dialect.fillDefault(root.name, a.name, wherePresent: present), [d, dialect.nameList(having)])]))
            } else {
                let (entity, version) = (c.entity.name, new.version)
                out.append(step(.checkRequired, entity: entity, property: a.name,
                                [.check(dialect.rowWithoutValue(root.name, a.name, wherePresent: present), [dialect.nameList(having)]) { row in
                                    var id = "an object"
                                    if row.count == 2, case .int(let pk) = row[0], case .text(let e) = row[1] { id = "\(e)/\(pk)" }
                                    return StrataError(.migration, "entity '\(entity)': attribute '\(a.name)' is required in version \(version) and "
                                                       + "has no default, but \(id) has no value; give the attribute a default, make it optional, "
                                                       + "or set the values in a custom stage", entity: entity, attribute: a.name)
                                }]))
            }
        }
        return out
    }

    /// Whether every object of an old hierarchy stays in the new hierarchy that takes its root.
    private func isWhole(_ root: Entity, _ modes: [String: Mode]) -> Bool {
        switch modes[root.name] {
        case .create?, nil: return true
        case .copy(let o)?, .inPlace(let o)?:
            return o.descendants.allSatisfy { mapping.successor(of: $0)?.root === root }
        }
    }

    /// Clears links whose target object is gone or is no longer of the destination's kind.
    private func danglingLinks(_ modes: [String: Mode]) -> [Step] {
        var out: [Step] = []
        func changed(_ r: Relationship) -> Bool {
            guard let (or, reversed) = mapping.linkOrigin(of: r) else { return false }
            let oldTarget = reversed ? or.entity! : or.destination!
            let before = Set(oldTarget.descendants.compactMap { mapping.successor(of: $0)?.name })
            // Links stay valid when every old target is still of the destination's kind (a wider
            // destination, or new subentities, invalidate none).
            return !isWhole(r.destination.root, modes) || !before.isSubset(of: Set(r.destination.descendants.map(\.name)))
        }
        for e in new.entities {
            for r in e.ownRelationships where r.isHeldInRow && changed(r) {
                out.append(step(.clearLinks, entity: e.name, property: r.name,
                                [.run(dialect.clearDanglingLinks(e.root.name, r.name, target: r.destination.root.name),
                                      [dialect.nameList(r.destination.descendants.map(\.name))])]))
            }
        }
        for (set, r) in new.pairSets {
            let ownerChanged = r.inverse.map(changed) ?? !isWhole(r.entity.root, modes)
            guard changed(r) || ownerChanged else { continue }
            out.append(step(.clearLinks, entity: r.entity.name, property: r.name,
                            [.run(dialect.deleteDanglingPairs(set, first: r.entity.root.name, second: r.destination.root.name),
                                  [dialect.nameList(r.entity.descendants.map(\.name)),
                                   dialect.nameList(r.destination.descendants.map(\.name))])]))
        }
        return out
    }

    /// A relationship that becomes one-to-one keeps one link per object at its other end:
    /// among the rows linking to one object, the one with the smallest key (run after the
    /// indexes, so the link column's index serves the lookup).
    private func oneToOneLinks() -> [Step] {
        var out: [Step] = []
        for e in new.entities {
            for r in e.ownRelationships where r.isHeldInRow {
                guard let inv = r.inverse, !inv.isToMany, !r.isToMany, let (or, _) = mapping.linkOrigin(of: r) else { continue }
                let wasOneToOne = !or.isToMany && or.inverse.map { !$0.isToMany } == true
                guard !wasOneToOne else { continue }
                out.append(step(.keepOneLink, entity: e.name, property: r.name, [.run(dialect.keepFirstLinks(e.root.name, r.name), [])]))
            }
        }
        return out
    }

    /// Drops the indexes the new layout does not have and creates the ones it adds; an
    /// index kept in place keeps its name, or takes the layout's where the engine renames
    /// kept indexes.
    private func indexes(_ root: Entity, mode: Mode) throws -> [Step] {
        guard let t = newLayout.table(named: root.name) else { return [] }
        var have: [StoreLayout.Index] = []
        if case .inPlace(let oldRoot) = mode {
            // The columns of the old indexes, renamed as their columns were.
            var renamed: [String: String] = [:]
            for c in columns(of: root) {
                if case .column(let n) = source(of: c.column, oldRoot: oldRoot) { renamed[n.lowercased()] = c.name }
            }
            // An index over a column the table lost in place went with the column.
            let dropped = Set(droppedColumns(root, from: oldRoot).map { $0.lowercased() })
            have = try existingIndexes(oldRoot.name).filter { !$0.columns.contains { dropped.contains($0.lowercased()) } }.map { i in
                StoreLayout.Index(name: i.name, columns: i.columns.map { renamed[$0.lowercased()] ?? $0 }, isUnique: i.isUnique)
            }
        }
        var out: [Step] = []
        var renames: [Step] = []
        var kept: Set<String> = []
        let newNames = newIndexNames
        // The layout's indexes under the names the store gives them.
        let stored = t.indexes.map { (index: $0, name: dialect.storedIndexName($0.name)) }
        let wanted = Set(t.indexes.map { $0.columns.joined(separator: ",") + ($0.isUnique ? "!" : "") })
        for i in have {
            let key = i.columns.joined(separator: ",") + (i.isUnique ? "!" : "")
            // A kept index whose name another (wanted) index takes goes too.
            let nameTaken = stored.contains { $0.name == i.name && $0.index.columns != i.columns }
                || (newNames.contains(i.name) && !stored.contains { $0.name == i.name })
            if wanted.contains(key) && !kept.contains(key) && !nameTaken {
                kept.insert(key)
                if let w = stored.first(where: { $0.index.columns == i.columns && $0.index.isUnique == i.isUnique }), w.name != i.name,
                   let sql = dialect.renameIndex(i, to: w.name, on: t.name) {
                    renames.append(step(.renameIndex, entity: root.name, property: i.columns.joined(separator: ","), from: i.name, to: w.name,
                                        [.run(sql, [])]))
                }
                continue
            }
            out.append(step(i.isUnique ? .removeUniqueConstraint : .removeIndex, entity: root.name, property: i.columns.joined(separator: ","),
                            [.run(dialect.dropIndex(i, on: t.name), [])]))
        }
        out += renames
        for i in t.indexes {
            let key = i.columns.joined(separator: ",") + (i.isUnique ? "!" : "")
            guard !kept.contains(key) else { continue }
            let sql = dialect.createIndex(i, on: t.name)
            if i.isUnique {
                // Entities whose constraint it is, for the message: the first that declares these columns.
                let owner = root.descendants.first { e in
                    e.ownAttributes.contains { $0.isUnique && [$0.name] == i.columns } || e.uniqueConstraints.contains { $0 == i.columns }
                }?.name ?? root.name
                out.append(step(.addUniqueConstraint, entity: owner, property: i.columns.joined(separator: ","),
                                [.uniqueIndex(sql, table: t.name, columns: i.columns, entity: owner, names: i.columns)]))
            } else {
                out.append(step(.addIndex, entity: root.name, property: i.columns.joined(separator: ","), [.run(sql, [])]))
            }
        }
        return out
    }

    /// The names the store gives every index of the new layout.
    private var newIndexNames: Set<String> { Set(newLayout.tables.flatMap { $0.indexes.map { dialect.storedIndexName($0.name) } }) }

    /// A set of pairs built anew gets its index; a kept one keeps its own (under its old name,
    /// or the layout's where the engine renames kept indexes, unless an index of the new
    /// layout needs that name: then it is made again under its own).
    private func pairIndexes(_ set: String, kept: Set<String>, renames: [(from: String, to: String)]) throws -> [Step] {
        guard let t = newLayout.table(named: set) else { return [] }
        var out: [Step] = []
        // `kept` holds old names: the set of that name is this one unless it was renamed away.
        if kept.contains(set) && !renames.contains(where: { $0.from == set }) { return [] }
        if let from = renames.first(where: { $0.to == set && kept.contains($0.from) })?.from {
            let names = Set(t.indexes.map { dialect.storedIndexName($0.name) })
            let existing = try existingIndexes(from)
            let stale = existing.filter { newIndexNames.contains($0.name) && !names.contains($0.name) }
            guard !stale.isEmpty else { return renamedPairIndexes(existing, of: t) }
            out = stale.map { step(.removeIndex, entity: set, property: $0.columns.joined(separator: ","), [.run(dialect.dropIndex($0, on: set), [])]) }
        }
        return out + t.indexes.map { step(.addIndex, entity: set, property: $0.columns.joined(separator: ","), [.run(dialect.createIndex($0, on: set), [])]) }
    }

    /// Where the engine renames indexes: the indexes of a kept set of pairs, renamed with it, take the layout's names.
    private func renamedPairIndexes(_ existing: [StoreLayout.Index], of t: StoreLayout.Table) -> [Step] {
        var out: [Step] = []
        for i in existing {
            guard let w = t.indexes.first(where: { $0.columns == i.columns && $0.isUnique == i.isUnique }) else { continue }
            let name = dialect.storedIndexName(w.name)
            guard name != i.name, let sql = dialect.renameIndex(i, to: name, on: t.name) else { continue }
            out.append(step(.renameIndex, entity: t.name, property: i.columns.joined(separator: ","), from: i.name, to: name, [.run(sql, [])]))
        }
        return out
    }

    /// Key sequences: a new table, one built anew or renamed continues past its rows and its
    /// old table's sequence; old tables that are gone lose theirs. A table altered in place
    /// under its own name keeps its sequence as it is.
    private func sequences(_ modes: [String: Mode]) -> [Step] {
        var out: [Step] = []
        for root in new.rootEntities {
            let from: String
            switch modes[root.name] {
            case .inPlace(let o)? where o.name == root.name: continue
            case .copy(let o)?, .inPlace(let o)?: from = o.name
            default: from = root.name
            }
            out.append(step(.continueSequence, entity: root.name, dialect.continueSequence(root.name, from: from).map { .run($0.sql, $0.args) }))
        }
        let newNames = Set(new.rootEntities.map(\.name))
        for o in old.rootEntities where !newNames.contains(o.name) {
            out.append(step(.dropSequence, entity: o.name, dialect.dropSequence(o.name).map { .run($0.sql, $0.args) }))
        }
        return out
    }
}
