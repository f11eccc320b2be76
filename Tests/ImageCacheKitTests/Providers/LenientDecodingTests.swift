import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Decoding is tolerant of what answers contain and strict about what a photo needs", .timeLimit(.minutes(1)))
struct LenientDecodingTests {
    let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash))
    let query = SearchQuery(term: .query("abc"), perPage: 10)

    func page(_ results: String, total: String = "2") throws -> ProviderSearchPage {
        let body = #"{"total": \#(total), "total_pages": 1, "results": [\#(results)], "brand_new_field": {"x": [1, 2]}}"#
        return try unsplash.decodeSearch(HTTPResponse(status: 200, headers: [], body: Array(body.utf8)), for: query)
    }

    static let urls = #""urls": {"raw": "https://i/r", "full": "https://i/f", "thumb": "https://i/t", "small": null}"#

    @Test("Numbers as strings, 0 and 1, nulls and unknown fields are read")
    func tolerant() throws {
        let p = try page(#"{"id": "a", "width": "4000", "height": 3000.0, "likes": 1, "description": null,"#
            + #" "alt_description": "  ", "user": null, "future": true, \#(Self.urls)}"#, total: #""2""#)
        #expect(p.total == 2)
        let photo = try #require(p.photos.first)
        #expect(photo.photo.width == 4000 && photo.photo.height == 3000)
        #expect(photo.photo.likes == 1)
        #expect(photo.photo.description == nil) // blank alt text is no text
        #expect(photo.photo.author.name == "Unknown")
        #expect(photo.variants.map(\.name) == ["thumb", "full"]) // a null size is left out
    }

    @Test("A record without its required image URLs is skipped, the others kept")
    func strictPerRecord() throws {
        let p = try page(#"{"id": "good", \#(Self.urls)}, {"id": "bad", "urls": {"raw": "https://i/r"}}, {"urls": {}}"#)
        #expect(p.photos.map(\.id) == ["unsplash:good"])
        #expect(p.skipped == 2)
    }

    @Test("A required envelope field of the wrong type is an upstream error")
    func strictEnvelope() {
        let e = rpcError { _ = try page(#"{"id": "a", \#(Self.urls)}"#, total: #""many""#) }
        #expect(e?.kind == .upstreamError)
        #expect(e?.message.contains("'total'") == true)
    }
}
