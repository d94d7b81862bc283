import Strata

// Header section: History and change observation.

public typealias StrataChangeFn = @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

/// An observer handle: which observer of which container. The container is not kept
/// alive by its observers; strata_close ends them, and the handle then only frees itself.
final class ObserverBox {
    weak var container: ModelContainer?
    let id: Int
    init(_ container: ModelContainer, _ id: Int) { self.container = container; self.id = id }
}

@_cdecl("strata_fetch_history")
public func strata_fetch_history(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?,
                                 _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try context(ctx)
        let json = try descriptor.map { d in try withBytes(d, "descriptor_json") { try c.fetchHistory($0) } } ?? c.fetchHistory(nil)
        o.pointee = try cString(json)
    }
}

@_cdecl("strata_explain_history")
public func strata_explain_history(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?,
                                   _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let c = try context(ctx)
        let json = try descriptor.map { d in try withBytes(d, "descriptor_json") { try c.explainHistory($0) } } ?? c.explainHistory(nil)
        o.pointee = try cString(json)
    }
}

@_cdecl("strata_delete_history")
public func strata_delete_history(_ ctx: OpaquePointer?, _ descriptor: UnsafePointer<CChar>?) -> Int32 {
    shim {
        let c = try context(ctx)
        try withBytes(descriptor, "descriptor_json") { _ = try c.deleteHistory($0) }
    }
}

/// An author or context name argument: NULL (none), or 1-256 bytes of valid UTF-8.
private func label(_ p: UnsafePointer<CChar>?, _ what: String) throws -> String? {
    try p.map { p in
        guard let s = String(validatingCString: p) else { throw StrataError(.invalid, "the \(what) is not valid UTF-8") }
        try StoreConfiguration.checkLabel(s, what)
        return s
    }
}

@_cdecl("strata_context_set_author")
public func strata_context_set_author(_ ctx: OpaquePointer?, _ author: UnsafePointer<CChar>?) -> Int32 {
    shim {
        let c = try context(ctx)
        c.author = try label(author, "author")
    }
}

@_cdecl("strata_context_set_name")
public func strata_context_set_name(_ ctx: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    shim {
        let c = try context(ctx)
        c.name = try label(name, "context name")
    }
}

@_cdecl("strata_observe")
public func strata_observe(_ container: OpaquePointer?, _ filter: UnsafePointer<CChar>?, _ fn: StrataChangeFn?,
                           _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: StrataFreeFn?,
                           _ outObserver: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    // The userdata is Strata's from here on, whatever the outcome (UserdataBox frees it once).
    let data = UserdataBox(userdata, freeUserdata)
    return shim {
        let o = try out(outObserver, "out_observer")
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        guard let fn else { throw StrataError(.misuse, "the callback is NULL") }
        let callback: ChangeObservers.Callback = { json in json.withCString { fn($0, data.userdata) } }
        let observers = box.container.observers
        let id = try filter.map { f in try withBytes(f, "filter_json") { try observers.add(filter: $0, callback) } }
            ?? observers.add(filter: nil, callback)
        o.pointee = Handles.register(ObserverBox(box.container, id))
    }
}

@_cdecl("strata_poll_changes")
public func strata_poll_changes(_ container: OpaquePointer?) -> Int32 {
    shim { try Handles.resolve(container, as: ContainerBox.self, "container").container.observers.poll() }
}

@_cdecl("strata_observer_remove")
public func strata_observer_remove(_ observer: OpaquePointer?) {
    guard let box = try? Handles.resolve(observer, as: ObserverBox.self, "observer") else { return }
    box.container?.observers.remove(box.id)
    Handles.release(observer)
}
