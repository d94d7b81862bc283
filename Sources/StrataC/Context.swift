import Strata

// Header sections: Contexts, Objects, Fetching, Saving.

final class ContextBox {
    let context: ModelContext
    /// A context Strata lends to a stage hook for the duration of the call: strata_context_free ignores it.
    let borrowed: Bool
    init(_ c: ModelContext, borrowed: Bool = false) { context = c; self.borrowed = borrowed }
}

@inline(__always)
func context(_ handle: OpaquePointer?) throws -> ModelContext {
    try Handles.resolve(handle, as: ContextBox.self, "context").context
}

@_cdecl("strata_context_new")
public func strata_context_new(_ container: OpaquePointer?, _ outContext: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    shim {
        let o = try out(outContext, "out_context")
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        o.pointee = Handles.register(ContextBox(try box.container.makeContext()))
    }
}

@_cdecl("strata_context_free")
public func strata_context_free(_ ctx: OpaquePointer?) {
    guard let box = try? Handles.resolve(ctx, as: ContextBox.self, "context") else { return }
    if box.borrowed { return }
    // Unsaved changes are discarded now, although a prepared fetch may keep the context alive.
    box.context.rollback()
    Handles.release(ctx)
}

@_cdecl("strata_insert")
public func strata_insert(_ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?,
                          _ outID: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        if let outID { outID.pointee = nil }
        let c = try context(ctx)
        let name = try string(entity, "entity")
        let id = try withBytes(json, "object_json") { try c.insert(entity: name, json: $0) }
        if let outID { outID.pointee = try cString(id.description) }
    }
}

@_cdecl("strata_insert_many")
public func strata_insert_many(_ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?,
                               _ outIDs: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        if let outIDs { outIDs.pointee = nil }
        let c = try context(ctx)
        let name = try string(entity, "entity")
        let ids = try withBytes(json, "array_json") { try c.insertMany(entity: name, json: $0) }
        if let outIDs { outIDs.pointee = try cString(ModelContext.identifierArray(ids)) }
    }
}

@_cdecl("strata_update")
public func strata_update(_ ctx: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ patch: UnsafePointer<CChar>?) -> Int32 {
    shim {
        let c = try context(ctx)
        let idText = try string(id, "id")
        try withBytes(patch, "patch_json") { try c.update(id: idText, patch: $0) }
    }
}

@_cdecl("strata_delete")
public func strata_delete(_ ctx: OpaquePointer?, _ id: UnsafePointer<CChar>?) -> Int32 {
    shim { try context(ctx).delete(id: try string(id, "id")) }
}

@_cdecl("strata_get")
public func strata_get(_ ctx: OpaquePointer?, _ id: UnsafePointer<CChar>?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try context(ctx)
        o.pointee = try cString(try c.get(id: try string(id, "id")))
    }
}

@_cdecl("strata_fetch")
public func strata_fetch(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try context(ctx)
        o.pointee = try cString(try withBytes(descriptor, "descriptor_json") { try c.fetchBuffer(descriptorJSON: $0) })
    }
}

@_cdecl("strata_fetch_count")
public func strata_fetch_count(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?, _ outCount: UnsafeMutablePointer<Int64>?) -> Int32 {
    shim {
        guard let outCount else { throw StrataError(.misuse, "out (the out-parameter) is NULL") }
        outCount.pointee = 0
        let c = try context(ctx)
        outCount.pointee = try withBytes(descriptor, "descriptor_json") { try c.fetchCount(descriptorJSON: $0) }
    }
}

@_cdecl("strata_fetch_identifiers")
public func strata_fetch_identifiers(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try context(ctx)
        o.pointee = try cString(try withBytes(descriptor, "descriptor_json") { try c.fetchIdentifiers(descriptorJSON: $0) })
    }
}

@_cdecl("strata_delete_where")
public func strata_delete_where(_ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?) -> Int32 {
    strata_delete_where_count(ctx, entity, predicate, nil)
}

@_cdecl("strata_delete_where_count")
public func strata_delete_where_count(_ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
                                      _ outCount: UnsafeMutablePointer<Int64>?) -> Int32 {
    shim {
        outCount?.pointee = 0
        let c = try context(ctx)
        let name = try string(entity, "entity")
        let n = try predicate.map { p in try withBytes(p, "predicate_json") { try c.delete(entity: name, predicateJSON: $0) } }
            ?? c.delete(entity: name, predicateJSON: nil)
        outCount?.pointee = Int64(n)
    }
}

@_cdecl("strata_update_where")
public func strata_update_where(_ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ request: UnsafePointer<CChar>?,
                                _ outCount: UnsafeMutablePointer<Int64>?) -> Int32 {
    shim {
        outCount?.pointee = 0
        let c = try context(ctx)
        let name = try string(entity, "entity")
        let n = try withBytes(request, "request_json") { try c.update(entity: name, requestJSON: $0) }
        outCount?.pointee = Int64(n)
    }
}

@_cdecl("strata_explain")
public func strata_explain(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try context(ctx)
        o.pointee = try cString(try withBytes(descriptor, "descriptor_json") { try c.explain(descriptorJSON: $0) })
    }
}

@_cdecl("strata_save")
public func strata_save(_ ctx: OpaquePointer?) -> Int32 {
    shim { try context(ctx).save() }
}

@_cdecl("strata_rollback")
public func strata_rollback(_ ctx: OpaquePointer?) -> Int32 {
    shim { try context(ctx).rollback() }
}

@_cdecl("strata_has_changes")
public func strata_has_changes(_ ctx: OpaquePointer?) -> Int32 {
    var result: Int32 = 0
    _ = shim { result = try context(ctx).hasChanges ? 1 : 0 }
    return result
}
