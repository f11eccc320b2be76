import Foundation

/// A value that several threads share, behind a pthread mutex (`NSLock`).
///
/// Why not `Synchronization.Mutex`: on Linux the standard library's `Mutex` locks through
/// futex system calls in code ThreadSanitizer does not instrument, so TSan cannot see the
/// lock and reports every access it guards as a data race. The suite runs under TSan in CI,
/// and a lock the race detector understands keeps its reports meaningful. `NSLock` wraps
/// `pthread_mutex_t`, which TSan intercepts.
///
/// `package` so the tests of this package can use the same primitive.
package final class LockedState<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` happens inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Keep it short and never call out to
    /// code that might take this lock again.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
