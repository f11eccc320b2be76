/// Asks `look` again and again, `interval` apart, until it gives a value, and returns that
/// value; fails with `TimeoutError` after `seconds`.
///
/// For an event the code under test shows only when asked (a state it changes lazily, on the
/// next operation): the wait ends when the event is seen, and is bounded, where a sleep of the
/// expected span would be too short on a loaded machine and too long everywhere else.
public func poll<T: Sendable>(
    seconds: Double,
    every interval: Duration = .milliseconds(20),
    _ look: @escaping @Sendable () async throws -> T?
) async throws -> T {
    try await withTimeout(seconds: seconds) {
        while true {
            if let value = try await look() { return value }
            try await Task.sleep(for: interval)
        }
    }
}
