import Foundation

/// Flickr's REST shapes: every answer HTTP 200, failures as `{"stat":"fail","code":N,…}`
/// (the invalid-key one under `text/plain`, as recorded), the JSONP wrapper unless
/// `nojsoncallback=1`, `total` as a string in searches, widths and heights that mix strings and
/// numbers, `url_h`/`url_k` under a second secret, and no results past the 4 000th.
enum FlickrAPI {
    static let provider = "flickr"
    static let cap = 4_000

    static func handle(_ c: ProviderAPISimulator.Context) -> SimulatedResponse {
        guard c.request.path == "/flickr/services/rest" || c.request.path == "/flickr/services/rest/" else {
            return .text("not found", status: 404)
        }
        guard let key = c.key, c.query("api_key") == key else {
            return fail(c, code: 100, message: "Invalid API Key (Key has invalid format)", contentType: "text/plain; charset=utf-8")
        }
        let page = max(1, c.int("page") ?? 1)
        let perPage = min(500, max(1, c.int("per_page") ?? 100))
        switch c.query("method") ?? "" {
        case "flickr.photos.search":
            guard let text = c.query("text"), !text.isEmpty else {
                return fail(c, code: 3, message: "Parameterless searches have been disabled. Please use flickr.photos.getRecent instead.")
            }
            let total = c.totalOverride ?? SimulatedCatalog.defaultTotal(provider: provider, query: text)
            return list(c, query: text, page: page, perPage: perPage, total: total, totalAsString: true)
        case "flickr.photos.getRecent":
            return list(c, query: "feed:recent", page: page, perPage: perPage, total: 1_000, totalAsString: false)
        case "flickr.photos.getInfo":
            guard let id = c.query("photo_id"), SimulatedCatalog.isValidID(id, provider: provider) else {
                return fail(c, code: 1, message: "Photo not found")
            }
            return ok(c, ["photo": info(id, c)])
        default:
            return fail(c, code: 112, message: "Method \"\(c.query("method") ?? "")\" not found")
        }
    }

    static func ok(_ c: ProviderAPISimulator.Context, _ object: [String: Any]) -> SimulatedResponse {
        var o = object
        o["stat"] = "ok"
        return wrap(c, SimulatedJSON.response(o))
    }

    static func fail(_ c: ProviderAPISimulator.Context, code: Int, message: String,
                     contentType: String = "application/json") -> SimulatedResponse {
        wrap(c, SimulatedJSON.response(["stat": "fail", "code": code, "message": message], contentType: contentType))
    }

    /// `jsonFlickrApi(…)` unless the client asked for bare JSON.
    static func wrap(_ c: ProviderAPISimulator.Context, _ response: SimulatedResponse) -> SimulatedResponse {
        guard c.query("nojsoncallback") != "1" else { return response }
        var r = response
        r.body = Array("jsonFlickrApi(".utf8) + r.body + Array(")".utf8)
        return r
    }

    static func list(_ c: ProviderAPISimulator.Context, query: String, page: Int, perPage: Int, total: Int,
                     totalAsString: Bool) -> SimulatedResponse {
        let start = (page - 1) * perPage
        let end = min(total, cap, start + perPage)
        let photos = start < end ? (start..<end).map {
            photo(SimulatedCatalog.photoID(provider: provider, query: query, index: $0), c)
        } : []
        let pages = (total + perPage - 1) / perPage
        return ok(c, ["photos": ["page": page, "pages": pages, "perpage": perPage,
                                 "total": totalAsString ? String(total) as Any : total as Any, "photo": photos]])
    }

    /// Flickr's size letters, URL suffixes and longest edges (t s n m z c l h k).
    static let sizes: [(String, Int)] = [("t", 100), ("s", 240), ("n", 320), ("m", 500), ("z", 640), ("c", 800),
                                         ("l", 1024), ("h", 1600), ("k", 2048)]

    static func secret(_ seed: UInt64, _ salt: UInt64) -> String {
        String(String(SimulatedCatalog.mix(seed &+ salt), radix: 16).prefix(10))
    }

    static func owner(_ a: SimulatedCatalog.PhotoAttributes) -> String {
        "\(10_000_000 + SimulatedCatalog.hash(a.authorID) % 89_999_999)@N0\(SimulatedCatalog.hash(a.author) % 8)"
    }

    static func photo(_ id: String, _ c: ProviderAPISimulator.Context) -> [String: Any] {
        let a = SimulatedCatalog.attributes(id: id)
        var o: [String: Any] = [
            "id": id, "owner": owner(a), "secret": secret(a.seed, 1), "server": "65535", "farm": 66,
            "title": a.title, "ispublic": 1, "isfriend": 0, "isfamily": 0,
            "ownername": a.author, "description": ["_content": a.seed % 3 == 0 ? "" : "A \(a.title) photograph"],
            "o_width": String(a.width), "o_height": String(a.height), "views": String(a.views),
            "media": "photo", "media_status": "ready", "pathalias": NSNull(),
        ]
        let extras = Set((c.query("extras") ?? "").split(separator: ",").map(String.init))
        if extras.contains("tags") { o["tags"] = a.tags.joined(separator: " ") }
        if extras.contains("date_upload") { o["dateupload"] = String(a.createdAtUnix) }
        if extras.contains("date_taken") {
            o["datetaken"] = takenText(a)
            o["datetakengranularity"] = 0
            o["datetakenunknown"] = "0"
        }
        for (i, (letter, edge)) in sizes.enumerated() where edge < max(a.width, a.height) || letter == "t" {
            let (w, h) = SimulatedCatalog.fit(a.width, a.height, longestEdge: edge)
            o["url_\(letter)"] = SimulatedCatalog.imageURL(base: c.imageBase, width: w, height: h, seedHex: a.seedHex)
            // Real answers mix strings and numbers for sizes.
            o["width_\(letter)"] = i % 2 == 0 ? String(w) as Any : w as Any
            o["height_\(letter)"] = i % 3 == 0 ? h as Any : String(h) as Any
        }
        return o
    }

    /// `datetaken` as Flickr writes it: the camera's clock, no zone.
    static func takenText(_ a: SimulatedCatalog.PhotoAttributes) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(SimulatedCatalog.takenUnix(a))))
    }

    static func info(_ id: String, _ c: ProviderAPISimulator.Context) -> [String: Any] {
        let a = SimulatedCatalog.attributes(id: id)
        let nsid = owner(a)
        return [
            "media": id == SimulatedCatalog.flickrVideoID ? "video" : "photo",
            "id": id, "secret": secret(a.seed, 1), "server": "65535", "farm": 66,
            "dateuploaded": String(a.createdAtUnix), "originalsecret": secret(a.seed, 2), "originalformat": "jpg",
            "owner": ["nsid": nsid, "username": a.authorID, "realname": a.author, "location": ""],
            "title": ["_content": a.title],
            "description": ["_content": a.seed % 3 == 0 ? "" : "A \(a.title) photograph"],
            "dates": ["posted": String(a.createdAtUnix), "taken": takenText(a), "takengranularity": "0", "takenunknown": "0"],
            "views": String(a.views),
            "tags": ["tag": a.tags.map { ["id": "t-\($0)", "raw": $0, "_content": $0] }],
            "location": ["locality": ["_content": "Lyon"], "country": ["_content": "France"]],
            "urls": ["url": [["type": "photopage", "_content": "https://www.flickr.com/photos/\(nsid)/\(id)/"]]],
        ]
    }
}
