import XCTest
@testable import Strata

/// The table of values per object identity: the first keys scanned, later ones hashed, every
/// key answering its own value whichever part holds it.
final class IdentityTableTests: XCTestCase {
    func testValuesByIdentityPastTheScannedKeys() {
        let objects = (0..<(3 * IdentityTable<Int>.scanLimit)).map { _ in NSObject() }
        var table = IdentityTable<Int>()
        for (i, o) in objects.enumerated() {
            XCTAssertNil(table[ObjectIdentifier(o)])
            table.set(ObjectIdentifier(o), i)
        }
        for (i, o) in objects.enumerated() { XCTAssertEqual(table[ObjectIdentifier(o)], i) }
        // Replacing a value, scanned or hashed, keeps one value per key.
        table.set(ObjectIdentifier(objects[1]), 100)
        table.set(ObjectIdentifier(objects[objects.count - 1]), 200)
        XCTAssertEqual(table[ObjectIdentifier(objects[1])], 100)
        XCTAssertEqual(table[ObjectIdentifier(objects[objects.count - 1])], 200)
        XCTAssertEqual(table[ObjectIdentifier(objects[2])], 2)
        let stranger = NSObject()
        XCTAssertNil(table[ObjectIdentifier(stranger)])
        table.removeAll()
        for o in objects { XCTAssertNil(table[ObjectIdentifier(o)]) }
    }
}
