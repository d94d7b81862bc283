import Glibc
import Strata

// Header section: Library (versions, errors, memory).

/// `StrataInfo.version` as C text, made once (the one Swift definition of the version;
/// the header's STRATA_VERSION is checked against it by the tests).
nonisolated(unsafe) private let versionText: UnsafePointer<CChar> = {
    if let p = strdup(StrataInfo.version) { return UnsafePointer(p) }
    return UnsafeRawPointer(("unknown" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
}()

@_cdecl("strata_version")
public func strata_version() -> UnsafePointer<CChar> { versionText }

/// Static text for a status, mapped code by code (never by position).
private func statusText(_ status: Int32) -> StaticString {
    if status == 0 { return "not an error" }
    guard let code = StrataError.Code(rawValue: status) else { return "unknown status" }
    switch code {
    case .misuse: return "library misuse"
    case .invalid: return "invalid argument"
    case .schema: return "invalid schema"
    case .notFound: return "not found"
    case .constraint: return "constraint violated"
    case .validation: return "validation failed"
    case .incompatibleStore: return "incompatible store"
    case .migration: return "migration failed"
    case .callback: return "callback failed"
    case .busy: return "database is busy"
    case .readOnly: return "store is read-only"
    case .io: return "I/O error"
    case .corrupt: return "store is corrupt"
    case .noMemory: return "out of memory"
    case .internal: return "internal error"
    case .historyExpired: return "history token expired"
    }
}

@_cdecl("strata_errstr")
public func strata_errstr(_ status: Int32) -> UnsafePointer<CChar> {
    let s = statusText(status)
    return UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("strata_last_error")
public func strata_last_error() -> UnsafePointer<CChar> { LastError.current }

@_cdecl("strata_free")
public func strata_free(_ p: UnsafeMutableRawPointer?) { free(p) }
