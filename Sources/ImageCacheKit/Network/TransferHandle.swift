import ImageCacheProtocol

/// A started transfer: await its result, cancel it, or change its priority while it waits.
///
/// Any number of tasks may await the same handle. The result is kept once reached, so a late
/// waiter gets it at once (a `SharedOutcome`).
public final class TransferHandle: Sendable {
    /// Unique per engine; also the key of the transfer on the curl thread.
    public let id: UInt64
    private let commands: CommandSink
    private let outcome = SharedOutcome<TransferResult, any Error>(cancellation: { Cancellation(.wait) })

    init(id: UInt64, commands: CommandSink) {
        self.id = id
        self.commands = commands
    }

    /// Waits for the transfer's end. When the waiting task is cancelled, so is the transfer
    /// (with reason `cancelled`): a lone waiter is the transfer's only demand. Throws an engine error.
    public func result() async throws -> TransferResult {
        try await withTaskCancellationHandler {
            try await wait()
        } onCancel: {
            cancel(reason: "cancelled")
        }
    }

    /// Waits for the transfer's end without owning it: a cancelled waiter stops waiting (throwing
    /// `cancelled`) but the transfer goes on for its other demands.
    public func wait() async throws -> TransferResult {
        try await outcome.value()
    }

    /// Stops the transfer now: a queued one never starts, a running one is removed from the
    /// multi handle at once (its received bytes count as discarded). `reason` ends up in the
    /// error's `data.reason` (`recycled`, `superseded`, `cancelled`…).
    public func cancel(reason: String = "cancelled") {
        guard !isFinished else { return }
        commands.send(.cancel(id: id, reason: reason))
    }

    /// Moves a queued transfer to another priority lane (a prefetch becoming visible jumps
    /// the queue). A running transfer keeps running.
    package func setPriority(_ priority: TransferPriority) {
        guard !isFinished else { return }
        commands.send(.reprioritize(id: id, priority: priority))
    }

    /// True once a result or an error is in.
    package var isFinished: Bool { outcome.isSettled }

    /// Called once by the engine's thread with the final outcome.
    func finish(_ outcome: Result<TransferResult, any Error>) {
        self.outcome.settle(outcome)
    }
}
