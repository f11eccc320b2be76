import DequeModule

/// Bounds how many decodes run at once.
///
/// A decode's memory is its pixel buffer plus, for progressive JPEGs, every DCT coefficient
/// of the image (about 150 MB at 50 MP, even at 1/8 scale). The pixel limit bounds one
/// decode; this bounds how many coexist, so the daemon's peak memory is a formula
/// (limit × per-decode bound) rather than a function of load. Waiters are served first come,
/// first served; a waiting task that is cancelled leaves the queue at once with
/// `CancellationError` (a recycled slot must not wait for a decode it no longer wants).
public final class DecodeLimiter: Sendable {
    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: Deque<(id: UInt64, continuation: CheckedContinuation<Void, any Error>)> = []
    }

    private let state: LockedState<State>
    /// The number of decodes allowed at once.
    public let limit: Int

    /// - Parameter limit: decodes allowed at once (at least 1); the machine's core count is
    ///   the natural choice, since decodes are CPU-bound.
    public init(limit: Int) {
        self.limit = max(1, limit)
        state = LockedState(State(available: max(1, limit)))
    }

    /// Runs `body` once a slot is free, and frees the slot when it returns or throws.
    ///
    /// `body` runs on the caller's executor (`nonisolated(nonsending)`), so an actor can
    /// decode under the limit while touching its own state, without making the body Sendable.
    /// - Throws: `CancellationError` if the task is cancelled while waiting; `body`'s errors.
    nonisolated(nonsending)
    public func withPermit<T>(_ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Takes a slot, waiting if none is free. Pair every successful call with `release()`.
    nonisolated(nonsending)
    public func acquire() async throws {
        let id: UInt64? = state.withLock { state in
            if state.available > 0 {
                state.available -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiters.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) } else { queueChanges.update { $0 &+= 1 } }
            }
        } onCancel: {
            let removed = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            removed?.resume(throwing: CancellationError())
            queueChanges.update { $0 &+= 1 }
        }
    }

    /// Frees a slot, handing it straight to the longest waiter if there is one.
    public func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if let waiter = state.waiters.popFirst() { return waiter.continuation }
            state.available = min(limit, state.available + 1)
            return nil
        }
        next?.resume()
        if next != nil { queueChanges.update { $0 &+= 1 } }
    }

    /// Slots free right now (for stats and tests).
    public var available: Int { state.withLock { $0.available } }

    /// Tasks waiting for a slot right now (for stats and tests).
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Bumped whenever a task joins or leaves the queue: what `waitForWaiting` wakes on.
    private let queueChanges = Observed(0)

    /// Returns once at least `count` tasks wait for a slot (woken as the queue changes).
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func waitForWaiting(atLeast count: Int) async throws {
        try await queueChanges.wait { [self] _ in waiting >= count }
    }
}
