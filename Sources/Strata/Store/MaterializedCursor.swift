/// The objects of a fetch read at once, handed out in batches.
final class MaterializedCursor: ObjectCursor {
    private var bytes: [UInt8]
    /// Where the next element starts (after `[` or a `,`).
    private var position = 1
    private let lock = Lock()

    init(_ array: [UInt8]) { bytes = array }

    func next(_ limit: Int) throws -> JSONBuffer {
        JSONBuffer.copying(lock.withLock {
            var out: [UInt8] = [UInt8(ascii: "[")]
            guard limit > 0 else { return out + [UInt8(ascii: "]")] }
            var count = 0
            var depth = 0
            var inString = false
            var escaped = false
            let start = position
            var end = position
            scan: while end < bytes.count {
                let b = bytes[end]
                if inString {
                    if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                } else {
                    switch b {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        if depth == 0 { break scan }  // the array's end
                        depth -= 1
                    case UInt8(ascii: ","):
                        if depth == 0 {
                            count += 1
                            if count == limit { break scan }
                        }
                    default: break
                    }
                }
                end += 1
            }
            out.append(contentsOf: bytes[start..<end])
            out.append(UInt8(ascii: "]"))
            // Past the separating comma, or at the closing bracket for good.
            position = end < bytes.count && bytes[end] == UInt8(ascii: ",") ? end + 1 : end
            if position >= bytes.count - 1 { bytes = [UInt8(ascii: "["), UInt8(ascii: "]")]; position = 1 }
            return out
        })
    }

    func close() { lock.withLock { bytes = [UInt8(ascii: "["), UInt8(ascii: "]")]; position = 1 } }
}
