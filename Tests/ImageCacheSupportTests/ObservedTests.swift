import ImageCacheSupport
import Testing

@Suite("Support: awaiting a condition on an observed value", .timeLimit(.minutes(1)))
struct ObservedTests {
    @Test("a condition that already holds returns at once")
    func alreadyTrue() async throws {
        let observed = Observed(5)
        try await observed.wait { $0 == 5 }
        #expect(observed.value == 5)
    }

    @Test("waiters wake on the publish that makes their condition true, and only then")
    func wakesOnPublish() async throws {
        let observed = Observed(0)
        let (woken, wake) = AsyncStream.makeStream(of: Int.self)
        // Each says the value it saw on waking: a waiter woken too early says a smaller one.
        let first = Task { try await observed.wait { $0 >= 2 }; wake.yield(observed.value) }
        let second = Task { try await observed.wait { $0 >= 3 }; wake.yield(observed.value) }
        var order = woken.makeAsyncIterator()
        // Both are waiting (or will check on start) before any value that satisfies them.
        observed.publish(1)
        observed.update { $0 += 1 }  // 2: only the first wakes
        #expect(await order.next() == 2)
        observed.publish(3)
        #expect(await order.next() == 3)
        try await first.value
        try await second.value
    }

    @Test("a cancelled wait throws CancellationError and leaves no waiter behind")
    func cancellation() async throws {
        let observed = Observed(0)
        let waiting = Task { try await observed.wait { $0 == 99 } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        observed.publish(99)  // nothing left to resume
        try await observed.wait { $0 == 99 }
    }
}
