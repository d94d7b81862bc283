/// How a store explains a read: `{"sql": …, "parameterCount": n, "queryPlan": [{"id", "parent",
/// "detail"}]}`, one entry a step of the engine's plan (the shape of SQLite's EXPLAIN QUERY PLAN).
struct ExplainedQuery {
    private var w = JSONWriter()

    init(sql: String, parameterCount: Int) {
        w.beginObject()
        w.key("sql"); w.string(sql)
        w.key("parameterCount"); w.int(Int64(parameterCount))
        w.key("queryPlan")
        w.beginArray()
    }

    mutating func step(id: Int64, parent: Int64, detail: String) {
        w.beginObject()
        w.key("id"); w.int(id)
        w.key("parent"); w.int(parent)
        w.key("detail"); w.string(detail)
        w.endObject()
    }

    mutating func finish() -> [UInt8] {
        w.endArray()
        w.endObject()
        return w.bytes
    }

    /// A request that reads no table (a store without history tables yet).
    static let nothing = Array(#"{"sql":null,"parameterCount":0,"queryPlan":[]}"#.utf8)
}
