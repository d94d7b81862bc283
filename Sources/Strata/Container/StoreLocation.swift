/// Where a container's store lives, as `strata_open` is given it: a store file
/// (or memory), or a PostgreSQL connection URI. The composition root chooses the
/// store implementation from it.
enum StoreLocation {
    case file(String?)
    /// A `postgresql://` or `postgres://` URI (libpq's syntax). It may hold a
    /// password: it is never copied into an error, a log or a trace.
    case postgreSQL

    init(_ path: String?) {
        guard let path else { self = .file(nil); return }
        let scheme = path.prefix(while: { $0 != ":" }).lowercased()
        if (scheme == "postgresql" || scheme == "postgres") && path.dropFirst(scheme.count).hasPrefix("://") {
            self = .postgreSQL
        } else {
            self = .file(path)
        }
    }

    /// The file store's path, or the error for a location no store of this build opens.
    func filePath() throws -> String? {
        switch self {
        case .file(let path):
            return path
        case .postgreSQL:
            throw StrataError(.invalid, "a postgresql:// location names a PostgreSQL server: PostgreSQL stores are not supported by "
                              + "this version of Strata; open a store file (the location is not repeated here: it may hold a password)")
        }
    }
}
