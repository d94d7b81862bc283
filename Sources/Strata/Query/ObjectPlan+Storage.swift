/// A plan's tables copied once into memory it owns, read by the row loop through
/// ``ObjectPlan/View`` (unsafe buffers: no array, class or closure touched per row).
final class PlanStorage {
    let plan: ObjectPlan
    let view: ObjectPlan.View
    private let externals: UnsafeMutableBufferPointer<Attribute>

    init(_ plan: ObjectPlan) {
        self.plan = plan
        func copy<T>(_ a: some Collection<T>) -> UnsafeBufferPointer<T> {
            let p = UnsafeMutableBufferPointer<T>.allocate(capacity: max(a.count, 1))
            _ = p.initialize(from: a)
            return UnsafeBufferPointer(rebasing: p[0..<a.count])
        }
        externals = .allocate(capacity: max(plan.externalAttributes.count, 1))
        _ = externals.initialize(from: plan.externalAttributes)
        view = ObjectPlan.View(pool: copy(plan.pool), names: copy(plan.names), ints: copy(plan.ints),
                               columns: copy(plan.columns), entities: copy(plan.entities),
                               deferredIndices: copy(plan.deferredIndices), deferred: copy(plan.deferredInfo),
                               externals: UnsafeBufferPointer(rebasing: externals[0..<plan.externalAttributes.count]),
                               isSingle: plan.isSingle)
    }

    deinit {
        UnsafeMutableBufferPointer(mutating: view.pool).deallocate()
        UnsafeMutableBufferPointer(mutating: view.names).deallocate()
        UnsafeMutableBufferPointer(mutating: view.ints).deallocate()
        UnsafeMutableBufferPointer(mutating: view.columns).deallocate()
        UnsafeMutableBufferPointer(mutating: view.entities).deallocate()
        UnsafeMutableBufferPointer(mutating: view.deferredIndices).deallocate()
        UnsafeMutableBufferPointer(mutating: view.deferred).deallocate()
        _ = UnsafeMutableBufferPointer(rebasing: externals[0..<view.externals.count]).deinitialize()
        externals.deallocate()
    }
}

/// The plans a fetch's object writers read, copied into ``PlanStorage`` once per compiled fetch
/// (``ObjectQueries``): a fetch run again (a prepared or cached plan) makes a writer without
/// copying them. Never changed after `init`, so writers on any thread share them.
final class WriterPlans {
    let storage: PlanStorage
    /// Plans of the prefetched relationships' objects, by slot.
    let prefetchStorage: [PlanStorage]
    let prefetchViews: UnsafeMutableBufferPointer<ObjectPlan.View>

    /// - Parameter prefetched: the plans of `plan.prefetched`'s objects, by slot.
    init(plan: ObjectPlan, prefetched: [ObjectPlan] = []) {
        storage = PlanStorage(plan)
        prefetchStorage = prefetched.map(PlanStorage.init)
        prefetchViews = .allocate(capacity: max(prefetched.count, 1))
        _ = prefetchViews.initialize(from: prefetchStorage.map(\.view))
    }

    deinit { prefetchViews.deallocate() }
}

extension ObjectPlan {
    /// The plan as the row loop reads it: a trivial value of unsafe buffers, valid while its
    /// ``PlanStorage`` lives.
    struct View {
        let pool: UnsafeBufferPointer<UInt8>
        let names: UnsafeBufferPointer<Range<Int>>
        let ints: UnsafeBufferPointer<Int64>
        let columns: UnsafeBufferPointer<Member>
        let entities: UnsafeBufferPointer<EntityPlan>
        let deferredIndices: UnsafeBufferPointer<Int>
        let deferred: UnsafeBufferPointer<Deferred>
        let externals: UnsafeBufferPointer<Attribute>
        let isSingle: Bool

        @inline(__always) func bytes(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: pool[r])
        }

        /// The entry of `names[members]` whose text is `text`, as a range of `pool`; nil when none is.
        @inline(__always) func member(_ text: UnsafeBufferPointer<UInt8>, _ members: Range<Int>) -> Range<Int>? {
            for k in members where View.equal(text, pool, names[k]) { return names[k] }
            return nil
        }

        func string(_ r: Range<Int>) -> String { String(decoding: bytes(r), as: UTF8.self) }

        /// Whether `a` is the text of `pool[r]`.
        @inline(__always)
        static func equal(_ a: UnsafeBufferPointer<UInt8>, _ pool: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
            guard a.count == r.count else { return false }
            for i in 0..<a.count where a[i] != pool[r.lowerBound + i] { return false }
            return true
        }
    }
}

