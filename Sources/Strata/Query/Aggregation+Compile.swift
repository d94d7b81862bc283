/// The aggregation compiler: an ``Aggregation`` becomes one ``ResultQuery`` of three levels,
///
///     SELECT g.* FROM (SELECT <final values> FROM (SELECT <group keys>, <aggregate parts>
///         FROM <the fetch's table and joins> WHERE <the fetch's conditions> GROUP BY <group keys>) a) g
///     WHERE <having> ORDER BY <results> LIMIT …
///
/// The innermost groups the matching rows (the predicate, the entity check and the guards
/// of every column read, as for objects); the middle one computes each result from its
/// parts (a decimal mean from its sum and count); the outer one filters, sorts and pages
/// the results by name, so `having` compiles as a predicate over an entity of the results.
///
/// An aggregate through a to-many relationship reads each object's related values in a
/// correlated subquery (its count, exact sum, min or max), then aggregates those per group:
/// no join multiplies the group's rows, so every aggregate of one group sees each object once.
extension Aggregation {
    /// The innermost level's select list and GROUP BY, compiled into `c` (its joins and guards
    /// join the fetch's), and each result's final value over the parts' aliases.
    struct GroupedSelect {
        var select: [String] = []
        var groupBy: [String] = []
        var finals: [String] = []
    }

    func parts(_ c: inout PredicateCompiler) -> GroupedSelect {
        let dialect = c.dialect
        var p = GroupedSelect()
        func part(_ sql: String) -> String {
            let alias = "a\(p.select.count)"
            p.select.append("\(sql) AS \(alias)")
            return "a.\(alias)"
        }
        for column in columns {
            if let ref = column.group {
                let x = c.column(ref)
                p.groupBy.append(x)
                p.finals.append(part(x))
                continue
            }
            guard let f = column.function else { continue }
            p.finals.append(Aggregation.final(f, column, &c, part: part, dialect: dialect))
        }
        return p
    }

    /// The SQL of one aggregate: its parts (added with `part`) and its value over them.
    private static func final(_ f: Function, _ column: Column, _ c: inout PredicateCompiler,
                              part: (String) -> String, dialect: any QueryDialect) -> String {
        switch column.value {
        case .objects:
            return part("count(*)")
        case .keyPath(let ref):
            guard case .attribute(let a) = ref.end else { return "NULL" }
            let x = c.column(ref)
            return aggregate(f, of: x, type: a.type, count: "count(\(x))", part: part, dialect: dialect)
        case .related(let many, let valueRef):
            guard let valueRef, case .attribute(let a) = valueRef.end else {
                return part(dialect.exactAggregate(.sum, integer: true, c.expression(.count(many))))
            }
            let type = ValueType.attribute(a.type)
            let value = TypedExpression.keyPath(valueRef, type)
            let present = TypedPredicate.compare(.notEqual, value, .constant(.null, .null), domain: type, options: [])
            let counted = { (c: inout PredicateCompiler) in
                dialect.exactAggregate(.sum, integer: true, c.expression(.countWhere(many, present)))
            }
            switch f {
            case .count:
                return part(counted(&c))
            case .sum, .avg:
                // Each object's exact sum of its related values, then the group's.
                let perObject = c.expression(.aggregate(.sum, many, filter: nil, value: value, type))
                let total = aggregate(.sum, of: perObject, type: a.type, count: "", part: part, dialect: dialect)
                guard f == .avg else { return total }
                let n = part(counted(&c))
                return a.type == .decimal ? dialect.decimalMean(sum: total, count: n) : dialect.mean(sum: total, count: n, integer: a.type == .int)
            case .min, .max:
                let perObject = c.expression(.aggregate(f == .min ? .min : .max, many, filter: nil, value: value, type))
                return aggregate(f, of: perObject, type: a.type, count: "", part: part, dialect: dialect)
            }
        }
    }

    /// `f` over the values `x` of one group, of type `type`; `count` counts them (for a mean).
    private static func aggregate(_ f: Function, of x: String, type: AttributeType, count: String,
                                  part: (String) -> String, dialect: any QueryDialect) -> String {
        let decimal = type == .decimal
        switch f {
        case .count: return part(count)
        case .sum: return part(decimal ? dialect.decimalSum(x) : dialect.exactAggregate(.sum, integer: type == .int, x))
        case .avg:
            if decimal { return dialect.decimalMean(sum: part(dialect.decimalSum(x)), count: part(count)) }
            return part(dialect.exactAggregate(.avg, integer: type == .int, x))
        case .min, .max:
            return part(decimal ? dialect.decimalExtreme(f == .min ? .min : .max, x) : "\(f.rawValue)(\(x))")
        }
    }

    /// The whole query, given the fetch's FROM and WHERE and the arguments bound so far.
    func resultQuery(_ p: GroupedSelect, entity: Entity, source: String, condition: String?, args: [SQLValue], limit: Int?, offset: Int,
                     dialect: any QueryDialect) -> ResultQuery {
        var inner = dialect.select(p.select.joined(separator: ", "), from: source, where: condition, orderBy: nil, paging: "")
        if !p.groupBy.isEmpty { inner += " GROUP BY " + p.groupBy.joined(separator: ", ") }
        // The results by name, and a key column for the guards `having` compiles (never read otherwise).
        var finals = zip(p.finals, columns).map { "\($0) AS \(dialect.quote($1.name))" }
        finals.append("0 AS \(dialect.keyColumn)")
        let middle = "SELECT \(finals.joined(separator: ", ")) FROM (\(inner)) a"
        var c = PredicateCompiler(root: scope?.entities.first ?? entity, dialect: dialect, alias: "g", args: args)
        var conditions: [String] = []
        if let having {
            let sql = c.predicate(having.lowered)
            if let guards = c.rootGuards { conditions.append(guards) }
            conditions.append(sql)
        }
        var order: [String] = []
        var sorted = Set<Int>()
        func sort(_ i: Int, reverse: Bool, comparator: FetchDescriptor.SortKey.Comparator) {
            let col = "g.\(dialect.quote(columns[i].name))"
            switch columns[i].type {
            case .decimal: order.append(dialect.sortTerm(dialect.collate(col, .decimal), descending: reverse))
            case .string, .url:
                if comparator == .localizedStandard { order.append(dialect.sortTerm(dialect.collate(col, .standard), descending: reverse)) }
            default: break
            }
            // Values the comparator ties stay apart, in one order on every store.
            order.append(dialect.sortTerm(col, descending: reverse))
            sorted.insert(i)
        }
        for o in self.order { sort(o.column, reverse: o.reverse, comparator: o.comparator) }
        for i in 0..<groupCount where !sorted.contains(i) { sort(i, reverse: false, comparator: .localizedStandard) }
        let paging = dialect.limit(limit.map { c.bind(.int(Int64($0))) }, offset: offset > 0 ? c.bind(.int(Int64(offset))) : nil)
        let sql = dialect.select("g.*", from: "(\(middle)) g", where: conditions.isEmpty ? nil : conditions.joined(separator: " AND "),
                                 orderBy: order.isEmpty ? nil : order.joined(separator: ", "), paging: paging)
        return ResultQuery(sql: sql, args: c.args, columns: columns.map {
            ResultColumn(name: $0.name, type: ObjectPlan.Encoding($0.type), failsWhenNil: $0.failsWhenNil)
        })
    }
}
