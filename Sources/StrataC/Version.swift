import Strata

private let versionText: StaticString = "0.1.0"

@_cdecl("strata_version")
public func strata_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(versionText.utf8Start).assumingMemoryBound(to: CChar.self)
}
