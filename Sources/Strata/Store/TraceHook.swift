import Glibc
import Synchronization

/// Whether `STRATA_SQL_DEBUG=1` asks for every SQL statement of every store on stderr.
let sqlDebug: Bool = {
    guard let v = getenv("STRATA_SQL_DEBUG") else { return false }
    return String(cString: v) == "1"
}()

/// A store-wide hook that sees every statement its sessions run (for tests
/// counting queries, and for debugging). A SQL store reports SQL text.
public final class TraceHook: @unchecked Sendable {
    private let active = Atomic<Bool>(false)
    private let lock = Lock()
    private var callback: ((String) -> Void)?

    public init() {}

    /// Sets (or with nil, removes) the callback.
    public func set(_ callback: ((String) -> Void)?) {
        let old: ((String) -> Void)? = lock.withLock {
            let previous = self.callback
            self.callback = callback
            active.store(callback != nil, ordering: .releasing)
            return previous
        }
        _ = old  // released outside the lock (its userdata may be freed by user code)
    }

    @inline(__always) var isActive: Bool { active.load(ordering: .acquiring) }

    func emit(_ sql: String) {
        let cb = lock.withLock { callback }
        cb?(sql)
    }
}
