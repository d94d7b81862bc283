import XCTest
@testable import Strata

/// ``SlotFlags``: a flag per slot, inline up to 64 slots, in words beyond.
final class SlotFlagsTests: XCTestCase {
    func testEachSlotIsItsOwnFlagAtEverySize() {
        for count in [0, 1, 5, 63, 64, 65, 127, 128, 129, 200] {
            var flags = SlotFlags(count: count)
            XCTAssertEqual(flags.indices, 0..<count)
            XCTAssertTrue(flags.indices.allSatisfy { !flags[$0] }, "\(count): none set at first")
            // Every third slot set, then every sixth cleared again.
            for slot in stride(from: 0, to: count, by: 3) { flags[slot] = true }
            for slot in stride(from: 0, to: count, by: 6) { flags[slot] = false }
            for slot in flags.indices {
                XCTAssertEqual(flags[slot], slot % 3 == 0 && slot % 6 != 0, "\(count) slots, slot \(slot)")
            }
            // Setting a set slot again and clearing a clear one change nothing.
            if count > 3 {
                flags[3] = true
                flags[1] = false
                XCTAssertTrue(flags[3])
                XCTAssertFalse(flags[1])
            }
        }
    }

    /// A copy is a value: changing it leaves the original as it was (the slots past 64 too).
    func testACopyIsIndependent() {
        var a = SlotFlags(count: 130)
        a[2] = true
        a[100] = true
        var b = a
        b[2] = false
        b[129] = true
        XCTAssertTrue(a[2])
        XCTAssertTrue(a[100])
        XCTAssertFalse(a[129])
        XCTAssertFalse(b[2])
        XCTAssertTrue(b[100])
        XCTAssertTrue(b[129])
    }
}
