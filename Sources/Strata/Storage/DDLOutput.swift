import Glibc

/// Where `SQLiteDialect` puts the DDL it spells, piece by piece: into text (``DDLText``), or
/// against a definition read from a store file (``DDLMatch``), so that the check of a file's
/// schema compares a definition with the one Strata writes without writing it: one spelling
/// serves both.
protocol DDLOutput {
    mutating func put(_ piece: String)
}

/// The DDL as text.
struct DDLText: DDLOutput {
    var text = ""
    mutating func put(_ piece: String) { text += piece }
}

/// Whether a definition is, byte for byte, the DDL put into it: ``matches`` after the last piece.
struct DDLMatch: DDLOutput {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0
    private var differs = false

    init(_ definition: UnsafeBufferPointer<UInt8>) { bytes = definition }

    mutating func put(_ piece: String) {
        guard !differs else { return }
        var piece = piece
        piece.withUTF8 { p in
            guard p.count > 0 else { return }
            guard p.count <= bytes.count - at, memcmp(bytes.baseAddress! + at, p.baseAddress!, p.count) == 0 else {
                differs = true
                return
            }
            at += p.count
        }
    }

    /// Every byte of the definition was put, and nothing else.
    var matches: Bool { !differs && at == bytes.count }

    /// Whether `definition` is what `spell` puts, byte for byte.
    static func matches(_ definition: String, _ spell: (inout DDLMatch) -> Void) -> Bool {
        var definition = definition
        return definition.withUTF8 { d in
            var m = DDLMatch(d)
            spell(&m)
            return m.matches
        }
    }
}
