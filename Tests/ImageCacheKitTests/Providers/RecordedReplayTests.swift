import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Every recorded real answer of the corpus (Tests/Fixtures/corpus/README.md) served on
/// loopback, byte for byte with its recorded status and headers, fetched over HTTP through a
/// `ProviderClient`, and every Photo field the protocol promises checked against the recorded
/// body, read independently here with `JSONSerialization`.
@Suite("Recorded provider answers replayed on loopback", .timeLimit(.minutes(3)))
struct RecordedReplayTests {
    /// Serves one recorded answer for every request, and runs a search through a client.
    private func replay(_ file: String, _ provider: ProviderID, term: SearchTerm = .query("recorded"),
                        perPage: Int) async throws -> (ProviderSearchPage, [String: Any]?, [[String: Any]]) {
        let recorded = try CorpusAPI.response(file)
        let server = try await LoopbackHTTPServer { _ in
            SimulatedResponse(status: recorded.status, headers: recorded.headers.filter { $0.0.lowercased() != "content-length" },
                              body: recorded.body)
        }
        defer { Task { await server.shutdown() } }
        let settings = CorpusAPI.settings(provider, apiURL: server.baseURL)
        let client = ProviderClient(provider: makeProvider(provider, settings), fetcher: URLSessionFetcher())
        let page = try await withTimeout(seconds: 60) {
            try await client.search(SearchQuery(term: term, page: 1, perPage: perPage))
        }
        let json = try JSONSerialization.jsonObject(with: Data(recorded.body))
        let object = json as? [String: Any]
        let items: [[String: Any]]
        switch provider {
        case .unsplash: items = (object?["results"] as? [[String: Any]]) ?? (json as? [[String: Any]]) ?? []
        case .flickr: items = ((object?["photos"] as? [String: Any])?["photo"] as? [[String: Any]]) ?? []
        case .pixabay: items = (object?["hits"] as? [[String: Any]]) ?? []
        }
        return (page, object, items)
    }

    private func makeProvider(_ id: ProviderID, _ settings: ProviderSettings) -> any PhotoProvider {
        switch id {
        case .unsplash: return UnsplashProvider(settings: settings)
        case .flickr: return FlickrProvider(settings: settings)
        case .pixabay: return PixabayProvider(settings: settings)
        }
    }

    /// An ISO 8601 instant, to compare times written with different offsets.
    private func instant(_ text: String?) -> Date? {
        text.flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    private func string(_ value: Any?) -> String? {
        switch value {
        case let s as String: return s.isEmpty ? nil : s
        case let n as NSNumber: return n.stringValue
        default: return nil
        }
    }

    @Test("Unsplash: ids, sizes, URLs, likes, placeholders, upload time, sponsorship and tags as recorded", arguments: [
        ("unsplash/unsplash-php_search_photos_paris", true),
        ("unsplash/pyunsplash_search_photos_query_blue", true),
        ("unsplash/unsplash_client_search_photos_test", true),
        ("unsplash/unsplash-php_photos_list_latest", false),
        ("unsplash/unsplash_client_photos_list_per_page_2", false),
        ("unsplash/pyunsplash_photos_list_page_2", false),
    ])
    func unsplash(file: String, isSearch: Bool) async throws {
        let (page, _, items) = try await replay(file, .unsplash, term: isSearch ? .query("recorded") : .recent, perPage: 10)
        #expect(page.photos.count == items.count && page.skipped == 0)
        for (p, item) in zip(page.photos.map(\.photo), items) {
            #expect(p.id == "unsplash:\(item["id"] as? String ?? "?")")
            let width = try #require(item["width"] as? Int), height = try #require(item["height"] as? Int)
            #expect(p.width == width && p.height == height)
            let urls = try #require(item["urls"] as? [String: Any])
            let fullURL = try #require(urls["full"] as? String), likes = try #require(item["likes"] as? Int)
            #expect(p.thumbURL == urls["thumb"] as? String && p.fullURL == fullURL)
            #expect(p.likes == likes)
            let color = try #require(item["color"] as? String)
            #expect(p.color == color.lowercased())
            #expect(p.blurHash == item["blur_hash"] as? String)
            let created = try #require(instant(item["created_at"] as? String))
            #expect(instant(p.uploadedAt) == created)
            #expect(p.uploadedAt?.hasSuffix("Z") == true)
            #expect(p.takenAt == nil && p.media == nil)
            let sponsorship = item["sponsorship"] as? [String: Any]
            let sponsored = sponsorship != nil || item["sponsored"] as? Bool == true
            #expect((p.sponsored == true) == sponsored)
            let sponsor = ((sponsorship?["sponsor"] as? [String: Any])?["name"] as? String)
                ?? ((item["sponsored_by"] as? [String: Any])?["name"] as? String)
            #expect(sponsored == (sponsor != nil), "a sponsored result names its sponsor")
            #expect(p.sponsor == (sponsored ? sponsor : nil))
            let tags = (item["tags"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
            #expect(p.tags == (tags.isEmpty ? nil : tags))
        }
    }

    @Test("Unsplash: the recorded sponsored result carries its sponsor; a colour without a BlurHash is kept")
    func unsplashSponsoredAndColour() async throws {
        let (page, _, _) = try await replay("unsplash/pyunsplash_search_photos_query_blue", .unsplash, perPage: 10)
        let first = page.photos[0].photo
        #expect(first.id == "unsplash:48arRKRV2Eo" && first.sponsored == true && first.sponsor == "Timberland")
        #expect(page.photos.dropFirst().allSatisfy { $0.photo.sponsored == nil })
        // 2018's answers have no `blur_hash`: the colour alone is still the photo's.
        #expect(first.blurHash == nil && first.color == "#09a6e4")
        let wire = try JSONSerialization.jsonObject(with: JSONEncoder().encode(first)) as? [String: Any]
        #expect(wire?["sponsored"] as? Bool == true && wire?["sponsor"] as? String == "Timberland")
        #expect(wire?["createdAt"] == nil && wire?["uploadedAt"] as? String == "2018-11-21T21:12:49Z")
    }

    @Test("Flickr: ids, tags, upload and taken times, sizes as recorded; videos left out", arguments: [
        "flickr/flickrie_photos_search_all_url_extras",
        "flickr/flickrie_photos_search_user_extras_media",
        "flickr/flickrie_photos_search_videos_only",
        "flickr/flickrie_photos_getRecent_extras_media",
    ])
    func flickr(file: String) async throws {
        let (page, _, items) = try await replay(file, .flickr, perPage: 100)
        let photos = items.filter { $0["media"] as? String != "video" }
        #expect(page.photos.count == photos.count)
        #expect(page.skipped == items.count - photos.count)
        for (p, item) in zip(page.photos.map(\.photo), photos) {
            #expect(p.id == "flickr:\(string(item["id"]) ?? "?")")
            #expect(p.media == nil && p.fullURL != nil)
            let tags = (string(item["tags"]) ?? "").split(separator: " ").map(String.init)
            #expect(p.tags == (tags.isEmpty ? nil : tags))
            let upload = string(item["dateupload"]).flatMap(Double.init).map { Date(timeIntervalSince1970: $0) }
            #expect(instant(p.uploadedAt) == upload)
            if let taken = string(item["datetaken"]), string(item["datetakenunknown"]) != "1" {
                #expect(p.takenAt == taken.replacingOccurrences(of: " ", with: "T") + "Z")
            } else {
                #expect(p.takenAt == nil)
            }
            if let w = string(item["o_width"]).flatMap(Int.init), let h = string(item["o_height"]).flatMap(Int.init) {
                #expect(p.width == w && p.height == h)
            }
            if let thumb = item["url_s"] as? String { #expect(p.thumbURL == thumb) }
        }
    }

    @Test("Flickr: the recorded photo's taken date is the camera's, not the upload's")
    func flickrTakenIsNotPosted() async throws {
        let (page, _, _) = try await replay("flickr/flickrie_photos_search_all_url_extras", .flickr, perPage: 100)
        let p = try #require(page.photos.first { $0.id == "flickr:7093101501" }).photo
        #expect(p.takenAt == "2011-03-27T14:21:21Z")
        #expect(p.uploadedAt == "2012-04-19T11:25:42Z")
    }

    @Test("Pixabay: ids, tags, sizes, URLs and counts as recorded; video hits left out", arguments: [
        "pixabay/sembamax_search_images_60hits",
        "pixabay/msddev_search_images_5hits",
        "pixabay/aliazaz_search_images_3hits_favorites_field",
        "pixabay/webeweb_docs_example_search_images",
        "pixabay/webeweb_docs_example_search_videos",
    ])
    func pixabay(file: String) async throws {
        let (page, object, items) = try await replay(file, .pixabay, perPage: 200)
        #expect(page.total == min(500, object?["totalHits"] as? Int ?? -1))
        let photos = items.filter { $0["previewURL"] as? String != nil && $0["webformatURL"] as? String != nil }
        #expect(page.photos.count == photos.count && page.skipped == items.count - photos.count)
        for (p, item) in zip(page.photos.map(\.photo), photos) {
            #expect(p.id == "pixabay:\(string(item["id"]) ?? "?")")
            let width = try #require(item["imageWidth"] as? Int), height = try #require(item["imageHeight"] as? Int)
            #expect(p.width == width && p.height == height)
            #expect(p.thumbURL == item["previewURL"] as? String)
            let likes = try #require(item["likes"] as? Int)
            #expect(p.likes == likes)
            let tags = (item["tags"] as? String ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            #expect(p.tags == (tags.isEmpty ? nil : tags))
            #expect(p.takenAt == nil && p.uploadedAt == nil && p.sponsored == nil && p.media == nil)
        }
    }
}
