/// The select list of an ``ObjectPlan``'s rows: the key, the entity name, then one
/// expression per selection, over the table aliased `alias`.
func selectList(_ plan: ObjectPlan, alias: String, dialect: any QueryDialect = SQLiteDialect()) -> String {
    var select = ["\(alias)._pk", "\(alias)._entity"]
    var subqueries = 0
    for s in plan.selections {
        switch s {
        case .column(let name):
            select.append("\(alias).\(dialect.quote(name))")
        case .linkedEntity(let r):
            // A scalar subquery, not a join: SQLite joins at most 64 tables, and an entity may hold more links.
            let ra = "r\(alias)\(subqueries)"
            subqueries += 1
            select.append(SQLiteDialect.entity(of: dialect.table(r.destination), alias: ra, key: "\(alias).\(dialect.quote(dialect.column(.link(r))))"))
        case .identifiers(let r):
            let ra = "r\(alias)\(subqueries)"
            subqueries += 1
            select.append(identifiersSQL(r, owner: "\(alias)._pk", alias: ra, dialect: dialect))
        }
    }
    return select.joined(separator: ", ")
}

/// The rows related to an owner through `rel`, aliased `alias`: `FROM …`, the owner expression, and
/// the related key as the index on the owner gives it (the pair's target: no sort step).
func relatedRows(_ rel: Relationship, alias d: String, dialect: any QueryDialect) -> (from: String, owner: String, key: String) {
    let dest = "\(dialect.quote(dialect.table(rel.destination))) \(d)"
    switch rel.placement {
    case .inRow:
        let o = "o\(d)"
        return ("\(dialect.quote(dialect.table(rel.entity))) \(o) JOIN \(dest) ON \(d)._pk = \(o).\(dialect.quote(dialect.column(.link(rel))))",
                "\(o)._pk", "\(d)._pk")
    case .inInverseRows:
        return (dest, "\(d).\(dialect.quote(dialect.column(.link(rel.inverse ?? rel))))", "\(d)._pk")
    case .inPairs:
        let (table, ownerCol, targetCol) = dialect.pairTable(rel)
        let j = "j\(d)"
        let target = "\(j).\(dialect.quote(targetCol))"
        return ("\(dialect.quote(table)) \(j) JOIN \(dest) ON \(d)._pk = \(target)", "\(j).\(dialect.quote(ownerCol))", target)
    }
}

/// A correlated scalar subquery: the identifiers related to `owner` through `rel`, ordered by key, as
/// one text (``ObjectPlan/Selection/identifiers(_:)``): keys joined by commas, or `Entity/key`
/// items when the destination has subentities (to-many: after their number and a colon); a
/// to-one's first; NULL when there is none.
func identifiersSQL(_ rel: Relationship, owner: String, alias d: String, dialect: any QueryDialect) -> String {
    let src = relatedRows(rel, alias: d, dialect: dialect)
    let named = rel.destination.root.isInHierarchy
    let item = named ? "\(d)._entity || '/' || \(d)._pk" : "\(d)._pk"
    let rows = SQLiteDialect.select("\(item) AS v", from: src.from, where: "\(src.owner) = \(owner)", orderBy: src.key,
                                    paging: rel.isToMany ? "" : dialect.limit("1", offset: nil))
    // group_concat keeps the order of its ordered subquery (SQLite does not flatten it into an aggregate).
    // Items that name their entity are preceded by their number (`2:A/3,B/4`): an entity name read from
    // the file may hold a comma, and the writer must not take it for a second item.
    guard rel.isToMany else { return "(\(rows))" }
    return named ? "(SELECT count(*) || ':' || group_concat(v, ',') FROM (\(rows)))" : "(SELECT group_concat(v, ',') FROM (\(rows)))"
}

/// A descriptor compiled to SQL: `FROM … WHERE … ORDER BY … LIMIT …` with its arguments.
struct CompiledFetch {
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
    /// The arguments that take a prepared fetch's variables (`arguments(_:)`).
    let slotArguments: [PredicateCompiler.SlotArgument]
    let dialect: any QueryDialect

    init(_ d: FetchDescriptor, dialect: any QueryDialect = SQLiteDialect()) {
        self.dialect = dialect
        root = d.entity.root
        var c = PredicateCompiler(root: d.entity, dialect: dialect)
        var conditions: [String] = []
        let entities = d.entities
        if root.isInHierarchy && entities.count != root.descendants.count {
            conditions.append("t._entity IN (\(entities.map { c.bind(.text($0.name)) }.joined(separator: ", ")))")
        }
        // Every entity of the hierarchy: a row naming none is damage, for counts as for objects.
        let check = root.isInHierarchy && entities.count == root.descendants.count
            ? dialect.unknownEntity(table: dialect.table(root), root.descendants.map(\.name), root: root.name) : nil
        // A predicate folded to true is no condition at all (docs/predicates.md §3).
        var predicate: String?
        if let p = d.predicate, p.constantValue != true { predicate = c.predicate(p) }
        var order: [String] = []
        for key in d.sortBy {
            let col = c.column(key.ref)
            var sorted = col
            if case .attribute(let a) = key.ref.end {
                if a.type == .decimal { sorted = dialect.collate(col, .decimal) }
                else if (a.type == .string || a.type == .url) && key.comparator == .localizedStandard { sorted = dialect.collate(col, .standard) }
            }
            order.append("\(sorted) \(key.reverse ? "DESC" : "ASC")")
        }
        order.append("t._pk ASC")
        let limit = d.fetchLimit.map { c.bind(.int(Int64($0))) }
        let offset = d.fetchOffset > 0 ? c.bind(.int(Int64(d.fetchOffset))) : nil
        joins = c.rootJoins.joined(separator: " ")
        // The storage classes of the columns the predicate and the sort read, checked before the predicate.
        if let guards = c.rootGuards { conditions.append(guards) }
        if let predicate { conditions.append(predicate) }
        // Objects without paging: the check as a term of no table, so that a sort keeps SQLite's
        // sorter (a LIMIT, even one that limits nothing, sorts through a bounded b-tree).
        countCondition = conditions.isEmpty ? nil : conditions.joined(separator: " AND ")
        let checkInCondition = check != nil && limit == nil && offset == nil
        if checkInCondition, let check { conditions.insert(dialect.checkedOnce(check), at: 0) }
        condition = conditions.isEmpty ? nil : conditions.joined(separator: " AND ")
        self.order = order.joined(separator: ", ")
        paging = dialect.limit(limit, offset: offset, check: checkInCondition ? nil : check)
        checkPaging = dialect.limit(nil, offset: nil, check: check)
        args = c.args
        slotArguments = c.slotArguments
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
    var source: String { "\(dialect.quote(dialect.table(root))) t" + (joins.isEmpty ? "" : " " + joins) }

    /// `list` of the matching rows, in order.
    func select(_ list: String) -> String {
        SQLiteDialect.select(list, from: source, where: condition, orderBy: order, paging: paging)
    }

    /// The primary keys of the matching rows, in order (usable as a subquery).
    var keysSQL: String { select("t._pk") }

    func objectsSQL(_ plan: ObjectPlan) -> String { select(selectList(plan, alias: "t", dialect: dialect)) }
}

