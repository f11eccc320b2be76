import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Provider errors map to the contract's kinds as they really come", .timeLimit(.minutes(2)))
struct ErrorMappingTests {
    static let key = "secret-key-ABCDEF123456"
    let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash, key: key))
    let flickr = FlickrProvider(settings: CorpusAPI.settings(.flickr, key: key))
    let pixabay = PixabayProvider(settings: CorpusAPI.settings(.pixabay, key: key))
    let query = SearchQuery(term: .query("cats"), perPage: 20)

    func text(_ status: Int, _ body: String, headers: [(String, String)] = [("Content-Type", "text/plain")]) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
    }

    @Test("Unsplash 401 (recorded) means the key was refused")
    func unsplash401() throws {
        let e = rpcError { _ = try unsplash.decodeSearch(try CorpusAPI.response("unsplash/unsplash-php_error_401_invalid_token"), for: query) }
        #expect(e?.kind == .providerUnavailable)
        #expect(e?.message.contains("UNSPLASH_ACCESS_KEY") == true)
        #expect(e?.data.status == 401)
    }

    @Test("Unsplash 404 (recorded) is not_found for a photo and upstream_error for a listing")
    func unsplash404() throws {
        let response = try CorpusAPI.response("unsplash/unsplash-php_error_404_user_not_found")
        #expect(rpcError { _ = try unsplash.decodePhoto(response, id: "abc") }?.kind == .notFound)
        let listing = rpcError { _ = try unsplash.decodeSearch(response, for: query) }
        #expect(listing?.kind == .upstreamError)
        #expect(listing?.message.contains("Couldn't find User") == true)
        #expect(listing?.data.status == 404)
    }

    @Test("Unsplash's 403 plain-text quota answer under a JSON content type is rate_limited")
    func unsplash403RateLimit() throws {
        let response = try CorpusAPI.response("unsplash/unsplash-php_error_403_rate_limit_exceeded")
        #expect(response.header("content-type") == "application/json")
        let e = rpcError { _ = try unsplash.decodeSearch(response, for: query) }
        #expect(e?.kind == .rateLimited)
        #expect(e?.code == 1004)
    }

    @Test("Unsplash 403 without the quota text or header stays an upstream error")
    func unsplash403Other() {
        let e = rpcError { _ = try unsplash.decodeSearch(text(403, #"{"errors":["Forbidden"]}"#), for: query) }
        #expect(e?.kind == .upstreamError)
    }

    @Test("Unsplash 429 carries Retry-After as retryAfter")
    func unsplash429() {
        let e = rpcError { _ = try unsplash.decodeSearch(text(429, "slow down", headers: [("Retry-After", "42")]), for: query) }
        #expect(e?.kind == .rateLimited)
        #expect(e?.data.retryAfter == 42)
    }

    @Test("Flickr code 100 with HTTP 200 and text/plain (recorded) is provider_unavailable")
    func flickrInvalidKey() throws {
        let response = try CorpusAPI.response("flickr/flickrie_error_100_invalid_api_key")
        #expect(response.status == 200)
        let e = rpcError { _ = try flickr.decodeSearch(response, for: query) }
        #expect(e?.kind == .providerUnavailable)
        #expect(e?.message.contains("FLICKR_API_KEY") == true)
    }

    @Test("Other Flickr stat=fail codes (recorded code 1) are upstream errors in a search, not_found in getInfo")
    func flickrOtherFailure() throws {
        let response = try CorpusAPI.response("flickr/flickrie_error_1_photoset_not_found")
        let e = rpcError { _ = try flickr.decodeSearch(response, for: query) }
        #expect(e?.kind == .upstreamError)
        #expect(e?.message.contains("Photoset not found") == true)
        #expect(rpcError { _ = try flickr.decodePhoto(response, id: "123") }?.kind == .notFound)
    }

    @Test("Flickr answers wrapped as JSONP are unwrapped")
    func flickrJSONP() throws {
        let body = #"jsonFlickrApi({"photos":{"page":1,"pages":1,"perpage":20,"total":1,"photo":[{"id":"1","secret":"s","server":"2"}]},"stat":"ok"})"#
        let page = try flickr.decodeSearch(text(200, body), for: query)
        #expect(page.photos.map(\.id) == ["flickr:1"])
    }

    @Test("Pixabay plain-text key error is provider_unavailable")
    func pixabayKey() {
        let e = rpcError { _ = try pixabay.decodeSearch(text(400, "[ERROR 400] Invalid or missing API key"), for: query) }
        #expect(e?.kind == .providerUnavailable)
        #expect(e?.message.contains("PIXABAY_API_KEY") == true)
    }

    @Test("Pixabay 429 'API rate limit exceeded' is rate_limited with the window's reset")
    func pixabay429() {
        let e = rpcError {
            _ = try pixabay.decodeSearch(text(429, "API rate limit exceeded",
                                              headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "37")]), for: query)
        }
        #expect(e?.kind == .rateLimited)
        #expect(e?.data.retryAfter == 37)
    }

    @Test("Other Pixabay plain-text errors are upstream errors quoting the text")
    func pixabayOther() {
        let e = rpcError { _ = try pixabay.decodeSearch(text(400, "[ERROR 400] \"per_page\" is too large."), for: query) }
        #expect(e?.kind == .upstreamError)
        #expect(e?.data.body?.contains("is too large") == true)
    }

    @Test("A 5xx is an upstream error with its status", arguments: [500, 502, 503])
    func serverErrors(status: Int) {
        for decode in [{ _ = try unsplash.decodeSearch(text(status, "oops"), for: query) },
                       { _ = try flickr.decodeSearch(text(status, "oops"), for: query) },
                       { _ = try pixabay.decodeSearch(text(status, "oops"), for: query) }] as [() throws -> Void] {
            let e = rpcError(decode)
            #expect(e?.kind == .upstreamError)
            #expect(e?.data.status == status)
        }
    }

    @Test("A 200 body that is not JSON is an upstream error with a redacted excerpt")
    func notJSON() {
        let body = "<html>proxy error for https://x/?api_key=\(Self.key)&q=1</html>"
        for decode in [{ _ = try unsplash.decodeSearch(text(200, body), for: query) },
                       { _ = try flickr.decodeSearch(text(200, body), for: query) },
                       { _ = try pixabay.decodeSearch(text(200, body), for: query) }] as [() throws -> Void] {
            let e = rpcError(decode)
            #expect(e?.kind == .upstreamError)
            #expect(e?.data.body?.contains("proxy error") == true)
            #expect(e?.data.body?.contains(Self.key) == false)
            #expect(e?.message.contains(Self.key) == false)
        }
    }

    @Test("JSON without the required fields is an upstream error naming the field")
    func missingRequired() {
        let e = rpcError { _ = try unsplash.decodeSearch(text(200, #"{"results":[]}"#), for: query) }
        #expect(e?.kind == .upstreamError)
        #expect(e?.message.contains("'total'") == true)
        let f = rpcError { _ = try flickr.decodeSearch(text(200, #"{"stat":"ok"}"#), for: query) }
        #expect(f?.message.contains("'photos'") == true)
        let p = rpcError { _ = try pixabay.decodeSearch(text(200, #"{"total":1,"hits":[]}"#), for: query) }
        #expect(p?.message.contains("'totalHits'") == true)
    }

    @Test("A missing key is provider_unavailable naming the config key and the variable", arguments: ProviderID.allCases)
    func missingKey(provider: ProviderID) {
        let p = makePhotoProvider(provider, settings: CorpusAPI.settings(provider, key: "  "))
        let e = rpcError { _ = try p.searchRequest(for: SearchQuery(term: .query("cats"), perPage: 20)) }
        #expect(e?.kind == .providerUnavailable)
        #expect(e?.message.contains(provider.configKey) == true)
        #expect(e?.message.contains(provider.environmentVariable) == true)
    }

    @Test("An api_url that is not a URL is provider_unavailable", arguments: ProviderID.allCases)
    func badAPIURL(provider: ProviderID) {
        let p = makePhotoProvider(provider, settings: CorpusAPI.settings(provider, key: Self.key, apiURL: "not a url"))
        let e = rpcError { _ = try p.searchRequest(for: query) }
        #expect(e?.kind == .providerUnavailable)
        #expect(e?.message.contains("api_url") == true)
    }

    @Test("Retry-After in its HTTP-date form is converted to seconds")
    func retryAfterDate() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date().addingTimeInterval(120))
        let e = rpcError { _ = try unsplash.decodeSearch(text(429, "", headers: [("Retry-After", date)]), for: query) }
        #expect(e?.kind == .rateLimited)
        #expect((e?.data.retryAfter ?? 0) > 60 && (e?.data.retryAfter ?? 0) <= 120)
    }

    @Test("The Unsplash list endpoint answering an object instead of an array is an upstream error")
    func unsplashListShape() {
        let e = rpcError { _ = try unsplash.decodeSearch(text(200, #"{"results": []}"#), for: SearchQuery(term: .recent, perPage: 10)) }
        #expect(e?.kind == .upstreamError)
    }

    @Test("Photo ids a provider could never issue are not_found before any request")
    func impossibleIDs() {
        #expect(rpcError { _ = try unsplash.photoRequest(id: "../../etc") }?.kind == .notFound)
        #expect(rpcError { _ = try flickr.photoRequest(id: "12a") }?.kind == .notFound)
        #expect(rpcError { _ = try pixabay.photoRequest(id: "１２") }?.kind == .notFound)
    }
}
