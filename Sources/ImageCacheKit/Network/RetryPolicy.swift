import Foundation

/// When and how soon a failed GET is sent again. Image and API GETs are idempotent, so a
/// connect failure, a 5xx or a timeout is worth a few more tries; each waits longer
/// (exponential backoff) with random jitter so that many clients failing together do not
/// come back together.
public struct RetryPolicy: Sendable {
    /// Retries after the first attempt (so at most `maxRetries + 1` requests per hop).
    public var maxRetries: Int
    /// The first backoff; each following one doubles, up to `maxDelay`.
    public var baseDelay: Duration
    /// The longest backoff, so a long run of failures never waits minutes between tries.
    public var maxDelay: Duration
    /// The longest `Retry-After` (429/503) that is waited out; a longer one fails at once with
    /// `rate_limited` and the delay, so the client decides rather than a queue slot idling.
    public var maxRetryAfter: Duration

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

    /// The longest wait a host's header can ask for (`Retry-After`, `X-RateLimit-Reset`): a
    /// day. Longer values (`1e300`, `inf`, a date in year 9999) are clamped to it, so that no
    /// later conversion to an `Int` or a `Duration` can overflow.
    public static let maxHeaderSeconds: Double = 86_400

    /// `seconds` from a header, within `0...maxHeaderSeconds` (not NaN: callers refuse it first).
    static func clampedSeconds(_ seconds: Double) -> Double {
        min(max(0, seconds), maxHeaderSeconds)
    }

    /// Seconds from a `Retry-After` value: delta-seconds or an HTTP date, clamped to
    /// `0...maxHeaderSeconds`; nil when unreadable (NaN included).
    static func parseRetryAfter(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value) { return seconds.isNaN ? nil : clampedSeconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return clampedSeconds(date.timeIntervalSince(now))
    }
}
