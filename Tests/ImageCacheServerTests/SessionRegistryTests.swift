import ImageCacheKit
@testable import ImageCacheServer
import Logging
import Testing

/// The live sessions' table and its wait for a count (`SessionRegistry.waitUntilCount`), on
/// sessions over real socket pairs: a waiter is woken by the remove that meets its condition,
/// waiters with different limits each by their own, and a cancelled waiter leaves alone.
@Suite("Session registry: waiting for a count", .timeLimit(.minutes(1)))
struct SessionRegistryTests {
    /// Two sessions on connections of their own, registered.
    static func withTwoSessions(_ body: (SessionRegistry, Session, Session) async throws -> Void) async throws {
        let first = try await LimitedConnection()
        let second = try await LimitedConnection()
        let registry = SessionRegistry()
        let a = Session(id: registry.makeID(), peer: nil, channel: first.channel, logger: Logger(label: "test"))
        let b = Session(id: registry.makeID(), peer: nil, channel: second.channel, logger: Logger(label: "test"))
        registry.add(a)
        registry.add(b)
        do {
            try await body(registry, a, b)
        } catch {
            try await first.shutdown()
            try await second.shutdown()
            throw error
        }
        try await first.shutdown()
        try await second.shutdown()
    }

    @Test("each waiter returns once its own limit is met, in the order the sessions leave")
    func wokenByTheRemoveThatMeetsTheLimit() async throws {
        try await Self.withTwoSessions { registry, a, b in
            #expect(registry.count == 2)
            let order = LockedState<[Int]>([])
            let atMostOne = Task { await registry.waitUntilCount(atMost: 1); order.withLock { $0.append(1) } }
            let none = Task { await registry.waitUntilCount(atMost: 0); order.withLock { $0.append(0) } }
            registry.remove(a)
            await atMostOne.value
            #expect(order.withLock { $0 } == [1], "the wait for no session at all still waits")
            registry.remove(b)
            await none.value
            #expect(order.withLock { $0 } == [1, 0])
            #expect(registry.count == 0 && registry.all.isEmpty)
            // Met already: returns at once.
            await registry.waitUntilCount(atMost: 0)
        }
    }

    @Test("a waiter whose task is cancelled returns without the sessions changing")
    func cancelledWaiterLeaves() async throws {
        try await Self.withTwoSessions { registry, _, _ in
            let waiter = Task { await registry.waitUntilCount(atMost: 0) }
            waiter.cancel()
            await waiter.value
            #expect(registry.count == 2)
        }
    }
}
