import Glibc

/// A context's compiled descriptors, by their text: a `strata_fetch` or `strata_fetch_count`
/// of a descriptor seen before (a widget polling, a list refreshing) binds the values of this
/// call's `"bindings"` to the plan compiled the first time, as a prepared fetch's run does,
/// instead of decoding, checking and compiling the descriptor again.
///
/// **The key** is the descriptor's text with its top-level `"bindings"` value left out (with
/// where that value was), byte for byte: bindings vary per call and are read per call.
/// Everything else a plan depends on is fixed for the cache's life, which is its context's:
/// the context's schema (a container keeps the version it opened, whoever migrates the file
/// afterwards: docs/concurrency.md, "Migrations by others"), its store and dialect. A migration
/// by another container therefore leaves every plan what compiling the text again would give,
/// and the read reports the migration exactly as an uncached one does.
///
/// **Per context, not per container**: a context is used by one thread at a time under its
/// lock, so the cache needs no lock of its own, and a plan runs on the context's session.
///
/// **What is cached**: descriptors a prepared fetch compiles (``PreparedFetch``). An aggregation,
/// a predicate whose check needs the variables' values (`$a == $b`, an `in` list) and a
/// `fromVersion` read are remembered as not cacheable and compiled each call. A call whose
/// values change the shape of the check (nil, an array), lack a variable or fail its check,
/// and every descriptor that fails to decode, take the uncached path: errors are those of an
/// uncached call (only successes are cached).
///
/// **Bounded** by entry count and by an estimate of the bytes held (``maxEntries``,
/// ``maxBytes``); the least recently used entry goes first.
struct DescriptorCache {
    /// What a key maps to: a plan, or a mark that the descriptor is compiled each call.
    enum Plan {
        case prepared(PreparedPlan)
        case uncacheable
    }

    /// A descriptor compiled as a prepared fetch compiles it (one object: a lookup hands it
    /// out with one retain, not a copy of the descriptor).
    final class PreparedPlan {
        let descriptor: FetchDescriptor
        let read: PreparedRead
        /// Checks and converts a call's values (the context's schema).
        let checker: PredicateChecker
        init(descriptor: FetchDescriptor, read: PreparedRead, checker: PredicateChecker) {
            self.descriptor = descriptor
            self.read = read
            self.checker = checker
        }
    }

    private final class Entry {
        let key: [UInt8]
        /// Where the bindings value was cut out of the text (nil: the text has none).
        let cut: Int?
        let plan: Plan
        /// The key's hash (the entry's key in ``entries``).
        let hash: Int
        init(key: [UInt8], cut: Int?, plan: Plan, hash: Int) { self.key = key; self.cut = cut; self.plan = plan; self.hash = hash }
    }

    static let maxEntries = 128
    static let maxBytes = 1 << 20
    /// A text longer than this is not cached (one entry must not flush the others).
    static let maxKeyBytes = 16 << 10
    /// Bytes an entry is counted for besides its key and SQL (descriptor, plan, checker).
    static let entryOverhead = 2048
    /// How deeply a bindings value read by ``recentPlan(_:)`` may nest (deeper: the text is read whole).
    private static let recentBindingLevels = 16

    /// The entries by the hash of their key (an entry's cost: its estimated bytes).
    private var entries = LRUCache<Int, Entry>(maxCount: DescriptorCache.maxEntries, maxCost: DescriptorCache.maxBytes)
    /// The entry last found or inserted (still one of ``entries`` when ``recentPlan(_:)`` uses it).
    private var recent: Entry?
    /// The estimated bytes the entries hold (``maxBytes`` bounds it).
    var bytes: Int { entries.cost }
    /// How many descriptors are cached.
    var count: Int { entries.count }
    /// How many lookups found their plan (what tests read).
    private(set) var hits = 0

    /// The plan cached for `text`, marked as just used; nil when it is not cached.
    mutating func plan(_ text: DescriptorText) -> Plan? {
        guard let e = entries.value(for: text.hash), matches(e, text) else { return nil }
        hits += 1
        recent = e
        return e.plan
    }

    /// The plan of the entry last used when `json` is its text with a bindings value of its own
    /// (a widget polling sends the same text with new values), with that value, marked as just
    /// used; nil otherwise (the caller reads the text whole: ``DescriptorText``).
    ///
    /// Only the bindings value is read: the bytes before and after it are compared with the
    /// entry's key, which is the text of a descriptor that decoded with its one top-level
    /// `"bindings"` member there, and a value read whole ends where a value ends (the key's
    /// rest starts with `,`, `}` or whitespace, which no value continues with). The value is
    /// read as ``DescriptorText`` reads it; anything it refuses (or nesting deeper than
    /// ``recentBindingLevels``) returns nil, and the text read whole reports it.
    mutating func recentPlan(_ json: UnsafeBufferPointer<UInt8>) -> (plan: Plan, bindings: JSONValue?)? {
        guard let e = recent, let base = json.baseAddress else { return nil }
        var found: JSONValue?
        let same = e.key.withUnsafeBufferPointer { key -> Bool in
            guard let cut = e.cut else {
                return json.count == key.count && (key.isEmpty || memcmp(base, key.baseAddress!, key.count) == 0)
            }
            let tail = key.count - cut
            guard json.count > key.count, memcmp(base, key.baseAddress!, cut) == 0 else { return false }
            let rest = UnsafeBufferPointer(rebasing: json[cut...])
            var r = JSONReader(rest)
            guard r.peekByte() != nil, r.position == 0,
                  let value = try? DescriptorText.readBindings(&r, maxLevels: DescriptorCache.recentBindingLevels),
                  rest.count - r.position == tail,
                  tail == 0 || memcmp(rest.baseAddress! + r.position, key.baseAddress! + cut, tail) == 0 else { return false }
            found = value
            return true
        }
        guard same, let held = entries.value(for: e.hash), held === e else { return nil }
        hits += 1
        return (e.plan, e.cut == nil ? nil : found)
    }

    /// Remembers `plan` for `text` (a different text of the same hash gives its place up),
    /// evicting the least recently used entries past the bounds.
    mutating func insert(_ plan: Plan, for text: DescriptorText, sqlBytes: Int) {
        let size = text.keyCount + sqlBytes + DescriptorCache.entryOverhead
        guard text.keyCount <= DescriptorCache.maxKeyBytes, size <= DescriptorCache.maxBytes / 4 else { return }
        let e = Entry(key: text.key(), cut: text.cut, plan: plan, hash: text.hash)
        entries.insert(e, for: text.hash, cost: size)
        recent = e
    }

    /// Forgets every plan.
    mutating func removeAll() {
        entries.removeAll()
        recent = nil
    }

    private func matches(_ e: Entry, _ text: DescriptorText) -> Bool {
        guard e.cut == text.cut, e.key.count == text.keyCount else { return false }
        return e.key.withUnsafeBufferPointer { key in
            let head = text.head, tail = text.tail
            return (head.isEmpty || memcmp(key.baseAddress!, head.baseAddress!, head.count) == 0)
                && (tail.isEmpty || memcmp(key.baseAddress! + head.count, tail.baseAddress!, tail.count) == 0)
        }
    }
}

/// A descriptor's text read once for the cache: its top-level `"bindings"` value (read as a
/// tree, as decoding would) and the rest of the text, hashed. Nil for text that is not a
/// well-formed JSON object (the uncached path reports it).
struct DescriptorText {
    let text: UnsafeBufferPointer<UInt8>
    /// The bindings value's byte range, nil when there is none.
    let range: Range<Int>?
    /// The bindings value (nil: no `"bindings"` member).
    let bindings: JSONValue?
    let hash: Int

    /// Where the key is cut (the bindings value's start), nil when it is the whole text.
    var cut: Int? { range?.lowerBound }
    var head: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: text[0..<(range?.lowerBound ?? text.count)]) }
    var tail: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: text[(range?.upperBound ?? text.count)...]) }
    var keyCount: Int { text.count - (range?.count ?? 0) }

    init?(_ text: UnsafeBufferPointer<UInt8>) {
        self.text = text
        var r = JSONReader(text)
        var range: Range<Int>?
        var bindings: JSONValue?
        var twice = false
        do {
            guard r.peekByte() == UInt8(ascii: "{") else { return nil }
            // Duplicate keys elsewhere need no check: a text is only found when all but its
            // bindings value is the text of a descriptor that decoded (the miss parses it all).
            try r.readMembers { r, name in
                guard DescriptorText.isBindings(name) else { return try r.skipValue() }
                twice = range != nil
                r.skipWhitespace()
                let start = r.position
                bindings = try DescriptorText.readBindings(&r)
                range = start..<r.position
            }
            try r.expectEnd()
        } catch {
            return nil
        }
        if twice { return nil }
        self.range = range
        self.bindings = bindings
        var h = Hasher()
        h.combine(range?.lowerBound ?? -1)
        let head = UnsafeBufferPointer(rebasing: text[0..<(range?.lowerBound ?? text.count)])
        let tail = UnsafeBufferPointer(rebasing: text[(range?.upperBound ?? text.count)...])
        h.combine(bytes: UnsafeRawBufferPointer(head))
        h.combine(bytes: UnsafeRawBufferPointer(tail))
        hash = h.finalize()
    }

    /// The bindings value, as decoding reads it (an object's duplicate names are refused); errors
    /// carry no path, as the uncached path reports them.
    /// - Parameter maxLevels: how deeply the value may nest (``JSONReader/readValue(at:maxLevels:)``).
    static func readBindings(_ r: inout JSONReader, maxLevels: Int = .max) throws -> JSONValue {
        guard try r.peek() == .object else { return try r.readValue(maxLevels: maxLevels) }
        var members: [(String, JSONValue)] = []
        try r.readObject { r, name in members.append((name, try r.readValue(maxLevels: maxLevels - 1))) }
        return .object(members)
    }

    private static let bindingsName = Array("bindings".utf8)

    /// Whether a top-level member is `"bindings"` (its name compared as bytes unless it has escapes).
    private static func isBindings(_ name: JSONReader.Name) -> Bool {
        guard let raw = name.raw else { return name.string == "bindings" }
        return raw.elementsEqual(bindingsName)
    }

    /// The key's bytes (kept by an entry).
    func key() -> [UInt8] { Array(head) + Array(tail) }

    /// The members of the bindings (none when absent or null); nil when the value is not an object.
    var members: [(String, JSONValue)]? { DescriptorText.members(bindings) }

    /// The members of a bindings value (none when absent or null); nil when it is not an object.
    static func members(_ bindings: JSONValue?) -> [(String, JSONValue)]? {
        switch bindings {
        case nil, .null?: return []
        case .object(let m)?: return m
        default: return nil
        }
    }
}
