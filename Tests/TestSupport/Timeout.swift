import Dispatch
import Synchronization

/// The queue that runs `withTimeout`'s deadlines: a serial queue of its own, which dispatch
/// serves from its overcommitting pool, so a deadline fires even while every thread of the
/// global queues (about one per core) is blocked.
private let deadlines = DispatchQueue(label: "tests.timeouts")

/// Thrown by `withTimeout` when the operation did not finish in time.
public struct TimeoutError: Error, CustomStringConvertible {
    public let seconds: Double
    public var description: String { "timed out after \(seconds) s" }

    /// A time-out after `seconds`.
    public init(seconds: Double) { self.seconds = seconds }
}

/// How many times longer a bound is under ThreadSanitizer than as written.
///
/// Why: a bound is written for a plain build, where it is several times the wait it guards.
/// Under the sanitizer every step is 5–10 × slower, and the test process's blocking-I/O lanes
/// are shared by the four tests running at once, so on CI's two cores one 8 KB fetch, decoded
/// and stored, was seen to take 12 s, 28 s and over 50 s in a row while three other tests
/// fsynced. A lost event still fails the test; it only takes longer to say so.
public let timeoutScale: Double = threadSanitizerIsActive ? 3 : 1

/// Runs `operation`, failing with `TimeoutError` if it takes longer than `seconds`
/// (× `timeoutScale` under the sanitizer).
///
/// Every test that waits for an event bounds its wait with this, so a lost event fails
/// the test instead of hanging the suite. It waits for the event itself, never a sleep.
///
/// The bound holds even when `operation` ignores cancellation (awaiting another task's
/// value, a blocked read): on time-out the operation is cancelled and left behind rather
/// than awaited, which a task group would do. The deadline is a dispatch timer on a queue of
/// its own, so it fires even while the concurrency pool and dispatch's global queues are busy.
public func withTimeout<T: Sendable>(
    seconds written: Double,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let seconds = written * timeoutScale
    let race = Race<T>()
    let work = Task { race.finish(await Result(awaiting: operation)) }
    let deadline = DispatchWorkItem { race.finish(.failure(TimeoutError(seconds: seconds))) }
    deadlines.asyncAfter(deadline: .now() + seconds, execute: deadline)
    defer {
        deadline.cancel()
        work.cancel()
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { race.wait(with: $0) }
    } onCancel: {
        work.cancel()
    }
}

/// The first of the operation's result and the deadline, handed to one waiter exactly once.
private final class Race<T: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<T, any Error>)
        case finished(Result<T, any Error>)
        case delivered
    }

    private let state = Mutex(State.idle)

    func wait(with continuation: CheckedContinuation<T, any Error>) {
        let ready: Result<T, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .finished(let result):
                state = .delivered
                return result
            case .waiting, .delivered:
                preconditionFailure("a race has one waiter")
            }
        }
        if let ready { continuation.resume(with: ready) }
    }

    func finish(_ result: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .finished(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .finished, .delivered:
                return nil
            }
        }
        waiter?.resume(with: result)
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body, as a value.
    init(awaiting body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
