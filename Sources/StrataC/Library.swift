import Glibc
import Strata

// Header section: Library (versions, errors, memory).

private let versionText: StaticString = "0.1.0"

@_cdecl("strata_version")
public func strata_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(versionText.utf8Start).assumingMemoryBound(to: CChar.self)
}

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
