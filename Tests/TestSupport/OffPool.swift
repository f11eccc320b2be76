import Foundation

/// Runs blocking work (waiting for a child process, polling a pipe) on a dispatch thread
/// instead of the Swift concurrency pool.
///
/// The cooperative pool has one thread per core: two tests blocking in it at once on a
/// 2-core machine stop every other test's tasks, including the timers that bound them. Keep
/// `#expect` out of `body` (it runs outside the test's task): return what to check instead.
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}
