/// One provider's figures for `stats.providers.<name>` (docs/protocol.md, "Methods"): requests sent, errors,
/// and the quota the provider last reported. Holds no key and no URL.
public struct ProviderStats: Sendable, Hashable, Codable {
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

    enum CodingKeys: String, CodingKey { case requests, errors, rateLimitRemaining, rateLimitLimit }

    /// `rateLimitRemaining` is written as null when unknown, as `stats` shows every field.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requests, forKey: .requests)
        try c.encode(errors, forKey: .errors)
        try c.encode(rateLimitRemaining, forKey: .rateLimitRemaining)
        try c.encodeIfPresent(rateLimitLimit, forKey: .rateLimitLimit)
    }
}
