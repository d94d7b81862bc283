// The smallest Swift library a C program can call: one function, built by run.sh the way
// libstrata.so is linked (static standard library, lld, packed relative relocations, libstdc++
// and libgcc linked in). What loading it costs a process is what any library built with this
// toolchain costs, before it does anything of its own.

@_cdecl("floor_minimal")
public func floorMinimal(_ x: Int32) -> Int32 {
    // One dictionary keyed by an interpolated string: the Swift runtime's first use of a
    // collection, a hash seed and a string, as any library's first call makes.
    var d: [String: Int] = [:]
    d["k\(x)"] = Int(x)
    return Int32(d.count)
}
