import CSQLite

/// Checks, when a store opens, that the file's SQLite schema is exactly what
/// Strata makes for the stored schema version: a store file is untrusted input,
/// and anything else in its schema could run inside Strata's calls (a view over
/// an endless query, a trigger deleting rows, a generated column or a DEFAULT
/// allocating a gigabyte) or break its assumptions (a missing column, a missing
/// unique index, a column of another type).
///
/// One read of `sqlite_master`, no table scan. Every object must be one of:
/// - `strata_metadata` and `strata_sequence`, as `SQLiteDialect.metadataDDL` makes them;
/// - the history tables and their indexes, as `SQLiteDialect.historyDDL` makes them
///   (all of them or none: a store that never recorded a save has none);
/// - SQLite's own `sqlite_sequence` (AUTOINCREMENT) and `sqlite_stat1`/`sqlite_stat4` (ANALYZE);
/// - a table of the layout, its columns exactly the layout's (names and types, in any
///   order: columns added by a migration come last), nothing else in its definition
///   (no constraint, default, collation, generated column);
/// - an index of the layout: same table, same columns in order, same uniqueness, plain
///   columns only (its name may be an older one: a table altered in place keeps its
///   indexes' names), and every index of the layout present;
/// - the full-text table of each searchable column, declared exactly as
///   `SQLiteDialect.createSearchTable` declares it (tokenizer and options included), and its
///   five shadow tables exactly as FTS5 makes them; every one of them present. (Damage to
///   their contents is FTS5's to find: it reports it as corruption when a search reads it.)
///
/// Views, triggers, virtual tables and anything not listed are refused. The definitions
/// are read from the `sql` SQLite itself parses, with a grammar that accepts only what
/// Strata writes (and what `ALTER TABLE … RENAME` / `ADD COLUMN` make of it); a table's or
/// index's definition byte for byte the one `SQLiteDialect` writes for it is accepted unparsed.
enum StoredSchemaCheck {
    /// One row of `sqlite_master`: what the check reads.
    typealias Object = (type: String, name: String, table: String, sql: String?)

    /// - Throws: `.corrupt` naming the first object that differs and how.
    static func verify(_ c: Connection, layout: StoreLayout, location: String, version: String) throws {
        try verify(try objects(c), layout: layout, location: location, version: version)
    }

    /// Checks the file's schema against `schema`'s layout, unless this process found these very
    /// objects (every row of `sqlite_master`, read now) right for this schema before: the check is a
    /// function of the two alone, so its answer is kept (``VerifiedStorage``); `sqlite_master` is
    /// read on every open (`objects`: the rows just read on `c`, if the caller has them).
    ///
    /// - Throws: `.corrupt` naming the first object that differs and how.
    static func verify(_ c: Connection, schema: Schema, location: String, objects read: [Object]? = nil) throws {
        let objects = try read ?? objects(c)
        if VerifiedStorage.shared.contains(schema, objects) { return }
        try verify(objects, layout: StoreLayout(schema), location: location, version: schema.version)
        VerifiedStorage.shared.insert(schema, objects)
    }

    /// Every object of the file's schema, in `sqlite_master`'s order.
    static func objects(_ c: Connection) throws -> [Object] {
        var objects: [Object] = []
        try c.statement(SQLiteDialect.schemaObjects).query { s in
            objects.append((s.text(0), s.text(1), s.text(2), s.columnType(3) == SQLITE_NULL ? nil : s.text(3)))
        }
        return objects
    }

    private static func verify(_ objects: [Object], layout: StoreLayout, location: String, version: String) throws {
        func damage(_ what: String) -> StrataError {
            StrataError(.corrupt, "'\(location)' is damaged or was changed outside Strata: \(what) (stored schema version \(version); "
                        + "the file was left untouched)")
        }
        // The layout's tables and full-text objects by lowercased name, as positions in arrays: a
        // fresh process sets up no dictionary type of its own for them (`[String: Int]` it has).
        let tableList = layout.tables
        var tables: [String: Int] = [:]
        for (i, t) in tableList.enumerated() { tables[t.name.lowercased()] = i }
        var seenTables = [Bool](repeating: false, count: tableList.count)
        var indexesLeft = tableList.map(\.indexes)
        var historyObjects = 0
        var searchList: [(name: String, sql: String)] = []
        var searchObjects: [String: Int] = [:]
        for t in tableList {
            for s in t.searchIndexes {
                searchObjects[s.name.lowercased()] = searchList.count
                searchList.append((s.name, SQLiteDialect.createSearchTable(s.name)))
                for shadow in SQLiteDialect.searchShadowTables(s.name) {
                    searchObjects[shadow.name.lowercased()] = searchList.count
                    searchList.append(shadow)
                }
            }
        }

        for o in objects {
            let key = o.name.lowercased()
            if let at = searchObjects[key] {
                let expected = searchList[at]
                guard o.type == "table", o.sql == expected.sql else {
                    throw damage("its full-text table '\(o.name)' is not the one Strata makes (\(expected.sql))")
                }
                searchObjects[key] = nil
                continue
            }
            if let expected = fixed[key] {
                guard o.type == expected.type, o.sql == expected.sql else {
                    throw damage("its \(o.type) '\(o.name)' is not the one Strata makes (\(expected.sql))")
                }
                if expected.isHistory { historyObjects += 1 }
                continue
            }
            switch o.type {
            case "table":
                guard let at = tables[key] else {
                    throw damage("it holds a table '\(o.name)' that is not part of its schema (a store holds only the tables Strata makes)")
                }
                let t = tableList[at]
                // The text Strata writes for the table is accepted as it is (checkTable accepts it);
                // anything else is parsed and checked column by column.
                // (Compared piece by piece as SQLiteDialect spells it: the text is never made.)
                let asWritten = o.sql.map { sql in DDLMatch.matches(sql) { SQLiteDialect().createTable(t, into: &$0) } } ?? false
                if !asWritten { try checkTable(t, o.sql, damage) }
                seenTables[at] = true
            case "index":
                // An index exactly as Strata writes it for one of the table's indexes left is that
                // index; any other text is parsed (its name may be an older one).
                let tableAt = tables[o.table.lowercased()]
                if let sql = o.sql, let at = tableAt, case let table = tableList[at], case let left = indexesLeft[at],
                   let i = left.firstIndex(where: { i in DDLMatch.matches(sql) { SQLiteDialect().createIndex(i, on: table.name, into: &$0) } }) {
                    indexesLeft[at].remove(at: i)
                    continue
                }
                guard let sql = o.sql, let index = parseIndex(sql), index.table.lowercased() == o.table.lowercased(),
                      let at = tableAt, case let left = indexesLeft[at],
                      let i = left.firstIndex(where: { $0.isUnique == index.isUnique && $0.columns.map { $0.lowercased() } == index.columns })
                else {
                    throw damage("it holds an index '\(o.name)' on '\(o.table)' that is not part of its schema "
                                 + "(a store holds only the indexes its schema declares, on plain columns)")
                }
                indexesLeft[at].remove(at: i)
            default:
                throw damage("it holds a \(o.type) '\(o.name)' (a store holds no views or triggers: they would run inside Strata's calls)")
            }
        }
        for t in tableList where tables[t.name.lowercased()].map({ !seenTables[$0] }) ?? true {
            throw damage("its table '\(t.name)' is missing")
        }
        if let missing = searchObjects.values.map({ searchList[$0].name }).min() {
            throw damage("its full-text table '\(missing)' is missing")
        }
        for t in layout.tables {
            if let missing = tables[t.name.lowercased()].flatMap({ indexesLeft[$0].first }) {
                throw damage("table '\(t.name)' lacks its \(missing.isUnique ? "unique " : "")index on (\(missing.columns.joined(separator: ", ")))")
            }
        }
        if historyObjects != 0 && historyObjects != historyCount {
            throw damage("some of its history tables or their indexes are missing")
        }
    }

    // MARK: Objects every store may hold

    private struct Fixed {
        let type: String
        let sql: String
        let isHistory: Bool
    }

    /// The store's own tables and indexes by lowercased name, with the `sql` SQLite keeps for them
    /// (the DDL without `IF NOT EXISTS`), and SQLite's own tables.
    private static let fixed: [String: Fixed] = {
        var out: [String: Fixed] = [:]
        func add(_ ddl: String, history: Bool) {
            // CREATE [UNIQUE] TABLE|INDEX [IF NOT EXISTS] name …: read as bytes (this runs in every
            // process that opens a store, and splitting it into words cost a fifth of the check).
            var bytes = Array(ddl.utf8)
            func has(_ word: String, at i: Int) -> Bool { i <= bytes.count && bytes[i...].starts(with: word.utf8) }
            guard has("CREATE ", at: 0) else { return }
            var at = 7
            if has("UNIQUE ", at: at) { at += 7 }
            let isTable = has("TABLE ", at: at)
            guard isTable || has("INDEX ", at: at) else { return }
            at += 6
            if has("IF NOT EXISTS ", at: at) { bytes.removeSubrange(at..<at + 14) }
            var end = at
            while end < bytes.count, bytes[end] != UInt8(ascii: " ") { end += 1 }
            guard end > at else { return }
            let name = String(decoding: bytes[at..<end], as: UTF8.self)
            out[name.lowercased()] = Fixed(type: isTable ? "table" : "index", sql: String(decoding: bytes, as: UTF8.self), isHistory: history)
        }
        for ddl in SQLiteDialect.metadataDDL { add(ddl, history: false) }
        for ddl in SQLiteDialect.historyDDL { add(ddl, history: true) }
        out["sqlite_sequence"] = Fixed(type: "table", sql: "CREATE TABLE sqlite_sequence(name,seq)", isHistory: false)
        out["sqlite_stat1"] = Fixed(type: "table", sql: "CREATE TABLE sqlite_stat1(tbl,idx,stat)", isHistory: false)
        out["sqlite_stat4"] = Fixed(type: "table", sql: "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)", isHistory: false)
        return out
    }()

    private static let historyCount = SQLiteDialect.historyDDL.count

    // MARK: Tables

    private static func checkTable(_ t: StoreLayout.Table, _ sql: String?, _ damage: (String) -> StrataError) throws {
        let problem = "its table '\(t.name)' does not match the stored schema"
        guard let sql, let parsed = parseTable(sql) else {
            throw damage("\(problem): its definition is not one Strata makes (\(sql.map { String($0.prefix(300)) } ?? "none"))")
        }
        let rowidKey = !t.withoutRowID && t.primaryKey.count == 1 ? t.primaryKey[0].lowercased() : nil
        guard parsed.withoutRowID == t.withoutRowID,
              parsed.primaryKey == (rowidKey == nil ? t.primaryKey.map { $0.lowercased() } : []) else {
            throw damage("\(problem): its primary key differs")
        }
        var expected: [String: (name: String, type: [String])] = [:]
        for c in t.columns {
            // Upper-case ASCII words, as SQLiteDialect writes them.
            var type = SQLiteDialect.columnType(c).utf8.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
            if c.name.lowercased() == rowidKey { type += ["PRIMARY", "KEY"] }
            expected[c.name.lowercased()] = (c.name, type)
        }
        var seen: Set<String> = []
        for col in parsed.columns {
            let key = col.name.lowercased()
            guard let e = expected[key], !seen.contains(key) else {
                throw damage("\(problem): it has a column '\(col.name)' the schema does not declare")
            }
            seen.insert(key)
            guard col.type == e.type else {
                throw damage("\(problem): column '\(e.name)' is declared '\(col.type.joined(separator: " "))', not '\(e.type.joined(separator: " "))'")
            }
        }
        if let missing = t.columns.first(where: { !seen.contains($0.name.lowercased()) }) {
            throw damage("\(problem): column '\(missing.name)' is missing")
        }
    }

    struct ParsedTable {
        var columns: [(name: String, type: [String])] = []
        /// Lowercased, from a table constraint `PRIMARY KEY (…)`.
        var primaryKey: [String] = []
        var withoutRowID = false
    }

    /// `CREATE TABLE name (col WORD…, …[, PRIMARY KEY (col, …)]) [WITHOUT ROWID]`; nil for anything else.
    static func parseTable(_ sql: String) -> ParsedTable? {
        guard let tokens = tokenize(sql), tokens.count > 4, tokens[0].isWord("CREATE"), tokens[1].isWord("TABLE"),
              tokens[2].name != nil, tokens[3] == .punct("(") else { return nil }
        var out = ParsedTable()
        var i = 4
        while true {
            if tokens[i].isWord("PRIMARY"), i + 2 < tokens.count, tokens[i + 1].isWord("KEY"), tokens[i + 2] == .punct("(") {
                guard out.primaryKey.isEmpty, let (names, next) = nameList(tokens, from: i + 3) else { return nil }
                out.primaryKey = names
                i = next
            } else {
                guard let name = tokens[i].name else { return nil }
                i += 1
                var type: [String] = []
                while i < tokens.count, case .word(let w) = tokens[i] {
                    type.append(asciiUppercased(w))
                    i += 1
                }
                out.columns.append((name, type))
            }
            guard i < tokens.count else { return nil }
            if tokens[i] == .punct(",") { i += 1; guard i < tokens.count else { return nil }; continue }
            guard tokens[i] == .punct(")") else { return nil }
            i += 1
            break
        }
        if i < tokens.count {
            guard i + 2 == tokens.count, tokens[i].isWord("WITHOUT"), tokens[i + 1].isWord("ROWID") else { return nil }
            out.withoutRowID = true
        }
        return out
    }

    /// `word` with its ASCII letters in upper case, as SQLite reads a type name (other characters
    /// as they are: SQLite folds no other case).
    static func asciiUppercased(_ word: String) -> String {
        guard word.utf8.contains(where: { $0 >= 0x61 && $0 <= 0x7A }) else { return word }
        return String(decoding: word.utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
    }

    /// `CREATE [UNIQUE] INDEX name ON table (col, …)`: the table, the lowercased columns and
    /// uniqueness; nil for anything else (expressions, collations, orders, a WHERE clause).
    static func parseIndex(_ sql: String) -> (table: String, columns: [String], isUnique: Bool)? {
        guard let tokens = tokenize(sql), tokens.count > 2, tokens[0].isWord("CREATE") else { return nil }
        var i = 1
        let unique = tokens[i].isWord("UNIQUE")
        if unique { i += 1 }
        guard i + 4 < tokens.count, tokens[i].isWord("INDEX"), tokens[i + 1].name != nil, tokens[i + 2].isWord("ON"),
              let table = tokens[i + 3].name, tokens[i + 4] == .punct("("),
              let (columns, next) = nameList(tokens, from: i + 5), next == tokens.count else { return nil }
        return (table, columns, unique)
    }

    /// `name, name, …)` from `from`: the lowercased names and the index past the `)`.
    private static func nameList(_ tokens: [Token], from: Int) -> ([String], Int)? {
        var names: [String] = []
        var i = from
        while i < tokens.count {
            guard let n = tokens[i].name else { return nil }
            names.append(n.lowercased())
            i += 1
            guard i < tokens.count else { return nil }
            if tokens[i] == .punct(")") { return (names, i + 1) }
            guard tokens[i] == .punct(",") else { return nil }
            i += 1
        }
        return nil
    }

    // MARK: Tokens

    enum Token: Equatable {
        /// A bare word: a keyword, a type name or an unquoted identifier.
        case word(String)
        /// A quoted identifier ("…", `…` or […]), unquoted.
        case quoted(String)
        case punct(Character)

        /// Whether this is the bare word `w` (upper-case ASCII), in any case.
        func isWord(_ w: String) -> Bool {
            guard case .word(let x) = self, x.utf8.count == w.utf8.count else { return false }
            return zip(x.utf8, w.utf8).allSatisfy { a, b in a == b || (a >= 0x61 && a <= 0x7A && a - 0x20 == b) }
        }
        /// The identifier a word or quoted name stands for.
        var name: String? {
            switch self {
            case .word(let w), .quoted(let w): return w
            case .punct: return nil
            }
        }
    }

    /// The tokens of DDL as Strata writes it: words, quoted identifiers, `(`, `)` and `,`,
    /// separated by white space. Nil for anything else (literals, operators, comments).
    ///
    /// Read byte by byte: every byte of a multi-byte UTF-8 sequence is 0x80 or above, so a
    /// non-ASCII character is a word character, and never a quote, as it is read scalar by scalar.
    static func tokenize(_ sql: String) -> [Token]? {
        var sql = sql
        return sql.withUTF8 { s -> [Token]? in
            var out: [Token] = []
            var i = 0
            func isWordChar(_ c: UInt8) -> Bool {
                (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x24 || c >= 0x80
            }
            func text(_ from: Int, _ to: Int) -> String { String(decoding: UnsafeBufferPointer(rebasing: s[from..<to]), as: UTF8.self) }
            while i < s.count {
                let c = s[i]
                switch c {
                case 0x20, 0x0A, 0x09, 0x0D:
                    i += 1
                case 0x28, 0x29, 0x2C:
                    out.append(.punct(Character(Unicode.Scalar(c))))
                    i += 1
                case 0x22, 0x60, 0x5B:
                    let close: UInt8 = c == 0x5B ? 0x5D : c
                    var name: [UInt8] = []
                    i += 1
                    var closed = false
                    var from = i
                    while i < s.count {
                        if s[i] == close {
                            name.append(contentsOf: UnsafeBufferPointer(rebasing: s[from..<i]))
                            // A doubled quote stands for itself ("" or ``; never inside […]).
                            if close != 0x5D, i + 1 < s.count, s[i + 1] == close { name.append(close); i += 2; from = i; continue }
                            i += 1
                            closed = true
                            break
                        }
                        i += 1
                    }
                    guard closed else { return nil }
                    out.append(.quoted(String(decoding: name, as: UTF8.self)))
                default:
                    guard isWordChar(c), !(c >= 0x30 && c <= 0x39) else { return nil }
                    let from = i
                    while i < s.count, isWordChar(s[i]) { i += 1 }
                    out.append(.word(text(from, i)))
                }
            }
            return out
        }
    }
}
