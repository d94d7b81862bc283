/// The objects of a fetch read at once, handed out in batches: the object writer's array is
/// indexed once (where each object lies, and for a sectioned fetch its section's key), and
/// each batch copies the next objects, in sections again when the fetch has them (a section
/// that continues past a batch starts the next one again, as ``ObjectWriter`` writes batches).
final class MaterializedCursor: ObjectCursor {
    private var bytes: [UInt8]
    /// Each object's bytes, and the index in `keys` of its section (-1 without sections).
    private var objects: [(range: Range<Int>, section: Int)] = []
    /// The sections' keys (their JSON text).
    private var keys: [Range<Int>] = []
    private let sectioned: Bool
    /// The next object to hand out.
    private var position = 0
    private let lock = Lock()

    /// - Parameter sectioned: `array` holds sections (`[{"section": key, "objects": [...]}, ...]`),
    ///   not objects.
    init(_ array: [UInt8], sectioned: Bool = false) {
        bytes = array
        self.sectioned = sectioned
        index()
    }

    /// The end of the JSON value starting at `start`: the index of the `,`, `]` or `}` after it
    /// (or the end of `bytes`).
    private func valueEnd(_ start: Int) -> Int {
        var depth = 0
        var inString = false
        var escaped = false
        var end = start
        while end < bytes.count {
            let b = bytes[end]
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else {
                switch b {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return end }
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 0 { return end }
                default: break
                }
            }
            end += 1
        }
        return end
    }

    /// The elements of the array whose first element starts at `start`, each given to `body`;
    /// returns the index after the array's `]`.
    private func elements(from start: Int, _ body: (Range<Int>) -> Void) -> Int {
        var i = start
        while i < bytes.count && bytes[i] != UInt8(ascii: "]") {
            let end = valueEnd(i)
            body(i..<end)
            i = end < bytes.count && bytes[end] == UInt8(ascii: ",") ? end + 1 : end
        }
        return i + 1
    }

    /// Finds the objects (and sections) of the writer's array, in the shape it writes them.
    private func index() {
        guard !sectioned else {
            let keyStart = ObjectWriter.sectionStart.count, objectsStart = ObjectWriter.objectsStart.count
            _ = elements(from: 1) { section in
                // `{"section":` key `,"objects":[` objects `]}`
                let key = section.lowerBound + keyStart
                let keyEnd = valueEnd(key)
                keys.append(key..<keyEnd)
                let n = keys.count - 1
                _ = elements(from: keyEnd + objectsStart) { objects.append(($0, n)) }
            }
            return
        }
        _ = elements(from: 1) { objects.append(($0, -1)) }
    }

    func next(_ limit: Int) throws -> JSONBuffer {
        JSONBuffer.copying(lock.withLock {
            var out: [UInt8] = [UInt8(ascii: "[")]
            let end = position + min(max(limit, 0), objects.count - position)
            var section = -1
            for k in position..<end {
                let o = objects[k]
                if sectioned && (k == position || o.section != section) {
                    if k > position { out += ObjectWriter.sectionEnd + [UInt8(ascii: ",")] }
                    out += ObjectWriter.sectionStart
                    out += bytes[keys[o.section]]
                    out += ObjectWriter.objectsStart
                    section = o.section
                } else if k > position {
                    out.append(UInt8(ascii: ","))
                }
                out += bytes[o.range]
            }
            if sectioned && end > position { out += ObjectWriter.sectionEnd }
            out.append(UInt8(ascii: "]"))
            position = end
            if position == objects.count { release() }
            return out
        })
    }

    /// Lets go of the objects (under the lock): every later batch is `[]`.
    private func release() { bytes = []; objects = []; keys = []; position = 0 }

    func close() { lock.withLock { release() } }
}
