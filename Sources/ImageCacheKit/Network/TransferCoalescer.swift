import ImageCacheProtocol
import Synchronization

/// Many demands for one key, one transfer: the engine-level coalescing hook.
///
/// Each demand joins the transfer already running for its key or starts one. The
/// transfer's priority is the highest of its live demands (a prefetch joined by a visible
/// demand jumps the queue), and it is cancelled when its last demand goes away (a task
/// cancelled, a slot recycled) — so N clients wanting the same thumbnail cost one download,
/// and nobody wanting it any more costs none. A `.file` body is shared by all the demands of
/// one transfer: the pipeline should take it once (or ask for `keepInMemory`).
public final class TransferCoalescer<Key: Hashable & Sendable>: Sendable {
    /// One party's interest in a key's transfer. Registered the moment `join` returns, so a
    /// caller can count on coalescing without racing its own tasks.
    public final class Demand: Sendable {
        /// The key this demand wants (one transfer per key at a time).
        public let key: Key
        let id: UInt64
        let handle: TransferHandle
        private let coalescer: TransferCoalescer<Key>
        private let withdrawn = Atomic<Bool>(false)

        init(key: Key, id: UInt64, handle: TransferHandle, coalescer: TransferCoalescer<Key>) {
            self.key = key
            self.id = id
            self.handle = handle
            self.coalescer = coalescer
        }

        /// Waits for the shared transfer. Cancelling the waiting task withdraws this demand
        /// (and throws `cancelled`); the transfer goes on while other demands remain.
        public func result() async throws -> TransferResult {
            defer { withdraw() }
            return try await withTaskCancellationHandler {
                try await handle.wait()
            } onCancel: {
                withdraw()
            }
        }

        /// Gives up this demand (idempotent). The last demand out cancels the transfer.
        public func withdraw() {
            guard !withdrawn.exchange(true, ordering: .acquiringAndReleasing) else { return }
            coalescer.withdraw(id, from: key, handle: handle)
        }
    }

    private let engine: TransferEngine
    private let groups = LockedState<[Key: Group]>([:])
    private let nextDemand = Atomic<UInt64>(0)

    private struct Group {
        var handle: TransferHandle
        var demands: [UInt64: TransferPriority]
        var listeners: Listeners
        var priority: TransferPriority
    }

    /// The event handlers of one group's demands, called from the curl thread.
    private final class Listeners: Sendable {
        let handlers = LockedState<[UInt64: @Sendable (TransferEvent) -> Void]>([:])
        func send(_ event: TransferEvent) {
            for handler in handlers.withLock({ Array($0.values) }) { handler(event) }
        }
    }

    /// A coalescer over `engine`; keys are whatever identifies one body (a cache key).
    public init(engine: TransferEngine) {
        self.engine = engine
    }

    /// Registers a demand for `key`, starting its transfer from `request` if none runs, and
    /// raising the running one's priority if this demand's is higher.
    public func join(_ key: Key, _ request: TransferRequest,
                     events: (@Sendable (TransferEvent) -> Void)? = nil) -> Demand {
        let demandID = nextDemand.add(1, ordering: .relaxed).newValue
        let handle = groups.withLock { groups -> TransferHandle in
            if var group = groups[key], !group.handle.isFinished {
                group.demands[demandID] = request.priority
                if let events { group.listeners.handlers.withLock { $0[demandID] = events } }
                if request.priority > group.priority {
                    group.priority = request.priority
                    group.handle.setPriority(request.priority)
                }
                groups[key] = group
                return group.handle
            }
            let listeners = Listeners()
            if let events { listeners.handlers.withLock { $0[demandID] = events } }
            let handle = engine.start(request) { listeners.send($0) }
            groups[key] = Group(handle: handle, demands: [demandID: request.priority], listeners: listeners,
                                priority: request.priority)
            return handle
        }
        return Demand(key: key, id: demandID, handle: handle, coalescer: self)
    }

    /// `join` and wait in one call. Throws `TransferError` or `Cancellation`.
    public func demand(_ key: Key, _ request: TransferRequest,
                       events: (@Sendable (TransferEvent) -> Void)? = nil) async throws -> TransferResult {
        try await join(key, request, events: events).result()
    }

    /// Keys with a transfer still wanted by at least one demand.
    public var activeKeys: Int { groups.withLock { $0.count } }

    /// Removes a demand; the last one out cancels an unfinished transfer, and the others'
    /// priorities decide the transfer's from now on.
    fileprivate func withdraw(_ demandID: UInt64, from key: Key, handle: TransferHandle) {
        let orphaned = groups.withLock { groups -> Bool in
            guard var group = groups[key], group.handle === handle else { return false }
            group.demands[demandID] = nil
            group.listeners.handlers.withLock { $0[demandID] = nil }
            if group.demands.isEmpty {
                groups[key] = nil
                return !handle.isFinished
            }
            let highest = group.demands.values.max() ?? group.priority
            if highest != group.priority {
                group.priority = highest
                group.handle.setPriority(highest)
            }
            groups[key] = group
            return false
        }
        if orphaned { handle.cancel(reason: "no demand left") }
    }
}
