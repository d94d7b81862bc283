import CSQLite

/// SQL functions and collations Strata registers on every connection, so
/// that SQL agrees with ``Evaluation`` (SQLite's own LIKE/lower are ASCII-only):
///
/// - `strata_fold(text, flags)`: case (1) and/or diacritic (2) folding.
/// - `strata_lsc(text, text)`: localizedStandardContains, 0 or 1 (0 with a NULL).
/// - `strata_length(text)`: the number of Unicode scalars (NULL with a NULL).
/// - collation `strata_standard`: localizedStandard order (Finder order).
/// - collation `strata_decimal`: exact numeric order of decimal text.
enum SQLFunctions {
    static func register(_ db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        sqlite3_create_function_v2(db, "strata_fold", 2, flags, nil, { ctx, argc, argv in
            guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
            guard sqlite3_value_type(a0) != SQLITE_NULL, let p = sqlite3_value_text(a0) else { sqlite3_result_null(ctx); return }
            let n = Int(sqlite3_value_bytes(a0))
            let options = sqlite3_value_int(a1)
            var out: [UInt8] = []
            out.reserveCapacity(n)
            TextFolding.fold(utf8: UnsafeBufferPointer(start: p, count: n), caseInsensitive: options & 1 != 0,
                             diacriticInsensitive: options & 2 != 0, into: &out)
            out.withUnsafeBytes { buf in
                if let base = buf.baseAddress {
                    sqlite3_result_text(ctx, base.assumingMemoryBound(to: CChar.self), Int32(buf.count), SQLITE_TRANSIENT_PTR)
                } else {
                    sqlite3_result_text(ctx, "", 0, SQLITE_TRANSIENT_PTR)
                }
            }
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_lsc", 2, flags, nil, { ctx, argc, argv in
            guard let ctx, let argv, argc == 2, let a0 = argv[0], let a1 = argv[1] else { return }
            guard sqlite3_value_type(a0) != SQLITE_NULL, sqlite3_value_type(a1) != SQLITE_NULL,
                  let p0 = sqlite3_value_text(a0), let p1 = sqlite3_value_text(a1) else { sqlite3_result_int(ctx, 0); return }
            let h = String(decoding: UnsafeBufferPointer(start: p0, count: Int(sqlite3_value_bytes(a0))), as: UTF8.self)
            let n = String(decoding: UnsafeBufferPointer(start: p1, count: Int(sqlite3_value_bytes(a1))), as: UTF8.self)
            sqlite3_result_int(ctx, TextFolding.localizedStandardContains(h, n) ? 1 : 0)
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, "strata_length", 1, flags, nil, { ctx, argc, argv in
            guard let ctx, let argv, argc == 1, let a0 = argv[0] else { return }
            guard sqlite3_value_type(a0) != SQLITE_NULL, let p = sqlite3_value_text(a0) else { sqlite3_result_null(ctx); return }
            // Unicode scalars: bytes that do not continue a UTF-8 sequence (SQLite's length() stops at NUL).
            var n: Int64 = 0
            for b in UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(a0))) where b & 0xC0 != 0x80 { n += 1 }
            sqlite3_result_int64(ctx, n)
        }, nil, nil, nil)
        sqlite3_create_collation_v2(db, "strata_standard", SQLITE_UTF8, nil, { _, n1, p1, n2, p2 in
            let a = UnsafeBufferPointer(start: p1?.assumingMemoryBound(to: UInt8.self), count: Int(n1))
            let b = UnsafeBufferPointer(start: p2?.assumingMemoryBound(to: UInt8.self), count: Int(n2))
            return Int32(TextFolding.standardCompare(utf8: a, b))
        }, nil)
        sqlite3_create_collation_v2(db, "strata_decimal", SQLITE_UTF8, nil, { _, n1, p1, n2, p2 in
            let a = String(decoding: UnsafeBufferPointer(start: p1?.assumingMemoryBound(to: UInt8.self), count: Int(n1)), as: UTF8.self)
            let b = String(decoding: UnsafeBufferPointer(start: p2?.assumingMemoryBound(to: UInt8.self), count: Int(n2)), as: UTF8.self)
            return Int32(DecimalText.compare(a, b))
        }, nil)
    }
}
