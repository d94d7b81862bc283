// The error's JSON lives with the JSON writer: Support/ names nothing above it.
extension StrataError {
    /// The error as the JSON object `strata_last_error()` returns.
    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.key("code"); w.string(code.name)
        w.key("status"); w.int(Int64(code.rawValue))
        if let reason { w.key("reason"); w.string(reason.name) }
        w.key("message"); w.string(message)
        if let entity { w.key("entity"); w.string(entity) }
        if let attribute { w.key("attribute"); w.string(attribute) }
        if let path { w.key("path"); w.string(path) }
        if let sqliteCode { w.key("sqliteCode"); w.int(Int64(sqliteCode)) }
        if let stage { w.key("stage"); w.string(stage) }
        if let hookStatus { w.key("hookStatus"); w.int(Int64(hookStatus)) }
        w.endObject()
        return w.string
    }
}
