import ImageCacheKit

/// One session's queued prefetches: which items are loading in the background, so that
/// `prefetch.cancel` and the session's close can withdraw them, a repeated `prefetch` does
/// not queue an item twice, and `max_pending_per_session` bounds them.
///
/// Each item ends exactly once: whoever removes it from the table (its own completion, a
/// `prefetch.cancel`) sends its `prefetch.finished`; a close removes every item and sends
/// nothing. Notifications decided under the lock are queued on the connection's event loop
/// (written in the order decided), and tasks are cancelled after the lock is released.
final class PrefetchTable: Sendable {
    /// An item: the image as the client named it, at one width.
    struct Key: Hashable, Sendable {
        var reference: ImageReference
        var size: Int
    }

    /// The queued items with their loading tasks; a closed table takes no more.
    private let state = LockedState(TaskTable<Key, Void, Void, Never>())
    private let session: Session

    init(session: Session) {
        self.session = session
    }

    /// Items queued now.
    var count: Int { state.withLock { $0.count } }

    /// Reserves the keys not already queued, all or none.
    /// - Returns: each newly queued key with its serial (keys already queued are left out).
    /// - Throws: `busy` when the session's queue would pass `cap`.
    func reserve(_ keys: [Key], cap: Int) throws(ServerError) -> [(key: Key, serial: UInt64)] {
        let outcome = state.withLock { items -> Result<[(key: Key, serial: UInt64)], ServerError> in
            if items.isClosed { return .success([]) }
            var fresh: [Key] = []
            for key in keys where items[key] == nil && !fresh.contains(key) { fresh.append(key) }
            guard items.count + fresh.count <= cap else {
                return .failure(ServerError(.prefetchQueueFull(queued: items.count, cap: cap)))
            }
            return .success(fresh.compactMap { key in items.reserve(key, ()).map { (key, $0) } })
        }
        return try outcome.get()
    }

    /// Hands an item its loading task; when the item was withdrawn meanwhile the task is
    /// cancelled at once.
    func attach(_ task: Task<Void, Never>, key: Key, serial: UInt64) {
        let owned = state.withLock { $0.attach(task, to: key, serial: serial) }
        if !owned { task.cancel() }
    }

    /// Ends an item with `finished`, unless it was withdrawn already.
    func finish(key: Key, serial: UInt64, _ finished: PrefetchFinished) {
        let message = Self.encode(finished)
        state.withLock { items in
            guard items.remove(key, serial: serial) != nil else { return }
            if let message { queue(message) }
        }
    }

    /// `prefetch.cancel`: withdraws the matching items; each is notified as finished with
    /// 1007 `cancelled`.
    /// - Returns: how many were withdrawn.
    func cancel(where matches: (Key) -> Bool) -> Int {
        let tasks = state.withLock { items -> [Task<Void, Never>?] in
            items.removeAll(where: matches).map { key, item in
                let error = Answer.wireError(for: ServerError(.prefetchCancelled))
                if let message = Self.encode(PrefetchFinished(image: key.reference, ok: false, error: error)) {
                    queue(message)
                }
                return item.task
            }
        }
        for task in tasks { task?.cancel() }
        return tasks.count
    }

    /// The session ended: every item is withdrawn, silently.
    func close() {
        state.withLock { $0.close() }.cancelAll()
    }

    /// Sends a notification that needs no item bookkeeping (an item finished before it was
    /// queued: already cached, or not resolvable).
    func notify(_ finished: PrefetchFinished) {
        if let message = Self.encode(finished) { queue(message) }
    }

    private func queue(_ message: OutboundMessage) {
        let session = self.session
        session.channel.eventLoop.execute { session.send(message) }
    }

    private static func encode(_ finished: PrefetchFinished) -> OutboundMessage? {
        try? MessageEncoder.notification(method: NotificationName.prefetchFinished.rawValue, params: finished)
    }
}
