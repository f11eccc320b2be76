import Dispatch

/// Runs blocking work (fsync, whole-file reads, renames) on threads of its own, never on
/// Swift's cooperative pool.
///
/// Why: the cooperative pool has one thread per core (two here). A 5 MB JPEG decoded to verify
/// it, an fsync waiting for the disk, or a thumbnail read from a cold disk would hold one of
/// them for milliseconds or more, and with two such jobs every actor and request handler of
/// the daemon waits behind them — measured: submitting 20 downloads took 1.7 s instead of
/// milliseconds (docs/benchmarks.md, Downloads).
///
/// Two lanes, so that a client waiting for an answer never queues behind bulk work: `read`
/// (a thumbnail or a search page read from disk for a request in progress) runs at
/// `.userInitiated`, `run` (fsyncs, renames, unlinking a cleared cache, heap trims) at
/// `.utility`. On Linux, libdispatch runs a lane on about one thread per core and does not add
/// one while a thread sleeps in a system call (measured: CPU tasks queued behind 8 fsyncs of
/// 8 MB started 340 ms late), so jobs on a lane wait for each other's disk: CPU work that must
/// not wait behind them has threads of its own (`VerificationThreads` for the downloads'
/// verification decodes). What bounds the work in flight is its callers (one job table write at
/// a time, each session's pending cap).
package enum BlockingIO {
    /// The bulk lane; `dispatchPrecondition(condition: .onQueue(BlockingIO.queue))` marks
    /// code that must only run here.
    static let queue = DispatchQueue(label: "imagecached.blocking-io", qos: .utility, attributes: .concurrent)
    /// The lane for reads a request is waiting for.
    static let reads = DispatchQueue(label: "imagecached.blocking-io.reads", qos: .userInitiated, attributes: .concurrent)

    /// `body`'s result, computed on the bulk lane.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// `body`'s result, computed on the bulk lane (for work that cannot fail).
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// `body`'s result, computed on the lane for reads a request is waiting for.
    public static func read<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            reads.async { continuation.resume(returning: body()) }
        }
    }
}
