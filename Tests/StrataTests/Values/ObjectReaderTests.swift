import XCTest
@testable import Strata

/// `ObjectReader` keeps which members were read as bits for the first 64 and an array past
/// them: a member on either side of that line is read, and left unread, as any other.
final class ObjectReaderTests: XCTestCase {
    /// An object of `count` members `k0`, `k1`, … with the values 0, 1, ….
    private func object(_ count: Int) -> JSONValue {
        .object((0..<count).map { ("k\($0)", .number("\($0)")) })
    }

    func testMembersPastTheSixtyFourthAreReadAndFinished() throws {
        for count in [1, 63, 64, 65, 70, 130] {
            var r = try ObjectReader(object(count), path: JSONPath(), what: "test")
            for i in 0..<count { XCTAssertEqual(try r.int("k\(i)"), Int64(i), "\(count) members, k\(i)") }
            XCTAssertNoThrow(try r.finish(), "\(count) members, all read")
        }
    }

    func testTheFirstUnreadMemberIsTheUnknownKeyOnEitherSideOfTheSixtyFourth() throws {
        for (count, unread) in [(70, 0), (70, 63), (70, 64), (70, 69), (130, 100), (64, 63)] {
            var r = try ObjectReader(object(count), path: JSONPath() / "x", what: "test")
            for i in 0..<count where i != unread { _ = try r.int("k\(i)") }
            XCTAssertThrowsError(try r.finish(), "\(count) members, k\(unread) unread") { error in
                let e = error as? StrataError
                XCTAssertEqual(e?.path, "/x/k\(unread)")
                XCTAssertTrue(e?.message.hasPrefix("unknown key 'k\(unread)' in test at /x (known keys: ") ?? false, e?.message ?? "")
            }
            XCTAssertNoThrow(try r.finish(allowed: ["k\(unread)"]), "\(count) members, k\(unread) allowed")
        }
    }

    /// The known keys an error lists are every key asked for, present or not, each once, sorted.
    func testTheKnownKeysAreTheKeysAskedFor() throws {
        var r = try ObjectReader(object(3), path: JSONPath(), what: "test")
        for key in ["k0", "zz", "k1", "aa", "k0"] + (0..<20).map({ "m\($0)" }) { _ = r.value(key) }
        XCTAssertThrowsError(try r.finish()) { error in
            let known = (["aa", "k0", "k1", "zz"] + (0..<20).map { "m\($0)" }).sorted().joined(separator: ", ")
            XCTAssertEqual((error as? StrataError)?.message, "unknown key 'k2' in test (known keys: \(known))")
        }
    }
}
