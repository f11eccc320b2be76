/// A result reached once and shared by any number of waiters: a transfer's end, a fetch's
/// stored thumbnail, a session's "all pending work is done".
///
/// Why one type: each of those had its own dictionary of continuations, and each had to get
/// the same three things right: the outcome is set once (later settles are ignored), a waiter
/// arriving after it gets it at once, and a waiter whose task is cancelled leaves alone (it
/// throws the owner's cancellation error; the others keep waiting, and the work is not
/// touched: whether a cancelled waiter also stops the work is its owner's decision).
///
/// Race-free by one lock (`LockedState`) over the outcome and the waiters; continuations are
/// resumed after it is released. Settling from a thread outside Swift concurrency (the curl
/// thread) is fine: resuming only schedules the waiters.
public final class SharedOutcome<Success: Sendable, Failure: Error>: Sendable {
    private struct State {
        var outcome: Result<Success, Failure>?
        var waiters: [UInt64: CheckedContinuation<Success, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = LockedState(State())
    private let cancellation: @Sendable () -> any Error

    /// - Parameter cancellation: what a waiter whose task is cancelled throws (the owner's
    ///   error for a cancelled request, say); `CancellationError` by default.
    public init(cancellation: @escaping @Sendable () -> any Error = { CancellationError() }) {
        self.cancellation = cancellation
    }

    /// The outcome, once settled.
    public var outcome: Result<Success, Failure>? { state.withLock { $0.outcome } }

    /// Whether the outcome is in.
    public var isSettled: Bool { state.withLock { $0.outcome != nil } }

    /// Waiters registered now (for tests and stats).
    public var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Sets the outcome and resumes every waiter with it. Only the first call counts.
    /// - Returns: whether this call set it.
    @discardableResult
    public func settle(_ outcome: Result<Success, Failure>) -> Bool {
        let waiters = state.withLock { s -> [CheckedContinuation<Success, any Error>]? in
            guard s.outcome == nil else { return nil }
            s.outcome = outcome
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        guard let waiters else { return false }
        let result = outcome.mapError { $0 as any Error }
        for waiter in waiters { waiter.resume(with: result) }
        return true
    }

    /// Waits for the outcome (returns at once if it is in): its value, or its error.
    /// - Throws: the outcome's failure; the cancellation error when the waiting task is
    ///   cancelled first (then only this waiter leaves).
    public func value() async throws -> Success {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiter &+= 1
            return s.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Success, any Error>) in
                // Checked and registered under the lock: a settle cannot slip in between.
                let immediate = state.withLock { s -> Result<Success, any Error>? in
                    if let outcome = s.outcome { return outcome.mapError { $0 as any Error } }
                    if Task.isCancelled { return .failure(cancellation()) }
                    s.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiters.removeValue(forKey: id) }
            continuation?.resume(throwing: cancellation())
        }
    }
}

extension SharedOutcome where Failure == Never {
    /// Sets a value that cannot fail. Only the first call counts.
    @discardableResult
    public func settle(_ value: Success) -> Bool { settle(.success(value)) }
}
