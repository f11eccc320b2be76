/// Thrown by `withTimeout` when the operation did not finish in time.
public struct TimeoutError: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "timed out after \(seconds) s" }
}

/// Runs `operation`, failing with `TimeoutError` if it takes longer than `seconds`.
///
/// Every test that waits for an event bounds its wait with this, so a lost event fails
/// the test instead of hanging the suite. It waits for the event itself, never a sleep.
public func withTimeout<T: Sendable>(
    seconds: Double,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimeoutError(seconds: seconds)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeoutError(seconds: seconds) }
        return first
    }
}
