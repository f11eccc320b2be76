import Foundation
import ImageCacheProtocol

/// Pixabay's image API (`/api/?key=…&q=…&image_type=photo`).
///
/// Pixabay reports `total` but lets a client page through only `totalHits` (at most 500), so
/// `total` here is `totalHits`. Its errors are plain text (`[ERROR 400] Invalid or missing API
/// key`), its quota answer a 429 "API rate limit exceeded" with `X-RateLimit-Reset`. Its terms
/// ask that results be cached for 24 hours, which `search_ttl` defaults to.
package struct PixabayProvider: PhotoProvider {
    public let id = ProviderID.pixabay
    package let perPageRange = 3...200
    package let reachableResultsCap: Int? = 500
    public let settings: ProviderSettings
    /// Pixabay refuses a `q` longer than this.
    package static let maxQueryLength = 100

    public init(settings: ProviderSettings) { self.settings = settings }

    package var secrets: [String] { settings.usableKey.map { [$0] } ?? [] }

    package func searchRequest(for query: SearchQuery) throws -> HTTPRequest {
        var items: [(String, String)] = []
        switch query.term {
        case .query(let text):
            items.append(("q", Self.limitQuery(text)))
        case .recent:
            items.append(("order", "latest"))
        }
        items += [
            ("image_type", "photo"), ("page", String(max(1, query.page))),
            ("per_page", String(clampPerPage(query.perPage))), ("safesearch", query.safe ? "true" : "false"),
        ]
        return try request(items)
    }

    package func photoRequest(id photoID: String) throws -> HTTPRequest {
        guard !photoID.isEmpty, photoID.count <= 20, photoID.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw ProviderErrors.notFound(id, id: photoID)
        }
        return try request([("id", photoID)])
    }

    /// A query cut to 100 characters at a word boundary when there is one, so the request is
    /// accepted rather than refused; the cut never splits a grapheme cluster.
    static func limitQuery(_ text: String) -> String {
        guard text.count > maxQueryLength else { return text }
        let cut = text.prefix(maxQueryLength)
        if let space = cut.lastIndex(of: " "), cut.distance(from: cut.startIndex, to: space) >= maxQueryLength / 2 {
            return String(cut[..<space])
        }
        return String(cut)
    }

    public func decodeSearch(_ response: HTTPResponse, for query: SearchQuery) throws -> ProviderSearchPage {
        let perPage = clampPerPage(query.perPage)
        if Self.isPageOutOfRange(response) {
            // Past the last page Pixabay answers 400 without its totals: an empty page whose
            // totals the caller learns from page 1 (`needsTotals`).
            var page = ProviderSearchPage(photos: [], page: query.page, perPage: perPage, total: 0)
            page.needsTotals = true
            return page
        }
        try checkStatus(response)
        return try decoding(response) { json in
            let hits = try json.requiredArray("hits")
            let totalHits = try json.requiredInt("totalHits")
            var photos: [ProviderPhoto] = []
            var skipped = 0
            var notes = DecodeNotes()
            for (index, hit) in hits.enumerated() {
                do {
                    photos.append(try PixabayDecoding.photo(hit, notes: &notes))
                } catch {
                    skipped += 1
                    notes.add("item \(index): \(LenientJSON.reason(error))")
                }
            }
            var page = ProviderSearchPage(photos: photos, page: query.page, perPage: perPage,
                                          total: Pagination.reachable(total: totalHits, cap: reachableResultsCap),
                                          skipped: skipped)
            page.notes = notes
            return page
        }
    }

    /// Pixabay's answer to a page past the end: `[ERROR 400] "page" is out of valid range.`
    static func isPageOutOfRange(_ response: HTTPResponse) -> Bool {
        guard response.status == 400 else { return false }
        return String(decoding: response.body.prefix(512), as: UTF8.self).lowercased().contains("out of valid range")
    }

    package func decodePhoto(_ response: HTTPResponse, id photoID: String) throws -> ProviderPhoto {
        try checkStatus(response)
        return try decoding(response) { json in
            let hits = try json.requiredArray("hits")
            guard let hit = hits.first else { throw ProviderErrors.notFound(id, id: photoID) }
            return try PixabayDecoding.photo(hit)
        }
    }

    private func request(_ items: [(String, String)]) throws -> HTTPRequest {
        guard let key = settings.usableKey else { throw ProviderErrors.missingKey(id) }
        // The API lives at `/api/`; without the slash Pixabay redirects.
        guard let url = URLBuilding.url(base: settings.apiURL.hasSuffix("/") ? settings.apiURL : settings.apiURL + "/",
                                        query: [("key", key)] + items) else {
            throw ProviderErrors.apiURLNotURL(id, settings.apiURL)
        }
        return HTTPRequest(url: url, headers: [("Accept", "application/json")])
    }

    /// Plain-text errors: one naming the key → `provider_unavailable`; 429 → `rate_limited`
    /// with the window's reset; anything else → `upstream_error` quoting the text.
    private func checkStatus(_ response: HTTPResponse) throws {
        guard !(200..<300).contains(response.status) else { return }
        let text = String(decoding: response.body.prefix(512), as: UTF8.self)
        if response.status == 429 || text.lowercased().contains("rate limit") {
            let retry = ProviderErrors.retryAfter(response) ?? ProviderQuota(headers: response)?.resetAfter
            throw ProviderErrors.rateLimited(id, retryAfter: retry, status: response.status)
        }
        if text.lowercased().contains("api key") {
            throw ProviderErrors.keyRefused(id, status: response.status, body: response.body, secrets: secrets)
        }
        throw ProviderErrors.upstream(id, status: response.status,
                                      detail: text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                                          ? "HTTP \(response.status)" : String(text.prefix(120)),
                                      body: response.body, secrets: secrets)
    }
}
