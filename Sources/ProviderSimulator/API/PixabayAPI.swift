import Foundation

/// Pixabay's shapes: `key` checked (plain-text `[ERROR 400] Invalid or missing API key`),
/// `X-RateLimit-Limit/Remaining/Reset` on every answer, 429 `API rate limit exceeded` when the
/// quota is spent, `totalHits` capped at 500 and pages beyond it refused, `per_page` 3–200 and
/// `q` ≤ 100 characters enforced like the real API.
enum PixabayAPI {
    static let provider = "pixabay"

    static func handle(_ c: ProviderAPISimulator.Context) -> SimulatedResponse {
        guard c.request.path == "/pixabay/api/" || c.request.path == "/pixabay/api" else {
            return .text("not found", status: 404)
        }
        guard let key = c.key, c.query("key") == key else {
            return .text("[ERROR 400] Invalid or missing API key", status: 400)
        }
        let (ok, quota) = c.simulator.spend(provider)
        let headers = quota.map {
            [("X-RateLimit-Limit", String($0.limit)), ("X-RateLimit-Remaining", String($0.remaining)),
             ("X-RateLimit-Reset", String($0.resetAfter))]
        } ?? []
        guard ok else {
            var r = SimulatedResponse.text("API rate limit exceeded", status: 429)
            r.headers += headers
            return r
        }
        func error(_ text: String) -> SimulatedResponse {
            var r = SimulatedResponse.text("[ERROR 400] \(text)", status: 400)
            r.headers += headers
            return r
        }
        if let id = c.query("id") {
            let hits = SimulatedCatalog.isValidID(id, provider: provider) ? [hit(id, c)] : []
            return SimulatedJSON.response(["total": hits.count, "totalHits": hits.count, "hits": hits], headers: headers)
        }
        let page = c.int("page") ?? 1
        let perPage = c.int("per_page") ?? 20
        guard (3...200).contains(perPage) else { return error("\"per_page\" is out of valid range.") }
        let q = c.query("q") ?? ""
        guard q.count <= 100 else { return error("\"q\" exceeds the maximum length of 100 characters.") }
        let catalogQuery = q.isEmpty ? "feed:" + (c.query("order") ?? "popular") : q
        let total = c.totalOverride ?? SimulatedCatalog.defaultTotal(provider: provider, query: catalogQuery)
        let totalHits = min(total, 500)
        let start = (page - 1) * perPage
        guard page >= 1, start < max(totalHits, 1) else { return error("\"page\" is out of valid range.") }
        let hits = (start..<min(totalHits, start + perPage)).map {
            hit(SimulatedCatalog.photoID(provider: provider, query: catalogQuery, index: $0), c)
        }
        return SimulatedJSON.response(["total": total, "totalHits": totalHits, "hits": hits], headers: headers)
    }

    static func hit(_ id: String, _ c: ProviderAPISimulator.Context) -> [String: Any] {
        let a = SimulatedCatalog.attributes(id: id)
        let (pw, ph) = SimulatedCatalog.fit(a.width, a.height, longestEdge: 150)
        let (ww, wh) = SimulatedCatalog.fit(a.width, a.height, longestEdge: 640)
        let (lw, lh) = SimulatedCatalog.fit(a.width, a.height, longestEdge: 1280)
        let userID = Int(SimulatedCatalog.hash(a.authorID) % 9_000_000)
        return [
            "id": Int(id) ?? 0, "pageURL": "https://pixabay.com/photos/\(a.tags[0])-\(id)/", "type": "photo",
            "tags": a.tags.joined(separator: ", "),
            "previewURL": SimulatedCatalog.imageURL(base: c.imageBase, width: pw, height: ph, seedHex: a.seedHex),
            "previewWidth": pw, "previewHeight": ph,
            "webformatURL": SimulatedCatalog.imageURL(base: c.imageBase, width: ww, height: wh, seedHex: a.seedHex),
            "webformatWidth": ww, "webformatHeight": wh,
            "largeImageURL": SimulatedCatalog.imageURL(base: c.imageBase, width: lw, height: lh, seedHex: a.seedHex),
            "imageWidth": a.width, "imageHeight": a.height, "imageSize": a.width * a.height / 4,
            "views": a.views, "downloads": a.downloads, "collections": a.likes / 3, "likes": a.likes, "comments": 3,
            "user_id": userID, "user": a.authorID, "userImageURL": "",
        ]
    }
}
