/// What a provider said about its remaining quota in the headers of its last answer.
///
/// Unsplash sends `X-Ratelimit-Limit`/`X-Ratelimit-Remaining` (per hour), Pixabay
/// `X-RateLimit-Limit`/`X-RateLimit-Remaining`/`X-RateLimit-Reset` (seconds until the window
/// resets); Flickr sends none. `stats.providers.<name>.rateLimitRemaining` shows `remaining`,
/// and the limiter stops asking once it reaches zero.
public struct ProviderQuota: Sendable, Hashable, Codable {
    public var limit: Int?
    public var remaining: Int?
    /// Seconds until the quota window resets, when the provider says.
    public var resetAfter: Double?

    public init(limit: Int?, remaining: Int?, resetAfter: Double?) {
        self.limit = limit
        self.remaining = remaining
        self.resetAfter = resetAfter
    }

    /// The quota headers of a response (names compared case-insensitively), or nil when it
    /// carries none.
    public init?(headers response: HTTPResponse) {
        func int(_ name: String) -> Int? {
            response.header(name).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        let limit = int("X-RateLimit-Limit")
        let remaining = int("X-RateLimit-Remaining")
        let reset = response.header("X-RateLimit-Reset").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            .flatMap { $0.isNaN ? nil : $0 }
        guard limit != nil || remaining != nil || reset != nil else { return nil }
        // Clamped like Retry-After: a reset of 1e300 or inf would overflow the limiter's clock.
        self.init(limit: limit, remaining: remaining, resetAfter: reset.map(RetryPolicy.clampedSeconds))
    }

    /// Whether the provider said no request is left in this window.
    public var isExhausted: Bool { remaining.map { $0 <= 0 } ?? false }
}
