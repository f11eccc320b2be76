import Dispatch
@testable import ImageCacheKit
import Testing

/// The pipeline's work queue runs closures, and is the executor a task preferring it resumes
/// on after a suspension (where a shared-tier hit writes its file without another hand-off).
@Suite("Support: the work queue as a task executor", .timeLimit(.minutes(1)))
struct WorkQueueTests {
    @Test("closures run on the queue; nothing else counts as on it")
    func closures() async {
        let queue = WorkQueue(label: "test.work")
        #expect(!queue.isCurrent)
        let onQueue = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: queue.isCurrent) }
        }
        #expect(onQueue)
        #expect(!WorkQueue(label: "test.other").isCurrent)
    }

    @Test("an immediate task preferring it starts on the caller's thread, then resumes on the queue after each suspension")
    func resumesOnTheQueue() async throws {
        let queue = WorkQueue(label: "test.work")
        let (started, resumed, again) = await withCheckedContinuation { continuation in
            // Started from a plain thread of the caller's (here a dispatch thread not the queue's).
            DispatchQueue.global().async {
                Task.immediate(executorPreference: queue) {
                    let started = queue.isCurrent
                    await Task.yield()
                    let resumed = queue.isCurrent
                    try? await Task.sleep(for: .milliseconds(1))
                    continuation.resume(returning: (started, resumed, queue.isCurrent))
                }
            }
        }
        #expect(!started, "an immediate task runs on its caller's thread until it suspends")
        #expect(resumed && again)
    }
}
