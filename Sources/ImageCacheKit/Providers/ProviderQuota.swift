import Foundation
import ImageCacheProtocol

/// What a provider said about its remaining quota in the headers of its last answer.
///
/// Unsplash sends `X-Ratelimit-Limit`/`X-Ratelimit-Remaining` (per hour), Pixabay
/// `X-RateLimit-Limit`/`X-RateLimit-Remaining`/`X-RateLimit-Reset` (seconds until the window
/// resets); Flickr sends none. `stats.providers.<name>.rateLimitRemaining` shows `remaining`,
/// and the limiter stops asking once it reaches zero.
package struct ProviderQuota: Sendable, Hashable, Codable {
    public var limit: Int?
    public var remaining: Int?
    /// Seconds until the quota window resets, when the provider says.
    package var resetAfter: Double?

    public init(limit: Int?, remaining: Int?, resetAfter: Double?) {
        self.limit = limit
        self.remaining = remaining
        self.resetAfter = resetAfter
    }

    /// The quota headers of a response (names compared case-insensitively), or nil when it
    /// carries none.
    public init?(headers response: HTTPResponse) {
        let limit = Self.parseCount(response.header("X-RateLimit-Limit"))
        let remaining = Self.parseCount(response.header("X-RateLimit-Remaining"))
        let reset = Self.parseReset(response.header("X-RateLimit-Reset"))
        guard limit != nil || remaining != nil || reset != nil else { return nil }
        self.init(limit: limit, remaining: remaining, resetAfter: reset)
    }

    /// `X-RateLimit-Limit` / `X-RateLimit-Remaining`: a decimal integer, nil when absent or not
    /// one (too long for an `Int` included). The one parser of these headers (pure, fuzzable).
    package static func parseCount(_ value: String?) -> Int? {
        value.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// `X-RateLimit-Reset`: seconds until the window resets, clamped to
    /// `[0, OutsideSeconds.cap]` (`1e300` and `inf` included); nil when absent or unreadable.
    /// The one parser of this header (pure, fuzzable).
    package static func parseReset(_ value: String?) -> Double? {
        value.flatMap { OutsideSeconds.parse($0[...]) }
    }

    /// Whether the provider said no request is left in this window.
    package var isExhausted: Bool { remaining.map { $0 <= 0 } ?? false }
}
