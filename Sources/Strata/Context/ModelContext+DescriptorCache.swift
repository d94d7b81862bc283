/// `strata_fetch` and `strata_fetch_count` of a descriptor text seen before: the plan the
/// context's ``DescriptorCache`` holds, run with this call's bindings.
extension ModelContext {
    /// The read `run` makes with the cached plan of `json` and the values of its bindings;
    /// nil when the call takes the uncached path (text not cacheable, values that change the
    /// shape of the check or fail it, a context lent to a migration stage that has returned).
    func cachedRead<T>(_ json: UnsafeBufferPointer<UInt8>, _ run: (PreparedRead, [SQLValue], PendingReplay?) throws -> T) throws -> T? {
        try lock.withLock { () throws -> T? in
            if expired { return nil }
            let plan: DescriptorCache.Plan, bindings: JSONValue?
            if let recent = descriptorCache.recentPlan(json) {
                (plan, bindings) = recent
            } else {
                guard let text = DescriptorText(json), text.members != nil,
                      let found = descriptorCache.plan(text) ?? cachePlan(text) else { return nil }
                (plan, bindings) = (found, text.bindings)
            }
            guard case .prepared(let p) = plan, let given = DescriptorText.members(bindings),
                  let values = ModelContext.slotValues(p.descriptor, p.checker, given) else { return nil }
            return try run(p.read, values, pendingReplay(p.descriptor.includePendingChanges))
        }
    }

    /// Compiles `text` as a prepared fetch and caches the plan; when only an uncached call can
    /// run it (an aggregation, a check that needs the values, `fromVersion`) and it decodes,
    /// caches that mark. Nil when there is no plan: the caller takes the uncached path, which
    /// reports whatever is wrong with the descriptor.
    private func cachePlan(_ text: DescriptorText) -> DescriptorCache.Plan? {
        guard let value = try? JSONValue.parse(text.text) else { return nil }
        let plan: DescriptorCache.Plan
        var sqlBytes = 0
        if value["fromVersion"].map({ $0 != .null }) != true,
           let d = try? descriptor(value, slotted: true), let read = try? session.prepare(d) {
            plan = .prepared(DescriptorCache.PreparedPlan(descriptor: d, read: read, checker: PredicateChecker(schema: schema, root: d.entity, bindings: [:])))
            sqlBytes = read.footprint
        } else {
            guard (try? descriptor(value)) != nil else { return nil }
            plan = .uncacheable
        }
        descriptorCache.insert(plan, for: text, sqlBytes: sqlBytes)
        return plan
    }

    /// The values of `d`'s slots from `given`, each checked as the same variable bound in the
    /// descriptor would be; nil when one is missing, fails its check or changes the shape of
    /// the check (the uncached path then reports or runs it).
    private static func slotValues(_ d: FetchDescriptor, _ checker: PredicateChecker, _ given: [(String, JSONValue)]) -> [SQLValue]? {
        var values: [SQLValue] = []
        values.reserveCapacity(d.slots.count)
        for slot in d.slots {
            guard let v = given.last(where: { $0.0 == slot.name })?.1, let value = try? checker.slotValue(slot, v) else { return nil }
            values.append(value)
        }
        return values
    }
}
