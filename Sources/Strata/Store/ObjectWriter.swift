/// Writes rows as JSON objects (docs/JSON.md) straight into one growing buffer:
/// `_id`, `_entity`, attributes encoded by type, to-one links and the
/// identifiers of other relationships (read in the row), and prefetched objects
/// nested under their owner (read per owner row from the prefetch cursors, or per
/// batch of owners from cursors that read batches, in the same pass). Nothing is written to a scratch buffer or copied afterwards.
///
/// Resumable: `write(_:prefetched:limit:)` writes at most `limit` objects of a
/// live cursor and can be called again to continue where it stopped; each
/// `takeBatch()` hands over the objects written since the previous one as one
/// JSON array (a cursor's batches, or a whole fetch):
///
/// A plan with a section key (``ObjectPlan/section``, `sectionBy`) writes the same objects
/// inside sections, `[{"section": key, "objects": [...]}, ...]`: consecutive rows whose keys
/// are written alike share a section (the query sorts them together); a batch begins a new
/// one, so a section that continues past a batch appears again, with its key, at the start
/// of the next. Plain plans never enter that loop.
///
///     let writer = ObjectWriter(plan: plan, prefetched: plans)
///     while try writer.write(&rows, prefetched: &cursors, limit: 100) {
///         deliver(writer.takeBatch())   // 100 objects
///     }
///     deliver(writer.takeBatch())       // the rest (maybe `[]`)
final class ObjectWriter {
    private let plans: WriterPlans
    /// The batch being written (`[` and its objects); nil until the first write after `takeBatch`
    /// (a fetch's one batch leaves no buffer behind to free).
    private var out: ByteSink?
    private var scratch: [UInt8] = []
    /// Objects in the current batch.
    private var objects = 0
    /// The plan's section key, nil without sections.
    private let section: ObjectPlan.Member?
    /// Sections: the key of the section open in the batch (when `objects > 0`), and the current
    /// row's (made by the first write of a plan with sections).
    private var openKey: ByteSink?
    private var rowKey: ByteSink?

    var plan: ObjectPlan { plans.storage.plan }

    /// - Parameter prefetched: the plans of `plan.prefetched`'s objects, by slot.
    convenience init(plan: ObjectPlan, prefetched: [ObjectPlan] = []) {
        self.init(WriterPlans(plan: plan, prefetched: prefetched))
    }

    /// A writer of a compiled fetch's objects (its plans copied once, by the fetch).
    convenience init(_ queries: ObjectQueries) {
        self.init(queries.writerPlans)
    }

    init(_ plans: WriterPlans) {
        self.plans = plans
        section = plans.storage.plan.section
    }

    deinit {
        out?.deallocate()
        openKey?.deallocate()
        rowKey?.deallocate()
    }

    /// A new batch's buffer, holding its `[`.
    private static func batch() -> ByteSink {
        var b = ByteSink()
        b.append(UInt8(ascii: "["))
        return b
    }

    /// Writes the next rows of `rows`, at most `limit` objects; relationships of each row are
    /// resolved with it (prefetched objects from `prefetched`, by slot, each restarted per row or read per batch of owners).
    /// - Returns: true when it stopped at `limit` (rows may remain), false when `rows` is done.
    @discardableResult
    func write<C: RowCursor>(_ rows: inout C, prefetched: inout [C], limit: Int = .max) throws -> Bool {
        precondition(prefetched.count >= plans.prefetchStorage.count, "a cursor per prefetched relationship")
        if let section { return try writeSections(&rows, prefetched: &prefetched, limit: limit, section) }
        var out = self.out ?? ObjectWriter.batch()
        var scratch = self.scratch
        var objects = self.objects
        defer { self.out = out; self.scratch = scratch; self.objects = objects }
        let view = plans.storage.view
        let nested = UnsafeBufferPointer(plans.prefetchViews)
        return try prefetched.withUnsafeMutableBufferPointer { cursors in
            var written = 0
            while written < limit {
                guard try rows.next() else { return false }
                let e = try ObjectWriter.entity(&rows, view)
                if objects > 0 { out.append(UInt8(ascii: ",")) }
                try ObjectWriter.writeObject(&rows, e, view, cursors, nested, ObjectWriter.noOwner, &out, &scratch)
                objects += 1
                written += 1
            }
            return true
        }
    }

    /// `write` for a plan with a section key: each row's key is written first, and a key written
    /// unlike the open section's (or the batch's first row) opens a section.
    private func writeSections<C: RowCursor>(_ rows: inout C, prefetched: inout [C], limit: Int, _ section: ObjectPlan.Member) throws -> Bool {
        var out = self.out ?? ObjectWriter.batch()
        var scratch = self.scratch
        var objects = self.objects
        var open = openKey ?? ByteSink(capacity: 64), key = rowKey ?? ByteSink(capacity: 64)
        defer { self.out = out; self.scratch = scratch; self.objects = objects; openKey = open; rowKey = key }
        let view = plans.storage.view
        let nested = UnsafeBufferPointer(plans.prefetchViews)
        return try prefetched.withUnsafeMutableBufferPointer { cursors in
            var written = 0
            while written < limit {
                guard try rows.next() else { return false }
                let e = try ObjectWriter.entity(&rows, view)
                key.removeAll()
                try ObjectWriter.writeSectionKey(&rows, section, e, view, &key, &scratch)
                if objects > 0 && ObjectWriter.same(key.written, open.written) {
                    out.append(UInt8(ascii: ","))
                } else {
                    if objects > 0 { out.append(ObjectWriter.sectionEnd); out.append(UInt8(ascii: ",")) }
                    out.append(ObjectWriter.sectionStart)
                    out.append(key.written)
                    out.append(ObjectWriter.objectsStart)
                    swap(&open, &key)
                }
                try ObjectWriter.writeObject(&rows, e, view, cursors, nested, ObjectWriter.noOwner, &out, &scratch)
                objects += 1
                written += 1
            }
            return true
        }
    }

    /// The texts around a section's objects (``MaterializedCursor`` reads them too).
    static let sectionStart = Array(#"{"section":"#.utf8), objectsStart = Array(#","objects":["#.utf8), sectionEnd = Array("]}".utf8)

    @inline(__always)
    private static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    /// The section key of the current row of `c` as JSON, checked as the column of an object
    /// is (docs/JSON.md, "Damaged stores"): text as a string, an int as a number, a date as its
    /// text; nil as `""`.
    private static func writeSectionKey<C: RowCursor>(_ c: inout C, _ s: ObjectPlan.Member, _ e: ObjectPlan.EntityPlan, _ view: ObjectPlan.View,
                                                      _ key: inout ByteSink, _ scratch: inout [UInt8]) throws {
        let i = s.index
        let kind = c.kind(i)
        if kind == .null { key.append(UInt8(ascii: "\""), UInt8(ascii: "\"")); return }
        func fail(_ problem: String? = nil) -> StrataError {
            damaged(view, e, pk: c.int64(0), s.name, problem ?? "holds \(found(kind)) where \(expected(s.type)) is stored")
        }
        switch s.type {
        case .int:
            guard kind == .int else { throw fail() }
            let v = c.int64(i)
            guard isMember(v, s.members, view) else { throw fail("holds a value that is not one of its enum's") }
            key.int(v)
        case .date:
            guard kind == .real || kind == .int, date(c.double(i), &key, &scratch) else { throw fail() }
        default:
            guard kind == .text else { throw fail() }
            let t = c.text(i)
            if let problem = textProblem(s, t, view) { throw fail(problem) }
            guard key.utf8String(t) else { throw fail("holds text that is not valid UTF-8") }
        }
    }

    /// What is wrong with text `t` of a column `col` (a string, url, uuid or decimal), nil when nothing is.
    @inline(__always)
    private static func textProblem(_ col: ObjectPlan.Member, _ t: UnsafeBufferPointer<UInt8>, _ view: ObjectPlan.View) -> String? {
        switch col.type {
        case .url: return ValueCodec.isValidURL(utf8: t) ? nil : "holds text that is not a URL"
        case .uuid: return UUIDText.isStoredForm(t) ? nil : "holds text that is not a UUID"
        case .decimal: return DecimalText.isValid(t) ? nil : "holds text that is not a decimal number"
        default: return col.members.isEmpty || view.member(t, col.members) != nil ? nil : "holds a value that is not one of its enum's"
        }
    }

    /// Whether `v` is one of an int enum's `members` (every value is, without them).
    @inline(__always)
    private static func isMember(_ v: Int64, _ members: Range<Int>, _ view: ObjectPlan.View) -> Bool {
        members.isEmpty || view.ints[members].contains(v)
    }

    /// A date's text, quoted; false when `seconds` is outside the years 0000-9999 (only they go in:
    /// ValueCodec, so only they come out).
    @inline(__always)
    static func date(_ seconds: Double, _ out: inout ByteSink, _ scratch: inout [UInt8]) -> Bool {
        scratch.removeAll(keepingCapacity: true)
        guard ISO8601.format(seconds, into: &scratch) else { return false }
        out.append(UInt8(ascii: "\""))
        out.append(scratch)
        out.append(UInt8(ascii: "\""))
        return true
    }

    /// The objects written since the last call, as one JSON array; the writer continues with a new one.
    func takeBatch() -> JSONBuffer {
        var done = out ?? ObjectWriter.batch()
        out = nil
        if section != nil && objects > 0 { done.append(ObjectWriter.sectionEnd) }
        done.append(UInt8(ascii: "]"))
        objects = 0
        return done.finish()
    }

    /// The plan of the row's concrete entity; a row whose entity name is none of the plan's is damage
    /// (the query asks only for rows of the plan's entities).
    @inline(__always)
    private static func entity<C: RowCursor>(_ c: inout C, _ view: ObjectPlan.View) throws -> ObjectPlan.EntityPlan {
        if view.isSingle { return view.entities[0] }
        if c.kind(1) == .text {
            let name = c.text(1)
            for e in view.entities where ObjectPlan.View.equal(name, view.pool, e.name) { return e }
        }
        throw unknownEntity(c.int64(0), view)
    }

    @inline(never)
    private static func unknownEntity(_ pk: Int64, _ view: ObjectPlan.View) -> StrataError {
        let known = view.entities.map { view.string($0.name) }
        let name = known.first ?? "?"
        return StrataError(.corrupt, "\(name)/\(pk): the row's entity name is not one of \(known.joined(separator: ", ")) (the store file is damaged)",
                           entity: name)
    }

    /// A stored value that is not what its attribute's type stores: `.corrupt`, naming the
    /// entity, the attribute (or relationship) and the object.
    @inline(never)
    static func damaged(_ view: ObjectPlan.View, _ e: ObjectPlan.EntityPlan, pk: Int64, _ name: Range<Int>, _ problem: String) -> StrataError {
        let entity = view.string(e.name)
        let attribute = view.string(name)
        return StrataError(.corrupt, "\(entity)/\(pk): '\(attribute)' \(problem) (the store file is damaged)", entity: entity, attribute: attribute)
    }

    /// What a column of `type` must hold, for messages.
    static func expected(_ type: ObjectPlan.Encoding) -> String {
        switch type {
        case .text: return "text"
        case .url: return "URL text"
        case .uuid: return "a UUID"
        case .decimal: return "decimal text"
        case .int: return "an integer"
        case .bool: return "0 or 1"
        case .double: return "a finite number"
        case .date: return "a date (seconds in years 0000-9999)"
        case .json: return "one JSON value"
        case .data: return "bytes"
        case .externalData: return "bytes or a file name"
        case .link: return "the key of the linked object"
        case .composite, .close: return "1 (the composite has a value)"
        }
    }

    static func found(_ kind: ColumnKind) -> String {
        switch kind {
        case .null: return "null"
        case .int: return "an integer"
        case .real: return "a real number"
        case .text: return "text"
        case .blob: return "a blob"
        }
    }

    /// One object of the current row of `c`, with its relationships. Every value is checked
    /// against its attribute's type before it is written (docs/JSON.md, "Damaged stores").
    ///
    /// One function on purpose, though long: it is the row loop's hot path (every object of
    /// every fetch), and as one body nothing is called, retained or allocated per column.
    /// Split into `@inline(__always)` steps (a column, a link, a relationship), the optimizer
    /// inlined them or not by the size of the result, a choice that changed with unrelated
    /// edits (the relationship step never: it recurses through `writePrefetched`); with the
    /// column step a call, writing 100,000 trips took 3% more instructions here and the fetch
    /// rows of `make bench` ran about 1% slower. Keep new column types in this switch.
    private static func writeObject<C: RowCursor>(_ c: inout C, _ e: ObjectPlan.EntityPlan, _ view: ObjectPlan.View,
                                                  _ cursors: UnsafeMutableBufferPointer<C>, _ nested: UnsafeBufferPointer<ObjectPlan.View>,
                                                  _ ownerEntity: UnsafeBufferPointer<UInt8>,
                                                  _ out: inout ByteSink, _ scratch: inout [UInt8]) throws {
        let pk = c.int64(0)
        out.append(view.bytes(e.idPrefix))
        out.int(pk)
        out.append(view.bytes(e.entityPart))
        var k = e.columns.lowerBound
        while k < e.columns.upperBound {
            let col = view.columns[k]
            k += 1
            out.append(view.bytes(col.key))
            let i = col.index
            let kind = c.kind(i)
            if kind == .null {
                out.null()
                // A nil composite: its fields and its close are not written.
                if col.type == .composite { k += col.attribute }
                continue
            }
            @inline(__always) func fail(_ problem: String? = nil) -> StrataError {
                damaged(view, e, pk: pk, col.name, problem ?? "holds \(found(kind)) where \(expected(col.type)) is stored")
            }
            switch col.type {
            case .text, .url, .uuid, .decimal:
                guard kind == .text else { throw fail() }
                let t = c.text(i)
                if let problem = textProblem(col, t, view) { throw fail(problem) }
                guard out.utf8String(t) else { throw fail("holds text that is not valid UTF-8") }
            case .int:
                guard kind == .int else { throw fail() }
                let v = c.int64(i)
                guard isMember(v, col.members, view) else { throw fail("holds a value that is not one of its enum's") }
                out.int(v)
            case .bool:
                let v = c.int64(i)
                guard kind == .int, v == 0 || v == 1 else { throw fail() }
                out.bool(v != 0)
            case .double:
                let v = c.double(i)
                guard kind == .real || kind == .int, v.isFinite else { throw fail() }
                out.double(v)
            case .date:
                guard kind == .real || kind == .int, date(c.double(i), &out, &scratch) else { throw fail() }
            case .json:
                guard kind == .text else { throw fail() }
                let t = c.text(i)
                guard StoredText.isJSONValue(t) else { throw fail() }
                out.append(t)
            case .data, .externalData:
                scratch.removeAll(keepingCapacity: true)
                if col.type == .externalData && kind == .text {
                    // The column names where the value lives (the backend checks it: the store is untrusted).
                    let bytes = try c.externalData(c.text(i), of: view.externals[col.attribute], pk: pk)
                    bytes.withUnsafeBytes { Base64.encode($0, into: &scratch) }
                } else {
                    guard kind == .blob else { throw fail() }
                    Base64.encode(c.blob(i), into: &scratch)
                }
                out.append(UInt8(ascii: "\""))
                out.append(scratch)
                out.append(UInt8(ascii: "\""))
            case .composite:
                guard kind == .int, c.int64(i) == 1 else { throw fail() }
                out.append(UInt8(ascii: "{"))
            case .close:
                break  // `}` is its key
            case .link:
                guard kind == .int else { throw fail() }
                let target = c.int64(i)
                out.append(UInt8(ascii: "\""))
                if col.entityColumn == ObjectPlan.ownersEntity {
                    // The link back to the owner these rows were read for: the owner row's entity.
                    guard let name = view.member(ownerEntity, col.members) else {
                        throw fail("links to \(view.string(col.fallback))/\(target), whose entity name is not one of \(view.string(col.fallback))'s entities")
                    }
                    out.append(view.bytes(name))
                } else if col.entityColumn >= 0, c.kind(col.entityColumn) != .null {
                    // The linked row's entity, written as the plan spells it: never the stored text.
                    guard c.kind(col.entityColumn) == .text, let name = view.member(c.text(col.entityColumn), col.members) else {
                        throw fail("links to \(view.string(col.fallback))/\(target), whose entity name is not one of \(view.string(col.fallback))'s entities")
                    }
                    out.append(view.bytes(name))
                } else {
                    // No subentities, or a dangling link (noAction): the declared destination.
                    out.append(view.bytes(col.fallback))
                }
                out.append(UInt8(ascii: "/"))
                out.int(target)
                out.append(UInt8(ascii: "\""))
            }
        }
        out.append(view.bytes(e.constants))
        for k in e.deferred {
            let d = view.deferred[view.deferredIndices[k]]
            out.append(view.bytes(d.key))
            if d.slot >= 0 {
                try writePrefetched(d, owner: pk, view.bytes(e.name), &cursors[d.slot], nested[d.slot], cursors, nested, &c, view.bytes(d.prefix),
                                    &out, &scratch) { problem in
                    damaged(view, e, pk: pk, d.name, problem)
                }
            } else {
                let kind = c.kind(d.column)
                if kind == .null {
                    if d.isToMany { out.append(UInt8(ascii: "["), UInt8(ascii: "]")) } else { out.null() }
                    continue
                }
                if kind == .int && !d.isToMany && d.members.isEmpty {
                    // A to-one's key, as the row gives it.
                    out.append(view.bytes(d.prefix))
                    out.int(c.int64(d.column))
                    out.append(UInt8(ascii: "\""))
                    continue
                }
                guard kind == .text, writeIdentifiers(c.text(d.column), d, view, &out) else {
                    throw damaged(view, e, pk: pk, d.name, "relates to a row whose entity name or key is not an identifier's")
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// How many owners' related rows a cursor that reads batches reads in one statement (at most:
    /// the owners' cursor may offer fewer). Measured on PostgreSQL (20,000 trips): 10,000 was no
    /// faster than 1,000 and held more (the server's sort of a batch spilled to disk).
    static let ownerBatch = 1000

    /// The owner entity of a row read for no owner (``ObjectPlan/ownersEntity`` never met there).
    private static let noOwner = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

    /// The objects of a prefetched relationship of `owner` (`view`: their plan): an array (to-many),
    /// the first one or null (to-one); a link held in the owner's row whose object is missing
    /// (noAction) is written as its identifier (`linkPrefix` and the key), as without prefetching.
    /// Their own prefetched relationships read the cursors and plans of their slots in
    /// `cursors` and `nested` (never `d`'s own: a node's descendants have slots of their own).
    /// `ownerEntity`, the owner row's entity name, is what their link back to it names
    /// (``ObjectPlan/ownersEntity``).
    private static func writePrefetched<C: RowCursor>(_ d: ObjectPlan.Deferred, owner: Int64, _ ownerEntity: UnsafeBufferPointer<UInt8>,
                                                      _ c: inout C, _ view: ObjectPlan.View,
                                                      _ cursors: UnsafeMutableBufferPointer<C>, _ nested: UnsafeBufferPointer<ObjectPlan.View>,
                                                      _ ownerRow: inout C, _ linkPrefix: UnsafeBufferPointer<UInt8>,
                                                      _ out: inout ByteSink, _ scratch: inout [UInt8],
                                                      _ fail: (String) -> StrataError) throws {
        // Batched (a static of the cursor type: folded away for one that is not), the owner row's
        // cursor names the owners of the next batch, read in one statement.
        if C.readsOwnerBatches && !c.holds(owner: owner) { try c.load { ownerRow.ownerKeys(max: ownerBatch) } }
        try c.start(key: owner)
        if d.isToMany {
            out.append(UInt8(ascii: "["))
            var n = 0
            while try c.next() {
                let e = try entity(&c, view)
                if n > 0 { out.append(UInt8(ascii: ",")) }
                try writeObject(&c, e, view, cursors, nested, ownerEntity, &out, &scratch)
                n += 1
            }
            out.append(UInt8(ascii: "]"))
        } else {
            if try c.next() {
                let e = try entity(&c, view)
                try writeObject(&c, e, view, cursors, nested, ownerEntity, &out, &scratch)
                return
            }
            let kind = d.link >= 0 ? ownerRow.kind(d.link) : .null
            if kind == .null { out.null(); return }
            guard kind == .int else { throw fail("holds \(found(kind)) where the key of the linked object is stored") }
            out.append(linkPrefix)
            out.int(ownerRow.int64(d.link))
            out.append(UInt8(ascii: "\""))
        }
    }

    /// Identifiers from the text of an `.identifiers` selection, each checked: `3,4` →
    /// `["D/3","D/4"]` (or `"D/3"` for a to-one); items that name their entity come as
    /// `n:E/3,F/4` (to-many: `n` the number of rows, so that a name holding a comma cannot
    /// add an item) or `E/3` (to-one), and each name is written as the plan spells it.
    /// - Returns: false when the text is not such a list (damage).
    @inline(__always)
    private static func writeIdentifiers(_ text: UnsafeBufferPointer<UInt8>, _ d: ObjectPlan.Deferred, _ view: ObjectPlan.View,
                                         _ out: inout ByteSink) -> Bool {
        let n = text.count
        var i = 0
        let named = !d.members.isEmpty
        var expected = -1
        if named && d.isToMany {
            guard let count = readKey(text, &i), i < n, text[i] == UInt8(ascii: ":") else { return false }
            expected = Int(clamping: count)
            i += 1
        }
        if d.isToMany { out.append(UInt8(ascii: "[")) }
        var items = 0
        while true {
            if items > 0 { out.append(UInt8(ascii: ",")) }
            if named {
                // `Name/` up to the first slash (entity names have none).
                var slash = i
                while slash < n && text[slash] != UInt8(ascii: "/") { slash += 1 }
                guard slash < n, let name = view.member(UnsafeBufferPointer(rebasing: text[i..<slash]), d.members) else { return false }
                out.append(UInt8(ascii: "\""))
                out.append(view.bytes(name))
                out.append(UInt8(ascii: "/"))
                i = slash + 1
            } else {
                out.append(view.bytes(d.prefix))
            }
            let start = i
            guard readKey(text, &i) != nil else { return false }
            out.append(UnsafeBufferPointer(rebasing: text[start..<i]))
            out.append(UInt8(ascii: "\""))
            items += 1
            if i == n { break }
            guard d.isToMany, text[i] == UInt8(ascii: ",") else { return false }
            i += 1
        }
        if named && d.isToMany && items != expected { return false }
        if d.isToMany { out.append(UInt8(ascii: "]")) }
        return true
    }

    /// A decimal integer (optional '-', 1 to 19 digits) at `i`, moving past it; nil when there is none.
    /// (Its value is only compared with a count: it wraps rather than traps on 19 digits.)
    @inline(__always)
    private static func readKey(_ text: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Int64? {
        let n = text.count
        var negative = false
        if i < n && text[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        let start = i
        var v: Int64 = 0
        while i < n, text[i] &- 48 <= 9 {
            guard i - start < 19 else { return nil }
            v = v &* 10 &+ Int64(text[i] &- 48)
            i += 1
        }
        guard i > start else { return nil }
        return negative ? -v : v
    }
}
