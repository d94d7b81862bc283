import XCTest
@testable import Strata

/// `JSONReader.readString` and `skipString`: escapes decoded (or skipped) with the same checks
/// and errors, the skip making no string.
final class JSONReaderStringTests: XCTestCase {
    /// How a read (or skip) of the string at the start of `bytes` ended: the reader's position, or the error.
    private enum Outcome: Equatable { case read(position: Int), failed(String) }

    private func outcome(_ bytes: [UInt8], skip: Bool) -> (Outcome, String?) {
        bytes.withUnsafeBufferPointer { b in
            var r = JSONReader(b)
            do {
                if skip {
                    try r.skipString()
                    return (.read(position: r.position), nil)
                }
                let s = try r.readString()
                return (.read(position: r.position), s)
            } catch let e as StrataError {
                return (.failed(e.message), nil)
            } catch {
                return (.failed("\(error)"), nil)
            }
        }
    }

    private func check(_ json: [UInt8], _ expected: String?, file: StaticString = #filePath, line: UInt = #line) {
        let (read, text) = outcome(json, skip: false)
        let (skipped, _) = outcome(json, skip: true)
        let shown = String(decoding: json, as: UTF8.self).debugDescription
        XCTAssertEqual(read, skipped, "\(shown): the skip ends as the read does", file: file, line: line)
        XCTAssertEqual(text, expected, "\(shown)", file: file, line: line)
        if expected != nil, case .failed(let m) = read { XCTFail("\(shown): \(m)", file: file, line: line) }
    }

    private func check(_ json: String, _ expected: String?, file: StaticString = #filePath, line: UInt = #line) {
        check(Array(json.utf8), expected, file: file, line: line)
    }

    func testEscapesDecode() {
        check(#""Book \"early\"",1"#, #"Book "early""#)
        check(#""\\\/\b\f\n\r\t",1"#, "\\/\u{08}\u{0C}\n\r\t")
        check(#""caf\u00e9 \u00E9t\u00e9",1"#, "café été")
        check(#""\ud83d\ude00 and \u4e2d",1"#, "😀 and 中")
        check(#""\u0000",1"#, "\u{0}")
        check(#""ends with \"""#, #"ends with ""#)
        check(#""\"""#, #"""#)
        check(#""é before \n and 中 after \t😀",1"#, "é before \n and 中 after \t😀")
        let long = String(repeating: "a long run of plain text ", count: 40)
        check("\"" + long + "\\\"" + long + "\\n" + long + "\"", long + "\"" + long + "\n" + long)
    }

    func testBadEscapesFailAlikeReadOrSkipped() {
        check(#""\x",1"#, nil)
        check(#""\u12",1"#, nil)
        check(#""\u12G4",1"#, nil)
        check(#""\ud83d",1"#, nil)
        check(#""\ud83d\u0041",1"#, nil)
        check(#""\ude00",1"#, nil)
        check(#""abc\"#, nil)
        check(#""abc\"def"#, nil)
        check("\"a\\n\u{1}b\",1", nil)
        check("\"a\\n\tb\",1", nil)
    }

    /// Invalid UTF-8 anywhere, split by escapes or not, fails at the string's start in both.
    func testInvalidUTF8FailsAlikeReadOrSkipped() {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), n = UInt8(ascii: "n")
        let cases: [[UInt8]] = [
            [quote, 0xC3, backslash, n, 0xA9, quote],            // a character split by an escape
            [quote, backslash, n, 0xA9, quote],                  // a continuation byte after an escape
            [quote, 0xE2, 0x82, backslash, n, quote],            // a character cut short before an escape
            [quote, backslash, n, 0xED, 0xA0, 0x80, quote],      // a surrogate written as UTF-8
            [quote, backslash, n, 0xC0, 0xAF, quote],            // an overlong form
            [quote, 0xFF, backslash, n, quote],
            [quote, backslash, n, 0xC3, 0xA9, quote],            // valid: é after an escape
        ]
        for (i, bytes) in cases.enumerated() {
            check(bytes, i == cases.count - 1 ? "\né" : nil)
        }
        // The error is the string's, at its first byte after the quote.
        XCTAssertEqual(outcome([quote, 0xC3, backslash, n, 0xA9, quote], skip: true).0,
                       .failed("malformed JSON at offset 1: string is not valid UTF-8"))
        // A control character after invalid UTF-8 is the error reported, by both.
        check([quote, 0xFF, backslash, n, 0x01, quote], nil)
        XCTAssertEqual(outcome([quote, 0xFF, backslash, n, 0x01, quote], skip: true).0,
                       .failed("malformed JSON at offset 4: control character in string"))
    }
}
