import Foundation
import ImageCacheSupport

/// Thrown by `Interrupts.race` when Ctrl-C (SIGINT) or SIGTERM arrives first.
public struct Interrupted: Error, Sendable, CustomStringConvertible {
    /// The signal number.
    public var signal: Int32
    public var description: String { "interrupted by signal \(signal)" }
}

/// Ctrl-C as an event a command can wait for, so it can clean up (cancel downloads, stop the
/// demo's daemon, remove temp files) instead of dying mid-way.
///
/// While `race` runs, SIGINT and SIGTERM go to the process's `SignalPipe`; outside of it the
/// default action is back, so a Ctrl-C there still kills the process.
public enum Interrupts {
    /// Runs `work`; if SIGINT or SIGTERM arrives first, cancels it and throws `Interrupted`.
    public static func race<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let signals = SignalPipe.shared
        let subscription = signals.subscribe { continuation.yield($0) }
        signals.catchSignals([SIGINT, SIGTERM])
        defer {
            signals.restoreDefault([SIGINT, SIGTERM])
            signals.unsubscribe(subscription)
            continuation.finish()
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                for await sig in stream { throw Interrupted(signal: sig) }
                return nil
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }
}
