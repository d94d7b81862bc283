/// One flag per slot of an entity's row (which slots an object's input gave a value): held in
/// the value for up to 64 slots, so decoding an object allocates no array for them.
struct SlotFlags {
    /// How many slots there are.
    let count: Int
    private var low: UInt64 = 0
    /// Slots 64 and above, 64 to a word (empty, and so no allocation, for up to 64 slots).
    private var high: [UInt64] = []

    /// `count` slots, none set.
    init(count: Int) {
        self.count = count
        if count > 64 { high = [UInt64](repeating: 0, count: (count - 64 + 63) / 64) }
    }

    subscript(slot: Int) -> Bool {
        get {
            precondition(slot >= 0 && slot < count, "slot out of range")
            if slot < 64 { return low >> UInt64(slot) & 1 == 1 }
            let i = slot - 64
            return high[i >> 6] >> UInt64(i & 63) & 1 == 1
        }
        set {
            precondition(slot >= 0 && slot < count, "slot out of range")
            if slot < 64 {
                if newValue { low |= 1 << UInt64(slot) } else { low &= ~(1 << UInt64(slot)) }
                return
            }
            let i = slot - 64
            if newValue { high[i >> 6] |= 1 << UInt64(i & 63) } else { high[i >> 6] &= ~(1 << UInt64(i & 63)) }
        }
    }

    var indices: Range<Int> { 0..<count }
}
