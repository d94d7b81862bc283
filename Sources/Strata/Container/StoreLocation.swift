/// Where a container's store lives, as `strata_open` is given it: a store file
/// (or memory), or a PostgreSQL connection URI. The composition root chooses the
/// store implementation from it.
public enum StoreLocation {
    case file(String?)
    /// A `postgresql://` or `postgres://` URI (libpq's syntax). It may hold a
    /// password: it is never copied into an error, a log or a trace.
    case postgreSQL(String)

    public init(_ path: String?) {
        guard let path else { self = .file(nil); return }
        let scheme = path.prefix(while: { $0 != ":" }).lowercased()
        if (scheme == "postgresql" || scheme == "postgres") && path.dropFirst(scheme.count).hasPrefix("://") {
            self = .postgreSQL(path)
        } else {
            self = .file(path)
        }
    }

    /// How a message names the store: the file's path, never a URI (it may hold a password).
    public var displayName: String {
        switch self {
        case .file(let path): return path.map { "'\($0)'" } ?? "the in-memory store"
        case .postgreSQL: return "the PostgreSQL store"
        }
    }

    /// The store file's path (nil for a server).
    var fileName: String? {
        if case .file(let path) = self { return path }
        return nil
    }

    /// The file store's path, or the error for a call that only reads store files.
    func filePath(for call: String) throws -> String? {
        switch self {
        case .file(let path):
            return path
        case .postgreSQL:
            throw StrataError(.invalid, "\(call) takes a store file: PostgreSQL stores are not supported by it in this version of Strata "
                              + "(the location is not repeated here: it may hold a password)")
        }
    }
}
