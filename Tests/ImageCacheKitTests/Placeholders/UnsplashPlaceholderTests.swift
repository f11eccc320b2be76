import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing
import ProviderSimulator
import TestSupport

/// Unsplash sends `blur_hash` and `color` with every photo: the photos carry them as sent,
/// and a hash or colour that is not what it claims is dropped, never passed on.
@Suite("Placeholders: Unsplash's blur_hash and color reach the Photo objects", .timeLimit(.minutes(1)))
struct UnsplashPlaceholderTests {
    let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash))

    @Test("a recorded search: every photo has the blur_hash and color its JSON has")
    func recordedSearch() throws {
        let file = "unsplash/unsplash_client_search_photos_test"
        let page = try unsplash.decodeSearch(CorpusAPI.response(file), for: SearchQuery(term: .query("test"), page: 1, perPage: 10))
        let json = try JSONSerialization.jsonObject(with: Data(try Corpus.bytes("api/\(file).json"))) as? [String: Any]
        let results = try #require(json?["results"] as? [[String: Any]])
        #expect(page.photos.count == results.count && !results.isEmpty)
        for (photo, item) in zip(page.photos, results) {
            let hash = try #require(item["blur_hash"] as? String)
            let color = try #require(item["color"] as? String)
            #expect(photo.photo.blurHash == hash)
            #expect(photo.photo.color == color.lowercased())
            // And on the wire, as the client reads them.
            let value = try #require(try JSONValue(encoding: photo.photo).objectValue)
            #expect(value["blurHash"] == .string(hash) && value["color"] == .string(color.lowercased()))
        }
    }

    @Test("the simulated Unsplash sends the placeholders of the images it serves, as the real one does")
    func simulated() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let r = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "harbour lights", provider: "unsplash", perPage: 20))
        }
        #expect(r.photos.count == 20)
        var hashes = Set<String>()
        for photo in r.photos {
            let hash = try #require(photo.blurHash, "\(photo.id)")
            let parsed = try BlurHash.parse(hash)
            let portrait = (photo.height ?? 0) > (photo.width ?? 0)
            #expect(parsed.xComponents == (portrait ? 3 : 4) && parsed.yComponents == (portrait ? 4 : 3))
            #expect(photo.color == parsed.averageHex)
            hashes.insert(hash)
        }
        #expect(hashes.count > 1, "each image its own placeholder")
    }

    @Test("a blur_hash or color that is not what it claims is left out")
    func badValuesDropped() throws {
        let body = #"""
        [{"id": "a1", "urls": {"raw": "https://images.unsplash.test/a1", "full": "https://images.unsplash.test/a1f",
          "thumb": "https://images.unsplash.test/a1t"}, "user": {"name": "A"},
          "blur_hash": "LEHV6nWB2yk8pyo0adR*.7kCMdn", "color": "red"},
         {"id": "a2", "urls": {"raw": "https://images.unsplash.test/a2", "full": "https://images.unsplash.test/a2f",
          "thumb": "https://images.unsplash.test/a2t"}, "user": {"name": "B"},
          "blur_hash": "LEHV6nWB2yk8pyo0adR*.7kCMdnj", "color": "#0C0C0C"}]
        """#
        let page = try unsplash.decodeSearch(HTTPResponse(status: 200, headers: [], body: Array(body.utf8)),
                                             for: SearchQuery(term: .recent, page: 1, perPage: 2))
        #expect(page.photos.count == 2)
        #expect(page.photos[0].photo.blurHash == nil && page.photos[0].photo.color == nil)
        #expect(page.photos[1].photo.blurHash == "LEHV6nWB2yk8pyo0adR*.7kCMdnj" && page.photos[1].photo.color == "#0c0c0c")
        let value = try #require(try JSONValue(encoding: page.photos[0].photo).objectValue)
        #expect(value["blurHash"] == nil && value["color"] == nil, "absent, not null, until known")
    }
}
