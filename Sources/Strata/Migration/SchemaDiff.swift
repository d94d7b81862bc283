/// Differences between two schema versions, in words (for errors) — the
/// migration inference builds on the same comparison.
enum SchemaDiff {
    static func describe(from old: Schema, to new: Schema) -> [String] {
        var out: [String] = []
        for e in old.entities where new.entity(named: e.name) == nil {
            out.append("entity '\(e.name)' removed")
        }
        for e in new.entities {
            guard let o = old.entity(named: e.name) else { out.append("entity '\(e.name)' added"); continue }
            if o.versionHash == e.versionHash { continue }
            if o.superentityName != e.superentityName {
                out.append("entity '\(e.name)': superentity changed from '\(o.superentityName ?? "none")' to '\(e.superentityName ?? "none")'")
            }
            for a in o.ownAttributes where !e.ownAttributes.contains(where: { $0.name == a.name }) {
                out.append("entity '\(e.name)': attribute '\(a.name)' removed")
            }
            for a in e.ownAttributes {
                guard let oa = o.ownAttributes.first(where: { $0.name == a.name }) else {
                    out.append("entity '\(e.name)': attribute '\(a.name)' added"); continue
                }
                if oa.type != a.type { out.append("entity '\(e.name)': attribute '\(a.name)' type changed from \(oa.type.rawValue) to \(a.type.rawValue)") }
                if oa.isOptional != a.isOptional { out.append("entity '\(e.name)': attribute '\(a.name)' became \(a.isOptional ? "optional" : "required")") }
                if oa.isUnique != a.isUnique { out.append("entity '\(e.name)': attribute '\(a.name)' \(a.isUnique ? "became unique" : "is no longer unique")") }
                if oa.isTransient != a.isTransient { out.append("entity '\(e.name)': attribute '\(a.name)' \(a.isTransient ? "became transient" : "is no longer transient")") }
                if oa.externalStorage != a.externalStorage { out.append("entity '\(e.name)': attribute '\(a.name)' external storage changed") }
                if oa.isIndexed != a.isIndexed { out.append("entity '\(e.name)': attribute '\(a.name)' index changed") }
                if oa.hashModifier != a.hashModifier { out.append("entity '\(e.name)': attribute '\(a.name)' hashModifier changed") }
            }
            for r in o.ownRelationships where !e.ownRelationships.contains(where: { $0.name == r.name }) {
                out.append("entity '\(e.name)': relationship '\(r.name)' removed")
            }
            for r in e.ownRelationships {
                guard let orr = o.ownRelationships.first(where: { $0.name == r.name }) else {
                    out.append("entity '\(e.name)': relationship '\(r.name)' added"); continue
                }
                if orr.destinationName != r.destinationName { out.append("entity '\(e.name)': relationship '\(r.name)' destination changed") }
                if orr.isToMany != r.isToMany { out.append("entity '\(e.name)': relationship '\(r.name)' became \(r.isToMany ? "to-many" : "to-one")") }
                if orr.isOptional != r.isOptional { out.append("entity '\(e.name)': relationship '\(r.name)' optionality changed") }
                if orr.inverse?.name != r.inverse?.name { out.append("entity '\(e.name)': relationship '\(r.name)' inverse changed") }
                if orr.hashModifier != r.hashModifier { out.append("entity '\(e.name)': relationship '\(r.name)' hashModifier changed") }
            }
            if o.uniqueConstraints != e.uniqueConstraints { out.append("entity '\(e.name)': unique constraints changed") }
            if o.indexes != e.indexes { out.append("entity '\(e.name)': indexes changed") }
        }
        if out.isEmpty { out.append("storage layout changed") }
        return out
    }
}
