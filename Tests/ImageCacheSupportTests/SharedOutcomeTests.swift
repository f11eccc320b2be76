import ImageCacheSupport
import Testing
import TestSupport

@Suite("Support: a one-shot outcome shared by waiters", .timeLimit(.minutes(1)))
struct SharedOutcomeTests {
    private struct Failed: Error, Equatable { var code: Int }
    private struct Cancelled: Error {}

    @Test("every waiter gets the outcome, and a late waiter gets it at once")
    func sharedAndLate() async throws {
        let outcome = SharedOutcome<Int, Failed>()
        let waiters = (0..<3).map { _ in Task { try await outcome.value() } }
        try await withTimeout(seconds: 10) { try await Self.waitUntil { outcome.waiterCount == 3 } }
        #expect(outcome.settle(.success(7)))
        for waiter in waiters { #expect(try await waiter.value == 7) }
        #expect(try await outcome.value() == 7)
        #expect(outcome.waiterCount == 0)
    }

    @Test("the outcome is set once: a second settle changes nothing")
    func settledOnce() async throws {
        let outcome = SharedOutcome<Int, Failed>()
        #expect(outcome.settle(.failure(Failed(code: 1))))
        #expect(!outcome.settle(.success(2)))
        #expect(!outcome.settle(.failure(Failed(code: 3))))
        await #expect(throws: Failed(code: 1)) { try await outcome.value() }
    }

    @Test("a cancelled waiter leaves alone, with the owner's error; the others still get the outcome")
    func cancellationRemovesOnlyThatWaiter() async throws {
        let outcome = SharedOutcome<String, Failed>(cancellation: { Cancelled() })
        let staying = Task { try await outcome.value() }
        let leaving = Task { try await outcome.value() }
        try await withTimeout(seconds: 10) { try await Self.waitUntil { outcome.waiterCount == 2 } }
        leaving.cancel()
        await #expect(throws: Cancelled.self) { try await leaving.value }
        #expect(outcome.waiterCount == 1)
        #expect(!outcome.isSettled, "a waiter leaving does not settle the outcome")
        outcome.settle(.success("done"))
        #expect(try await staying.value == "done")
    }

    @Test("a task cancelled before it waits throws at once, unless the outcome is already in")
    func cancelledBeforeWaiting() async throws {
        let outcome = SharedOutcome<Int, Never>()
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await outcome.value()
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        outcome.settle(5)
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await outcome.value()
        }
        #expect(try await late.value == 5)
    }

    /// Waits for a condition on state the test cannot observe otherwise, yielding between looks.
    static func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}
