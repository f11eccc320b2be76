extension Methods {
    /// `search`: one page of photos for a query or a feed, from one provider.
    public enum Search: RPCMethod {
        public typealias Params = SearchParams
        public typealias Result = SearchResult
        public static let name = MethodName.search
    }
}

/// A provider's list that needs no query.
public enum SearchFeed: String, ParamEnum {
    /// The provider's newest photos (Flickr `getRecent`, Unsplash `order_by=latest`, Pixabay `order=latest`).
    case recent
}

/// Params of `search`. Exactly one of `query` and `feed`.
///
/// The query's minimum length (3 characters after trimming → 1001) is the engine's rule,
/// not a params error, so it is not checked here.
public struct SearchParams: RPCParams, Hashable {
    /// Words to search for; at least 3 characters after trimming (else 1001).
    public var query: String?
    /// A list that needs no query, instead of `query`.
    public var feed: SearchFeed?
    /// A provider name; nil means the configured `default_provider`.
    public var provider: String?
    /// 1-based page number.
    public var page: Int
    /// Results per page; nil means the provider's default. Clamped by the daemon into the provider's range.
    public var perPage: Int?
    /// Wait this long before the upstream request, so a superseded typeahead search never
    /// reaches the provider. At most `SearchParams.maxDebounceMs`.
    public var debounceMs: Int
    /// A newer search on the same channel of the same session supersedes this one (1007 `superseded`).
    public var channel: String?
    /// Maps to each provider's safe-search setting.
    public var safe: Bool

    /// The longest debounce accepted: longer would hold a request (and a pending slot) for no use.
    public static let maxDebounceMs = 10_000

    public init(query: String? = nil, feed: SearchFeed? = nil, provider: String? = nil, page: Int = 1,
                perPage: Int? = nil, debounceMs: Int = 0, channel: String? = nil, safe: Bool = true) {
        self.query = query
        self.feed = feed
        self.provider = provider
        self.page = page
        self.perPage = perPage
        self.debounceMs = debounceMs
        self.channel = channel
        self.safe = safe
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case query, feed, provider, page, perPage, debounceMs, channel, safe
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        query = try c.decodeIfPresent(String.self, forKey: .query)
        feed = try c.decodeIfPresent(SearchFeed.self, forKey: .feed)
        provider = try c.decodeIfPresent(String.self, forKey: .provider)
        page = try c.decodeIfPresent(Int.self, forKey: .page) ?? 1
        perPage = try c.decodeIfPresent(Int.self, forKey: .perPage)
        debounceMs = try c.decodeIfPresent(Int.self, forKey: .debounceMs) ?? 0
        channel = try c.decodeIfPresent(String.self, forKey: .channel)
        safe = try c.decodeIfPresent(Bool.self, forKey: .safe) ?? true
    }

    public func validate() throws(RPCError) {
        switch (query, feed) {
        case (nil, nil):
            throw .invalidParam("query", "one of 'query' or 'feed' is required")
        case (_?, _?):
            throw .invalidParam("feed", "'query' and 'feed' are mutually exclusive: give one of them")
        default:
            break
        }
        if page < 1 { throw .invalidParam("page", "'page' must be 1 or more") }
        if let perPage, perPage < 1 { throw .invalidParam("perPage", "'perPage' must be 1 or more") }
        if !(0...Self.maxDebounceMs).contains(debounceMs) {
            throw .invalidParam("debounceMs", "'debounceMs' must be between 0 and \(Self.maxDebounceMs)")
        }
        if let provider, provider.isEmpty { throw .invalidParam("provider", "'provider' must not be empty") }
    }
}

/// One page of a search.
public struct SearchResult: Codable, Sendable, Hashable {
    /// The query as sent (null for a feed).
    @ExplicitNull public var query: String?
    /// The feed, for a feed search; the key is left out otherwise.
    public var feed: SearchFeed?
    /// The provider that answered.
    public var provider: String
    /// The page number asked for.
    public var page: Int
    /// The page size actually used, after clamping into the provider's range.
    public var perPage: Int
    /// Results reachable by paging (Pixabay: `totalHits`).
    public var total: Int
    /// `ceil(total / perPage)`.
    public var totalPages: Int
    /// Whether a next page exists.
    public var hasMore: Bool
    /// This page's photos; empty beyond the last page.
    public var photos: [Photo]
    /// Answered from the cache without an upstream request.
    public var fromCache: Bool
    /// A cached copy served because the network failed; it may be out of date.
    public var stale: Bool

    public init(query: String?, feed: SearchFeed? = nil, provider: String, page: Int, perPage: Int, total: Int,
                totalPages: Int, hasMore: Bool, photos: [Photo], fromCache: Bool, stale: Bool) {
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
}
