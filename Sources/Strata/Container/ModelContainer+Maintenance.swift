/// Backup, integrity check and vacuum of the container's store (`strata_backup`,
/// `strata_check_integrity`, `strata_vacuum`): the store does the work (``StoreMaintenance``),
/// the container adds the checks every store shares through the seam (history).
extension ModelContainer {
    private var maintenance: StoreMaintenance {
        get throws {
            guard let m = store as? StoreMaintenance else {
                throw StrataError(.invalid, "this store offers no backup, integrity check or vacuum")
            }
            return m
        }
    }

    /// Copies a SQLite store file, online, with the external-storage files it names, to
    /// `destination`: one consistent snapshot while other connections and processes write.
    ///
    /// - Throws: `.invalid` when `destination` exists (unless `overwrite`), is the store itself,
    ///   or the store is in memory or on PostgreSQL (pg_dump copies those); `.io`, `.busy`.
    public func backup(to destination: String, overwrite: Bool = false) throws {
        try maintenance.backup(to: destination, overwrite: overwrite)
    }

    /// Checks the store: SQLite's own check, the tables against the stored schema, links,
    /// pairs, stored values, external-storage files and history rows (docs/JSON.md, "Backup and integrity").
    /// Damage is reported, not thrown.
    ///
    /// - Throws: `.io`, `.busy`, `.misuse` only (a check that could not run).
    public func checkIntegrity() throws -> IntegrityReport {
        var report = IntegrityReport()
        try maintenance.checkIntegrity(&report)
        // Tables that do not match the schema may be the history's: reading them would only repeat it.
        if !report.problems.contains(where: { $0.kind == .table }), let history = try store.makeSession() as? HistoryStorage {
            try IntegrityCheck.history(history, &report)
        }
        return report
    }

    /// The integrity report as JSON: `{"ok", "problems": [...], "truncated"}`.
    public func checkIntegrityJSON() throws -> [UInt8] { try checkIntegrity().json }

    /// Rebuilds the store to reclaim space: SQLite's `VACUUM`, PostgreSQL's `VACUUM (ANALYZE)`
    /// of the store's tables.
    ///
    /// - Throws: `.readOnly`; `.busy` when the write lock stays taken past the busy timeout.
    public func vacuum() throws {
        try maintenance.vacuum()
    }
}

/// The options of `strata_backup` (docs/JSON.md, "Backup and integrity"): `{"overwrite": true|false}`.
public struct BackupOptions: Sendable {
    /// Replace an existing destination (its file, side files and `.strata` folder).
    public var overwrite = false

    public init(overwrite: Bool = false) { self.overwrite = overwrite }

    /// - Throws: `.invalid` for malformed JSON, a value of the wrong kind or an unknown key (naming its path).
    public static func decode(_ json: UnsafeBufferPointer<UInt8>) throws -> BackupOptions {
        var o = try ObjectReader(try JSONValue.parse(json), path: JSONPath(), what: "backup options")
        let options = BackupOptions(overwrite: try o.bool("overwrite") ?? false)
        try o.finish()
        return options
    }
}
