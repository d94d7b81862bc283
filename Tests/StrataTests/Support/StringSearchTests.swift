import XCTest
@testable import Strata

/// Support/String+Search.swift finds a string's UTF-8 bytes: for ASCII what the standard
/// library's searches of a string find (`_StringProcessing`, which this test module imports
/// and the library does not), and a delimiter followed by a combining mark too.
final class StringSearchTests: XCTestCase {
    /// The byte offset of the first occurrence of `n`'s bytes in `t`'s, the plain way.
    private func offset(_ n: some StringProtocol, in t: some StringProtocol) -> Int? {
        let h = Array(t.utf8), b = Array(n.utf8)
        guard !b.isEmpty, b.count <= h.count else { return nil }
        return (0...(h.count - b.count)).first { Array(h[$0..<$0 + b.count]) == b }
    }

    func testFindsTheBytes() {
        let texts = ["", "a", "abc", "aab", "abab", "aaa", "password=x&password=y", "postgresql://u:p@h/db", "$strata_data$",
                     "x$strata_data$\u{301}y", "caf\u{E9}", "cafe\u{301}", "e\u{301}e", "\u{1F1E9}\u{1F1EA}\u{1F1EB}\u{1F1F7}",
                     "a'b''c", "xyz", "read_only\u{301}"]
        let needles = ["", "a", "b", "ab", "aab", "aa", "ba", "abc", "://", "password=", "$strata_data$", "read_only", "e", "\u{E9}",
                       "e\u{301}", "\u{301}", "\u{1F1EA}\u{1F1EB}", "'", "''", "xyzw"]
        for t in texts {
            for n in needles {
                let what = "\(n.debugDescription) in \(t.debugDescription)"
                let found = t.firstOccurrence(ofText: n)
                XCTAssertEqual(found.map { t.utf8.distance(from: t.startIndex, to: $0.startIndex) }, offset(n, in: t), what)
                XCTAssertEqual(found.map { Array($0.utf8) }, found.map { _ in Array(n.utf8) }, what)
                XCTAssertEqual(t.containsText(n), offset(n, in: t) != nil, what)
                let s = t.dropFirst()
                XCTAssertEqual(s.firstOccurrence(ofText: n).map { s.utf8.distance(from: s.startIndex, to: $0.startIndex) }, offset(n, in: s), what)
                guard t.utf8.allSatisfy({ $0 < 0x80 }) && n.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
                // ASCII: what the standard library finds.
                XCTAssertEqual(t.containsText(n), t.contains(n), what)
                XCTAssertEqual(found.map { $0.startIndex..<$0.endIndex }, n.isEmpty ? nil : t.firstRange(of: n), what)
                if !n.isEmpty { XCTAssertEqual(t.replacingAll(n, with: "<\(n)>"), t.replacing(n, with: "<\(n)>"), what) }
            }
        }
    }

    /// A dollar-quote delimiter followed by a combining mark still ends a PostgreSQL dollar quote
    /// (its lexer reads bytes), so the check before one is written must find it.
    func testADelimiterFollowedByACombiningMarkIsFound() {
        XCTAssertTrue("x$strata_data$\u{301}y".containsText("$strata_data$"))
        XCTAssertEqual("{\"a\": \"$s\u{301}$s\u{301}\"}".replacingAll("$s", with: "S"), "{\"a\": \"S\u{301}S\u{301}\"}")
    }
}
