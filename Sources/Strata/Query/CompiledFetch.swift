/// The fetch compiler: a ``FetchDescriptor`` becomes what a store runs — the SQL of its
/// objects (with the ``ObjectPlan`` their rows are written by and one query per prefetched
/// relationship), of its count and of its identifiers, with the arguments to bind. Query
/// compiles (through the store's ``QueryDialect``), the store runs, the object writer writes.
/// The compilers write ISO SQL's shape (SELECT, JOIN, EXISTS, CASE); the dialect spells
/// everything an engine spells its own way and the layout's names.

/// The select list of an ``ObjectPlan``'s rows: the key, the entity name, then one
/// expression per selection, over the table aliased `alias`; and the joins the list reads
/// (with a leading space, or ""), to follow that table in the FROM clause.
func selectList(_ plan: ObjectPlan, alias: String, dialect: any QueryDialect) -> (list: String, joins: String) {
    var select = ["\(alias).\(dialect.keyColumn)", "\(alias).\(dialect.entityColumn)"]
    var joins = ""
    var subqueries = 0
    for s in plan.selections {
        switch s {
        case .column(let name):
            select.append("\(alias).\(dialect.quote(name))")
        case .linkedEntity(let r):
            let ra = "r\(alias)\(subqueries)"
            subqueries += 1
            let key = "\(alias).\(dialect.quote(dialect.column(.link(r))))"
            if dialect.joinsLinkedEntities {
                joins += " LEFT JOIN \(dialect.quote(dialect.table(r.destination))) \(ra) ON \(ra).\(dialect.keyColumn) = \(key)"
                select.append("\(ra).\(dialect.entityColumn)")
            } else {
                select.append(dialect.entity(of: dialect.table(r.destination), alias: ra, key: key))
            }
        case .identifiers(let r):
            let ra = "r\(alias)\(subqueries)"
            subqueries += 1
            select.append(identifiersSQL(r, owner: "\(alias).\(dialect.keyColumn)", alias: ra, dialect: dialect))
        }
    }
    return (select.joined(separator: ", "), joins)
}

/// A correlated scalar subquery: the identifiers related to `owner` through `rel`, ordered by key, as
/// one text (``ObjectPlan/Selection/identifiers(_:)``): keys joined by commas, or `Entity/key`
/// items when the destination has subentities (to-many: after their number and a colon); a
/// to-one's first; NULL when there is none.
func identifiersSQL(_ rel: Relationship, owner: String, alias d: String, dialect: any QueryDialect) -> String {
    let src = ObjectQueries.relatedRows(rel, alias: d, dialect: dialect)
    let named = rel.destination.root.isInHierarchy
    let item = named ? dialect.concatenate(["\(d).\(dialect.entityColumn)", "'/'", "\(d).\(dialect.keyColumn)"]) : "\(d).\(dialect.keyColumn)"
    let rows = dialect.select("\(item) AS v", from: src.from, where: "\(src.owner) = \(owner)", orderBy: src.key,
                                    paging: rel.isToMany ? "" : dialect.limit("1", offset: nil))
    // The joined text keeps the order of its ordered subquery (``QueryDialect/joinedText(_:)``).
    // Items that name their entity are preceded by their number (`2:A/3,B/4`): an entity name read from
    // the file may hold a comma, and the writer must not take it for a second item.
    guard rel.isToMany else { return "(\(rows))" }
    return named ? "(SELECT \(dialect.concatenate(["count(*)", "':'", dialect.joinedText("v")])) FROM (\(rows)) \(d)v)"
                 : dialect.joinedKeys(rows, alias: "\(d)v")
}

/// A descriptor compiled to SQL for one store's dialect: `FROM … WHERE … ORDER BY … LIMIT …`
/// with its arguments, and the statements a store runs for its objects, count and identifiers.
/// A context compiles a request once; a prepared fetch keeps it and binds new values each run.
public struct CompiledFetch {
    /// What the object plan and the paging are made of.
    let descriptor: FetchDescriptor
    let root: Entity
    /// Joins the predicate and sort keys need (alias `t` is the fetched row).
    let joins: String
    /// The conditions, the order and the paging clause (nil / "" when there are none).
    let condition: String?
    let order: String
    let paging: String
    /// The conditions of a count of every matching row (`checkPaging` carries the entity check).
    let countCondition: String?
    /// The paging clause of a count of every matching row: only the entity check of a whole
    /// hierarchy (``QueryDialect/limit(_:offset:check:)``), or "".
    let checkPaging: String
    let args: [SQLValue]
    /// `sectionBy`: the section key's value, selected after the plan's selections
    /// (``ObjectPlan/section``); nil without sections.
    let sectionColumn: String?
    /// Whether the objects come in sections (`[{"section", "objects"}]`), not as one array.
    var isSectioned: Bool { sectionColumn != nil }
    /// The arguments that take a prepared fetch's variables (`arguments(_:)`).
    let slotArguments: [PredicateCompiler.SlotArgument]
    let dialect: any QueryDialect
    /// An aggregation's query (its dictionaries), nil for a fetch of objects.
    let result: ResultQuery?
    /// Whether the order binds a value (a relevance's search text): a query over the matching
    /// rows that leaves the order out would leave that parameter unused.
    let orderBinds: Bool
    /// Whether the objects are every row of the table, bound with nothing: no entity of the
    /// hierarchy left out, no predicate, no paging, no value bound by the order. (The entity
    /// check and the storage-class guards fail the read rather than leave rows out.)
    let readsEveryRow: Bool

    init(_ d: FetchDescriptor, dialect: any QueryDialect) {
        descriptor = d
        self.dialect = dialect
        root = d.entity.root
        var c = PredicateCompiler(root: d.entity, dialect: dialect)
        var conditions: [String] = []
        let entities = d.entities
        if root.isInHierarchy && entities.count != root.descendants.count {
            conditions.append("t.\(dialect.entityColumn) IN (\(entities.map { c.bind(.text($0.name)) }.joined(separator: ", ")))")
        }
        // Every entity of the hierarchy: a row naming none is damage, for counts as for objects.
        let check = root.isInHierarchy && entities.count == root.descendants.count
            ? dialect.unknownEntity(table: dialect.table(root), root.descendants.map(\.name), root: root.name) : nil
        // A predicate folded to true is no condition at all (docs/predicates.md §3).
        var predicate: String?
        if let p = d.predicate?.lowered, p.constantValue != true { predicate = c.predicate(p) }
        var order: [String] = []
        func sortTerm(_ key: FetchDescriptor.SortKey, _ col: String) -> String {
            if let query = key.relevanceOf {
                // Most relevant first unless reversed.
                return dialect.sortTerm(dialect.relevance(col, query: c.expression(query)), descending: !key.reverse)
            }
            var sorted = col
            if case .attribute(let a) = key.ref.end {
                if a.type == .decimal { sorted = dialect.collate(col, .decimal) }
                else if (a.type == .string || a.type == .url) && key.comparator == .localizedStandard { sorted = dialect.collate(col, .standard) }
            }
            return dialect.sortTerm(sorted, descending: key.reverse)
        }
        let boundBeforeOrder = c.args.count
        // Sections first, contiguous: the key collated, then as stored, so that values the
        // collation ties ("Paris", "paris") do not interleave.
        if let key = d.sectionBy {
            let col = c.column(key.ref)
            order.append(sortTerm(key, col))
            let raw = dialect.sortTerm(col, descending: key.reverse)
            if order.last != raw { order.append(raw) }
            sectionColumn = col
        } else {
            sectionColumn = nil
        }
        for key in d.sortBy { order.append(sortTerm(key, c.column(key.ref))) }
        // Keys are never nil: plain ascending, the order of the table's primary key index.
        order.append("t.\(dialect.keyColumn) ASC")
        orderBinds = c.args.count > boundBeforeOrder
        let restricted = !conditions.isEmpty || predicate != nil
        // An aggregation reads its columns here (their joins and guards are the fetch's), and pages its results.
        let aggregateParts = d.aggregation?.parts(&c)
        let pages = d.aggregation == nil
        // The descriptor's own integers: bound, or written into the statement (``QueryDialect/writesPaging``).
        let limit = pages ? d.fetchLimit.map { dialect.writesPaging ? String($0) : c.bind(.int(Int64($0))) } : nil
        let offset = pages && d.fetchOffset > 0 ? (dialect.writesPaging ? String(d.fetchOffset) : c.bind(.int(Int64(d.fetchOffset)))) : nil
        joins = c.rootJoins.joined(separator: " ")
        // The storage classes of the columns the predicate and the sort read, checked before the predicate.
        if let guards = c.rootGuards { conditions.append(guards) }
        if let predicate { conditions.append(predicate) }
        // Objects without paging: the check as a term of no table, so that a sort keeps SQLite's
        // sorter (a LIMIT, even one that limits nothing, sorts through a bounded b-tree).
        var countConditions = conditions
        if !dialect.checksInPaging, let check { countConditions.insert(dialect.checkedOnce(check), at: 0) }
        countCondition = countConditions.isEmpty ? nil : countConditions.joined(separator: " AND ")
        let checkInCondition = check != nil && (!dialect.checksInPaging || (limit == nil && offset == nil))
        if checkInCondition, let check { conditions.insert(dialect.checkedOnce(check), at: 0) }
        condition = conditions.isEmpty ? nil : conditions.joined(separator: " AND ")
        self.order = order.joined(separator: ", ")
        paging = dialect.limit(limit, offset: offset, check: checkInCondition ? nil : check)
        checkPaging = dialect.checksInPaging ? dialect.limit(nil, offset: nil, check: check) : ""
        args = c.args
        slotArguments = c.slotArguments
        readsEveryRow = !restricted && !orderBinds && limit == nil && offset == nil && d.aggregation == nil
        if let a = d.aggregation, let aggregateParts {
            result = a.resultQuery(aggregateParts, entity: d.entity, source: CompiledFetch.source(root, joins, dialect), condition: condition, args: c.args,
                                   limit: d.fetchLimit, offset: d.fetchOffset, dialect: dialect)
        } else {
            result = nil
        }
    }

    /// The arguments with the values of the variables (by slot), text folded as the predicate's options say.
    func arguments(_ values: [SQLValue]) -> [SQLValue] {
        var args = self.args
        for s in slotArguments {
            let v = values[s.slot]
            if !s.options.isEmpty, case .text(let t) = v { args[s.index] = .text(Evaluation.fold(t, s.options)) } else { args[s.index] = v }
        }
        return args
    }

    /// The fetched table aliased `t`, with the joins the predicate and sort keys need.
    var source: String { CompiledFetch.source(root, joins, dialect) }

    static func source(_ root: Entity, _ joins: String, _ dialect: any QueryDialect) -> String {
        "\(dialect.quote(dialect.table(root))) t" + (joins.isEmpty ? "" : " " + joins)
    }

    /// `list` of the matching rows, in order; `joins` (a ``selectList(_:alias:dialect:)``'s) follow the others.
    func select(_ list: String, joins extra: String = "") -> String {
        dialect.select(list, from: source + extra, where: condition, orderBy: order, paging: paging)
    }

    /// The primary keys of the matching rows, in order (usable as a subquery).
    var keysSQL: String { select("t.\(dialect.keyColumn)") }

    /// The primary keys of the matching rows in no particular order, for `IN (…)`: ordered only
    /// when the paging needs the order, or when the order binds a value (every parameter of the
    /// fetch's arguments is then used, as in the objects query).
    var ownerKeysSQL: String {
        paging.isEmpty && !orderBinds
            ? dialect.select("t.\(dialect.keyColumn)", from: source, where: condition, orderBy: nil, paging: "") : keysSQL
    }

    func objectsSQL(_ plan: ObjectPlan) -> String {
        let (list, joins) = selectList(plan, alias: "t", dialect: dialect)
        return select(list + (sectionColumn.map { ", " + $0 } ?? ""), joins: joins)
    }
}


extension CompiledFetch {
    /// The number of matching rows: `count(*)` over the table when nothing pages (its entity
    /// check in the paging clause), else over the keys the paging leaves.
    var countSQL: String {
        descriptor.fetchLimit == nil && descriptor.fetchOffset == 0
            ? dialect.count(from: source, where: countCondition) + checkPaging : dialect.count(of: keysSQL)
    }

    /// What `count` runs: the matching rows, or an aggregation's results.
    var counted: (sql: String, args: [SQLValue]) { result.map { (dialect.count(of: $0.sql), $0.args) } ?? (countSQL, args) }

    /// What `explain` shows: the objects query, or an aggregation's.
    var explained: (sql: String, args: [SQLValue]) { result.map { ($0.sql, $0.args) } ?? (objectsSQL, args) }

    /// The key and entity name of each matching row, in order.
    var identifiersSQL: String { select("t.\(dialect.keyColumn), t.\(dialect.entityColumn)") }

    /// The objects' queries (the store prepares and runs them with ``args``).
    var objectQueries: ObjectQueries { ObjectQueries(self) }

    /// The SQL of the objects query, as `explain` shows it.
    var objectsSQL: String { objectsSQL(ObjectPlan(descriptor)) }
}

extension ObjectPlan {
    /// The plan of a fetch's objects.
    init(_ d: FetchDescriptor) {
        self.init(entities: d.entities, properties: d.propertiesToFetch, prefetched: d.prefetch,
                  relationships: d.includeRelationshipIdentifiers)
        if let key = d.sectionBy, case .attribute(let a) = key.ref.end { addSection(a, keyPath: key.ref.text) }
    }
}

/// The queries of a fetch's objects: the objects query and, per prefetched relationship,
/// the query of one owner's related rows (the dialect's parameter 1), or of a batch of owners'
/// (``QueryDialect/ownerBatch(_:parameter:)``: the owner's key selected last, the rows ordered
/// by owner), with the plans their rows are written by; on a dialect that reads them so
/// (``QueryDialect/readsPrefetchedOnce``), also the query of all owners' rows of each, for a
/// fetch read at once. Made per fetch, or once by a prepared fetch.
public struct ObjectQueries {
    let plan: ObjectPlan
    let objectsSQL: String
    let prefetchedSQL: [String]
    /// Per prefetched relationship, the query of the related rows of every owner the fetch
    /// reads, in one statement: the owners' keys are a subquery (the objects query's rows; at
    /// depth, the rows of the parent relationship's query), or, when the objects are every row
    /// of their table (``CompiledFetch/readsEveryRow``), any owner at the first depth (rows of
    /// owners that are not read are never asked for); the owner's key selected last
    /// (``prefetchedOwnerColumns``), the rows ordered by owner. Empty on a dialect that reads
    /// batches or single owners only.
    let prefetchedOnceSQL: [String]
    /// Whether the statements of ``prefetchedOnceSQL`` take the fetch's arguments (they read its
    /// conditions), or none.
    let prefetchedOnceBinds: Bool
    let prefetchedPlans: [ObjectPlan]
    /// Per prefetched relationship, the column of the owner's key when its query reads a batch
    /// of owners; empty when each reads one owner.
    let prefetchedOwnerColumns: [Int32]
    /// `objectsSQL` and `prefetchedSQL` hashed once, for a statement cache.
    let objectsKey: HashedSQL
    let prefetchedKeys: [HashedSQL]
    /// The plans copied once for every writer of these queries (``ObjectWriter/init(_:)``).
    let writerPlans: WriterPlans

    init(_ q: CompiledFetch) {
        let d = q.descriptor, dialect = q.dialect
        plan = ObjectPlan(d)
        var sql: [String] = []
        var plans: [ObjectPlan] = []
        var ownerColumns: [Int32] = []
        // Every prefetched relationship at every depth, breadth first: a node's slot is its
        // index, and each node's children take consecutive slots (its plan's first one).
        var nodes = d.prefetchTree
        var firstChild: [Int] = []
        var parent = [Int](repeating: -1, count: nodes.count)
        var i = 0
        while i < nodes.count {
            firstChild.append(nodes.count)
            parent += Array(repeating: i, count: nodes[i].children.count)
            nodes += nodes[i].children
            i += 1
        }
        let once = dialect.readsPrefetchedOnce && dialect.ownerBatch("o", parameter: dialect.parameter(1)) != nil
        var onceSQL: [String] = []
        /// The condition on `owner` that selects the rows of `slot`'s owners (or more, never fewer);
        /// `depth` numbers the aliases of the subqueries of nested ones.
        func owners(_ slot: Int, _ owner: String, depth: Int) -> String {
            let p = parent[slot]
            guard p >= 0 else { return q.readsEveryRow ? "\(owner) IS NOT NULL" : "\(owner) IN (\(q.ownerKeysSQL))" }
            let src = ObjectQueries.relatedRows(nodes[p].relationship, alias: "k\(depth)", dialect: dialect)
            return "\(owner) IN (\(dialect.select(src.key, from: src.from, where: owners(p, src.owner, depth: depth + 1), orderBy: nil, paging: "")))"
        }
        for (slot, node) in nodes.enumerated() {
            let rel = node.relationship
            // Rows that hold the link to their owner name it by the owner's row, not by a join.
            let ownerLink = if case .inInverseRows = rel.placement { rel.inverse } else { nil as Relationship? }
            let relPlan = ObjectPlan(entities: rel.destination.descendants, prefetched: node.children.map(\.relationship),
                                     relationships: d.includeRelationshipIdentifiers, prefetchSlot: firstChild[slot], ownerLink: ownerLink)
            let src = ObjectQueries.relatedRows(rel, alias: "d", dialect: dialect)
            let (select, joins) = selectList(relPlan, alias: "d", dialect: dialect)
            if let batch = dialect.ownerBatch(src.owner, parameter: dialect.parameter(1)) {
                // The key, the entity name and one column per selection, then the owner's key, unless a
                // selection reads it already (the link back to the owner, held in the rows).
                let selected = relPlan.selections.firstIndex {
                    if case .column(let name) = $0 { return "d.\(dialect.quote(name))" == src.owner } else { return false }
                }
                ownerColumns.append(Int32(2 + (selected ?? relPlan.selections.count)))
                let list = selected == nil ? "\(select), \(src.owner)" : select
                sql.append(dialect.select(list, from: src.from + joins, where: batch, orderBy: "\(src.owner), \(src.key)", paging: ""))
                if once {
                    onceSQL.append(dialect.select(list, from: src.from + joins, where: owners(slot, src.owner, depth: 1),
                                                  orderBy: "\(src.owner), \(src.key)", paging: ""))
                }
            } else {
                sql.append(dialect.select(select, from: src.from + joins, where: "\(src.owner) = \(dialect.parameter(1))", orderBy: src.key, paging: ""))
            }
            plans.append(relPlan)
        }
        prefetchedSQL = sql
        prefetchedOnceSQL = onceSQL
        prefetchedOnceBinds = !q.readsEveryRow
        prefetchedPlans = plans
        prefetchedOwnerColumns = ownerColumns
        objectsSQL = q.objectsSQL(plan)
        objectsKey = HashedSQL(objectsSQL)
        prefetchedKeys = sql.map(HashedSQL.init)
        writerPlans = WriterPlans(plan: plan, prefetched: plans)
    }

    /// One object of the concrete entity `concrete`, by key (the dialect's parameter 1).
    init(object concrete: Entity, dialect: any QueryDialect) {
        plan = ObjectPlan(entities: [concrete])
        let (list, joins) = selectList(plan, alias: "t", dialect: dialect)
        objectsSQL = dialect.select(list, from: "\(dialect.quote(dialect.table(concrete))) t" + joins,
                                    where: "t.\(dialect.keyColumn) = \(dialect.parameter(1))", orderBy: nil, paging: "")
        prefetchedSQL = []
        prefetchedOnceSQL = []
        prefetchedOnceBinds = false
        prefetchedPlans = []
        prefetchedOwnerColumns = []
        objectsKey = HashedSQL(objectsSQL)
        prefetchedKeys = []
        writerPlans = WriterPlans(plan: plan)
    }
}

extension ObjectQueries {
    // Also what a store's writer reads a relationship's objects with (`StoreWriter.related`).
    /// The rows related to an owner through `rel`, aliased `alias`: `FROM …`, the owner expression, and
    /// the related key as the index on the owner gives it (the pair's target: no sort step).
    static func relatedRows(_ rel: Relationship, alias d: String, dialect: any QueryDialect) -> (from: String, owner: String, key: String) {
        let dest = "\(dialect.quote(dialect.table(rel.destination))) \(d)"
        let pk = dialect.keyColumn
        switch rel.placement {
        case .inRow:
            let o = "o\(d)"
            return ("\(dialect.quote(dialect.table(rel.entity))) \(o) JOIN \(dest) ON \(d).\(pk) = \(o).\(dialect.quote(dialect.column(.link(rel))))",
                    "\(o).\(pk)", "\(d).\(pk)")
        case .inInverseRows:
            return (dest, "\(d).\(dialect.quote(dialect.column(.link(rel.inverse ?? rel))))", "\(d).\(pk)")
        case .inPairs:
            let (table, ownerCol, targetCol) = dialect.pairTable(rel)
            let j = "j\(d)"
            let target = "\(j).\(dialect.quote(targetCol))"
            return ("\(dialect.quote(table)) \(j) JOIN \(dest) ON \(d).\(pk) = \(target)", "\(j).\(dialect.quote(ownerCol))", target)
        }
    }
}

/// SQL text with its hash computed once: what a store's statement cache looks a query up by,
/// so that a query compiled once (a prepared fetch, a cached descriptor's plan) is not hashed
/// again at every run. Equal when the texts are.
typealias HashedSQL = HashedOnce<String>

extension HashedOnce where Wrapped == String {
    /// The SQL text.
    var text: String { value }
}
