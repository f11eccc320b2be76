import Foundation

/// Runs blocking work (a blocking read or poll, a fixture server's start and stop) on a thread
/// of its own instead of the Swift concurrency pool or dispatch's global queues.
///
/// Each of those has about one thread per core: two tests blocking in it at once on a 2-core
/// machine stop every other test's tasks, and on dispatch's queues the timers that bound them
/// too. A thread per call costs a few microseconds and takes nothing from anyone. Keep
/// `#expect` out of `body` (it runs outside the test's task): return what to check instead.
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
