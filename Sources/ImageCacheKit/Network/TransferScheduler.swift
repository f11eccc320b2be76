import DequeModule

/// Decides which waiting transfer enters the curl multi handle next.
///
/// Admission is ours, not curl's: curl's own pending queue is FIFO and blind to priorities,
/// so transfers are handed to curl only while there is a free slot (total and per host).
/// Waiting transfers sit in three lanes per host — visible, download, prefetch — FIFO within
/// a lane; the best head across hosts is admitted first (higher priority, then older). Part
/// of the total is reserved for visible transfers, so a burst of prefetches can never make a
/// thumbnail the user is looking at wait. And prefetches wait while the bodies already fetched
/// wait for their processing (`Limits.prefetchLookAhead`): on a fast network downloads outrun
/// decodes, and a prefetch of hundreds of images would otherwise hold hundreds of bodies, in
/// memory or in spill files, to no one's gain. Confined to the curl thread.
struct TransferScheduler {
    /// The limits admission enforces.
    struct Limits {
        var maxConnections: Int
        var maxPerHost: Int
        /// Slots only a visible transfer may take.
        var visibleReserve: Int
        /// Waiting transfers beyond which a new one is refused with `busy`.
        var maxQueued: Int
        /// Bodies delivered and not yet released (`TransferRequest.awaitsRelease`) at which
        /// no prefetch is admitted: the decodes are that far behind the network.
        var prefetchLookAhead: Int
    }

    private struct Entry {
        var host: String
        var priority: TransferPriority
        var sequence: UInt64
        var queued: Bool
        /// Queued again after it ran (a redirect hop or a retry): its deadline is running, so
        /// the look-ahead never holds it.
        var resumed: Bool
    }

    let limits: Limits
    private var entries: [UInt64: Entry] = [:]
    private var lanes: [String: [Deque<UInt64>]] = [:]
    private var activePerHost: [String: Int] = [:]
    private var nextSequence: UInt64 = 0
    private(set) var queuedCount = 0
    private(set) var activeCount = 0
    /// Bodies delivered whose consumer has not released them yet (`bodyDelivered`,
    /// `bodyReleased`).
    private(set) var unreleasedBodies = 0

    init(limits: Limits) {
        self.limits = limits
    }

    /// Adds a waiting transfer. `front` puts it ahead of its lane (a redirect hop or a retry
    /// keeps its turn) and ignores the queue bound; false means the queue is full (`busy`).
    mutating func enqueue(_ id: UInt64, host: String, priority: TransferPriority, front: Bool = false) -> Bool {
        guard front || queuedCount < limits.maxQueued else { return false }
        nextSequence += 1
        let sequence = front ? (entries[id]?.sequence ?? 0) : nextSequence
        entries[id] = Entry(host: host, priority: priority, sequence: sequence, queued: true, resumed: front)
        var hostLanes = lanes[host] ?? Array(repeating: Deque(), count: TransferPriority.allCases.count)
        if front { hostLanes[priority.rawValue].prepend(id) } else { hostLanes[priority.rawValue].append(id) }
        lanes[host] = hostLanes
        queuedCount += 1
        return true
    }

    /// Moves a waiting transfer to another lane, at that lane's end; nothing for a running one.
    mutating func reprioritize(_ id: UInt64, to priority: TransferPriority) {
        guard var entry = entries[id], entry.queued, entry.priority != priority else { return }
        entry.priority = priority
        nextSequence += 1
        entry.sequence = nextSequence
        entries[id] = entry
        lanes[entry.host]?[priority.rawValue].append(id)  // the old lane's copy is now stale
    }

    /// Forgets a transfer that was waiting (cancelled); false if it was not waiting.
    @discardableResult
    mutating func removeQueued(_ id: UInt64) -> Bool {
        guard let entry = entries[id], entry.queued else { return false }
        entries[id] = nil
        queuedCount -= 1
        return true
    }

    /// Frees the slot of a running transfer (done, failed, cancelled, or about to re-queue).
    mutating func finished(_ id: UInt64) {
        guard let entry = entries[id], !entry.queued else { return }
        entries[id] = nil
        activeCount -= 1
        activePerHost[entry.host, default: 1] -= 1
        if activePerHost[entry.host] == 0 { activePerHost[entry.host] = nil }
    }

    /// A body that awaits its consumer's release was delivered.
    mutating func bodyDelivered() {
        unreleasedBodies += 1
    }

    /// Its consumer is done with it: one more prefetch may be admitted.
    mutating func bodyReleased() {
        assert(unreleasedBodies > 0, "a body released twice, or one that never awaited its release")
        unreleasedBodies = max(0, unreleasedBodies - 1)
    }

    /// The transfers to start now, best first, each counted as running from here on.
    mutating func admit() -> [UInt64] {
        var admitted: [UInt64] = []
        let prefetchRoom = unreleasedBodies < limits.prefetchLookAhead
        while activeCount < limits.maxConnections, queuedCount > 0 {
            let nonVisibleRoom = activeCount < limits.maxConnections - limits.visibleReserve
            var best: (id: UInt64, host: String, priority: TransferPriority, sequence: UInt64)?
            for host in Array(lanes.keys) {
                guard activePerHost[host, default: 0] < limits.maxPerHost else { continue }
                guard let head = head(of: host, allowNonVisible: nonVisibleRoom, allowPrefetch: prefetchRoom) else { continue }
                let entry = entries[head]!
                if let current = best,
                   current.priority > entry.priority || (current.priority == entry.priority && current.sequence < entry.sequence) {
                    continue
                }
                best = (head, host, entry.priority, entry.sequence)
            }
            guard let chosen = best else { break }
            lanes[chosen.host]![chosen.priority.rawValue].removeFirst()
            if lanes[chosen.host]!.allSatisfy(\.isEmpty) { lanes[chosen.host] = nil }
            entries[chosen.id]!.queued = false
            queuedCount -= 1
            activeCount += 1
            activePerHost[chosen.host, default: 0] += 1
            admitted.append(chosen.id)
        }
        return admitted
    }

    /// The first live id of the host's best non-empty lane it may take from, dropping stale
    /// ids on the way.
    private mutating func head(of host: String, allowNonVisible: Bool, allowPrefetch: Bool) -> UInt64? {
        for priority in TransferPriority.allCases.reversed() {
            if priority != .visible && !allowNonVisible { return nil }
            while let id = lanes[host]?[priority.rawValue].first {
                if let entry = entries[id], entry.queued, entry.priority == priority {
                    if priority == .prefetch && !allowPrefetch && !entry.resumed { return nil }
                    return id
                }
                lanes[host]![priority.rawValue].removeFirst()
            }
        }
        if lanes[host]?.allSatisfy(\.isEmpty) == true { lanes[host] = nil }
        return nil
    }
}
