import Dispatch

/// A concurrent dispatch queue for work that may block (decoding, file writes), usable both
/// for closures and as a task's preferred executor.
///
/// A task that prefers it resumes here after each suspension, not on the cooperative pool:
/// a shared-tier lookup whose answer arrives on a memcached connection's event loop goes
/// straight to the queue that writes the file, one thread hand-off where the pool in between
/// made two (each tens of microseconds on a machine whose idle cores sleep).
final class WorkQueue: TaskExecutor {
    let queue: DispatchQueue
    private static let marker = DispatchSpecificKey<Bool>()

    init(label: String) {
        queue = DispatchQueue(label: label, attributes: .concurrent)
        queue.setSpecific(key: Self.marker, value: true)
    }

    /// Runs `body` on the queue.
    func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// Whether the calling thread is running work of this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.marker) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
