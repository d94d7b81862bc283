import Strata

// Header section: Backup, integrity and vacuum.

@_cdecl("strata_backup")
public func strata_backup(_ container: OpaquePointer?, _ destination: UnsafePointer<CChar>?, _ optionsJSON: UnsafePointer<CChar>?) -> Int32 {
    shim {
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        guard let destination else { throw StrataError(.misuse, "destination is NULL") }
        // A path is used as given: invalid UTF-8 is refused, never repaired into another name.
        guard let path = String(validatingCString: destination) else { throw StrataError(.invalid, "the backup destination is not valid UTF-8") }
        let options = try optionsJSON.map { try withBytes($0, "options_json") { try BackupOptions.decode($0) } } ?? BackupOptions()
        try box.container.backup(to: path, overwrite: options.overwrite)
    }
}

@_cdecl("strata_check_integrity")
public func strata_check_integrity(_ container: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    shim {
        let o = try out(outJSON, "out_json")
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        o.pointee = try cString(try box.container.checkIntegrity().json)
    }
}

@_cdecl("strata_vacuum")
public func strata_vacuum(_ container: OpaquePointer?) -> Int32 {
    shim {
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        try box.container.vacuum()
    }
}
