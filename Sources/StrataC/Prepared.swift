import Strata

// Header section: Prepared fetches and cursors.

final class PreparedBox {
    let prepared: PreparedFetch
    init(_ p: PreparedFetch) { prepared = p }
}

final class CursorBox {
    let cursor: ObjectCursor
    init(_ c: ObjectCursor) { cursor = c }
    deinit { cursor.close() }
}

/// A run's bindings: NULL for none.
private func withBindings<T>(_ p: UnsafePointer<CChar>?, _ body: (UnsafeBufferPointer<UInt8>?) throws -> T) throws -> T {
    guard let p else { return try body(nil) }
    return try withBytes(p, "bindings_json") { try body($0) }
}

@_cdecl("strata_prepare")
public func strata_prepare(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?, _ outPrepared: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    shim {
        let o = try out(outPrepared, "out_prepared")
        let c = try context(ctx)
        let p = try withBytes(descriptor, "descriptor_json") { try c.prepare($0) }
        o.pointee = Handles.register(PreparedBox(p))
    }
}

@_cdecl("strata_prepared_fetch")
public func strata_prepared_fetch(_ prepared: OpaquePointer?, _ bindings: UnsafePointer<CChar>?,
                                  _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let p = try Handles.resolve(prepared, as: PreparedBox.self, "prepared fetch").prepared
        o.pointee = try cString(try withBindings(bindings) { try p.fetchBuffer(bindings: $0) })
    }
}

@_cdecl("strata_prepared_fetch_count")
public func strata_prepared_fetch_count(_ prepared: OpaquePointer?, _ bindings: UnsafePointer<CChar>?, _ outCount: UnsafeMutablePointer<Int64>?) -> Int32 {
    shim {
        guard let outCount else { throw StrataError(.misuse, "out (the out-parameter) is NULL") }
        outCount.pointee = 0
        let p = try Handles.resolve(prepared, as: PreparedBox.self, "prepared fetch").prepared
        outCount.pointee = try withBindings(bindings) { try p.fetchCount(bindings: $0) }
    }
}

@_cdecl("strata_prepared_fetch_identifiers")
public func strata_prepared_fetch_identifiers(_ prepared: OpaquePointer?, _ bindings: UnsafePointer<CChar>?,
                                              _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let p = try Handles.resolve(prepared, as: PreparedBox.self, "prepared fetch").prepared
        o.pointee = try cString(try withBindings(bindings) { try p.fetchIdentifiers(bindings: $0) })
    }
}

@_cdecl("strata_prepared_free")
public func strata_prepared_free(_ prepared: OpaquePointer?) {
    if (try? Handles.resolve(prepared, as: PreparedBox.self, "prepared fetch")) != nil { Handles.release(prepared) }
}

@_cdecl("strata_fetch_cursor")
public func strata_fetch_cursor(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?, _ outCursor: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    shim {
        let o = try out(outCursor, "out_cursor")
        let c = try context(ctx)
        o.pointee = Handles.register(CursorBox(try withBytes(descriptor, "descriptor_json") { try c.cursor(descriptorJSON: $0) }))
    }
}

@_cdecl("strata_cursor_next")
public func strata_cursor_next(_ cursor: OpaquePointer?, _ batchSize: Int64,
                               _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try Handles.resolve(cursor, as: CursorBox.self, "cursor").cursor
        guard batchSize >= 1 else { throw StrataError(.invalid, "batch_size must be at least 1, not \(batchSize)") }
        o.pointee = try cString(try c.next(Int(clamping: batchSize)))
    }
}

@_cdecl("strata_cursor_free")
public func strata_cursor_free(_ cursor: OpaquePointer?) {
    if (try? Handles.resolve(cursor, as: CursorBox.self, "cursor")) != nil { Handles.release(cursor) }
}
