import CLinux
import DequeModule
import Dispatch
import Foundation
import ImageCacheProtocol

/// Threads of their own for the download verifiers' decoding (`PartVerifier`): CPU work that
/// must never wait behind blocking I/O.
///
/// Why not `BlockingIO`'s lane: on Linux, libdispatch runs a global queue on one thread per
/// core and does not add one while a thread sleeps in a system call. Checked on this machine
/// (2 cores): 8 fsyncs of 8 MB then 4 CPU tasks on one utility queue — the CPU tasks started
/// only after the last fsync, 340 ms later; on a queue of another QoS they started at once.
/// Each download ends with an fsync, a rename and a job-table write on that lane, so
/// verification bursts queued behind other jobs' fsyncs: the verifiers fell behind the
/// network and a photo waited for other photos' disk writes after its last byte. A lane of
/// another QoS is no cure either: its threads are shared with Swift tasks of that priority.
///
/// One thread per core (at least 2): the bursts that decode hold a `DecodeBudget` permit, and
/// the budget's slots (one per core) already bound how many run at once; the rest (header
/// steps, the final checks) are short. Started on first use, they live as long as the process.
/// They run at nice 2, as the utility lane they replace did (libdispatch's value for it), so
/// request handling and the event loops still come first.
final class VerificationThreads: Sendable {
    /// The threads every `PartVerifier` uses.
    static let shared = VerificationThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let work = LockedState(Deque<@Sendable () -> Void>())
    private let available = DispatchSemaphore(value: 0)

    private init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in serve() }
            thread.name = "imagecached-verify-\(index)"
            thread.start()
        }
    }

    /// `body`'s result, computed on one of these threads.
    ///
    /// The result comes back through a lock the thread releases before it resumes the caller,
    /// and the caller takes after: so whatever `body` wrote (a reader's position, the
    /// decoder's state) is ordered before the caller's next reads for every observer. A
    /// continuation resumed from a thread libdispatch did not start carries no such edge that
    /// ThreadSanitizer can see.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let handoff = LockedState<Result<T, any Error>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            work.withLock {
                $0.append {
                    let result = Result { try body() }
                    handoff.withLock { $0 = result }
                    continuation.resume()
                }
            }
            available.signal()
        }
        guard let result = handoff.withLock({ $0 }) else {
            preconditionFailure("a verification thread resumed its caller before handing over a result")
        }
        return try result.get()
    }

    private func serve() {
        _ = ic_set_thread_nice(2)
        while true {
            available.wait()
            if let next = work.withLock({ $0.popFirst() }) { next() }
        }
    }
}
