import ImageCacheProtocol

/// One photo provider's API: how to ask it for things and how to read its answers.
///
/// Pure functions of requests and responses, with no I/O of their own, so every rule (URL
/// building, clamping, decoding, error mapping) is tested against real recorded answers
/// without a network; `ProviderClient` adds the fetching, quota and rate limiting.
public protocol PhotoProvider: Sendable {
    var id: ProviderID { get }
    /// The `per_page` values the API accepts; `perPage` is clamped into it.
    var perPageRange: ClosedRange<Int> { get }
    /// The results any query can reach by paging (Flickr 4 000, Pixabay 500), nil if unbounded.
    var reachableResultsCap: Int? { get }

    /// The request for one page. Throws `provider_unavailable` when no key is configured.
    func searchRequest(for query: SearchQuery) throws -> HTTPRequest
    /// Reads a search answer, or throws the error kind it really means.
    func decodeSearch(_ response: HTTPResponse, for query: SearchQuery) throws -> ProviderSearchPage
    /// The request for one photo's details (`photo.get`), by the provider's own id.
    /// Throws `not_found` for an id the provider could never have issued.
    func photoRequest(id: String) throws -> HTTPRequest
    /// Reads a details answer.
    func decodePhoto(_ response: HTTPResponse, id: String) throws -> ProviderPhoto
    /// The download-tracking call the provider's guidelines require, if any (Unsplash).
    func downloadTrackingRequest(for photo: ProviderPhoto) throws -> HTTPRequest?
    /// Reads the answer of that call: the image URL it gives, if any.
    func decodeDownloadTracking(_ response: HTTPResponse) throws -> String?
    /// The secrets this provider sends, so errors and logs can scrub them.
    var secrets: [String] { get }
}

extension PhotoProvider {
    /// `perPage` clamped into the provider's range (nil → a default of 20, inside every range).
    package func clampPerPage(_ perPage: Int?) -> Int {
        min(max(perPage ?? 20, perPageRange.lowerBound), perPageRange.upperBound)
    }

    package func downloadTrackingRequest(for photo: ProviderPhoto) throws -> HTTPRequest? { nil }

    package func decodeDownloadTracking(_ response: HTTPResponse) throws -> String? { nil }

    /// Builds `Photo.id` from the provider's own id.
    func photoID(_ raw: String) -> String { "\(id.rawValue):\(raw)" }

    /// Runs a decoder, turning its "required field missing" / "not JSON" into `upstream_error`.
    func decoding<T>(_ response: HTTPResponse, _ body: (LenientJSON) throws -> T) throws -> T {
        let json: LenientJSON
        do {
            json = try LenientJSON.parse(response.body)
        } catch {
            throw ProviderErrors.notJSON(id, status: response.status, body: response.body, secrets: secrets)
        }
        do {
            return try body(json)
        } catch let missing as LenientJSON.MissingField {
            throw ProviderErrors.missingField(id, field: missing.field, status: response.status,
                                              body: response.body, secrets: secrets)
        }
    }

    /// The statuses every provider shares: 429 → `rate_limited` (with `Retry-After` or the
    /// quota reset), 5xx and other non-2xx → `upstream_error` with a redacted excerpt.
    func checkCommonStatus(_ response: HTTPResponse) throws {
        if response.status == 429 {
            let retry = ProviderErrors.retryAfter(response) ?? ProviderQuota(headers: response)?.resetAfter
            throw ProviderErrors.rateLimited(id, retryAfter: retry, status: 429)
        }
        guard (200..<300).contains(response.status) else {
            throw ProviderErrors.upstream(id, status: response.status, detail: "HTTP \(response.status)",
                                          body: response.body, secrets: secrets)
        }
    }
}

/// The provider implementation for an id, with its settings.
package func makePhotoProvider(_ id: ProviderID, settings: ProviderSettings) -> any PhotoProvider {
    switch id {
    case .unsplash: return UnsplashProvider(settings: settings)
    case .flickr: return FlickrProvider(settings: settings)
    case .pixabay: return PixabayProvider(settings: settings)
    }
}
