/// The one error type of the Strata core.
///
/// Every failure the library reports, from a malformed JSON key to a SQLite
/// I/O error, is a `StrataError`. It carries a stable ``Code`` (mapped
/// one-to-one to the C status codes), a human message, and where known the
/// entity, attribute, JSON path and SQLite result code. User-bound values are
/// never copied into it.
///
/// The message is for people. Code that must tell one failure from another
/// reads ``code`` and, within a code, ``reason`` — never the message text:
///
/// ```swift
/// do { try context.insert(entity: "Trip", json: input) }
/// catch let e as StrataError where e.reason == .malformedJSON { … }
/// ```
public struct StrataError: Error, CustomStringConvertible, Sendable {
    /// Stable error codes; the raw value is the C `strata_status` number.
    public enum Code: Int32, Sendable, CaseIterable {
        case misuse = 1
        case invalid = 2
        case schema = 3
        case notFound = 4
        case constraint = 5
        case validation = 6
        case incompatibleStore = 7
        case migration = 8
        case callback = 9
        case busy = 10
        case readOnly = 11
        case io = 12
        case corrupt = 13
        case noMemory = 14
        case `internal` = 15
        /// A history token older than the oldest kept transaction, or of another store.
        case historyExpired = 16

        /// The stable text used in `strata_last_error()` JSON.
        public var name: String {
            switch self {
            case .misuse: return "misuse"
            case .invalid: return "invalid"
            case .schema: return "schema"
            case .notFound: return "not_found"
            case .constraint: return "constraint"
            case .validation: return "validation"
            case .incompatibleStore: return "incompatible_store"
            case .migration: return "migration"
            case .callback: return "callback"
            case .busy: return "busy"
            case .readOnly: return "readonly"
            case .io: return "io"
            case .corrupt: return "corrupt"
            case .noMemory: return "nomem"
            case .internal: return "internal"
            case .historyExpired: return "history_token_expired"
            }
        }
    }

    /// What went wrong, finer than ``Code``, for the failures code tells apart
    /// (as GRDB's extended result codes or Foundation's `CocoaError.Code`). Most
    /// errors have none: their code says all a caller can act on.
    public enum Reason: Sendable, Hashable {
        /// The input is not well-formed JSON: a syntax error, a string that is
        /// not valid UTF-8, nesting deeper than 128 (code `invalid`). A value of
        /// the wrong kind in well-formed JSON is no syntax error (`validation`).
        case malformedJSON
        /// A unique constraint of the error's entity refused a write: a saved
        /// object holds the same values of `attributes` (code `constraint`).
        case uniqueViolation(attributes: [String])
        /// A user's hook failed (code `callback`). `status` is what it returned,
        /// exactly as returned (a C hook's non-zero status, or the code of the
        /// ``StrataError`` a Swift hook threw); nil when it threw anything else.
        case hookFailed(status: Int32?)

        /// The stable text used in `strata_last_error()` JSON (`"reason"`).
        public var name: String {
            switch self {
            case .malformedJSON: return "malformed_json"
            case .uniqueViolation: return "unique_violation"
            case .hookFailed: return "hook_failed"
            }
        }
    }

    public var code: Code
    /// The finer reason, when the failure has one (see ``Reason``).
    public var reason: Reason?
    public var message: String
    public var entity: String?
    public var attribute: String?
    /// A JSON pointer (RFC 6901) into the input document, e.g. `/entities/0/attributes/2/type`.
    public var path: String?
    /// The SQLite extended result code, when SQLite reported the failure.
    public var sqliteCode: Int32?
    /// The SQLSTATE, when a PostgreSQL server reported the failure.
    public var postgresState: String?
    /// The migration stage that failed, when a stage did.
    public var stage: String?
    /// The status a user hook returned (`STRATA_ERR_CALLBACK`), as it returned it
    /// (the status of ``Reason/hookFailed(status:)``).
    public var hookStatus: Int32? {
        if case .hookFailed(let status)? = reason { return status }
        return nil
    }

    public init(_ code: Code, _ message: String, reason: Reason? = nil, entity: String? = nil, attribute: String? = nil,
                path: String? = nil, sqliteCode: Int32? = nil, postgresState: String? = nil) {
        self.code = code
        self.postgresState = postgresState
        self.reason = reason
        self.message = message
        self.entity = entity
        self.attribute = attribute
        self.path = path
        self.sqliteCode = sqliteCode
    }

    /// Whether a unique constraint refused the write (reason ``Reason/uniqueViolation(attributes:)``).
    public var isUniqueViolation: Bool {
        if case .uniqueViolation? = reason { return true }
        return false
    }

    public var description: String { "\(code.name): \(message)" }

    func with(entity: String? = nil, attribute: String? = nil, path: String? = nil) -> StrataError {
        var copy = self
        if copy.entity == nil { copy.entity = entity }
        if copy.attribute == nil { copy.attribute = attribute }
        if copy.path == nil { copy.path = path }
        return copy
    }
}

/// Builds a JSON pointer token list into text ("/entities/0/name").
struct JSONPath: CustomStringConvertible {
    /// The last token and, through its parents, the ones before it: appending makes one node and
    /// copies nothing (decoders make a path for every member they read; few become messages).
    private final class Node {
        let parent: Node?
        /// The member's key, or nil for an array index.
        let key: String?
        let index: Int
        init(parent: Node?, key: String?, index: Int) { self.parent = parent; self.key = key; self.index = index }
    }
    private var last: Node?

    init() {}
    private init(last: Node) { self.last = last }

    func appending(_ key: String) -> JSONPath { JSONPath(last: Node(parent: last, key: key, index: 0)) }
    func appending(_ index: Int) -> JSONPath { JSONPath(last: Node(parent: last, key: nil, index: index)) }
    static func / (lhs: JSONPath, rhs: String) -> JSONPath { lhs.appending(rhs) }
    static func / (lhs: JSONPath, rhs: Int) -> JSONPath { lhs.appending(rhs) }

    /// The tokens, first to last.
    var tokens: [String] {
        var out: [String] = []
        var node = last
        while let n = node {
            out.append(n.key ?? String(n.index))
            node = n.parent
        }
        return out.reversed()
    }

    /// " at /a/b" for messages, or "" at the top level.
    var at: String { last == nil ? "" : " at \(description)" }

    var description: String {
        var out = ""
        for t in tokens {
            out += "/"
            for c in t {
                if c == "~" { out += "~0" } else if c == "/" { out += "~1" } else { out.append(c) }
            }
        }
        return out
    }
}
