import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Numbers a hostile or broken server sends where seconds are expected:
/// every one used to be a `Double → Int` conversion away from SIGILL. Each is parsed by the one
/// parser of its header and clamped by `OutsideSeconds`, and the engine answers the right kind.
@Suite("Network: hostile Retry-After and rate-limit headers never trap", .timeLimit(.minutes(3)))
struct HostileHeaderTests {
    /// Header values with what the parser must make of them (nil: unreadable).
    static let retryAfterValues: [(String, Double?)] = [
        ("120", 120), ("  7 ", 7), ("2.5", 2.5), ("0", 0),
        ("1e16", OutsideSeconds.cap), ("1e300", OutsideSeconds.cap), ("inf", OutsideSeconds.cap),
        ("Infinity", OutsideSeconds.cap), ("9223372036854775807", OutsideSeconds.cap),
        ("18446744073709551616", OutsideSeconds.cap), (String(repeating: "9", count: 400), OutsideSeconds.cap),
        ("nan", nil), ("-nan", nil), ("-1", nil), ("-1e300", nil), ("-inf", nil), ("", nil), ("   ", nil),
        ("garbage", nil), ("0x10", nil), ("1,5", nil), ("Fri, 31 Dec 9999 23:59:59 GMT", OutsideSeconds.cap),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0), ("Sun, 06 Nov 1994 08:49:37", nil), ("Sun, 99 Foo 1994 25:61:61 GMT", nil),
    ]

    @Test("Retry-After: every value parses to seconds in [0, cap] or nil", arguments: retryAfterValues)
    func parseRetryAfter(value: String, expected: Double?) {
        #expect(RetryPolicy.parseRetryAfter(value) == expected, "\(value)")
        // X-RateLimit-Reset takes the same numbers (but no dates) through the same clamp.
        if !value.contains("GMT") {
            #expect(ProviderQuota.parseReset(value) == expected, "\(value)")
        }
    }

    @Test("an HTTP date in the near future is the seconds until it")
    func httpDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let value = formatter.string(from: now.addingTimeInterval(90))
        #expect(RetryPolicy.parseRetryAfter(value, now: now) == 90)
    }

    @Test("the clamp: NaN refused, negatives 0, anything past a day a day; durations always fit")
    func clamp() {
        #expect(OutsideSeconds.clamped(.nan) == nil)
        #expect(OutsideSeconds.clamped(-5) == 0)
        #expect(OutsideSeconds.clamped(.infinity) == OutsideSeconds.cap)
        #expect(OutsideSeconds.clamped(.greatestFiniteMagnitude) == OutsideSeconds.cap)
        #expect(OutsideSeconds.duration(.infinity) == .seconds(86_400))
        #expect(OutsideSeconds.duration(.nan) == .zero)
        #expect(OutsideSeconds.duration(1.0005) == .milliseconds(1001))
        #expect(OutsideSeconds.wholeSeconds(1e300) == 86_400)
    }

    @Test("rate-limit counts: integers or nil, never a trap")
    func counts() {
        #expect(ProviderQuota.parseCount(" 42 ") == 42)
        #expect(ProviderQuota.parseCount("99999999999999999999999") == nil)
        #expect(ProviderQuota.parseCount("1e3") == nil)
        #expect(ProviderQuota.parseCount(nil) == nil)
    }

    @Test("Content-Range totals: a non-negative Int or nil", arguments: [
        ("bytes 0-0/1234", 1234), ("bytes 0-0/*", nil), ("bytes 0-0/-5", nil), ("bytes 0-0/+5", nil),
        ("bytes 0-0/99999999999999999999999", nil), ("bytes 0-0/9223372036854775807", Int.max), ("garbage", nil),
        ("bytes 0-0/ 12 ", 12), ("bytes 0-0/1e3", nil),
    ] as [(String, Int?)])
    func contentRange(value: String, expected: Int?) {
        #expect(ContentRange.total(of: value) == expected)
    }

    @Test("X-RateLimit-Remaining 0 with an absurd reset blocks for the cap, not forever and not a trap",
          arguments: ["1e300", "inf", "9223372036854775807", "1e16"])
    func absurdReset(reset: String) async {
        let response = HTTPResponse(status: 200, headers: [("X-Ratelimit-Remaining", "0"), ("X-RateLimit-Reset", reset)], body: [])
        let quota = ProviderQuota(headers: response)
        #expect(quota?.resetAfter == OutsideSeconds.cap)
        let limiter = RateLimiter(provider: .pixabay)
        await limiter.block(retryAfter: quota?.resetAfter)
        let left = await limiter.retryAfter()
        #expect(left.map { $0 > OutsideSeconds.cap - 60 && $0 <= OutsideSeconds.cap } == true)
        // A caller passing an unclamped number still cannot trap the limiter.
        await limiter.block(retryAfter: .infinity)
        await limiter.block(retryAfter: .nan)
        await limiter.block(retryAfter: -1e300)
        #expect(ProviderErrors.rateLimited(.pixabay, retryAfter: 1e300).retryAfter == OutsideSeconds.cap)
    }

    /// What the engine answers for `faults` at one path.
    private func fetch(_ faults: [Fault]) async throws -> (error: RPCError?, requests: Int) {
        let engine = NetworkFixture.engine()
        defer { engine.shutdown() }
        let photo = try NetworkFixture.photo()
        return try await NetworkFixture.withServer { server in
            server.serve("/h", body: photo, faults: faults)
            let error = await rpcError {
                _ = try await withTimeout(seconds: 60) { try await engine.start(TransferRequest(url: server.url("/h"))).result() }
            }
            return (error, server.counters.requests("/h"))
        }
    }

    static let hostile = ["1e16", "1e300", "inf", "nan", "-1", "9223372036854775807",
                          "Fri, 31 Dec 9999 23:59:59 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "garbage"]

    @Test("429 with a hostile Retry-After → rate_limited with a sane retryAfter", arguments: hostile)
    func rateLimited(value: String) async throws {
        let o = try await fetch(Array(repeating: .status(429, retryAfter: value), count: 6))
        #expect(o.error?.kind == .rateLimited, "\(value): \(String(describing: o.error))")
        if let after = o.error?.data.retryAfter {
            #expect(after >= 0 && after <= OutsideSeconds.cap)
        }
        #expect(o.requests >= 1)
    }

    @Test("503 with a hostile Retry-After → upstream_error with status 503", arguments: hostile)
    func unavailable(value: String) async throws {
        let o = try await fetch(Array(repeating: .status(503, retryAfter: value), count: 6))
        #expect(o.error?.kind == .upstreamError, "\(value): \(String(describing: o.error))")
        #expect(o.error?.data.status == 503)
        if let after = o.error?.data.retryAfter {
            #expect(after >= 0 && after <= OutsideSeconds.cap)
        }
    }
}
