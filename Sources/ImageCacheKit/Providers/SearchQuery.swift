/// What a search asks a provider for: a text query, or the provider's newest photos.
public enum SearchTerm: Sendable, Hashable, Codable {
    /// A text query, already trimmed and at least 3 grapheme clusters long.
    case query(String)
    /// `feed: "recent"` — Flickr `getRecent`, Unsplash `/photos?order_by=latest`, Pixabay `order=latest`.
    case recent

    /// The query text, nil for a feed.
    public var text: String? {
        if case .query(let q) = self { return q }
        return nil
    }
}

/// One page of a search as a provider is asked for it, after validation and clamping.
///
/// It is also the identity of a result page: two equal queries are the same upstream request
/// (shared while in flight) and the same cache entry. It holds no secret.
public struct SearchQuery: Sendable, Hashable, Codable {
    public var term: SearchTerm
    /// 1-based page number.
    public var page: Int
    /// Results per page, already clamped into the provider's range.
    public var perPage: Int
    /// Whether the provider's safe-search filter is on.
    package var safe: Bool

    public init(term: SearchTerm, page: Int = 1, perPage: Int, safe: Bool = true) {
        self.term = term
        self.page = page
        self.perPage = perPage
        self.safe = safe
    }
}
