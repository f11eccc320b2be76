import ImageCacheProtocol

/// Flickr's REST API (`flickr.photos.search`, `flickr.photos.getRecent`,
/// `flickr.photos.getInfo`), asked for JSON without the JSONP wrapper
/// (`format=json&nojsoncallback=1`).
///
/// Flickr fails with HTTP **200** and `{"stat":"fail","code":N,"message":…}`, sometimes under
/// `text/plain`, so the status line proves nothing: `stat` is checked on every answer. Code 100
/// (invalid key) → `provider_unavailable`; code 1 of `getInfo` (photo not found) → `not_found`;
/// any other → `upstream_error`. A search reaches at most 4 000 results however many it reports.
package struct FlickrProvider: PhotoProvider {
    public let id = ProviderID.flickr
    package let perPageRange = 1...500
    package let reachableResultsCap: Int? = 4_000
    public let settings: ProviderSettings

    /// The extras that give image URLs with their sizes, the owner's name, the description and
    /// the original's dimensions in the search answer itself.
    package static let extras = "description,owner_name,o_dims,views,media,path_alias,count_faves,date_upload,date_taken,tags,"
        + FlickrDecoding.sizes.map { "url_\($0.key)" }.joined(separator: ",")

    public init(settings: ProviderSettings) { self.settings = settings }

    package var secrets: [String] { settings.usableKey.map { [$0] } ?? [] }

    package func searchRequest(for query: SearchQuery) throws -> HTTPRequest {
        let perPage = String(clampPerPage(query.perPage))
        let page = String(max(1, query.page))
        switch query.term {
        case .query(let text):
            return try request(method: "flickr.photos.search", [
                ("text", text), ("page", page), ("per_page", perPage),
                ("safe_search", query.safe ? "1" : "3"), ("content_type", "1"), ("media", "photos"),
                ("sort", "relevance"), ("extras", Self.extras),
            ])
        case .recent:
            return try request(method: "flickr.photos.getRecent", [
                ("page", page), ("per_page", perPage), ("extras", Self.extras),
            ])
        }
    }

    package func photoRequest(id photoID: String) throws -> HTTPRequest {
        guard !photoID.isEmpty, photoID.count <= 32, photoID.allSatisfy(\.isASCII), photoID.allSatisfy(\.isNumber) else {
            throw ProviderErrors.notFound(id, id: photoID)
        }
        return try request(method: "flickr.photos.getInfo", [("photo_id", photoID)])
    }

    public func decodeSearch(_ response: HTTPResponse, for query: SearchQuery) throws -> ProviderSearchPage {
        try checkCommonStatus(response)
        let perPage = clampPerPage(query.perPage)
        return try decodingFlickr(response, photoID: nil) { json in
            let photos = json["photos"]
            guard photos.isObject else { throw LenientJSON.MissingField(field: "photos") }
            let items = try photos.requiredArray("photo", path: "photos.")
            let reported = try photos.requiredInt("total", path: "photos.")
            let total = Pagination.reachable(total: reported, cap: reachableResultsCap)
            // Past the last page Flickr answers the last page again: the protocol's answer there
            // is an empty page with the totals.
            if query.page > Pagination.totalPages(total: total, perPage: perPage) {
                return ProviderSearchPage(photos: [], page: query.page, perPage: perPage, total: total)
            }
            var decoded: [ProviderPhoto] = []
            var skipped = 0
            var notes = DecodeNotes()
            for (index, item) in items.enumerated() {
                // A video slips through `media=photos` in old answers: it is not a photo.
                if item["media"].text == "video" {
                    skipped += 1
                    notes.add("flickr:\(item["id"].text ?? "item \(index)"): a video in a photo search")
                    continue
                }
                do {
                    decoded.append(try FlickrDecoding.searchPhoto(item, notes: &notes))
                } catch {
                    skipped += 1
                    notes.add("item \(index): \(LenientJSON.reason(error))")
                }
            }
            var page = ProviderSearchPage(photos: decoded, page: query.page, perPage: perPage, total: total, skipped: skipped)
            page.notes = notes
            return page
        }
    }

    package func decodePhoto(_ response: HTTPResponse, id photoID: String) throws -> ProviderPhoto {
        try checkCommonStatus(response)
        return try decodingFlickr(response, photoID: photoID) { json in try FlickrDecoding.infoPhoto(json["photo"]) }
    }

    private func request(method: String, _ items: [(String, String)]) throws -> HTTPRequest {
        guard let key = settings.usableKey else { throw ProviderErrors.missingKey(id) }
        let query = [("method", method), ("api_key", key)] + items + [("format", "json"), ("nojsoncallback", "1")]
        guard let url = URLBuilding.url(base: settings.apiURL, query: query) else {
            throw ProviderErrors.apiURLNotURL(id, settings.apiURL)
        }
        return HTTPRequest(url: url, headers: [("Accept", "application/json")])
    }

    /// Checks `stat` before anything else; tolerates the JSONP wrapper if a proxy or an old
    /// endpoint adds it despite `nojsoncallback=1`.
    private func decodingFlickr<T>(_ response: HTTPResponse, photoID: String?, _ body: (LenientJSON) throws -> T) throws -> T {
        var unwrapped = response
        unwrapped.body = FlickrDecoding.stripJSONP(response.body)
        return try decoding(unwrapped) { json in
            let stat = try json.requiredString("stat")
            if stat != "ok" {
                let code = json["code"].int
                let message = json["message"].text ?? "stat \(stat)"
                switch code {
                case 100:
                    throw ProviderErrors.keyRefused(id, status: response.status, body: response.body, secrets: secrets)
                case 1 where photoID != nil:
                    throw ProviderErrors.notFound(id, id: photoID!)
                default:
                    throw ProviderErrors.upstream(id, status: response.status,
                                                  detail: "code \(code.map(String.init) ?? "?"): \(message)",
                                                  body: response.body, secrets: secrets)
                }
            }
            return try body(json)
        }
    }
}
