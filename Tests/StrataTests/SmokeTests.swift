import XCTest
@testable import Strata

final class SmokeTests: XCTestCase {
    func testVersion() { XCTAssertEqual(StrataInfo.version, "0.1.0") }
}
