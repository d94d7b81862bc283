import Glibc
import Strata

// Header section: Library (versions, errors, memory).

private let versionText: StaticString = "0.1.0"

@_cdecl("strata_version")
public func strata_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(versionText.utf8Start).assumingMemoryBound(to: CChar.self)
}

private let statusTexts: [StaticString] = [
    "not an error", "library misuse", "invalid argument", "invalid schema", "not found",
    "constraint violated", "validation failed", "incompatible store", "migration failed",
    "callback failed", "database is busy", "store is read-only", "I/O error", "store is corrupt",
    "out of memory", "internal error",
]
private let unknownStatus: StaticString = "unknown status"

@_cdecl("strata_errstr")
public func strata_errstr(_ status: Int32) -> UnsafePointer<CChar> {
    let s = status >= 0 && Int(status) < statusTexts.count ? statusTexts[Int(status)] : unknownStatus
    return UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("strata_last_error")
public func strata_last_error() -> UnsafePointer<CChar> { LastError.current }

@_cdecl("strata_free")
public func strata_free(_ p: UnsafeMutableRawPointer?) { free(p) }
