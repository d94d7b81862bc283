/// A value with its hash computed once, for a dictionary key that is looked up, recorded and
/// moved (at every growth of its table) many times: hashing a long text or an array of values
/// again each time costs more than the table's own work. Equal when the values are.
struct HashedOnce<Wrapped: Hashable>: Hashable {
    let value: Wrapped
    private let hash: Int

    init(_ value: Wrapped) {
        self.value = value
        hash = value.hashValue
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    static func == (a: HashedOnce, b: HashedOnce) -> Bool { a.hash == b.hash && a.value == b.value }
}
