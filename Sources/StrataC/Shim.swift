import Glibc
import Strata

// The C shim: handles, the per-thread last error, and the `shim` wrapper
// every exported function goes through. Nothing here knows about SQL.

/// Live handles. A call with a pointer that is not live (never created,
/// or already freed) fails with STRATA_ERR_MISUSE instead of crashing.
///
/// A handle is a number the process never gives twice, shown to C as an opaque
/// pointer (never an object's address: the memory of a freed object is reused,
/// and a stale handle would then name a live object of someone else).
enum Handles {
    private static let lock = Lock()
    nonisolated(unsafe) private static var live: [UInt: AnyObject] = [:]
    nonisolated(unsafe) private static var issued: UInt = 0

    static func register(_ object: AnyObject) -> OpaquePointer {
        // Multiples of 16, from 16 on: never NULL, aligned like a pointer; 2^60 handles before any repeats.
        let key: UInt = lock.withLock {
            issued &+= 1
            let key = issued &<< 4
            live[key] = object
            return key
        }
        return unsafeBitCast(key, to: OpaquePointer.self)
    }

    static func resolve<T: AnyObject>(_ handle: OpaquePointer?, as type: T.Type, _ what: String) throws -> T {
        guard let handle else { throw StrataError(.misuse, "the \(what) handle is NULL") }
        let key = UInt(bitPattern: Int(bitPattern: handle))
        // Taken (retained) under the lock: a free on another thread either happened
        // before (the handle is not live) or waits until the caller holds the object.
        let object: T? = lock.withLock { live[key] as? T }
        guard let object else {
            throw StrataError(.misuse, "the \(what) handle is not a live \(what) (already freed, or not a \(what))")
        }
        return object
    }

    /// Forgets and releases a handle; false when it was not live.
    @discardableResult
    static func release(_ handle: OpaquePointer?) -> Bool {
        guard let handle else { return false }
        let key = UInt(bitPattern: Int(bitPattern: handle))
        let object = lock.withLock { live.removeValue(forKey: key) }
        return object != nil  // released here, outside the lock (a box may own user data)
    }
}

/// The per-thread last error (`strata_last_error()`), a malloc'd C string.
enum LastError {
    nonisolated(unsafe) static var key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { p in free(p) }
        return k
    }()

    static let okText = "{\"code\":\"ok\",\"status\":0,\"message\":\"not an error\"}"

    static func set(_ json: String) {
        let old = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(strdup(json)))
        free(old)
    }

    static func set(_ error: StrataError) { set(error.json) }

    static func clear() {
        if pthread_getspecific(key) != nil { set(okText) }
    }

    static var current: UnsafePointer<CChar> {
        if let p = pthread_getspecific(key) { return UnsafePointer(p.assumingMemoryBound(to: CChar.self)) }
        set(okText)
        return UnsafePointer(pthread_getspecific(key)!.assumingMemoryBound(to: CChar.self))
    }
}

/// Runs `body`, converting every thrown error into a status and the last error.
@inline(__always)
func shim(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        LastError.clear()
        return 0
    } catch let e as StrataError {
        LastError.set(e)
        return e.code.rawValue
    } catch {
        LastError.set(StrataError(.internal, "unexpected error: \(error)"))
        return StrataError.Code.internal.rawValue
    }
}

/// A required C string argument.
func string(_ p: UnsafePointer<CChar>?, _ what: String) throws -> String {
    guard let p else { throw StrataError(.misuse, "\(what) is NULL") }
    return String(cString: p)
}

/// A required C string argument as bytes (valid during the call).
func withBytes<T>(_ p: UnsafePointer<CChar>?, _ what: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T {
    guard let p else { throw StrataError(.misuse, "\(what) is NULL") }
    let n = strlen(p)
    return try p.withMemoryRebound(to: UInt8.self, capacity: n) { try body(UnsafeBufferPointer(start: $0, count: n)) }
}

/// A new malloc'd NUL-terminated copy, freed by the caller with strata_free().
func cString(_ bytes: [UInt8]) throws -> UnsafeMutablePointer<CChar> {
    guard let p = malloc(bytes.count + 1) else { throw StrataError(.noMemory, "out of memory") }
    bytes.withUnsafeBytes { buf in
        if let base = buf.baseAddress { memcpy(p, base, bytes.count) }
    }
    p.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
    return p.assumingMemoryBound(to: CChar.self)
}

func cString(_ s: String) throws -> UnsafeMutablePointer<CChar> { try cString(Array(s.utf8)) }

/// The buffer itself (malloc'd, NUL-terminated, freed with strata_free()): no copy.
func cString(_ buffer: JSONBuffer) throws -> UnsafeMutablePointer<CChar> {
    guard let p = buffer.take() else { throw StrataError(.internal, "a result buffer was handed out twice") }
    return p
}

/// Checks an out-parameter and clears it.
func out<T>(_ p: UnsafeMutablePointer<T?>?, _ what: String) throws -> UnsafeMutablePointer<T?> {
    guard let p else { throw StrataError(.misuse, "\(what) (the out-parameter) is NULL") }
    p.pointee = nil
    return p
}
