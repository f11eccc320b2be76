import Foundation

/// State shared between threads, behind a pthread-based lock: the one lock type of the project.
///
/// Why not `Synchronization.Mutex`: on Linux its futex lock lives in the uninstrumented
/// standard library, so ThreadSanitizer sees no ordering between two `withLock` calls and
/// reports every cross-thread use as a race (checked with this toolchain: a two-thread
/// append/drain through `Mutex` gives six reports, through this type none). With an
/// `NSLock` (a pthread mutex, which TSan intercepts) the `--sanitize=thread` run stays
/// meaningful. `@unchecked Sendable`: `value` is only touched inside `withLock`, under `lock`.
///
/// `withLock` is `@inlinable`, so a caller in another module (the server's caches) gets it
/// specialized for its value type rather than through generic metadata on every call.
public final class LockedState<Value>: @unchecked Sendable {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    /// Wraps an initial value.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Keep it short (the curl thread and the
    /// event loops wait on such locks) and never call out to code that takes it again.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
