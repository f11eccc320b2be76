import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Per-provider rate limiter", .timeLimit(.minutes(1)))
struct RateLimiterTests {
    @Test("A burst goes at once, the next request waits for its token")
    func tokenBucket() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(provider: .unsplash, burst: 2, perSecond: 1, clock: clock)
        try await limiter.acquire()
        try await limiter.acquire()
        let third = Task { try await limiter.acquire() }
        await withTimeoutOrFail { await clock.waitForSleepers(1) }
        clock.advance(by: .milliseconds(500))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(500))
        try await withTimeout(seconds: 30) { try await third.value }
    }

    @Test("After a quota answer, requests fail at once with the seconds left")
    func blocked() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(provider: .pixabay, clock: clock)
        await limiter.block(retryAfter: 30)
        clock.advance(by: .seconds(10))
        let e = await rpcError { try await limiter.acquire() }
        #expect(e?.kind == .rateLimited)
        #expect(e?.data.retryAfter == 20)
        clock.advance(by: .seconds(20))
        try await limiter.acquire()
        #expect(await limiter.retryAfter() == nil)
    }

    @Test("A quota answer without a reset time blocks for the default minute")
    func defaultBlock() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(provider: .unsplash, clock: clock)
        await limiter.block(retryAfter: nil)
        #expect(await limiter.retryAfter() == 60)
    }

    @Test("A waiting request can be cancelled")
    func cancelWhileWaiting() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(provider: .flickr, burst: 1, perSecond: 1, clock: clock)
        try await limiter.acquire()
        let waiting = Task { try await limiter.acquire() }
        await withTimeoutOrFail { await clock.waitForSleepers(1) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
