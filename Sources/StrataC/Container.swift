import Strata

// Header sections: Configuration, Container.

final class ConfigBox { var configuration: StoreConfiguration; init(_ c: StoreConfiguration) { configuration = c } }
final class ContainerBox { let container: ModelContainer; init(_ c: ModelContainer) { container = c } }

@_cdecl("strata_config_new")
public func strata_config_new(_ json: UnsafePointer<CChar>?, _ outConfig: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    shim {
        let o = try out(outConfig, "out_config")
        let configuration = try withBytes(json, "config_json") { try StoreConfiguration.decode($0) }
        o.pointee = Handles.register(ConfigBox(configuration))
    }
}

@_cdecl("strata_config_free")
public func strata_config_free(_ config: OpaquePointer?) { Handles.release(config) }

@_cdecl("strata_open")
public func strata_open(_ path: UnsafePointer<CChar>?, _ config: OpaquePointer?, _ outContainer: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    shim {
        let o = try out(outContainer, "out_container")
        let box = try Handles.resolve(config, as: ConfigBox.self, "config")
        let p = try path.map { c -> String in
            // A path is used as given: invalid UTF-8 is refused, never repaired into another name.
            guard let s = String(validatingCString: c) else { throw StrataError(.invalid, "the store path is not valid UTF-8") }
            return s
        }
        if p == nil && !box.configuration.inMemory { throw StrataError(.misuse, "path is NULL (only in-memory stores take no path)") }
        o.pointee = Handles.register(ContainerBox(try ModelContainer(path: p, configuration: box.configuration)))
    }
}

@_cdecl("strata_close")
public func strata_close(_ container: OpaquePointer?) {
    // Observers end with the close (contexts may keep the container itself alive):
    // none is called after this returns, and their userdata is freed now.
    (try? Handles.resolve(container, as: ContainerBox.self, "container"))?.container.observers.close()
    Handles.release(container)
}

@_cdecl("strata_container_schema")
public func strata_container_schema(_ container: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        o.pointee = try cString(box.container.schema.jsonText)
    }
}

public typealias StrataTraceFn = @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void
public typealias StrataFreeFn = @convention(c) (UnsafeMutableRawPointer?) -> Void

@_cdecl("strata_set_trace")
public func strata_set_trace(_ container: OpaquePointer?, _ fn: StrataTraceFn?, _ userdata: UnsafeMutableRawPointer?,
                             _ freeUserdata: StrataFreeFn?) -> Int32 {
    // The userdata is Strata's from here on, whatever the outcome (UserdataBox frees it once).
    let data = UserdataBox(userdata, freeUserdata)
    return shim {
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        guard let fn else {
            box.container.store.trace.set(nil)
            return
        }
        box.container.store.trace.set { sql in sql.withCString { fn($0, data.userdata) } }
    }
}
