import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import Testing

@Suite("Caching: free heap pages go back after the memory tier turns over", .timeLimit(.minutes(1)))
struct HeapTrimmerTests {
    final class Counter: Sendable {
        let value = LockedState(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    @Test("a tick trims only when the memory tier evicted since the last one")
    func trimsOnActivityOnly() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var configuration = CacheConfiguration.Cache()
        configuration.memoryLimit = 4096
        let cache = try ImageCache(configuration: configuration, directory: folder.path, logger: CacheTesting.logger)
        defer { cache.close() }
        let trims = Counter()
        let trimmer = HeapTrimmer(activity: { cache.statistics.memory.evictions }, trim: { trims.add() })

        #expect(!trimmer.tick())  // nothing happened since it was made
        for n in 0..<4 { cache.put(CacheTesting.thumbKey(n), bytes: CacheTesting.bytes(n, count: 1500), info: CacheTesting.jpeg) }
        #expect(cache.statistics.memory.evictions > 0)
        #expect(trimmer.tick())
        #expect(!trimmer.tick())  // no eviction since the last tick
        #expect(trims.count == 1)
    }

    @Test("the daemon's ticks trim after decodes ended too, not while one is still running")
    func trimsAfterDecodes() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try ImageCache(configuration: CacheConfiguration.Cache(), directory: folder.path, logger: CacheTesting.logger)
        defer { cache.close() }
        let decodes = DecodeBudget(memory: 64 << 20, slots: 2)
        let trims = Counter()
        let trimmer = HeapTrimmer(activity: HeapTrimmer.turnover(of: cache, decodes: decodes), trim: { trims.add() })

        let permit = try await decodes.acquire(DecodeCost(bytes: 8 << 20, work: 1))
        #expect(!trimmer.tick())  // a decode running has freed nothing yet
        decodes.release(permit)
        #expect(trimmer.tick())
        #expect(!trimmer.tick())  // nothing ended since
        #expect(trims.count == 1 && cache.statistics.memory.evictions == 0)
    }

    @Test("the real trim is found in glibc and runs, and the heap still serves allocations after it")
    func realTrim() {
        var blocks = (0..<64).map { _ in [UInt8](repeating: 1, count: 64 << 10) }
        blocks.removeAll()
        #expect(HeapTrimmer.releaseFreePages())
        blocks = (0..<8).map { [UInt8](repeating: UInt8($0), count: 64 << 10) }
        #expect(blocks.enumerated().allSatisfy { index, block in block.allSatisfy { $0 == UInt8(index) } })
    }

    @Test("run ticks on its interval and ends when its task is cancelled")
    func runEndsOnCancel() async throws {
        let activity = Counter()
        let (trims, trimmed) = AsyncStream.makeStream(of: Void.self)
        let trimmer = HeapTrimmer(activity: { activity.count }, trim: { trimmed.yield() })
        let task = Task { await trimmer.run(every: .milliseconds(5)) }
        activity.add()
        var iterator = trims.makeAsyncIterator()
        #expect(await iterator.next() != nil)  // the suite's time limit bounds the wait
        task.cancel()
        await task.value
    }
}
