import Foundation

/// Unsplash's shapes: `Authorization: Client-ID` checked (401 with `{"errors": […]}`),
/// `X-Ratelimit-*` on every answer, and its real quota answer — a 403 whose body is the plain
/// text `Rate Limit Exceeded` under `Content-Type: application/json`.
enum UnsplashAPI {
    static let provider = "unsplash"

    static func handle(_ c: ProviderAPISimulator.Context) -> SimulatedResponse {
        guard let key = c.key, c.request.header("Authorization") == "Client-ID \(key)" else {
            return SimulatedJSON.response(["errors": ["OAuth error: The access token is invalid"]], status: 401)
        }
        let (ok, quota) = c.simulator.spend(provider)
        let quotaHeaders = quota.map { [("X-Ratelimit-Limit", String($0.limit)), ("X-Ratelimit-Remaining", String($0.remaining))] } ?? []
        guard ok else {
            return SimulatedResponse(status: 403, headers: [("Content-Type", "application/json")] + quotaHeaders,
                                     body: Array("Rate Limit Exceeded".utf8))
        }
        let path = String(c.request.path.dropFirst("/unsplash".count))
        let parts = path.split(separator: "/").map(String.init)
        let apiBase = "http://\(c.request.header("Host") ?? "127.0.0.1")/unsplash"
        let page = max(1, c.int("page") ?? 1)
        let perPage = min(30, max(1, c.int("per_page") ?? 10))

        switch parts.count {
        case 2 where parts == ["search", "photos"]:
            guard let query = c.query("query"), !query.isEmpty else {
                return SimulatedJSON.response(["errors": ["query is missing"]], status: 400, headers: quotaHeaders)
            }
            let total = c.totalOverride ?? SimulatedCatalog.defaultTotal(provider: provider, query: query)
            let results = indices(page: page, perPage: perPage, total: total).map { index -> [String: Any] in
                var object = photo(SimulatedCatalog.photoID(provider: provider, query: query, index: index), c,
                                   apiBase: apiBase, details: false)
                // Like the real search, a paid placement leads the first page.
                if index == 0 { object["sponsorship"] = sponsorship }
                return object
            }
            let totalPages = (total + perPage - 1) / perPage
            return SimulatedJSON.response(["total": total, "total_pages": totalPages, "results": results],
                                          headers: quotaHeaders + [("X-Total", String(total)), ("X-Per-Page", String(perPage))])
        case 1 where parts == ["photos"]:
            let feed = "feed:" + (c.query("order_by") ?? "latest")
            let total = SimulatedCatalog.defaultTotal(provider: provider, query: feed) * 50
            let list = indices(page: page, perPage: perPage, total: total).map {
                photo(SimulatedCatalog.photoID(provider: provider, query: feed, index: $0), c, apiBase: apiBase, details: false)
            }
            return SimulatedJSON.response(list, headers: quotaHeaders + [("X-Total", String(total)), ("X-Per-Page", String(perPage))])
        case 2 where parts[0] == "photos":
            guard SimulatedCatalog.isValidID(parts[1], provider: provider) else { return notFound(quotaHeaders) }
            return SimulatedJSON.response(photo(parts[1], c, apiBase: apiBase, details: true), headers: quotaHeaders)
        case 3 where parts[0] == "photos" && parts[2] == "download":
            guard SimulatedCatalog.isValidID(parts[1], provider: provider) else { return notFound(quotaHeaders) }
            let a = SimulatedCatalog.attributes(id: parts[1])
            let raw = SimulatedCatalog.imageURL(base: c.imageBase, width: a.width, height: a.height, seedHex: a.seedHex)
            return SimulatedJSON.response(["url": raw + "?fm=jpg&q=85"], headers: quotaHeaders)
        default:
            return SimulatedJSON.response(["errors": ["Couldn't find the page"]], status: 404, headers: quotaHeaders)
        }
    }

    /// The sponsor of the first result of every search (`SimulatedCatalog.unsplashSponsor`),
    /// in the shape Unsplash sends.
    static var sponsorship: [String: Any] {
        [
        "impression_urls": [String](), "tagline": "Made to change", "tagline_url": "https://example.com/sponsor",
        "sponsor": ["id": "sponsor1", "username": "sponsor", "name": SimulatedCatalog.unsplashSponsor],
        ]
    }

    static func notFound(_ headers: [(String, String)]) -> SimulatedResponse {
        SimulatedJSON.response(["errors": ["Couldn't find Photo"]], status: 404, headers: headers)
    }

    static func indices(page: Int, perPage: Int, total: Int) -> Range<Int> {
        let start = (page - 1) * perPage
        return start < total ? start..<min(total, start + perPage) : 0..<0
    }

    static func photo(_ id: String, _ c: ProviderAPISimulator.Context, apiBase: String, details: Bool) -> [String: Any] {
        let a = SimulatedCatalog.attributes(id: id)
        let raw = SimulatedCatalog.imageURL(base: c.imageBase, width: a.width, height: a.height, seedHex: a.seedHex)
        var object: [String: Any] = [
            "id": id,
            "created_at": ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(a.createdAtUnix))),
            "width": a.width, "height": a.height,
            // Like the real API: some photos have no description, only alternative text.
            "description": a.seed % 3 == 0 ? NSNull() : "A \(a.title) photograph" as Any,
            "alt_description": "\(a.title)",
            "urls": [
                "raw": raw, "full": raw + "?fm=jpg&q=85",
                "regular": raw + "?w=1080&fm=jpg&q=80", "small": raw + "?w=400&fm=jpg&q=80",
                "thumb": raw + "?w=200&fm=jpg&q=80",
            ],
            "links": [
                "self": "\(apiBase)/photos/\(id)", "html": "https://unsplash.com/photos/\(id)",
                "download": "https://unsplash.com/photos/\(id)/download",
                "download_location": "\(apiBase)/photos/\(id)/download?ixid=sim",
            ],
            "likes": a.likes,
            "user": [
                "id": a.authorID, "username": a.authorID, "name": a.author,
                "links": ["html": "https://unsplash.com/@\(a.authorID)"],
            ],
            "sponsorship": NSNull(),
        ]
        // Like the real API, the placeholders of the very image the simulator serves.
        if let placeholders = SyntheticImages.placeholders(width: a.width, height: a.height, seed: a.seed) {
            object["blur_hash"] = placeholders.blurHash
            object["color"] = placeholders.color
        }
        if details {
            object["views"] = a.views
            object["downloads"] = a.downloads
            object["exif"] = ["make": "Leica", "model": "M6", "exposure_time": "1/250", "aperture": "4",
                              "focal_length": "50.0", "iso": 400]
            object["location"] = ["city": "Lyon", "country": "France", "position": ["latitude": NSNull(), "longitude": NSNull()]]
            object["tags"] = a.tags.map { ["type": "search", "title": $0] }
        }
        return object
    }
}

extension ProviderAPISimulator {
    /// The photo ids whose Unsplash download-tracking endpoint (`/photos/:id/download`) was
    /// requested with the right `Authorization: Client-ID` key, in arrival order: what a test
    /// checks to prove a saved photo is reported exactly once, as Unsplash's API guidelines
    /// require.
    public func unsplashDownloadTracking() -> [String] {
        let key = state.withLock { $0.keys[UnsplashAPI.provider] }
        return requests(UnsplashAPI.provider).compactMap { request -> String? in
            let parts = request.path.split(separator: "/").map(String.init)
            guard parts.count == 4, parts[0] == "unsplash", parts[1] == "photos", parts[3] == "download",
                  let key, request.header("Authorization") == "Client-ID \(key)" else { return nil }
            return parts[2]
        }
    }
}
