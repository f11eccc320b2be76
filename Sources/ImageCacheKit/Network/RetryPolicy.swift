import Foundation
import ImageCacheProtocol

/// When and how soon a failed GET is sent again. Image and API GETs are idempotent, so a
/// connect failure, a 5xx or a timeout is worth a few more tries; each waits longer
/// (exponential backoff) with random jitter so that many clients failing together do not
/// come back together.
package struct RetryPolicy: Sendable {
    /// Retries after the first attempt (so at most `maxRetries + 1` requests per hop).
    package var maxRetries: Int
    /// The first backoff; each following one doubles, up to `maxDelay`.
    package var baseDelay: Duration
    /// The longest backoff, so a long run of failures never waits minutes between tries.
    package var maxDelay: Duration
    /// The longest `Retry-After` (429/503) that is waited out; a longer one fails at once with
    /// `rate_limited` and the delay, so the client decides rather than a queue slot idling.
    package var maxRetryAfter: Duration

    /// The defaults: 3 retries, 250 ms doubling to at most 4 s, `Retry-After` waited up to 2 s.
    public init(maxRetries: Int = 3, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(4),
                maxRetryAfter: Duration = .seconds(2)) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// The wait before retry number `retry` (1-based): half fixed, half random ("equal jitter").
    func backoff(retry: Int) -> Duration {
        let exponential = baseDelay * (1 << min(max(retry - 1, 0), 20))
        let capped = min(exponential, maxDelay)
        return capped / 2 + capped / 2 * Double.random(in: 0...1)
    }

    /// Seconds from a `Retry-After` value: delta-seconds or an HTTP date (`HTTPDate`), clamped
    /// to `[0, OutsideSeconds.cap]`; nil when absent or unreadable (NaN, negative, garbage).
    /// The one parser of this header: the engine (image hosts) and the providers both call it,
    /// and it is a pure function of its text and `now`, so it can be fuzzed on its own.
    package static func parseRetryAfter(_ value: String?, now: Date = Date()) -> Double? {
        guard let value else { return nil }
        if let seconds = OutsideSeconds.parse(value[...]) { return seconds }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        return OutsideSeconds.clamped(date.timeIntervalSince(now))
    }
}
