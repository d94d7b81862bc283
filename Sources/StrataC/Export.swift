import Strata

// Header section: Export and import.

public typealias StrataWriteFn = @convention(c) (UnsafePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32
public typealias StrataReadFn = @convention(c) (UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int

@_cdecl("strata_export")
public func strata_export(_ container: OpaquePointer?, _ write: StrataWriteFn?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    shim {
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        guard let write else { throw StrataError(.misuse, "write (the callback) is NULL") }
        try box.container.export { chunk in
            let status = write(chunk.baseAddress?.assumingMemoryBound(to: CChar.self), chunk.count, userdata)
            guard status == 0 else {
                throw StrataError(.callback, "the write callback returned \(status): the export stopped (what it was given before is incomplete)")
            }
        }
    }
}

@_cdecl("strata_import")
public func strata_import(_ container: OpaquePointer?, _ read: StrataReadFn?, _ userdata: UnsafeMutableRawPointer?,
                          _ outCount: UnsafeMutablePointer<Int64>?) -> Int32 {
    shim {
        outCount?.pointee = 0
        let box = try Handles.resolve(container, as: ContainerBox.self, "container")
        guard let read else { throw StrataError(.misuse, "read (the callback) is NULL") }
        let count = try box.container.importObjects { buffer in
            let n = read(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), buffer.count, userdata)
            guard n >= 0 else { throw StrataError(.callback, "the read callback returned \(n) (an error): nothing was imported") }
            return n
        }
        outCount?.pointee = count
    }
}
