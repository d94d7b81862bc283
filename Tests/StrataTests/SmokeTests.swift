import Foundation
import XCTest
@testable import Strata

final class SmokeTests: XCTestCase {
    /// The library's version is the header's: `STRATA_VERSION` and `STRATA_VERSION_NUMBER`
    /// in include/strata.h agree with `StrataInfo.version` (which `strata_version()` returns;
    /// the C test test_library checks that side).
    func testVersionMatchesTheHeader() throws {
        let header = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../include/strata.h").standardized
        let text = try String(contentsOf: header, encoding: .utf8)
        let lines = text.split(separator: "\n")
        let version = try XCTUnwrap(lines.first { $0.hasPrefix("#define STRATA_VERSION \"") })
        XCTAssertEqual(version, "#define STRATA_VERSION \"\(StrataInfo.version)\"")
        let parts = StrataInfo.version.split(separator: ".").compactMap { Int($0) }
        XCTAssertEqual(parts.count, 3)
        let number = parts[0] * 1_000_000 + parts[1] * 1_000 + parts[2]
        XCTAssertTrue(lines.contains { $0.hasPrefix("#define STRATA_VERSION_NUMBER \(number)") })
    }
}
