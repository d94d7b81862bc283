import Glibc
import Strata

// Header section: Migration.

public typealias StrataStageFn = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
public typealias StrataProgressFn = @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

/// Userdata handed to Strata with its free function: freed exactly once, when the
/// last holder lets go — the configuration and every container copied from it.
final class UserdataBox: @unchecked Sendable {
    let userdata: UnsafeMutableRawPointer?
    let free: StrataFreeFn?
    init(_ userdata: UnsafeMutableRawPointer?, _ free: StrataFreeFn?) { self.userdata = userdata; self.free = free }
    deinit { free?(userdata) }
}

/// A C stage hook as a Swift one: the context is a handle only while the hook runs,
/// so a ctx the hook keeps is stale afterwards (STRATA_ERR_MISUSE, never a crash).
func stageHook(_ fn: StrataStageFn?, _ box: UserdataBox) -> StageHooks.Hook? {
    guard let fn else { return nil }
    return { context in
        let handle = Handles.register(ContextBox(context, borrowed: true))
        defer { Handles.release(handle) }
        let status = fn(handle, box.userdata)
        if status != 0 { throw StageHooks.failure(status: status) }
    }
}

@_cdecl("strata_config_set_stage_hooks")
public func strata_config_set_stage_hooks(_ config: OpaquePointer?, _ stageName: UnsafePointer<CChar>?,
                                          _ willMigrate: StrataStageFn?, _ didMigrate: StrataStageFn?,
                                          _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: StrataFreeFn?) -> Int32 {
    // The userdata is Strata's from here on, whatever the outcome: the box frees it
    // when the last holder lets go, or at the end of this call if nothing holds it.
    let box = UserdataBox(userdata, freeUserdata)
    return shim {
        let configBox = try Handles.resolve(config, as: ConfigBox.self, "config")
        let name = try string(stageName, "stage_name")
        let hooks = willMigrate == nil && didMigrate == nil
            ? nil : StageHooks(willMigrate: stageHook(willMigrate, box), didMigrate: stageHook(didMigrate, box))
        try configBox.configuration.setStageHooks(hooks, forStage: name)
    }
}

@_cdecl("strata_config_set_progress")
public func strata_config_set_progress(_ config: OpaquePointer?, _ fn: StrataProgressFn?, _ userdata: UnsafeMutableRawPointer?,
                                       _ freeUserdata: StrataFreeFn?) -> Int32 {
    let box = UserdataBox(userdata, freeUserdata)
    return shim {
        let configBox = try Handles.resolve(config, as: ConfigBox.self, "config")
        guard let fn else {
            configBox.configuration.progress = nil
            return
        }
        configBox.configuration.progress = { event in event.withCString { fn($0, box.userdata) } }
    }
}

/// A required C string argument that must be valid UTF-8 (never repaired).
private func utf8(_ p: UnsafePointer<CChar>?, _ what: String, path: String? = nil) throws -> String {
    guard let p else { throw StrataError(.misuse, "\(what) is NULL") }
    guard let s = String(validatingCString: p) else { throw StrataError(.invalid, "\(what) is not valid UTF-8", path: path) }
    return s
}

@_cdecl("strata_infer_migration")
public func strata_infer_migration(_ fromJSON: UnsafePointer<CChar>?, _ toJSON: UnsafePointer<CChar>?,
                                   _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let from = try utf8(fromJSON, "from_schema_json", path: "/from")
        let to = try utf8(toJSON, "to_schema_json", path: "/to")
        o.pointee = try cString(try ModelContainer.inferMigration(from: from, to: to))
    }
}

@_cdecl("strata_check_store")
public func strata_check_store(_ path: UnsafePointer<CChar>?, _ config: OpaquePointer?,
                               _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let box = try Handles.resolve(config, as: ConfigBox.self, "config")
        guard let path else { throw StrataError(.misuse, "path is NULL (strata_check_store checks a store file)") }
        // A path is used as given, as by strata_open: invalid UTF-8 is refused, never repaired into another name.
        guard let p = String(validatingCString: path) else { throw StrataError(.invalid, "the store path is not valid UTF-8") }
        if box.configuration.inMemory {
            throw StrataError(.invalid, "strata_check_store checks a store file; the configuration is for an in-memory store", path: "/inMemory")
        }
        o.pointee = try cString(try ModelContainer.checkStore(path: p, configuration: box.configuration))
    }
}
