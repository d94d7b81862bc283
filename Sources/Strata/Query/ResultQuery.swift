/// What a store runs for a fetch that returns dictionaries (an ``Aggregation``): one query,
/// its arguments, and what each result column is written as (``ResultWriter``). Part of
/// Query's face: the store runs it without knowing what it was compiled from.
public struct ResultQuery {
    let sql: String
    let args: [SQLValue]
    /// The result columns, in select order (a query may select more after them).
    let columns: [ResultColumn]
}

/// One key of every result dictionary.
struct ResultColumn {
    let name: String
    /// How its value is checked and written.
    let type: ObjectPlan.Encoding
    /// NULL means the value could not be computed (a sum outside its type's range), not nil.
    let failsWhenNil: Bool
}
