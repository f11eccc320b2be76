import ImageCacheProtocol

/// A `search` call's params as the contract (§5) names them, already typed by the server.
public struct SearchParameters: Sendable, Hashable {
    /// The text to search for; nil with `feed`.
    public var query: String?
    /// `"recent"` for the provider's newest photos instead of a query.
    public var feed: String?
    /// nil → `[search] default_provider`.
    public var provider: String?
    public var page: Int
    /// nil → a default inside the provider's range; otherwise clamped into it.
    public var perPage: Int?
    /// How long to wait before asking the provider, so that a superseded keystroke costs nothing.
    public var debounceMs: Int
    /// Searches of one session on the same channel supersede each other (typeahead).
    public var channel: String?
    public var safe: Bool

    public init(query: String? = nil, feed: String? = nil, provider: String? = nil, page: Int = 1, perPage: Int? = nil,
                debounceMs: Int = 0, channel: String? = nil, safe: Bool = true) {
        self.query = query
        self.feed = feed
        self.provider = provider
        self.page = page
        self.perPage = perPage
        self.debounceMs = debounceMs
        self.channel = channel
        self.safe = safe
    }
}

/// The `search` result (CONTRACT §5), encoded as the wire object.
public struct SearchResult: Sendable, Hashable, Codable {
    /// The trimmed query, or nil for a feed.
    public var query: String?
    public var feed: String?
    public var provider: String
    public var page: Int
    public var perPage: Int
    public var total: Int
    public var totalPages: Int
    public var hasMore: Bool
    public var photos: [Photo]
    /// Answered from the page cache without asking the provider.
    public var fromCache: Bool
    /// An expired cached copy, returned because the provider could not be reached.
    public var stale: Bool

    public init(query: String?, feed: String?, provider: String, page: Int, perPage: Int, total: Int, totalPages: Int,
                hasMore: Bool, photos: [Photo], fromCache: Bool, stale: Bool) {
        self.query = query
        self.feed = feed
        self.provider = provider
        self.page = page
        self.perPage = perPage
        self.total = total
        self.totalPages = totalPages
        self.hasMore = hasMore
        self.photos = photos
        self.fromCache = fromCache
        self.stale = stale
    }

    enum CodingKeys: String, CodingKey {
        case query, feed, provider, page, perPage, total, totalPages, hasMore, photos, fromCache, stale
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(query, forKey: .query)
        try c.encodeIfPresent(feed, forKey: .feed)
        try c.encode(provider, forKey: .provider)
        try c.encode(page, forKey: .page)
        try c.encode(perPage, forKey: .perPage)
        try c.encode(total, forKey: .total)
        try c.encode(totalPages, forKey: .totalPages)
        try c.encode(hasMore, forKey: .hasMore)
        try c.encode(photos, forKey: .photos)
        try c.encode(fromCache, forKey: .fromCache)
        try c.encode(stale, forKey: .stale)
    }
}
