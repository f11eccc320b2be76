import ImageCacheProtocol

/// A `search` call's params as docs/protocol.md (`search`) names them, already typed by the server.
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
    package var debounceMs: Int
    /// Searches of one session on the same channel supersede each other (typeahead).
    public var channel: String?
    package var safe: Bool
    /// Where the request stands in its session's arrival order (the server's admission serial),
    /// nil when unknown. Requests run as separate tasks and may reach the coordinator in
    /// another order than they arrived; on a channel, a search older than one already seen
    /// there is superseded at once, so a late older keystroke never supersedes the newest.
    public var arrival: UInt64?

    public init(query: String? = nil, feed: String? = nil, provider: String? = nil, page: Int = 1, perPage: Int? = nil,
                debounceMs: Int = 0, channel: String? = nil, safe: Bool = true, arrival: UInt64? = nil) {
        self.query = query
        self.feed = feed
        self.provider = provider
        self.page = page
        self.perPage = perPage
        self.debounceMs = debounceMs
        self.channel = channel
        self.safe = safe
        self.arrival = arrival
    }
}
