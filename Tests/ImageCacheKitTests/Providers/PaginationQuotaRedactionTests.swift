import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing

@Suite("Pagination, quota headers and redaction", .timeLimit(.minutes(2)))
struct PaginationQuotaRedactionTests {
    @Test("totalPages is ceil(total / perPage) and hasMore stops at the last page", arguments: [
        (0, 20, 0), (1, 20, 1), (20, 20, 1), (21, 20, 2), (3364, 10, 337), (500, 30, 17),
    ])
    func totalPages(total: Int, perPage: Int, pages: Int) {
        #expect(Pagination.totalPages(total: total, perPage: perPage) == pages)
        let last = ProviderSearchPage(photos: [], page: pages, perPage: perPage, total: total)
        #expect(!last.hasMore)
        if pages > 1 { #expect(ProviderSearchPage(photos: [], page: pages - 1, perPage: perPage, total: total).hasMore) }
    }

    @Test("Flickr's total is capped at 4 000 and pages past it are known unreachable")
    func flickrCap() throws {
        let flickr = FlickrProvider(settings: CorpusAPI.settings(.flickr))
        let body = #"{"photos":{"page":1,"pages":1200,"perpage":100,"total":"120000","photo":[]},"stat":"ok"}"#
        let page = try flickr.decodeSearch(HTTPResponse(status: 200, headers: [], body: Array(body.utf8)),
                                           for: SearchQuery(term: .query("abc"), perPage: 100))
        #expect(page.total == 4000 && page.totalPages == 40)
        #expect(Pagination.isBeyondCap(page: 41, perPage: 100, cap: 4000))
        #expect(!Pagination.isBeyondCap(page: 40, perPage: 100, cap: 4000))
    }

    @Test("Quota headers are read case-insensitively", arguments: [
        ([("X-Ratelimit-Limit", "50"), ("X-Ratelimit-Remaining", "48")], 50, 48, nil),
        ([("x-ratelimit-limit", "100"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "12")], 100, 0, 12.0),
    ] as [([(String, String)], Int?, Int?, Double?)])
    func quotaHeaders(headers: [(String, String)], limit: Int?, remaining: Int?, reset: Double?) {
        let quota = ProviderQuota(headers: HTTPResponse(status: 200, headers: headers, body: []))
        #expect(quota == ProviderQuota(limit: limit, remaining: remaining, resetAfter: reset))
        #expect(quota?.isExhausted == (remaining == 0))
    }

    @Test("The recorded Unsplash headers give the remaining quota")
    func recordedQuota() throws {
        let quota = ProviderQuota(headers: try CorpusAPI.response("unsplash/unsplash_client_search_photos_test"))
        #expect(quota?.limit == 50 && quota?.remaining == 47)
        #expect(ProviderQuota(headers: HTTPResponse(status: 200, headers: [("Date", "x")], body: [])) == nil)
    }

    @Test("Secret query values and userinfo are redacted from URLs")
    func redactURL() {
        let url = "https://user:pw@pixabay.com/api/?key=SECRET1&q=cats&API_KEY=SECRET2&page=2"
        let r = URLRedaction.redact(url)
        #expect(!r.contains("SECRET1") && !r.contains("SECRET2") && !r.contains("pw"))
        #expect(r.contains("q=cats") && r.contains("page=2") && r.contains("key=REDACTED"))
    }

    @Test("Secrets are redacted from free text, raw and percent-encoded")
    func redactText() {
        let t = URLRedaction.redact(text: "failed GET http://h/rest?api_key=abc%2Bdef&x=1 with key a+b/c=long",
                                    secrets: ["a+b/c=long"])
        #expect(!t.contains("abc%2Bdef") && !t.contains("a+b/c=long"))
        #expect(t.contains("x=1"))
        #expect(URLRedaction.redact(text: "see a%2Bb%2Fc%3Dlong", secrets: ["a+b/c=long"]) == "see REDACTED")
    }

    @Test("Authorization headers are redacted for logs")
    func redactHeaders() {
        let h = URLRedaction.redact(headers: [("Authorization", "Client-ID s3cret"), ("Accept-Version", "v1")])
        #expect(h.map(\.1) == ["REDACTED", "v1"])
    }

    @Test("Provider settings never print their key")
    func settingsDescription() {
        let s = ProviderSettings(apiKey: "TOPSECRET", apiURL: "https://pixabay.com/api?key=TOPSECRET")
        #expect(!String(describing: s).contains("TOPSECRET"))
    }

    @Test("Unsplash raw URLs are resized to exactly the width asked, never past the original")
    func unsplashExactWidth() throws {
        let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash))
        let p = try unsplash.decodePhoto(try CorpusAPI.response("unsplash/unsplash_client_photo_vUGBY_MnSsg"), id: "vUGBY_MnSsg")
        let v = p.variant(forWidth: 256)
        let q = queryItems(v.url)
        #expect(q["w"] == "256" && q["fm"] == "jpg" && q["q"] == "80")
        #expect(q["ixid"] != nil) // the raw URL's own parameters stay
        #expect(v.width == 256 && v.height == 330)
        #expect(p.variant(forWidth: 9000).width == 5000)
    }
}
