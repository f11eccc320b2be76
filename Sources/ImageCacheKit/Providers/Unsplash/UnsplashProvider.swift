import Foundation
import ImageCacheProtocol

/// Unsplash's API (`/search/photos`, `/photos?order_by=latest`, `/photos/:id`,
/// `/photos/:id/download`), authenticated with `Authorization: Client-ID <key>` and pinned to
/// `Accept-Version: v1`.
///
/// Its quota answer is the trap: a 403 whose body is the plain text `Rate Limit Exceeded`
/// under `Content-Type: application/json`, with `X-Ratelimit-Remaining: 0`. It maps to
/// `rate_limited`, never to a JSON decoding failure.
public struct UnsplashProvider: PhotoProvider {
    public let id = ProviderID.unsplash
    public let perPageRange = 1...30
    public let reachableResultsCap: Int? = nil
    public let settings: ProviderSettings

    public init(settings: ProviderSettings) { self.settings = settings }

    public var secrets: [String] { settings.usableKey.map { [$0] } ?? [] }

    public func searchRequest(for query: SearchQuery) throws -> HTTPRequest {
        let perPage = clampPerPage(query.perPage)
        let page = String(max(1, query.page))
        switch query.term {
        case .query(let text):
            return try request(path: "/search/photos", query: [
                ("query", text), ("page", page), ("per_page", String(perPage)),
                ("content_filter", query.safe ? "high" : "low"),
            ])
        case .recent:
            return try request(path: "/photos", query: [
                ("page", page), ("per_page", String(perPage)), ("order_by", "latest"),
            ])
        }
    }

    public func photoRequest(id photoID: String) throws -> HTTPRequest {
        guard URLBuilding.isPlainIdentifier(photoID) else { throw ProviderErrors.notFound(id, id: photoID) }
        return try request(path: "/photos/\(photoID)", query: [])
    }

    /// `links.download_location` as the answer gave it (it carries Unsplash's tracking
    /// parameters), else `/photos/:id/download` under `api_url`. The location is used only
    /// when it points at `api_url`'s own scheme, host and port: the request carries the key,
    /// which must never go to a host an answer merely names.
    public func downloadTrackingRequest(for photo: ProviderPhoto) throws -> HTTPRequest? {
        guard let key = settings.usableKey else { throw ProviderErrors.missingKey(id) }
        if let location = photo.downloadLocation, Self.sameOrigin(location, settings.apiURL) {
            return HTTPRequest(url: location, headers: headers(key: key), priority: .download)
        }
        let raw = String(photo.id.dropFirst(id.rawValue.count + 1))
        guard URLBuilding.isPlainIdentifier(raw) else { throw ProviderErrors.notFound(id, id: raw) }
        var request = try request(path: "/photos/\(raw)/download", query: [])
        request.priority = .download
        return request
    }

    public func decodeSearch(_ response: HTTPResponse, for query: SearchQuery) throws -> ProviderSearchPage {
        try checkStatus(response, photoID: nil)
        let perPage = clampPerPage(query.perPage)
        return try decoding(response) { json in
            switch query.term {
            case .query:
                let results = try json.requiredArray("results")
                let total = try json.requiredInt("total")
                let (photos, skipped, notes) = decodeList(results)
                var page = ProviderSearchPage(photos: photos, page: query.page, perPage: perPage, total: total,
                                              skipped: skipped)
                page.notes = notes
                return page
            case .recent:
                // The list endpoint answers a bare array; the total is in `X-Total`.
                guard let items = json.array else { throw LenientJSON.MissingField(field: "[photos]") }
                let (photos, skipped, notes) = decodeList(items)
                let total = response.header("X-Total").flatMap { Int($0) }
                    ?? ((query.page - 1) * perPage + items.count + (items.count == perPage ? 1 : 0))
                var page = ProviderSearchPage(photos: photos, page: query.page, perPage: perPage, total: total,
                                              skipped: skipped)
                page.notes = notes
                return page
            }
        }
    }

    public func decodePhoto(_ response: HTTPResponse, id photoID: String) throws -> ProviderPhoto {
        try checkStatus(response, photoID: photoID)
        return try decoding(response) { json in try UnsplashDecoding.photo(json, appName: settings.appName, details: true) }
    }

    /// Reads `{"url": …}`, the answer of the download-tracking endpoint.
    public func decodeDownloadTracking(_ response: HTTPResponse) throws -> String? {
        try decodeDownload(response)
    }

    /// Reads `{"url": …}`, the answer of the download-tracking endpoint.
    package func decodeDownload(_ response: HTTPResponse) throws -> String {
        try checkStatus(response, photoID: nil)
        return try decoding(response) { json in try json.requiredString("url") }
    }

    /// The photos of a list; an item that is not one (a missing `urls`, a non-object) is left
    /// out and noted, and the rest of the page is served.
    private func decodeList(_ items: [LenientJSON]) -> ([ProviderPhoto], Int, DecodeNotes) {
        var photos: [ProviderPhoto] = []
        var notes = DecodeNotes()
        var dropped = 0
        for (index, item) in items.enumerated() {
            do {
                photos.append(try UnsplashDecoding.photo(item, appName: settings.appName, details: false, notes: &notes))
            } catch {
                dropped += 1
                notes.add("item \(index): \(LenientJSON.reason(error))")
            }
        }
        return (photos, dropped, notes)
    }

    static func sameOrigin(_ a: String, _ b: String) -> Bool {
        guard let x = URLComponents(string: a), let y = URLComponents(string: b), x.host != nil else { return false }
        return x.scheme?.lowercased() == y.scheme?.lowercased() && x.host?.lowercased() == y.host?.lowercased()
            && x.port == y.port
    }

    private func headers(key: String) -> [(String, String)] {
        [("Authorization", "Client-ID \(key)"), ("Accept-Version", "v1"), ("Accept", "application/json")]
    }

    private func request(path: String, query: [(String, String)]) throws -> HTTPRequest {
        guard let key = settings.usableKey else { throw ProviderErrors.missingKey(id) }
        guard let url = URLBuilding.url(base: settings.apiURL, appendingPath: path, query: query) else {
            throw ProviderErrors.apiURLNotURL(id, settings.apiURL)
        }
        return HTTPRequest(url: url, headers: headers(key: key))
    }

    /// 401 → the key was refused; 403 with the quota body or no remaining quota → rate_limited;
    /// 404 → not_found for a photo, upstream_error for a listing (a wrong `api_url`).
    private func checkStatus(_ response: HTTPResponse, photoID: String?) throws {
        switch response.status {
        case 401:
            throw ProviderErrors.keyRefused(id, status: 401, body: response.body, secrets: secrets)
        case 403:
            let body = String(decoding: response.body.prefix(512), as: UTF8.self).lowercased()
            let quota = ProviderQuota(headers: response)
            if body.contains("rate limit") || quota?.isExhausted == true {
                throw ProviderErrors.rateLimited(id, retryAfter: ProviderErrors.retryAfter(response), status: 403)
            }
            throw ProviderErrors.upstream(id, status: 403, detail: errorsText(response) ?? "HTTP 403",
                                          body: response.body, secrets: secrets)
        case 404 where photoID != nil:
            throw ProviderErrors.notFound(id, id: photoID!)
        case 200..<300, 429:
            try checkCommonStatus(response)
        default:
            throw ProviderErrors.upstream(id, status: response.status,
                                          detail: errorsText(response) ?? "HTTP \(response.status)",
                                          body: response.body, secrets: secrets)
        }
    }

    /// Unsplash's `{"errors": ["…"]}`, joined, when the body has that shape.
    private func errorsText(_ response: HTTPResponse) -> String? {
        guard let json = try? LenientJSON.parse(response.body), let errors = json["errors"].array else { return nil }
        let texts = errors.compactMap(\.text)
        return texts.isEmpty ? nil : texts.joined(separator: "; ")
    }
}
