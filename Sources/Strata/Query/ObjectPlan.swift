/// What to write for the rows of some entities of one hierarchy, computed
/// once per read from the schema: per entity, the columns to encode, the
/// transient constants and the relationships written after the row.
///
/// The plan names what a row must provide (`selections`); the store turns
/// that into its own query. A row is: the primary key, the concrete entity
/// name, then one result column per selection. The identifiers of a
/// relationship not held in the row are one selection too (the store reads
/// them in the same query, e.g. with a correlated subquery); the objects of a
/// prefetched relationship come from a second cursor per relationship, run
/// once per owner row (``RowCursor/start(key:)``).
///
/// Everything the row loop touches is a trivial value: keys and fixed JSON
/// text live in one byte pool and are addressed by ranges, so writing a row
/// retains nothing.
struct ObjectPlan {
    /// A value a row must provide, in result order after the key and entity name.
    enum Selection {
        /// A stored column of the table.
        case column(String)
        /// The concrete entity name of the row that a to-one link (a column of this table) names.
        case linkedEntity(Relationship)
        /// The identifiers related through a relationship not held in the row, ordered by key, as
        /// text: keys separated by commas (`3,4`), or `Entity/key` items when the destination
        /// has subentities, to-many ones after their number (`2:A/3,B/4`); a to-one gives its
        /// first (lowest) one; NULL when there is none.
        case identifiers(Relationship)
    }

    /// A relationship written after the row's columns.
    struct Deferred {
        /// `,"name":`
        let key: Range<Int>
        let isToMany: Bool
        /// Prefetched: the index of its cursor (its position in `prefetched`), else -1.
        let slot: Int
        /// Identifiers: the result column, else -1.
        let column: Int32
        /// Identifiers: what precedes a key (`"Destination/`), or `"` when items name their entity;
        /// a prefetched link held in the row: `"Destination/`, written before a dangling link's key.
        let prefix: Range<Int>
        /// Items that name their entity: the names they may give (indices in `names`); else empty.
        let members: Range<Int>
        /// A prefetched to-one held in the row: the result column of the link's key, else -1.
        let link: Int32
        /// The relationship's name (errors).
        let name: Range<Int>
    }

    /// How a column is checked and written (docs/JSON.md, "Damaged stores"): the storage class
    /// it must have, then its content.
    ///
    /// A composite is three kinds of members in a row: `composite` (its column, 1 when it has
    /// a value: `{` is written, or null and its other members are skipped), its fields (keys
    /// without the leading comma for the first), and `close` (`}` as its key; it reads the
    /// composite's column again, which is not null there).
    enum Encoding: UInt8 {
        case text, url, uuid, decimal, int, bool, double, date, json, data, externalData, link, composite, close

        /// How a stored value of `type` is checked and written (data held in the row).
        init(_ type: AttributeType) {
            switch type {
            case .string: self = .text
            case .url: self = .url
            case .uuid: self = .uuid
            case .decimal: self = .decimal
            case .int: self = .int
            case .bool: self = .bool
            case .double: self = .double
            case .date: self = .date
            case .json: self = .json
            case .data: self = .data
            case .composite: self = .composite
            }
        }
    }

    struct Member {
        /// `,"name":`
        let key: Range<Int>
        /// The attribute or relationship name (errors).
        let name: Range<Int>
        let index: Int32
        let type: Encoding
        /// Links: the column with the target's concrete entity (-1: the declared destination).
        let entityColumn: Int32
        /// Links: the declared destination's name.
        let fallback: Range<Int>
        /// External data: index in `externalAttributes`; a composite: how many members follow it
        /// (its fields and its close), skipped when it is nil.
        let attribute: Int
        /// The values allowed, when not every value of the type is: a text enum's members and a
        /// link's entity names (indices in `names`), an int enum's members (indices in `ints`).
        let members: Range<Int>
    }

    struct EntityPlan {
        /// The entity name as a row gives it.
        let name: Range<Int>
        /// `{"_id":"Name/`
        let idPrefix: Range<Int>
        /// `","_entity":"Name"`
        let entityPart: Range<Int>
        /// Every transient constant (`,"key":value`), written after the columns.
        let constants: Range<Int>
        let columns: Range<Int>
        /// Indices in `deferred` of the relationships this entity has.
        let deferred: Range<Int>
    }

    private(set) var pool: [UInt8] = []
    /// Texts a value may take (enum members, entity names), as ranges of `pool`.
    private(set) var names = ContiguousArray<Range<Int>>()
    /// Integers an int enum's value may take.
    private(set) var ints = ContiguousArray<Int64>()
    private(set) var columns = ContiguousArray<Member>()
    private(set) var entities = ContiguousArray<EntityPlan>()
    private(set) var deferredIndices = ContiguousArray<Int>()
    /// `,"name":` of each deferred relationship.
    private(set) var deferredKeys = ContiguousArray<Range<Int>>()
    /// Relationships written after the row: identifiers (a selection), or prefetched objects.
    private(set) var deferred: [Relationship] = []
    private(set) var deferredInfo = ContiguousArray<Deferred>()
    /// The prefetched relationships, by slot (the first entries of `deferred`).
    private(set) var prefetched: [Relationship] = []
    private(set) var externalAttributes: [Attribute] = []
    private(set) var selections: [Selection] = []
    /// `sectionBy`: the section key, the last result column (after every selection), checked
    /// and written as each section's `"section"` value (its `name` the key path); nil without sections.
    private(set) var section: Member?
    /// Whether every row is of `entities[0]` (no entity-name lookup per row).
    let isSingle: Bool
    /// The slot of `prefetched[0]`.
    private let firstSlot: Int

    private mutating func add(_ bytes: some Sequence<UInt8>) -> Range<Int> {
        let start = pool.count
        pool.append(contentsOf: bytes)
        return start..<pool.count
    }

    /// The names of `entities`, as a range of `names`.
    private mutating func entityNames(_ entities: [Entity]) -> Range<Int> {
        let start = names.count
        for e in entities { names.append(add(e.name.utf8)) }
        return start..<names.count
    }

    /// An enum's members: texts as a range of `names`, integers as a range of `ints`.
    private mutating func enumMembers(_ a: Attribute) -> Range<Int> {
        guard let values = a.enumValues else { return 0..<0 }
        if a.type == .int {
            let start = ints.count
            for case .int(let v) in values { ints.append(v) }
            return start..<ints.count
        }
        let start = names.count
        for case .text(let t) in values { names.append(add(t.utf8)) }
        return start..<names.count
    }

    static func keyBytes(_ name: String) -> [UInt8] {
        var w = JSONWriter()
        w.bytes.append(UInt8(ascii: ","))
        w.key(name)
        return w.bytes
    }

    /// A row's first result column after the key (0) and the concrete entity name (1).
    private static let firstSelection: Int32 = 2

    /// Where each stored column a selection reads lands in the row, so that entities of one
    /// hierarchy sharing a column read it once.
    private struct SelectionIndex {
        /// `.column(name)` selections, by column name. (`Int`, not `Int32`: a dictionary type
        /// this process already uses costs no run-time type set-up at a fresh process's first fetch.)
        var columns: [String: Int] = [:]
        /// `.linkedEntity` selections, by the link's column name.
        var linkedEntities: [String: Int] = [:]
        /// The name of the link back to the owner of the prefetched relationship whose rows the plan writes.
        var ownerLink: String?
    }

    /// The ``Member/entityColumn`` of the link back to the owner of the prefetched relationship
    /// whose rows a plan writes (held in those rows, it names the owner): no selection, the
    /// writer has the owner's entity name from the owner's row.
    static let ownersEntity: Int32 = -2

    /// Built in three passes, so that result columns come in a fixed order: the prefetched
    /// relationships (the first deferred entries and their link columns), then each entity
    /// (its texts, columns, deferred relationships and constants), then the identifiers'
    /// selections after every column.
    ///
    /// - Parameters:
    ///   - properties: names to read (nil: all).
    ///   - prefetched: relationships returned as objects (always read, written after the row).
    ///   - relationships: false leaves out every relationship that is not prefetched (no link
    ///     column, no identifiers read).
    ///   - prefetchSlot: the slot of the first prefetched relationship (a nested plan's are
    ///     numbered after its parents', so that one array of cursors serves every depth).
    ///   - ownerLink: for the rows of a prefetched relationship kept in them (`.inInverseRows`),
    ///     its inverse: the link that names the owner they are read for (``ownersEntity``).
    init(entities list: [Entity], properties: [String]? = nil, prefetched: [Relationship] = [], relationships: Bool = true,
         prefetchSlot: Int = 0, ownerLink: Relationship? = nil) {
        isSingle = list.count == 1 && !list[0].root.isInHierarchy
        firstSlot = prefetchSlot
        var index = SelectionIndex()
        index.ownerLink = ownerLink?.name
        addPrefetched(prefetched, of: list, &index)
        for e in list {
            addEntity(e, properties: properties, prefetched: prefetched, relationships: relationships, &index)
        }
        addIdentifierSelections()
    }

    /// Whether property `name` is read: it is one of `properties`, or `properties` is nil.
    private static func isWanted(_ name: String, _ properties: [String]?) -> Bool {
        properties.map { $0.contains(name) } ?? true
    }

    /// Appends `selection` and returns its result column.
    private mutating func select(_ selection: Selection) -> Int32 {
        selections.append(selection)
        return ObjectPlan.firstSelection + Int32(selections.count - 1)
    }

    /// The result column of stored column `name`: its selection, added the first time it is asked for.
    private mutating func column(_ name: String, _ index: inout SelectionIndex) -> Int32 {
        if let i = index.columns[name] { return Int32(truncatingIfNeeded: i) }
        let i = select(.column(name))
        index.columns[name] = Int(i)
        return i
    }

    /// Gives the prefetched relationships of `list`'s entities the first deferred entries and
    /// the slots `firstSlot..<firstSlot + prefetched.count`, in the order asked for, each once; a link held in the
    /// row gets a column of its own (a dangling one is written as its identifier).
    private mutating func addPrefetched(_ asked: [Relationship], of list: [Entity], _ index: inout SelectionIndex) {
        for r in asked where !deferred.contains(where: { $0 === r }) && list.contains(where: { $0.relationshipByName[r.name] === r }) {
            let key = add(ObjectPlan.keyBytes(r.name))
            // A link held in the row is read with it: a dangling one has no object to prefetch.
            var link: Int32 = -1
            var prefix = 0..<0
            if r.isHeldInRow {
                link = select(.column(r.name))
                index.columns[r.name] = Int(link)
                prefix = add(Array("\"\(r.destination.name)/".utf8))
            }
            deferredInfo.append(Deferred(key: key, isToMany: r.isToMany, slot: firstSlot + prefetched.count, column: -1, prefix: prefix,
                                         members: 0..<0, link: link, name: add(r.name.utf8)))
            prefetched.append(r)
            deferred.append(r)
            deferredKeys.append(key)
        }
    }

    /// Adds `e`'s plan: its fixed texts, its columns (attributes, then links held in the row),
    /// its deferred relationships in `deferred` order, and its transient constants.
    private mutating func addEntity(_ e: Entity, properties: [String]?, prefetched: [Relationship], relationships: Bool,
                                    _ index: inout SelectionIndex) {
        let name = add(e.name.utf8)
        let idPrefix = add(Array("{\"_id\":\"".utf8) + Array(e.name.utf8) + [UInt8(ascii: "/")])
        var part = Array("\",\"_entity\":".utf8)
        var w = JSONWriter()
        w.string(e.name)
        part += w.bytes
        let entityPart = add(part)
        let columnsStart = columns.count
        let deferredStart = deferredIndices.count
        for a in e.attributes where !a.isTransient && a.composite == nil {
            if a.isComposite {
                addComposite(a, properties: properties, &index)
            } else if ObjectPlan.isWanted(a.name, properties) {
                addAttributeColumn(a, &index)
            }
        }
        for r in e.relationships {
            let isPrefetched = prefetched.contains { $0 === r }
            guard (relationships && ObjectPlan.isWanted(r.name, properties)) || isPrefetched else { continue }
            if r.isHeldInRow, !isPrefetched {
                addLinkColumn(r, &index)
            } else {
                deferredIndices.append(deferredIndex(r))
            }
        }
        deferredIndices[deferredStart...].sort()
        let constants = addConstants(e, properties: properties)
        entities.append(EntityPlan(name: name, idPrefix: idPrefix, entityPart: entityPart,
                                   constants: constants, columns: columnsStart..<columns.count,
                                   deferred: deferredStart..<deferredIndices.count))
    }

    /// Adds composite `a` with its wanted fields (all of them when `a` itself is wanted, else
    /// those named, `address.city`): its column, the fields' columns, and its close.
    private mutating func addComposite(_ a: Attribute, properties: [String]?, _ index: inout SelectionIndex) {
        let wanted = a.fields.filter { ObjectPlan.isWanted(a.name, properties) || ObjectPlan.isWanted($0.name, properties) }
        guard !wanted.isEmpty else { return }
        let at = column(a.name, &index)
        columns.append(Member(key: add(ObjectPlan.keyBytes(a.name)), name: add(a.name.utf8), index: at, type: .composite, entityColumn: -1,
                              fallback: 0..<0, attribute: wanted.count + 1, members: 0..<0))
        for (i, f) in wanted.enumerated() {
            var key = ObjectPlan.keyBytes(f.fieldName)
            if i == 0 { key.removeFirst() }
            addAttributeColumn(f, &index, key: key)
        }
        columns.append(Member(key: add([UInt8(ascii: "}")]), name: add(a.name.utf8), index: at, type: .close, entityColumn: -1,
                              fallback: 0..<0, attribute: -1, members: 0..<0))
    }

    /// Adds the column of stored attribute `a`, with the encoding its type is checked and written with.
    /// - Parameter key: what precedes the value (`,"name":` by default).
    private mutating func addAttributeColumn(_ a: Attribute, _ index: inout SelectionIndex, key: [UInt8]? = nil) {
        let at = column(a.name, &index)
        var type = Encoding(a.type)  // a composite is added by addComposite, never here
        var attribute = -1
        if a.type == .data && a.externalStorage {
            type = .externalData
            attribute = externalAttributes.count
            externalAttributes.append(a)
        }
        columns.append(Member(key: add(key ?? ObjectPlan.keyBytes(a.name)), name: add(a.name.utf8), index: at, type: type, entityColumn: -1,
                              fallback: 0..<0, attribute: attribute, members: enumMembers(a)))
    }

    /// Makes the plan's rows end with the value of `a` (a string, url, uuid, int or date
    /// attribute, read through `keyPath`), the key of their section.
    mutating func addSection(_ a: Attribute, keyPath: String) {
        let type: Encoding = switch a.type {
        case .int: .int
        case .date: .date
        case .url: .url
        case .uuid: .uuid
        default: .text
        }
        section = Member(key: 0..<0, name: add(keyPath.utf8), index: ObjectPlan.firstSelection + Int32(selections.count), type: type,
                         entityColumn: -1, fallback: 0..<0, attribute: -1, members: enumMembers(a))
    }

    /// Adds the column of link `r` (held in the row, not prefetched); a destination with
    /// subentities also selects the linked row's entity name, checked against its entities.
    private mutating func addLinkColumn(_ r: Relationship, _ index: inout SelectionIndex) {
        let col = r.name
        let at = column(col, &index)
        var entityColumn: Int32 = -1
        var members = 0..<0
        if r.destination.root.isInHierarchy {
            members = entityNames(r.destination.descendants)
            if index.ownerLink == r.name { entityColumn = ObjectPlan.ownersEntity } else if let j = index.linkedEntities[col] { entityColumn = Int32(truncatingIfNeeded: j) } else {
                entityColumn = select(.linkedEntity(r))
                index.linkedEntities[col] = Int(entityColumn)
            }
        }
        columns.append(Member(key: add(ObjectPlan.keyBytes(r.name)), name: add(r.name.utf8), index: at, type: .link,
                              entityColumn: entityColumn, fallback: add(r.destination.name.utf8), attribute: -1, members: members))
    }

    /// The index in `deferred` of `r`: its entry, added the first time (an identifiers entry,
    /// whose column ``addIdentifierSelections()`` sets) when `r` is not prefetched.
    private mutating func deferredIndex(_ r: Relationship) -> Int {
        if let i = deferred.firstIndex(where: { $0 === r }) { return i }
        let key = add(ObjectPlan.keyBytes(r.name))
        let named = r.destination.root.isInHierarchy
        let prefix = add(named ? [UInt8(ascii: "\"")] : Array("\"\(r.destination.name)/".utf8))
        let members = named ? entityNames(r.destination.descendants) : 0..<0
        deferredInfo.append(Deferred(key: key, isToMany: r.isToMany, slot: -1, column: -1, prefix: prefix,
                                     members: members, link: -1, name: add(r.name.utf8)))
        deferred.append(r)
        deferredKeys.append(key)
        return deferred.count - 1
    }

    /// Adds `e`'s wanted transient attributes as `,"key":default` texts, contiguous in the pool.
    /// - Returns: their range of `pool`.
    private mutating func addConstants(_ e: Entity, properties: [String]?) -> Range<Int> {
        let start = pool.count
        for a in e.attributes where ObjectPlan.isWanted(a.name, properties) && a.isTransient {
            var w = JSONWriter()
            if let d = a.defaultJSON { d.write(to: &w) } else { w.null() }
            _ = add(ObjectPlan.keyBytes(a.name) + w.bytes)
        }
        return start..<pool.count
    }

    /// Gives each identifiers entry of `deferred` (neither prefetched nor held in the row) its
    /// selection, after every column.
    private mutating func addIdentifierSelections() {
        for (d, info) in deferredInfo.enumerated() where info.slot < 0 {
            let column = select(.identifiers(deferred[d]))
            deferredInfo[d] = Deferred(key: info.key, isToMany: info.isToMany, slot: -1, column: column, prefix: info.prefix,
                                       members: info.members, link: -1, name: info.name)
        }
    }
}
