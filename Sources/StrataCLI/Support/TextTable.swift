import Strata

/// Rows of text in aligned columns, for a terminal: each column as wide as its widest
/// cell (cut at `maxWidth` characters with …), two spaces between columns, no trailing spaces.
struct TextTable {
    var header: [String]?
    var rows: [[String]] = []
    var maxWidth = 40
    var indent = ""

    init(header: [String]? = nil, maxWidth: Int = 40, indent: String = "") {
        self.header = header
        self.maxWidth = maxWidth
        self.indent = indent
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    /// The table as lines (a rule under the header).
    var text: String {
        let all = (header.map { [$0] } ?? []) + rows
        let cells = all.map { $0.map { TextTable.cut($0, to: maxWidth) } }
        let columns = cells.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in cells { for (i, c) in row.enumerated() { widths[i] = max(widths[i], c.count) } }
        var out = ""
        func line(_ row: [String]) {
            var text = indent
            for (i, c) in row.enumerated() {
                text += c
                if i < row.count - 1 { text += String(repeating: " ", count: widths[i] - c.count + 2) }
            }
            while text.last == " " { text.removeLast() }
            out += text + "\n"
        }
        for (n, row) in cells.enumerated() {
            line(row)
            if n == 0, header != nil { line(widths.map { String(repeating: "-", count: $0) }) }
        }
        return out
    }

    /// `text` cut to `width` characters, the last one then …; line breaks shown as spaces.
    static func cut(_ text: String, to width: Int) -> String {
        var flat = text
        if flat.contains(where: { $0.isNewline || $0 == "\t" }) {
            flat = String(flat.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        }
        guard flat.count > width, width > 0 else { return flat }
        return String(flat.prefix(width - 1)) + "…"
    }

    /// A JSON value as a cell: strings bare, nil as `nil`, anything else as JSON text.
    static func cell(_ value: JSONValue?) -> String {
        switch value {
        case nil: return ""
        case .null?: return "nil"
        case .string(let s)?: return s
        case .number(let n)?: return n
        case .bool(let b)?: return b ? "true" : "false"
        case let v?: return v.text
        }
    }
}
