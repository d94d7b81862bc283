import XCTest
@testable import Strata

/// Reads that include pending changes replay them on an overlay; what they
/// show must be exactly what the save then writes. Random sequences of
/// inserts, link changes (to-one, one-to-one, to-many, many-to-many) and
/// cascading deletes, compared object by object.
final class OverlayTests: StoreTestCase {
    private struct Rng {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    private func everything(_ c: ModelContext) throws -> [String: [JSONValue]] {
        var out: [String: [JSONValue]] = [:]
        for e in ["Author", "Book", "Shelf", "Desk"] { out[e] = try fetch(c, e) }
        return out
    }

    func testPendingReadsShowWhatTheSaveWrites() throws {
        forEachSetup(ChangeSetTests.library) { h in
            var rng = Rng(state: 42)
            for round in 0..<12 {
                let c = h.context
                var ids: [String: [String]] = [:]
                for e in ["Author", "Book", "Shelf", "Desk"] { ids[e] = try identifiers(c, e) }
                func pick(_ e: String) -> String? {
                    guard let list = ids[e], !list.isEmpty else { return nil }
                    return list[rng.next(list.count)]
                }
                for _ in 0..<25 {
                    switch rng.next(9) {
                    case 0:
                        let id = try c.insert(entity: "Author", json: #"{"name": "a\#(rng.next(1000))", "books": [{"title": "t"}, {"title": "u"}]}"#)
                        ids["Author", default: []].append(id.description)
                    case 1:
                        if let a = pick("Author") {
                            let id = try c.insert(entity: "Book", json: "{\"title\": \"b\", \"author\": \"\(a)\"}")
                            ids["Book", default: []].append(id.description)
                        }
                    case 2:
                        let books = (0..<rng.next(3)).compactMap { _ in pick("Book") }
                        let list = Set(books).map { "\"\($0)\"" }.joined(separator: ", ")
                        let id = try c.insert(entity: "Shelf", json: "{\"label\": \"s\", \"books\": [\(list)]}")
                        ids["Shelf", default: []].append(id.description)
                    case 3:
                        let owner = pick("Author").map { "\"\($0)\"" } ?? "null"
                        let id = try c.insert(entity: "Desk", json: "{\"room\": \"r\", \"owner\": \(owner)}")
                        ids["Desk", default: []].append(id.description)
                    case 4:
                        // One-to-one: the desk moves to another author (who loses theirs).
                        if let a = pick("Author"), let d = pick("Desk") { try c.update(id: a, patch: "{\"desk\": \"\(d)\"}") }
                    case 5:
                        if let b = pick("Book"), let a = pick("Author") { try c.update(id: b, patch: "{\"author\": \"\(a)\", \"pages\": \(rng.next(500))}") }
                    case 6:
                        if let s = pick("Shelf") {
                            let books = Set((0..<rng.next(4)).compactMap { _ in pick("Book") }).map { "\"\($0)\"" }.joined(separator: ", ")
                            try c.update(id: s, patch: "{\"books\": [\(books)]}")
                        }
                    case 7:
                        if let a = pick("Author") {
                            let books = Set((0..<rng.next(3)).compactMap { _ in pick("Book") }).map { "\"\($0)\"" }.joined(separator: ", ")
                            try c.update(id: a, patch: "{\"books\": [\(books)]}")
                        }
                    default:
                        let e = ["Author", "Book", "Shelf", "Desk"][rng.next(4)]
                        if let victim = pick(e) {
                            try c.delete(id: victim)
                            ids[e]?.removeAll { $0 == victim }
                            // Cascades may take more: start from what the context now sees.
                            for e in ["Author", "Book", "Shelf", "Desk"] { ids[e] = try identifiers(c, e) }
                        }
                    }
                }
                let shown = try everything(c)
                try c.save()
                try h.reopen()
                let saved = try everything(h.context)
                for e in shown.keys.sorted() {
                    XCTAssertEqual(shown[e], saved[e], "\(h.setup) round \(round): \(e) read with pending changes differs from the saved store")
                }
            }
        }
    }
}
