import Dispatch

/// Runs blocking work (fsync, whole-file reads, a verification decode, renames) on threads of
/// its own, never on Swift's cooperative pool.
///
/// Why: the cooperative pool has one thread per core (two here). A 5 MB JPEG decoded to verify
/// it, an fsync waiting for the disk, or a thumbnail read from a cold disk would hold one of
/// them for milliseconds or more, and with two such jobs every actor and request handler of
/// the daemon waits behind them — measured: submitting 20 downloads took 1.7 s instead of
/// milliseconds (docs/benchmarks.md, Downloads). Concurrency is bounded by the callers
/// (`DecodeLimiter` for decodes, one job table write at a time, a session's pending cap for
/// disk hits), so the queue needs no limit of its own.
public enum BlockingIO {
    /// The queue the work runs on; `dispatchPrecondition(condition: .onQueue(BlockingIO.queue))`
    /// marks code that must only run here.
    static let queue = DispatchQueue(label: "imagecached.blocking-io", qos: .utility, attributes: .concurrent)

    /// `body`'s result, computed on the I/O queue.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// `body`'s result, computed on the I/O queue (for work that cannot fail).
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}
