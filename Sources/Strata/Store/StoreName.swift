/// How messages name a store and what a refusal left of it: a file by its quoted path,
/// a server store by its schema (never by its location, which may hold a password).
public struct StoreName: Sendable, Equatable {
    /// `'trips.store'`, `the PostgreSQL schema 'app'`.
    public let phrase: String
    /// `the store 'trips.store'`, `the store in the PostgreSQL schema 'app'`.
    public let theStore: String
    /// `the file was left untouched`, `nothing was changed`.
    public let untouched: String

    /// A store file (or `:memory:`) at `path`.
    public static func file(_ path: String) -> StoreName {
        StoreName(phrase: "'\(path)'", theStore: "the store '\(path)'", untouched: "the file was left untouched")
    }

    /// A store on a server, described without its location (`the PostgreSQL schema 'app'`).
    public static func server(_ description: String) -> StoreName {
        StoreName(phrase: description, theStore: "the store in \(description)", untouched: "nothing was changed")
    }
}
