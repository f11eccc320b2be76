import ImageCacheProtocol
import Logging

/// One provider with everything around its API calls: the fetcher, the rate limiter, the
/// quota it last reported, and its request/error counts for `stats`.
///
/// Every upstream call of the daemon to a provider goes through here, so no path can skip the
/// limiter, forget to read the quota headers, or let a key into an error.
public actor ProviderClient {
    /// The API this client calls (request building and decoding).
    public nonisolated let provider: any PhotoProvider
    private let fetcher: any HTTPFetching
    /// Paces this provider's requests and holds them back after a quota answer.
    package nonisolated let limiter: RateLimiter
    private var stats = ProviderStats()
    private let logger: Logger

    public init(provider: any PhotoProvider, fetcher: any HTTPFetching, limiter: RateLimiter? = nil,
                logger: Logger = Logger(label: "imagecached.providers")) {
        self.provider = provider
        self.fetcher = fetcher
        self.limiter = limiter ?? RateLimiter(provider: provider.id)
        self.logger = logger
    }

    /// Which provider this is.
    public nonisolated var id: ProviderID { provider.id }

    /// One page of results.
    public func search(_ query: SearchQuery) async throws -> ProviderSearchPage {
        let request = try provider.searchRequest(for: query)
        let page = try await perform(request) { try self.provider.decodeSearch($0, for: query) }
        if page.notes.count > 0 {
            // One line per answer: what was left out and why; the rest of the page is served.
            logger.notice("items or fields left out of a search answer", metadata: [
                "provider": "\(id.rawValue)", "page": "\(query.page)", "left_out": "\(page.notes.count)",
                "reasons": "\(page.notes.reasons.joined(separator: "; "))",
            ])
        }
        return page
    }

    /// One photo's details, by the provider's own id (without the `provider:` prefix).
    public func photo(id rawID: String) async throws -> ProviderPhoto {
        let request = try provider.photoRequest(id: rawID)
        return try await perform(request) { try self.provider.decodePhoto($0, id: rawID) }
    }

    /// Tells the provider a photo is being downloaded, where its guidelines require it
    /// (Unsplash); returns the URL the provider answered with, nil for providers without it.
    package func trackDownload(_ photo: ProviderPhoto) async throws -> String? {
        guard let request = try provider.downloadTrackingRequest(for: photo) else { return nil }
        return try await perform(request) { try self.provider.decodeDownloadTracking($0) }
    }

    /// The figures for `stats.providers`.
    public func statistics() -> ProviderStats { stats }

    private func perform<T: Sendable>(_ request: HTTPRequest, decode: @Sendable (HTTPResponse) throws -> T) async throws -> T {
        try await limiter.acquire()
        stats.requests += 1
        let response: HTTPResponse
        do {
            response = try await fetcher.fetch(request)
        } catch {
            stats.errors += 1
            throw ProviderErrors.scrub(error, secrets: provider.secrets)
        }
        if let quota = ProviderQuota(headers: response) {
            stats.rateLimitRemaining = quota.remaining ?? stats.rateLimitRemaining
            stats.rateLimitLimit = quota.limit ?? stats.rateLimitLimit
            if quota.isExhausted, quota.resetAfter != nil { await limiter.block(retryAfter: quota.resetAfter) }
        }
        do {
            return try decode(response)
        } catch var error as ProviderError {
            stats.errors += 1
            if error.kind == .rateLimited {
                await limiter.block(retryAfter: error.retryAfter)
                // Without a provider's hint, the limiter's pause is when asking again can help.
                if error.retryAfter == nil { error.retryAfter = await limiter.retryAfter() }
            } else if error.kind == .upstreamError, response.status >= 500, error.retryAfter == nil {
                // A 5xx stays `upstream_error` (a 503 is not a quota), with the server's hint.
                error.retryAfter = ProviderErrors.retryAfter(response)
            }
            throw error
        }
    }
}
