import XCTest
@testable import Strata

/// Full-text search: `matches` on searchable attributes answers as ``TextSearch`` does (the
/// in-memory evaluator) on every store, through the full-text index, with pending changes.
final class SearchTests: StoreTestCase {
    static let schema = """
    {"version": "1.0.0", "entities": [
      {"name": "Trip", "attributes": [{"name": "name", "type": "string", "searchable": true}],
       "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "trip", "deleteRule": "cascade"}]},
      {"name": "Item", "attributes": [
         {"name": "title", "type": "string", "optional": true, "searchable": true},
         {"name": "note", "type": "string", "default": ""}],
       "relationships": [{"name": "trip", "destination": "Trip", "optional": true}]}
    ]}
    """

    /// Accents, case, CJK, kana, Hangul, emoji, punctuation, digits, nil and empty values.
    static let titles: [String?] = [
        "Zürich Old Town walk", "ZURICH by night", "zurich-airport transfer", "Travel insurance", "travelling light",
        "Café de Flore", "CAFE crème brûlée", "naïve coffee", "東京タワー 夜景", "京都の寺", "東京 sushi 🍣",
        "서울 여행", "Crème CRÈME crème", "🎉🎉", "", nil, "São Paulo 2026", "Straße & Strasse", "ﬁne ﬁsh",
        "trav", "Ｆｕｌｌｗｉｄｔｈ ｔｒａｖｅｌ", "e\u{301}clair", "éclair au café", "line\nbreak\ttab",
    ]

    /// Words, prefixes, several tokens, CJK, accents either way, texts without a token.
    static let queries = [
        "zurich", "ZÜRICH", "zur*", "Zurich walk", "zurich night", "travel", "trav", "trav*", "TRAV*", "café",
        "cafe", "creme", "crème*", "東京", "東", "京*", "タワー", "서울", "서*", "🍣", "🎉", "", "   ", "!!!",
        "*", "2026", "strasse", "straße", "fine", "fi*", "eclair", "éclair", "sao paulo", "walk*", "night*", "light walk",
        "line break tab", "x*",
    ]

    private func insertCorpus(_ c: ModelContext) throws -> [String] {
        let trip = try c.insert(entity: "Trip", json: #"{"name": "Voyage à Zürich"}"#)
        let other = try c.insert(entity: "Trip", json: #"{"name": "東京 2026"}"#)
        var ids: [String] = []
        for (i, t) in Self.titles.enumerated() {
            let title = t.map { JSONValue.string($0).text } ?? "null"
            let owner = i % 3 == 0 ? "\"\(trip)\"" : i % 3 == 1 ? "\"\(other)\"" : "null"
            ids.append(try c.insert(entity: "Item", json: #"{"title": \#(title), "note": "n\#(i)", "trip": \#(owner)}"#).description)
        }
        return ids
    }

    /// What the store answers and what the evaluator answers over every object, for each search text.
    private func checkAgainstEvaluator(_ c: ModelContext, _ predicate: String, entity: String = "Item", _ label: String,
                                       file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let graph = try ObjectGraph(context: c)
        var found = 0
        for q in Self.queries {
            let json = #"{"entity": "\#(entity)", "predicate": \#(predicate), "bindings": {"q": \#(JSONValue.string(q).text)}}"#
            let d = try Query.descriptor(json, c.schema)
            let expected = graph.evaluate(d)
            XCTAssertEqual(Set(try Query.identifiers(c, d)), expected, "\(label): \(predicate) for \(JSONValue.string(q).text)", file: file, line: line)
            XCTAssertEqual(try c.fetchCount(d), Int64(expected.count), "\(label): count \(predicate) for \(q)", file: file, line: line)
            found += expected.count
        }
        return found
    }

    private func titles(_ c: ModelContext, _ search: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let d = try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(q)", "bindings": {"q": \#(JSONValue.string(search).text)}, "sortBy": [{"key": "note"}]}"#, c.schema)
        return try Query.objects(c, d).map { $0["title"]?.stringValue ?? "nil" }
    }

    func testTheTokenizerFollowsItsRules() {
        func tokens(_ s: String) -> [String] { TextSearch.tokens(s).map { String(decoding: $0, as: UTF8.self) } }
        XCTAssertEqual(tokens("Zürich-Airport, 2026!"), ["zurich", "airport", "2026"])
        XCTAssertEqual(tokens("東京タワー 서울여행"), ["東", "京", "タ", "ワ", "ー", "서", "울", "여", "행"])
        XCTAssertEqual(tokens("🎉 Straße ﬁne Ｆｕｌｌ e\u{301}"), ["strasse", "fine", "full", "e"])
        XCTAssertEqual(tokens("  ...  "), [])
        let q = TextSearch.query("Trav* 東* x **")
        XCTAssertEqual(q.map { String(decoding: $0.text, as: UTF8.self) }, ["trav", "東", "x"])
        XCTAssertEqual(q.map(\.isPrefix), [true, true, false])
        XCTAssertTrue(TextSearch.matches("Travel light", "light TRAV*"))
        XCTAssertFalse(TextSearch.matches("Travel light", "trav"))
        XCTAssertFalse(TextSearch.matches("anything", "!!!"))
        XCTAssertEqual(TextSearch.relevance("crème creme CREME cake", "creme"), 0.75)
        XCTAssertEqual(TextSearch.relevance("travel travelling", "trav* travel"), 1.5)
        XCTAssertEqual(TextSearch.relevance("", "x"), 0)
    }

    /// The index text of ASCII text (read in one pass) is the tokens joined by spaces, as for any text.
    func testTheIndexTextOfASCIIIsItsTokensJoined() {
        func indexText(_ s: String) -> String? {
            var copy = s
            return copy.withUTF8 { TextSearch.indexText(utf8: $0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        func joined(_ s: String) -> String? {
            let ts = TextSearch.tokens(s).map { String(decoding: $0, as: UTF8.self) }
            return ts.isEmpty ? nil : ts.joined(separator: " ")
        }
        let every = String(decoding: (1..<0x80).map { UInt8($0) }, as: UTF8.self)
        for s in ["See the Old Bridge", "  a1_B2-c3,,D4\tE ", "", "...", "x", every, "AZaz09@[`{/:", "Zürich-Airport 2026"] {
            XCTAssertEqual(indexText(s), joined(s), s)
        }
        XCTAssertEqual(indexText("Book \"Early\" at 9am"), "book early at 9am")
    }

    /// A save's inserts write each full-text entry with the index text the writer computes; an
    /// update writes it with `strata_index_text` in SQL. Both store the same text for values of
    /// every kind (ASCII or not, without a token: NULL, long then short from one reused buffer),
    /// and that text is the value's tokens joined by spaces.
    func testInsertedEntriesHoldWhatStrataIndexTextComputes() throws {
        let container = try openFile(Self.schema)
        let context = try container.makeContext()
        let ids = try insertCorpus(context)
        try context.save()
        let entries = #"SELECT rowid, tokens FROM "Item.search(title)" ORDER BY rowid"#
        let inserted = try rows(storePath(), entries)
        for (i, id) in ids.enumerated() {
            let title = Self.titles[i].map { JSONValue.string($0).text } ?? "null"
            try context.update(id: id, patch: #"{"title": \#(title), "note": "again"}"#)
        }
        try context.save()
        let updated = try rows(storePath(), entries)
        XCTAssertEqual(inserted.count, Self.titles.compactMap { $0 }.count)
        XCTAssertEqual(inserted, updated)
        let expected: [SQLValue] = Self.titles.compactMap { $0 }.map { t in
            let ts = TextSearch.tokens(t).map { String(decoding: $0, as: UTF8.self) }
            return ts.isEmpty ? .null : .text(ts.joined(separator: " "))
        }
        XCTAssertEqual(inserted.map { $0[1] }, expected)
    }

    /// `matches` and the relevance of a value read in place (ASCII without allocating, as SQLite's
    /// `strata_matches` and `strata_relevance` read every hit) agree with the rules on its tokens,
    /// for values and search texts of every kind: ASCII or not, prefixes, case, digits,
    /// punctuation, no token, and more than 64 search tokens.
    func testMatchingInPlaceAgreesWithMatchingTokens() {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["old", "Old", "OLD", "bridge", "Bridge", "br", "b", "9am", "x1", "", " ", "-", ",", "!!",
                      "é", "Zürich", "東京", "\t", "\"", "ZZ", "a", "A"]
        func text(_ n: Int) -> String { (0..<n).map { _ in pieces.randomElement(using: &rng)! }.joined(separator: ["", " ", "-"].randomElement(using: &rng)!) }
        var values = ["See the Old Bridge", "", "...", "old bridge old", "OLDBRIDGE", "Zürich old bridge", "b r i d g e"]
        var queries = ["old bridge", "OLD BRI*", "br*", "b*", "", "!!!", "*", "old*bridge", "zur*", "bridge old old",
                       (0..<70).map { "t\($0)" }.joined(separator: " ")]
        for _ in 0..<300 { values.append(text(Int.random(in: 0...8, using: &rng))) }
        for _ in 0..<60 { queries.append(text(Int.random(in: 0...3, using: &rng)) + (Bool.random(using: &rng) ? "*" : "")) }
        values.append((0..<70).map { "t\($0)" }.joined(separator: " "))
        for q in queries {
            let query = TextSearch.query(q)
            for v in values {
                var copy = v
                let (m, r) = copy.withUTF8 { (TextSearch.matches(utf8: $0, query: query), TextSearch.relevance(utf8: $0, query: query)) }
                let tokens = TextSearch.tokens(v)
                XCTAssertEqual(m, TextSearch.matches(tokens: tokens, query: query), "\(v) matches \(q)")
                XCTAssertEqual(r, TextSearch.relevance(tokens: tokens, query: query), "relevance of \(v) for \(q)")
            }
        }
    }

    func testMatchesAgreesWithTheEvaluatorSavedAndPending() {
        forEachSetup(Self.schema) { h in
            _ = try insertCorpus(h.context)
            for saved in [false, true] {
                if saved { try h.context.save(); try h.reopen() }
                let label = saved ? "saved" : "pending"
                let plain = try checkAgainstEvaluator(h.context, #"{"matches": [{"key": "title"}, {"var": "q"}]}"#, label)
                XCTAssertGreaterThan(plain, 40, label)  // the corpus answers many of the queries
                _ = try checkAgainstEvaluator(h.context, #""$0.title.matches(q)""#, label)
                _ = try checkAgainstEvaluator(h.context, #""!$0.title.matches(q)""#, label)
                _ = try checkAgainstEvaluator(h.context, #""$0.title.matches(q) || $0.note == \"n1\"""#, label)
                _ = try checkAgainstEvaluator(h.context, #""$0.trip?.name.matches(q) ?? false""#, label)
                _ = try checkAgainstEvaluator(h.context, #""!($0.trip?.name.matches(q) ?? false)""#, label)
                _ = try checkAgainstEvaluator(h.context, #""$0.items.contains { $0.title.matches(q) }""#, entity: "Trip", label)
                XCTAssertEqual(try titles(h.context, "zurich night"), ["ZURICH by night"], label)
                XCTAssertEqual(try titles(h.context, "zur*"), ["Zürich Old Town walk", "ZURICH by night", "zurich-airport transfer"], label)
                XCTAssertEqual(try titles(h.context, "東京"), ["東京タワー 夜景", "東京 sushi 🍣"], label)
                XCTAssertEqual(try titles(h.context, "trav"), ["trav"], label)
                XCTAssertEqual(try titles(h.context, "eclair"), ["e\u{301}clair", "éclair au café"], label)
                XCTAssertEqual(try titles(h.context, "🎉"), [], label)
                XCTAssertEqual(try titles(h.context, ""), [], label)
            }
        }
    }

    /// A search may be the first statement an opened store runs, outside of any transaction (the
    /// TEMP table of the overlay's searchable keys is made just before it is prepared): as a
    /// cursor, a count and a fetch, each the first read of its container.
    func testASearchCanBeTheFirstReadOfAnOpenedStore() {
        forEachSetup(Self.schema) { h in
            _ = try insertCorpus(h.context)
            try h.context.save()
            let json = #"{"entity": "Item", "predicate": "$0.title.matches(\"zurich\")", "sortBy": [{"key": "note"}]}"#
            let expected = ["Zürich Old Town walk", "ZURICH by night", "zurich-airport transfer"]
            try h.reopen()
            let cursor = try h.context.cursor(Query.descriptor(json, h.context.schema))
            let batch = try parse(cursor.next(100).bytes).array ?? []
            XCTAssertEqual(batch.map { $0["title"]?.stringValue ?? "nil" }, expected)
            cursor.close()
            try h.reopen()
            XCTAssertEqual(try h.context.fetchCount(Query.descriptor(json, h.context.schema)), 3)
            try h.reopen()
            XCTAssertEqual(try titles(h.context, "zurich"), expected)
        }
    }

    func testPendingInsertsUpdatesAndDeletesAreSearched() {
        forEachSetup(Self.schema) { h in
            let ids = try insertCorpus(h.context)
            try h.context.save()
            // Zürich Old Town walk → renamed; ZURICH by night deleted; a new Zürich item.
            try h.context.update(id: ids[0], patch: #"{"title": "Geneva lake"}"#)
            try h.context.delete(id: ids[1])
            _ = try h.context.insert(entity: "Item", json: #"{"title": "zürich zoo", "note": "new"}"#)
            try h.context.update(id: ids[3], patch: #"{"note": "changed, title kept"}"#)
            XCTAssertEqual(try titles(h.context, "zurich"), ["zurich-airport transfer", "zürich zoo"])
            XCTAssertEqual(try titles(h.context, "geneva"), ["Geneva lake"])
            XCTAssertEqual(try titles(h.context, "insurance"), ["Travel insurance"])
            _ = try checkAgainstEvaluator(h.context, #""$0.title.matches(q)""#, "pending")
            // Without pending changes: the saved values.
            let d = try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(\"zurich\")", "includePendingChanges": false}"#, h.context.schema)
            XCTAssertEqual(try Query.objects(h.context, d).count, 3)
            try h.context.save()
            try h.reopen()
            XCTAssertEqual(try titles(h.context, "zurich"), ["zurich-airport transfer", "zürich zoo"])
            XCTAssertEqual(try titles(h.context, "geneva"), ["Geneva lake"])
            _ = try checkAgainstEvaluator(h.context, #""$0.title.matches(q)""#, "saved")
            // Nil and back.
            try h.context.update(id: ids[3], patch: #"{"title": null}"#)
            try h.context.save()
            XCTAssertEqual(try titles(h.context, "insurance"), [])
        }
    }

    /// Set-based writes keep the full-text index as per-object ones do: an update_where of a
    /// searchable title is found by its new words (pending, then saved), a delete_where leaves
    /// nothing behind, and the answers agree with the evaluator.
    func testSetBasedWritesKeepTheIndex() {
        forEachSetup(Self.schema) { h in
            let c = h.context
            _ = try insertCorpus(c)
            try c.save()
            XCTAssertEqual(try c.update(entity: "Item", request: #"{"predicate": "$0.title.matches(\"zurich\")", "set": {"title": "Lausanne harbour"}}"#), 3)
            XCTAssertEqual(try titles(c, "lausanne"), ["Lausanne harbour", "Lausanne harbour", "Lausanne harbour"])
            XCTAssertEqual(try titles(c, "zurich"), [])
            try c.save()
            try h.reopen()
            XCTAssertEqual(try titles(h.context, "lausanne harbour").count, 3)
            XCTAssertEqual(try titles(h.context, "zurich"), [])
            _ = try checkAgainstEvaluator(h.context, #""$0.title.matches(q)""#, "after update_where")
            let d = try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(\"lausanne\") || $0.title.matches(\"cafe\")"}"#, h.context.schema)
            let cafes = try titles(h.context, "cafe").count
            XCTAssertEqual(cafes, 3)
            XCTAssertEqual(try h.context.delete(matching: d), 3 + cafes)
            try h.context.save()
            XCTAssertEqual(try titles(h.context, "lausanne"), [])
            XCTAssertEqual(try titles(h.context, "cafe"), [])
            _ = try checkAgainstEvaluator(h.context, #""$0.title.matches(q)""#, "after delete_where")
        }
    }

    func testRelevanceOrdersMostRelevantFirstThenByTheNextKeys() {
        forEachSetup(Self.schema) { h in
            _ = try insertCorpus(h.context)
            _ = try h.context.insert(entity: "Item", json: #"{"title": "crème", "note": "n99"}"#)
            for saved in [false, true] {
                if saved { try h.context.save() }
                for (q, reverse) in [("creme", false), ("creme", true), ("trav*", false), ("cafe", true), ("zur*", false), ("東", false)] {
                    let d = try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(q)", "bindings": {"q": \#(JSONValue.string(q).text)}, "sortBy": [{"key": "$relevance"\#(reverse ? #", "order": "reverse""# : "")}, {"key": "note"}]}"#, h.context.schema)
                    let got = try Query.objects(h.context, d).map { ($0["title"]?.stringValue ?? "", $0["note"]?.stringValue ?? "") }
                    // The evaluator's order: relevance, then the note's number (localized standard order).
                    let expected = got.sorted { a, b in
                        let ra = TextSearch.relevance(a.0, q), rb = TextSearch.relevance(b.0, q)
                        if ra != rb { return reverse ? ra < rb : ra > rb }
                        return Int(a.1.dropFirst())! < Int(b.1.dropFirst())!
                    }
                    XCTAssertEqual(got.map(\.1), expected.map(\.1), "\(q) reverse: \(reverse) saved: \(saved)")
                    XCTAssertGreaterThan(got.count, 1, q)
                    XCTAssertEqual(Set(got.map(\.0)), Set((Self.titles + ["crème"]).compactMap { $0 }.filter { TextSearch.matches($0, q) }), q)
                }
                // "Crème CRÈME crème" (three of three) before "crème" (one of one)? Both 1.0: the note decides.
                let d = try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(\"creme\")", "sortBy": [{"key": "$relevance"}, {"key": "note", "order": "reverse"}]}"#, h.context.schema)
                XCTAssertEqual(try Query.objects(h.context, d).map { $0["title"]?.stringValue ?? "" },
                               ["crème", "Crème CRÈME crème", "CAFE crème brûlée"])
            }
        }
    }

    func testRelevanceNeedsExactlyOneSearch() throws {
        let c = try openInMemory(Self.schema).makeContext()
        for predicate in [#"null"#, #""$0.note == \"x\"""#, #""$0.title.matches(\"a\") && $0.title.matches(\"b\")""#,
                          #""$0.items.contains { $0.title.matches(\"a\") }""#] {
            let entity = predicate.contains("items") ? "Trip" : "Item"
            XCTAssertThrowsError(try Query.descriptor(#"{"entity": "\#(entity)", "predicate": \#(predicate), "sortBy": [{"key": "name"}, {"key": "$relevance"}]}"#
                .replacingOccurrences(of: #"{"key": "name"}, "#, with: entity == "Trip" ? #"{"key": "name"}, "# : ""), c.schema)) { e in
                XCTAssertEqual((e as? StrataError)?.code, .invalid, predicate)
                XCTAssertTrue((e as? StrataError)?.path?.hasSuffix("/key") ?? false, "\(e)")
                XCTAssertTrue((e as? StrataError)?.message.contains("$relevance") ?? false, "\(e)")
            }
        }
    }

    func testExplainShowsTheFullTextIndex() throws {
        let c = try openFile(Self.schema).makeContext()
        _ = try insertCorpus(c)
        try c.save()
        let d = try Query.descriptor(#"{"entity": "Item", "predicate": "$0.title.matches(\"zurich\")"}"#, c.schema)
        let (sql, plan) = try Query.explain(c, d)
        XCTAssertTrue(sql.contains("\"Item.search(title)\" MATCH"), sql)
        XCTAssertTrue(plan.contains { $0.contains("Item.search(title) VIRTUAL TABLE") }, "\(plan)")
    }

    func testRefusalsNameTheProblem() throws {
        let c = try openInMemory(Self.schema).makeContext()
        func error(_ json: String) -> StrataError? {
            do { _ = try Query.descriptor(json, c.schema); return nil } catch { return error as? StrataError }
        }
        let notSearchable = error(#"{"entity": "Item", "predicate": {"matches": [{"key": "note"}, "x"]}}"#)
        XCTAssertEqual(notSearchable?.code, .invalid)
        XCTAssertEqual(notSearchable?.path, "/predicate/matches/0/key")
        XCTAssertTrue(notSearchable?.message.contains("not searchable") ?? false, "\(String(describing: notSearchable))")
        let fromObject = error(#"{"entity": "Item", "predicate": "$0.title.matches($0.note)"}"#)
        XCTAssertEqual(fromObject?.code, .invalid)
        XCTAssertTrue(fromObject?.message.contains("search text") ?? false, "\(String(describing: fromObject))")
        XCTAssertEqual(error(#"{"entity": "Item", "predicate": {"matches": [{"key": "title"}, "x"], "options": "c"}}"#)?.code, .invalid)
        // Schema: searchable string attributes only.
        for (attribute, path) in [(#"{"name": "n", "type": "int", "searchable": true}"#, "/entities/0/attributes/0/searchable"),
                                  (#"{"name": "n", "type": "string", "transient": true, "default": "", "searchable": true}"#, "/entities/0/attributes/0/searchable"),
                                  (#"{"name": "a", "type": "composite", "searchable": true, "fields": [{"name": "x", "type": "string"}]}"#, "/entities/0/attributes/0/searchable")] {
            XCTAssertThrowsError(try makeSchema(Fixtures.schema(attributes: attribute))) { e in
                XCTAssertEqual((e as? StrataError)?.path, path, "\(e)")
                XCTAssertNotNil((e as? StrataError)?.attribute, "\(e)")
            }
        }
        // A composite's string field may be searchable.
        let fields = try makeSchema(Fixtures.schema(attributes: #"{"name": "a", "type": "composite", "fields": [{"name": "city", "type": "string", "searchable": true}]}"#))
        XCTAssertEqual(StoreLayout(fields).tables.first?.searchIndexes.map(\.name), ["Thing.search(a.city)"])
    }

    func testSearchableIsPartOfTheVersionHashOnlyWhenDeclared() throws {
        let plain = try makeSchema(Fixtures.schema(attributes: #"{"name": "n", "type": "string"}"#))
        let unsaid = try makeSchema(Fixtures.schema(attributes: #"{"name": "n", "type": "string", "searchable": false}"#))
        let searchable = try makeSchema(Fixtures.schema(attributes: #"{"name": "n", "type": "string", "searchable": true}"#))
        XCTAssertEqual(plain.versionHash, unsaid.versionHash)
        XCTAssertNotEqual(plain.versionHash, searchable.versionHash)
    }
}
