extension Array where Element == String {
    /// The strings one after another, `separator` between each two: what the standard library's
    /// `joined(separator:)` returns. Strata joins arrays of strings everywhere it writes SQL
    /// and layouts; the standard library's version is a generic entry point whose first call in
    /// a process looks the array's conformances up at run time (about 0.1M instructions, a few
    /// percent of a fresh process's open). This one is compiled for `[String]` and sizes its
    /// result once.
    func joined(separator: String = "") -> String {
        guard count > 1 else { return first ?? "" }
        var size = separator.utf8.count * (count - 1)
        for s in self { size += s.utf8.count }
        var out = ""
        out.reserveCapacity(size)
        for (i, s) in enumerated() {
            if i > 0 { out += separator }
            out += s
        }
        return out
    }
}
