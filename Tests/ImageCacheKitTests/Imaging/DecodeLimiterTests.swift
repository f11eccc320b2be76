import ImageCacheKit
import Testing
import TestSupport

@Suite("Imaging: decode limiter", .timeLimit(.minutes(1)))
struct DecodeLimiterTests {
    @Test("no more than `limit` bodies run at once")
    func boundsConcurrency() async throws {
        let limiter = DecodeLimiter(limit: 2)
        let running = Shared((now: 0, peak: 0))
        try await withTimeout(seconds: 30) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        try await limiter.withPermit {
                            running.value.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                            await Task.yield()
                            running.value.withLock { $0.now -= 1 }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(running.value.withLock { $0.peak } <= 2)
        #expect(limiter.available == 2)
    }

    @Test("a waiter gets the slot a finished decode frees, first come first served")
    func handsOverInOrder() async throws {
        let limiter = DecodeLimiter(limit: 1)
        try await limiter.acquire()
        let order = Shared<[Int]>([])
        let first = Task { try await limiter.withPermit { order.value.withLock { $0.append(1) } } }
        try await withTimeout(seconds: 10) { try await limiter.waitForWaiting(atLeast: 1) }
        let second = Task { try await limiter.withPermit { order.value.withLock { $0.append(2) } } }
        try await withTimeout(seconds: 10) { try await limiter.waitForWaiting(atLeast: 2) }
        limiter.release()
        try await first.value
        try await second.value
        #expect(order.value.withLock { $0 } == [1, 2])
        #expect(limiter.available == 1)
    }

    @Test("an actor decodes real images under the limiter, its own state touched inside the permit")
    func actorDecodesUnderLimit() async throws {
        let decoder = LimitedDecoder()
        let bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        let widths = try await withTimeout(seconds: 60) {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await decoder.decode(bytes).width } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(widths == [227, 227, 227, 227])
        #expect(await decoder.decoded == 4)
        #expect(decoder.limiter.available == 1)
    }

    @Test("a cancelled waiter leaves the queue with CancellationError and takes no slot")
    func cancelledWaiterLeaves() async throws {
        let limiter = DecodeLimiter(limit: 1)
        try await limiter.acquire()
        let waiter = Task { try await limiter.withPermit { 42 } }
        try await withTimeout(seconds: 10) { try await limiter.waitForWaiting(atLeast: 1) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(limiter.waiting == 0)
        limiter.release()
        #expect(limiter.available == 1)
    }
}

/// A Mutex that tasks can share (Mutex itself cannot be captured by an escaping closure).
final class Shared<Value: Sendable>: Sendable {
    let value: LockedState<Value>
    init(_ initial: Value) { value = LockedState(initial) }
}

/// The shape the pipeline uses: an actor decoding under the limiter, touching its own state.
private actor LimitedDecoder {
    let limiter = DecodeLimiter(limit: 1)
    var decoded = 0

    func decode(_ bytes: [UInt8]) async throws -> ImageHeader {
        try await limiter.withPermit {
            decoded += 1
            return try Thumbnailer.validate(bytes)
        }
    }
}
