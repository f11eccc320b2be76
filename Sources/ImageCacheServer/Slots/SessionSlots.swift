import ImageCacheKit

/// The slot and prefetch tables of every open session, made on a session's first
/// `thumbnail.show` or `prefetch` and dropped when it closes (the prefetches' tasks
/// cancelled; the slots' requests are the session's, which cancels their tasks itself).
final class SessionSlots: Sendable {
    /// One session's tables.
    struct Tables: Sendable {
        let slots: SlotTable
        let prefetches: PrefetchTable
    }

    private let tables = LockedState<[UInt64: Tables]>([:])

    init() {}

    /// The session's tables, made on first use (and closed with the session).
    func tables(for session: Session) -> Tables {
        let (found, made) = tables.withLock { tables -> (Tables, Bool) in
            if let found = tables[session.id] { return (found, false) }
            let made = Tables(slots: SlotTable(session: session), prefetches: PrefetchTable(session: session))
            tables[session.id] = made
            return (made, true)
        }
        if made {
            // Outside the lock: on a session that already closed the handler runs at once.
            let id = session.id
            session.onClose { [self] in
                tables.withLock { _ = $0.removeValue(forKey: id) }
                found.slots.close()
                found.prefetches.close()
            }
        }
        return found
    }

    /// Sessions with tables now (for tests: a closed session leaves none behind).
    var sessionCount: Int { tables.withLock { $0.count } }
}
