import XCTest
@testable import Strata

/// ``ExactSum``, the one definition of `@sum` and `@avg`: exact, whatever the order of the
/// values, failing (nil) where the result leaves Int64 or the finite doubles; and SQLite's
/// aggregates `strata_isum`/`strata_fsum`/`strata_iavg`/`strata_favg`, which must give its results.
final class ExactSumTests: XCTestCase {
    private func sum(_ xs: [Double]) -> Double? {
        var s = ExactSum()
        for x in xs { s.add(x) }
        return s.doubleSum
    }

    private func sum(_ xs: [Int64]) -> Int64? {
        var s = ExactSum()
        for x in xs { s.add(x) }
        return s.intSum
    }

    /// Bit for bit (0.0 and -0.0 apart), nil as nil.
    private func same(_ a: Double?, _ b: Double?) -> Bool {
        a?.bitPattern == b?.bitPattern
    }

    static let maxFinite = Double.greatestFiniteMagnitude          // 2^1024 - 2^971
    static let halfULPOfMax = Double(sign: .plus, exponent: 970, significand: 1)

    func testDoublesCancelExactly() {
        // A running sum in doubles gives 0.0 for the first, 0.0 for the second and 2.0 for the third.
        let cases: [([Double], Double?)] = [
            ([1e100, 1.0, -1e100], 1.0),
            ([1.0, 1e100, 1.0, -1e100], 2.0),
            ([1e308, 1e308, -1e308], 1e308),           // no intermediate overflow
            (Array(repeating: 0.1, count: 10), 1.0),   // math.fsum's example
            ([0.1, 0.2, -0.3], 2.7755575615628914e-17),
            ([], 0.0),
            ([-0.0, 0.0], 0.0),
            ([0x1p-1074, 0x1p-1074], 0x1p-1073),        // subnormals add exactly
            ([Double.leastNormalMagnitude, -0x1p-1074], Double.leastNormalMagnitude.nextDown),
            ([Self.maxFinite, Self.maxFinite, -Self.maxFinite], Self.maxFinite),
            ([Self.maxFinite, Self.maxFinite], nil),   // not finite: fails
            ([-Self.maxFinite, -Self.maxFinite], nil),
            ([Self.maxFinite, Self.halfULPOfMax], nil),  // a tie rounds to even: 2^1024
            ([Self.maxFinite, Self.halfULPOfMax, -0x1p-1074], Self.maxFinite),
            ([-Self.maxFinite, -Self.halfULPOfMax, 0x1p-1074], -Self.maxFinite),
            // Ties to even, and the sticky bits below the tie.
            ([9007199254740992, 1], 9007199254740992),
            ([9007199254740992, 3], 9007199254740996),
            ([9007199254740992, 1, 0x1p-1000], 9007199254740994),
            ([9007199254740992, 0.5, 0.5, 0.5], 9007199254740994),
            ([-9007199254740992, -1, -0x1p-1000], -9007199254740994),
            ([.infinity], nil),
            ([1, .nan], nil),
        ]
        for (xs, expected) in cases {
            XCTAssertTrue(same(sum(xs), expected), "\(xs): \(String(describing: sum(xs))), expected \(String(describing: expected))")
            var rng = SeededRNG(seed: 7)
            for _ in 0..<20 {
                let shuffled = xs.shuffled(using: &rng)
                XCTAssertTrue(same(sum(shuffled), expected), "\(shuffled)")
            }
        }
    }

    /// A random double of any magnitude (subnormals and the largest included), or one of a few
    /// that cancel, tie or carry.
    static func randomDouble(_ rng: inout SeededRNG) -> Double {
        switch rng.int(0...9) {
        case 0: return Double(bitPattern: rng.next() & 0x800F_FFFF_FFFF_FFFF)            // subnormal
        case 1: return rng.pick([Self.maxFinite, -Self.maxFinite, Self.halfULPOfMax, 1e308, -1e308])
        case 2: return rng.pick([0.1, 0.2, 0.3, -0.1, 1, -1, 0.5, 9007199254740992, 0x1p-1000])
        default:
            let exponent = rng.int(-1074...1023)
            let significand = 1 + Double(rng.next() >> 12) * 0x1p-52
            let x = Double(sign: rng.chance(0.5) ? .minus : .plus, exponent: exponent, significand: significand)
            return x.isFinite ? x : 1
        }
    }

    func testShuffledCorpusIsOrderIndependent() {
        var rng = SeededRNG(seed: 12345)
        for _ in 0..<300 {
            var xs: [Double] = []
            for _ in 0..<rng.int(0...40) {
                let x = Self.randomDouble(&rng)
                xs.append(x)
                // Cancellation: the same value back, now and then.
                if rng.chance(0.3) { xs.append(-x) }
            }
            let first = sum(xs)
            for _ in 0..<8 { XCTAssertTrue(same(sum(xs.shuffled(using: &rng)), first), "\(xs)") }
        }
    }

    /// Against an independent reference: values that are multiples of 2^-60 below 2^60 sum
    /// exactly in Int128 (in units of 2^-60), and Swift's conversion of the total to a double
    /// rounds once, to nearest even; the scaling back is exact.
    func testRoundingAgreesWithAnInt128Reference() {
        var rng = SeededRNG(seed: 0x5EED)
        var ties = 0
        for _ in 0..<2000 {
            var units: Int128 = 0
            var xs: [Double] = []
            for _ in 0..<rng.int(1...12) {
                // Up to 53 significant bits anywhere between 2^-60 and 2^60.
                let bits = rng.int(1...53)
                let m = Int64(rng.next() >> UInt64(64 - bits)) | 1
                let shift = rng.int(0...(120 - bits))
                let u = (rng.chance(0.5) ? -1 : 1) * (Int128(m) << shift)
                let x = Double(u) * 0x1p-60
                XCTAssertEqual(Int128(x * 0x1p60), u)
                xs.append(x)
                units += u
            }
            // A tie now and then: a double and half its ulp, among values that cancel.
            if rng.chance(0.25) {
                let y = Double(Int64(rng.next() >> 11) | 1 << 52) * 0x1p-20   // 53 bits, ulp 2^-20
                let noise = xs[0]
                xs = [noise, y, 0x1p-21, -noise]
                units = Int128(y * 0x1p60) + (Int128(1) << 39)
                ties += 1
            }
            let expected = Double(units) * 0x1p-60
            XCTAssertTrue(same(sum(xs), expected == 0 ? 0 : expected), "\(xs): \(String(describing: sum(xs))), expected \(expected)")
        }
        XCTAssertGreaterThan(ties, 100)
    }

    func testIntsSumExactlyAndFailOutsideInt64() {
        XCTAssertEqual(sum([] as [Int64]), 0)
        XCTAssertEqual(sum([1, 2, 3] as [Int64]), 6)
        XCTAssertNil(sum([Int64.max, 1]))
        XCTAssertNil(sum([Int64.min, -1]))
        // Only the total counts, not a running sum: the same in every order.
        for xs: [Int64] in [[Int64.max, 1, -1], [1, Int64.max, -1], [-1, 1, Int64.max]] { XCTAssertEqual(sum(xs), Int64.max) }
        XCTAssertEqual(sum([Int64.max, Int64.max, Int64.min, Int64.min, 1]), -1)
        XCTAssertEqual(sum([Int64.min]), Int64.min)
        XCTAssertNil(sum([Int64.max, Int64.max, Int64.max]))
    }

    func testAverages() {
        var s = ExactSum()
        XCTAssertNil(s.intAverage)
        XCTAssertNil(s.doubleAverage)
        for x: Int64 in [1, 2] { s.add(x) }
        XCTAssertEqual(s.intAverage, 1.5)
        // The int sum overflows Int64 but its average does not fail.
        var big = ExactSum()
        for _ in 0..<3 { big.add(Int64.max) }
        XCTAssertNil(big.intSum)
        XCTAssertEqual(big.intAverage, 9.223372036854775807e18)
        // Double(sum) rounds once (2^53 + 1 ties to 2^53), then the division.
        var tie = ExactSum()
        for x: Int64 in [9007199254740992, 1] { tie.add(x) }
        XCTAssertEqual(tie.intAverage, 9007199254740992.0 / 2)
        var d = ExactSum()
        for x in [1e100, 1.0, -1e100, 2.0] { d.add(x) }
        XCTAssertEqual(d.doubleAverage, 0.75)
        var overflow = ExactSum()
        for x in [Self.maxFinite, Self.maxFinite] { overflow.add(x) }
        XCTAssertNil(overflow.doubleAverage, "an average of doubles fails where their sum does")
        // A value of another kind fails every result.
        var invalid = ExactSum()
        invalid.add(.int(1), integer: true)
        invalid.add(.text("x"), integer: true)
        XCTAssertNil(invalid.intSum)
        XCTAssertNil(invalid.intAverage)
        var skipped = ExactSum()
        skipped.add(.null, integer: false)
        skipped.add(.int(3), integer: false)
        XCTAssertEqual(skipped.doubleSum, 3)
        XCTAssertEqual(skipped.count, 1)
    }

    func testInt128ConversionRoundsToNearestEven() {
        // intAverage relies on it (PostgreSQL's numeric to double conversion rounds so too).
        let two53 = Int128(1) << 53
        XCTAssertEqual(Double(two53 + 1), 9007199254740992)
        XCTAssertEqual(Double(two53 + 3), 9007199254740996)
        XCTAssertEqual(Double((Int128(1) << 100) + (Int128(1) << 47)), 0x1p100)
        XCTAssertEqual(Double((Int128(1) << 100) + (Int128(1) << 47) + 1), 0x1p100 + 0x1p48)
        XCTAssertEqual(Double(-(two53 + 3)), -9007199254740996)
    }

    // MARK: SQLite's aggregates

    /// Every group of a corpus through SQLite's aggregates, rows in two orders, against ExactSum.
    func testSQLiteAggregatesGiveExactSumResults() throws {
        let c = try Connection(path: ":memory:", readOnly: false, create: true)
        try c.execute("CREATE TABLE t (g INTEGER, i INTEGER, d REAL)")
        var rng = SeededRNG(seed: 42)
        var groups: [[(Int64?, Double?)]] = []
        for g in 0..<200 {
            var rows: [(Int64?, Double?)] = []
            for _ in 0..<rng.int(0...12) {
                let i: Int64? = rng.chance(0.1) ? nil
                    : rng.chance(0.2) ? rng.pick([Int64.max, Int64.min, Int64.max - 1]) : Int64(rng.int(-1000...1000))
                let d: Double? = rng.chance(0.1) ? nil : Self.randomDouble(&rng)
                rows.append((i, d))
                try c.execute("INSERT INTO t VALUES (?1, ?2, ?3)", [.int(Int64(g)), i.map { .int($0) } ?? .null, d.map { .double($0) } ?? .null])
            }
            groups.append(rows)
        }
        var failures = 0
        for order in ["rowid", "rowid DESC"] {
            let q = try Statement(connection: c, sql: """
                SELECT strata_isum(i), strata_iavg(i), strata_fsum(d), strata_favg(d)
                FROM (SELECT i, d FROM t WHERE g = ?1 ORDER BY \(order))
                """)
            for (g, rows) in groups.enumerated() {
                var ints = ExactSum(), doubles = ExactSum()
                for (i, d) in rows {
                    ints.add(i.map { .int($0) } ?? .null, integer: true)
                    doubles.add(d.map { .double($0) } ?? .null, integer: false)
                }
                let expected: [SQLValue] = [AggregateFunction.sum.result(of: ints, integer: true), AggregateFunction.avg.result(of: ints, integer: true),
                                            AggregateFunction.sum.result(of: doubles, integer: false), AggregateFunction.avg.result(of: doubles, integer: false)]
                if ints.intSum == nil || doubles.doubleSum == nil { failures += 1 }
                try q.query([.int(Int64(g))]) { row in
                    for k in 0..<4 {
                        XCTAssertEqual(row.value(at: Int32(k)), expected[k], "group \(g) column \(k) \(order): \(rows)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(failures, 10, "some sums fail")
        // Integers in a real sum convert; text makes the result NULL.
        XCTAssertEqual(try Statement(connection: c, sql: "SELECT strata_fsum(x) FROM (SELECT 1 AS x UNION ALL SELECT 0.5)").scalar(), .double(1.5))
        XCTAssertEqual(try Statement(connection: c, sql: "SELECT strata_isum(x) FROM (SELECT 1 AS x UNION ALL SELECT 'a')").scalar(), .null)
        XCTAssertEqual(try Statement(connection: c, sql: "SELECT strata_isum(x), strata_fsum(x), strata_iavg(x) FROM (SELECT 1 AS x) WHERE 0").scalar(), .int(0))
    }
}
