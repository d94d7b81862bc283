/// Writes the rows of a ``ResultQuery`` as a JSON array of dictionaries, one per row, each
/// value checked against what its column holds as the object writer checks stored values
/// (docs/JSON.md, "Damaged stores"): a group key is a stored value, read from an untrusted
/// store; an aggregate is computed by the store, and decimal text is written in canonical
/// form (PostgreSQL's `numeric` writes "12.50").
enum ResultWriter {
    static func write<C: RowCursor>(_ rows: inout C, _ q: ResultQuery) throws -> JSONBuffer {
        // `,"name":` as the object plan writes its keys; the first without its comma.
        let keys = q.columns.enumerated().map { i, c in Array(ObjectPlan.keyBytes(c.name).dropFirst(i == 0 ? 1 : 0)) }
        var out = ByteSink()
        defer { out.deallocate() }
        var scratch: [UInt8] = []
        out.append(UInt8(ascii: "["))
        var first = true
        while try rows.next() {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "{"))
            for (i, c) in q.columns.enumerated() {
                out.append(keys[i])
                try value(&rows, Int32(i), c, &out, &scratch)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        let done = out.finish()
        out = ByteSink(capacity: 1)
        return done
    }

    /// One value of column `i`.
    private static func value<C: RowCursor>(_ c: inout C, _ i: Int32, _ col: ResultColumn, _ out: inout ByteSink, _ scratch: inout [UInt8]) throws {
        let kind = c.kind(i)
        if kind == .null {
            if col.failsWhenNil {
                throw StrataError(.invalid, "'\(col.name)' cannot be computed for a group: its sum leaves the range of its type (an int sum beyond 64 bits, a double sum that is not finite, a decimal beyond 131072 digits before the point or 16383 after)")
            }
            out.null()
            return
        }
        func fail(_ problem: String? = nil) -> StrataError {
            StrataError(.corrupt, "result '\(col.name)' \(problem ?? "holds \(ObjectWriter.found(kind)) where \(ObjectWriter.expected(col.type)) is stored") (the store file is damaged)",
                        attribute: col.name)
        }
        switch col.type {
        case .text, .url, .uuid:
            guard kind == .text else { throw fail() }
            let t = c.text(i)
            if col.type == .url { guard ValueCodec.isValidURL(utf8: t) else { throw fail("holds text that is not a URL") } }
            if col.type == .uuid { guard UUIDText.isStoredForm(t) else { throw fail("holds text that is not a UUID") } }
            guard out.utf8String(t) else { throw fail("holds text that is not valid UTF-8") }
        case .decimal:
            guard kind == .text, let canonical = DecimalText.canonical(c.text(i)) else { throw fail("holds text that is not a decimal number") }
            out.append(UInt8(ascii: "\""))
            out.append(Array(canonical.utf8))
            out.append(UInt8(ascii: "\""))
        case .int:
            guard kind == .int else { throw fail() }
            out.int(c.int64(i))
        case .bool:
            let v = c.int64(i)
            guard kind == .int, v == 0 || v == 1 else { throw fail() }
            out.bool(v != 0)
        case .double:
            let v = c.double(i)
            guard kind == .real || kind == .int, v.isFinite else { throw fail() }
            out.double(v)
        case .date:
            guard kind == .real || kind == .int, ObjectWriter.date(c.double(i), &out, &scratch) else { throw fail() }
        case .data:
            guard kind == .blob else { throw fail() }
            scratch.removeAll(keepingCapacity: true)
            Base64.encode(c.blob(i), into: &scratch)
            out.append(UInt8(ascii: "\""))
            out.append(scratch)
            out.append(UInt8(ascii: "\""))
        case .json, .externalData, .link, .composite, .close:
            throw fail("is not a value an aggregation returns")
        }
    }
}
