/// SQL text with its hash computed once: what a store's statement cache looks a query up by,
/// so that a query compiled once (a prepared fetch, a cached descriptor's plan) is not hashed
/// again at every run. Equal when the texts are.
struct HashedSQL: Hashable {
    let text: String
    private let hash: Int

    init(_ text: String) {
        self.text = text
        hash = text.hashValue
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    static func == (a: HashedSQL, b: HashedSQL) -> Bool { a.hash == b.hash && a.text == b.text }
}
