/// One provider's counters: requests sent, errors, and the quota the provider last reported.
/// Holds no key and no URL.
///
/// Not the wire's `StatsResult.Provider`: the server fills that from these (`stats.providers`),
/// and the metrics' quota gauges also need the window's size, which `stats` does not show.
public struct ProviderStats: Sendable, Hashable {
    public var requests: Int
    public var errors: Int
    /// `X-RateLimit-Remaining` of the last answer that had it; nil until one did.
    package var rateLimitRemaining: Int?
    /// `X-RateLimit-Limit` of that answer.
    package var rateLimitLimit: Int?

    public init(requests: Int = 0, errors: Int = 0, rateLimitRemaining: Int? = nil, rateLimitLimit: Int? = nil) {
        self.requests = requests
        self.errors = errors
        self.rateLimitRemaining = rateLimitRemaining
        self.rateLimitLimit = rateLimitLimit
    }
}

