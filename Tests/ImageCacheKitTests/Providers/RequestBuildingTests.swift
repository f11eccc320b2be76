import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing

@Suite("Provider requests are built exactly", .timeLimit(.minutes(2)))
struct RequestBuildingTests {
    static let key = "k3y-with+plus&amp"
    let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash, key: key))
    let flickr = FlickrProvider(settings: CorpusAPI.settings(.flickr, key: key))
    let pixabay = PixabayProvider(settings: CorpusAPI.settings(.pixabay, key: key))

    static let tricky = "cats & dogs #1 +c++ 100% café 🐈‍⬛ a=b"

    @Test("Unsplash search: path, items, auth headers")
    func unsplashSearch() throws {
        let r = try unsplash.searchRequest(for: SearchQuery(term: .query("red car"), page: 3, perPage: 12, safe: true))
        #expect(r.url.hasPrefix("https://api.unsplash.com/search/photos?"))
        #expect(queryItems(r.url) == ["query": "red car", "page": "3", "per_page": "12", "content_filter": "high"])
        #expect(r.headers.contains { $0 == ("Authorization", "Client-ID \(Self.key)") })
        #expect(r.headers.contains { $0 == ("Accept-Version", "v1") })
        #expect(!r.url.contains(Self.key))
    }

    @Test("Unsplash recent feed is /photos?order_by=latest, unsafe search lowers the filter")
    func unsplashRecentAndUnsafe() throws {
        let r = try unsplash.searchRequest(for: SearchQuery(term: .recent, page: 1, perPage: 30))
        #expect(r.url.hasPrefix("https://api.unsplash.com/photos?"))
        #expect(queryItems(r.url) == ["page": "1", "per_page": "30", "order_by": "latest"])
        let u = try unsplash.searchRequest(for: SearchQuery(term: .query("abc"), perPage: 10, safe: false))
        #expect(queryItems(u.url)["content_filter"] == "low")
    }

    @Test("Unsplash photo and download-tracking paths")
    func unsplashPhotoPaths() throws {
        #expect(try unsplash.photoRequest(id: "vUGBY_MnSsg").url == "https://api.unsplash.com/photos/vUGBY_MnSsg")
        let photo = try unsplash.decodePhoto(try CorpusAPI.response("unsplash/unsplash-php_photo_ZUaqqMxtxYk"), id: "ZUaqqMxtxYk")
        var noLocation = photo
        noLocation.downloadLocation = nil
        let r = try #require(try unsplash.downloadTrackingRequest(for: noLocation))
        #expect(r.url == "https://api.unsplash.com/photos/ZUaqqMxtxYk/download")
        #expect(r.headers.contains { $0 == ("Authorization", "Client-ID \(Self.key)") })
    }

    @Test("The key is never sent to a download location on another host")
    func downloadLocationOrigin() throws {
        let photo = try unsplash.decodePhoto(try CorpusAPI.response("unsplash/unsplash_client_photo_vUGBY_MnSsg"), id: "vUGBY_MnSsg")
        let own = try #require(try unsplash.downloadTrackingRequest(for: photo))
        #expect(own.url.hasPrefix("https://api.unsplash.com/photos/vUGBY_MnSsg/download?ixid="))
        var foreign = photo
        foreign.downloadLocation = "https://evil.example/photos/vUGBY_MnSsg/download"
        let rebuilt = try #require(try unsplash.downloadTrackingRequest(for: foreign))
        #expect(rebuilt.url == "https://api.unsplash.com/photos/vUGBY_MnSsg/download")
    }

    @Test("per_page is clamped into each provider's range", arguments: [
        (ProviderID.unsplash, 100, 30), (.unsplash, 0, 1), (.flickr, 9999, 500), (.flickr, -3, 1),
        (.pixabay, 1, 3), (.pixabay, 1000, 200), (.pixabay, 50, 50),
    ])
    func clamping(provider: ProviderID, asked: Int, sent: Int) throws {
        let p = makePhotoProvider(provider, settings: CorpusAPI.settings(provider, key: Self.key))
        #expect(p.clampPerPage(asked) == sent)
        let r = try p.searchRequest(for: SearchQuery(term: .query("abc"), perPage: asked))
        #expect(queryItems(r.url)["per_page"] == String(sent))
    }

    @Test("A tricky query survives encoding for every provider", arguments: ProviderID.allCases)
    func trickyQuery(provider: ProviderID) throws {
        let p = makePhotoProvider(provider, settings: CorpusAPI.settings(provider, key: Self.key))
        let r = try p.searchRequest(for: SearchQuery(term: .query(Self.tricky), perPage: 20))
        let name = ["unsplash": "query", "flickr": "text", "pixabay": "q"][provider.rawValue]!
        // Read as a server reads it: '+' would become a space, so it must be %2B on the wire.
        #expect(queryItems(r.url)[name] == Self.tricky)
        #expect(!r.url.contains("+"))
        #expect(!r.url.contains(" "))
        #expect(r.url.split(separator: "#").count == 1)
    }

    @Test("Flickr search: method, key, JSON without callback, extras with sizes, safe search")
    func flickrSearch() throws {
        let r = try flickr.searchRequest(for: SearchQuery(term: .query("sunset"), page: 2, perPage: 50, safe: true))
        let q = queryItems(r.url)
        #expect(r.url.hasPrefix("https://api.flickr.com/services/rest?"))
        #expect(q["method"] == "flickr.photos.search")
        #expect(q["api_key"] == Self.key)
        #expect(q["text"] == "sunset")
        #expect(q["format"] == "json" && q["nojsoncallback"] == "1")
        #expect(q["page"] == "2" && q["per_page"] == "50" && q["safe_search"] == "1")
        let extras = Set((q["extras"] ?? "").split(separator: ",").map(String.init))
        #expect(extras.isSuperset(of: ["url_s", "url_m", "url_l", "url_o", "owner_name", "description", "o_dims"]))
        let unsafe = try flickr.searchRequest(for: SearchQuery(term: .query("sunset"), perPage: 50, safe: false))
        #expect(queryItems(unsafe.url)["safe_search"] == "3")
    }

    @Test("Flickr recent feed is getRecent, photo.get is getInfo")
    func flickrOtherMethods() throws {
        let recent = queryItems(try flickr.searchRequest(for: SearchQuery(term: .recent, perPage: 20)).url)
        #expect(recent["method"] == "flickr.photos.getRecent")
        #expect(recent["text"] == nil)
        let info = queryItems(try flickr.photoRequest(id: "7093101501").url)
        #expect(info["method"] == "flickr.photos.getInfo" && info["photo_id"] == "7093101501")
        #expect(info["nojsoncallback"] == "1")
    }

    @Test("Pixabay: /api/ with key, image_type=photo, safesearch; latest for the feed; id= for one photo")
    func pixabayRequests() throws {
        let r = try pixabay.searchRequest(for: SearchQuery(term: .query("yellow flowers"), page: 4, perPage: 25, safe: true))
        #expect(r.url.hasPrefix("https://pixabay.com/api/?"))
        #expect(queryItems(r.url) == ["key": Self.key, "q": "yellow flowers", "image_type": "photo", "page": "4",
                                      "per_page": "25", "safesearch": "true"])
        let recent = queryItems(try pixabay.searchRequest(for: SearchQuery(term: .recent, perPage: 25, safe: false)).url)
        #expect(recent["order"] == "latest" && recent["q"] == nil && recent["safesearch"] == "false")
        #expect(queryItems(try pixabay.photoRequest(id: "195893").url)["id"] == "195893")
    }

    @Test("Pixabay queries are cut to 100 characters, at a word boundary when possible")
    func pixabayQueryLimit() throws {
        let long = String(repeating: "word ", count: 40)
        let q = queryItems(try pixabay.searchRequest(for: SearchQuery(term: .query(long), perPage: 20)).url)["q"]!
        #expect(q.count <= 100 && q.hasSuffix("word"))
        let emoji = String(repeating: "🐈‍⬛", count: 150)
        let e = queryItems(try pixabay.searchRequest(for: SearchQuery(term: .query(emoji), perPage: 20)).url)["q"]!
        #expect(e == String(repeating: "🐈‍⬛", count: 100))
    }

    @Test("api_url from the configuration is used as the base, with its own path kept")
    func apiURLBase() throws {
        let p = FlickrProvider(settings: CorpusAPI.settings(.flickr, key: Self.key, apiURL: "http://127.0.0.1:9/flickr/services/rest"))
        #expect(try p.searchRequest(for: SearchQuery(term: .recent, perPage: 20)).url
            .hasPrefix("http://127.0.0.1:9/flickr/services/rest?method=flickr.photos.getRecent"))
        let u = UnsplashProvider(settings: CorpusAPI.settings(.unsplash, key: Self.key, apiURL: "http://127.0.0.1:9/unsplash/"))
        #expect(try u.photoRequest(id: "abc").url == "http://127.0.0.1:9/unsplash/photos/abc")
    }
}
