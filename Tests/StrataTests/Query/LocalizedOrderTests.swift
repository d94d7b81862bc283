import XCTest
@testable import Strata

/// A localizedStandard sort through a store (the strata_standard collation), of
/// unsaved and of saved rows, puts Latin letters without a canonical
/// decomposition (æ ø œ ð þ ı ĳ ŋ ł …) beside the letters they are written as,
/// where Foundation's localizedStandardCompare puts them, not after z.
final class LocalizedOrderTests: StoreTestCase {
    static let expected = [
        "Aalborg", "Aarhus", "Ærø", "Afyon", "Dakar", "Ðakovo", "Dublin", "Ilulissat", "Işık", "Izmir",
        "Łódź", "Lyon", "Odense", "Œuvre", "Ørsted", "Oslo", "Oxford", "Tallinn", "Þingvellir", "Tirana", "Zagreb",
    ]

    private func sortedNames(_ context: ModelContext, pending: Bool) throws -> [String] {
        var d = try Query.descriptor(#"{"entity": "Trip", "sortBy": [{"key": "name", "comparator": "localizedStandard"}]}"#,
                                     context.schema)
        d.includePendingChanges = pending
        return try Query.objects(context, d).map { $0["name"]?.stringValue ?? "?" }
    }

    func testSortedFetchPutsLettersWithoutDecompositionBesideTheirSpelling() throws {
        forEachSetup(QuerySchemas.trips) { h in
            var rng = SeededRNG(seed: 17)
            for name in Self.expected.shuffled(using: &rng) {
                _ = try h.context.insert(entity: "Trip", json: #"{"name": \#(JSONValue.string(name).text), "destination": "", "startDate": "2026-01-01", "endDate": "2026-01-02"}"#)
            }
            XCTAssertEqual(try sortedNames(h.context, pending: true), Self.expected, "\(h.setup) pending")
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try sortedNames(h.context, pending: false), Self.expected, "\(h.setup) saved")
        }
    }
}
