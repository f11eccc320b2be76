import Glibc
import ImageCacheConfig
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Network: each fault maps to its error kind", .timeLimit(.minutes(3)))
struct NetworkFaultTests {
    /// Fetches `faults` served at one path and returns the error (nil on success) and the counters.
    private func outcome(_ faults: [Fault], body: [UInt8]? = nil,
                         network: (inout CacheConfiguration.Network) -> Void = { _ in }) async throws
        -> (error: RPCError?, requests: Int, stats: NetworkStats, result: TransferResult?) {
        let photo = try body ?? NetworkFixture.photo()
        let engine = NetworkFixture.engine(network)
        defer { engine.shutdown() }
        return try await NetworkFixture.withServer { server in
            server.serve("/f", body: photo, faults: faults)
            var result: TransferResult?
            let error = await rpcError {
                result = try await withTimeout(seconds: 60) {
                    try await engine.start(TransferRequest(url: server.url("/f"))).result()
                }
            }
            return (error, server.counters.requests("/f"), engine.stats, result)
        }
    }

    @Test("404 → not_found, not retried")
    func notFound() async throws {
        let o = try await outcome([.status(404)])
        #expect(o.error?.kind == .notFound)
        #expect(o.requests == 1)
    }

    @Test("a 500 that persists → upstream_error with the status, after the bounded retries")
    func serverErrorRetriedThenFails() async throws {
        let o = try await outcome([.status(500)])
        #expect(o.error?.kind == .upstreamError)
        #expect(o.error?.data.status == 500)
        #expect(o.error?.data.body?.contains("simulated 500") == true)
        #expect(o.requests == 3)
        #expect(o.stats.retries == 2)
    }

    @Test("5xx then success: retried and counted")
    func retriedToSuccess() async throws {
        let o = try await outcome([.status(500), .status(502), .none])
        #expect(o.error == nil)
        #expect(o.requests == 3)
        #expect(o.stats.retries == 2)
        #expect(o.result?.requests == 3)
    }

    @Test("429 with a long Retry-After → rate_limited with retryAfter, at once")
    func rateLimitedLong() async throws {
        let o = try await outcome([.status(429, retryAfter: "120")])
        #expect(o.error?.kind == .rateLimited)
        #expect(o.error?.data.retryAfter == 120)
        #expect(o.requests == 1)
    }

    @Test("429 without Retry-After → rate_limited at once")
    func rateLimitedNoHeader() async throws {
        let o = try await outcome([.status(429)])
        #expect(o.error?.kind == .rateLimited)
        #expect(o.error?.data.retryAfter == nil)
        #expect(o.requests == 1)
    }

    @Test("429 with a short Retry-After is waited out and retried")
    func rateLimitedShortRetried() async throws {
        let o = try await outcome([.status(429, retryAfter: "1"), .none])
        #expect(o.error == nil)
        #expect(o.requests == 2)
        #expect(o.stats.retries == 1)
    }

    @Test("503 with a long Retry-After → upstream_error with the status and retryAfter (not a quota)")
    func unavailableLong() async throws {
        let o = try await outcome([.status(503, retryAfter: "30")])
        #expect(o.error?.kind == .upstreamError)
        #expect(o.error?.data.status == 503)
        #expect(o.error?.data.retryAfter == 30)
        #expect(o.requests == 1)
    }

    @Test("a truncated body → upstream_error after retries")
    func truncated() async throws {
        let o = try await outcome([.truncate(afterBytes: 1000)])
        #expect(o.error?.kind == .upstreamError)
        #expect(o.requests == 3)
    }

    @Test("a connection reset → network_unavailable after retries")
    func reset() async throws {
        let o = try await outcome([.reset(afterBytes: 0)])
        #expect(o.error?.kind == .networkUnavailable)
        #expect(o.requests == 3)
    }

    @Test("a reset mid-body, then success: the retry delivers the whole body")
    func resetThenSuccess() async throws {
        let photo = try NetworkFixture.photo()
        let o = try await outcome([.reset(afterBytes: 500), .none], body: photo)
        #expect(o.error == nil)
        #expect(o.result?.body == .memory(photo))
    }

    @Test("a stalled body → timeout (stall_timeout)")
    func stalled() async throws {
        let o = try await outcome([.stall(afterBytes: 100)]) { $0.stallTimeout = .milliseconds(600) }
        #expect(o.error?.kind == .timeout)
        #expect(o.error?.message.contains("stall_timeout") == true)
    }

    @Test("no byte at all for longer than stall_timeout → timeout")
    func latencyTimesOut() async throws {
        // Held (never released): the answer cannot come first, however slow the machine.
        let o = try await outcome([.held]) { $0.stallTimeout = .milliseconds(600) }
        #expect(o.error?.kind == .timeout)
    }

    @Test("a drip that beats the stall check still hits transfer_timeout → timeout")
    func dripHitsDeadline() async throws {
        let o = try await outcome([.drip(intervalMilliseconds: 100)]) {
            $0.stallTimeout = .seconds(5)
            $0.transferTimeout = .milliseconds(1500)
        }
        #expect(o.error?.kind == .timeout)
        #expect(o.requests == 1)
    }

    @Test("a declared length over max_image_bytes → too_large before the body is read")
    func hugeDeclared() async throws {
        let o = try await outcome([.huge(declaredBytes: 500 << 20)]) { $0.maxImageBytes = 1 << 20 }
        #expect(o.error?.kind == .tooLarge)
        #expect(o.stats.bytesReceived < 1 << 20)
        #expect(o.requests == 1)
    }

    @Test("an endless body is cut the moment it passes max_image_bytes → too_large")
    func endless() async throws {
        let o = try await outcome([.endless]) { $0.maxImageBytes = 1 << 20 }
        #expect(o.error?.kind == .tooLarge)
        #expect(o.stats.bytesReceived <= (1 << 20) + (64 << 10))
        #expect(o.requests == 1)
    }

    @Test("a closed port → network_unavailable")
    func connectionRefused() async throws {
        let closed = try RefusingPort()
        let url = closed.url("/x")
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let error = await rpcError { _ = try await withTimeout(seconds: 60) { try await engine.start(TransferRequest(url: url)).result() } }
        #expect(error?.kind == .networkUnavailable)
        #expect(engine.stats.retries == 2)
        withExtendedLifetime(closed) {}
    }

    @Test("a connect that never completes → timeout after connect_timeout")
    func connectTimeout() async throws {
        // A listener with a full accept queue (backlog 0, one connection parked in it): the
        // kernel drops further SYNs, so a new connect hangs until the client gives up.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener); close(filler) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Bool in
                bind(listener, raw, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, raw, &length) == 0 && connect(filler, raw, length) == 0
            }
        }
        try #require(bound)
        let url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/x"
        let engine = NetworkFixture.engine { $0.connectTimeout = .milliseconds(400) }
        defer { engine.shutdown() }
        let started = ContinuousClock.now
        let error = await rpcError { _ = try await withTimeout(seconds: 60) { try await engine.start(TransferRequest(url: url)).result() } }
        #expect(error?.kind == .timeout)
        #expect(engine.stats.retries == 2)  // a timeout is worth retrying
        #expect(ContinuousClock.now - started >= .milliseconds(3 * 400))
    }

    @Test("a slow body within the limits arrives intact")
    func slowBodyArrives() async throws {
        let photo = try NetworkFixture.photo()
        let o = try await outcome([.slowBody(bytesPerSecond: photo.count * 4)], body: photo)
        #expect(o.error == nil)
        #expect(o.result?.body == .memory(photo))
    }
}
