import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Real recorded provider answers (Tests/Fixtures/corpus/README.md) served on loopback to a
/// real daemon, and the Photo objects it sends on its socket checked field by field against
/// the recorded bodies: what a client of the daemon would see from the real providers.
@Suite("Recorded provider answers through the daemon", .timeLimit(.minutes(5)))
struct RecordedReplayDaemonTests {
    /// Unsplash `/u/…` → a 2018 search with a sponsored result and no BlurHash; Flickr `/f`
    /// → a search with dates and tags, or the getInfo of a video; Pixabay `/p/` → 60 hits.
    static func route(_ request: SimulatedRequest) -> SimulatedResponse {
        let file: String
        if request.path.hasPrefix("/u/") {
            file = "api/unsplash/pyunsplash_search_photos_query_blue.json"
        } else if request.path.hasPrefix("/f") {
            file = request.uri.contains("flickr.photos.getInfo") ? "api/flickr/flickrie_photos_getInfo_video.json"
                : "api/flickr/flickrie_photos_search_all_url_extras.json"
        } else {
            file = "api/pixabay/sembamax_search_images_60hits.json"
        }
        guard let body = try? Corpus.bytes(file) else { return .text("no fixture", status: 500) }
        return SimulatedResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }

    private func recorded(_ file: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(Corpus.bytes(file)))
    }

    private func withDaemon(_ body: (RawClient) async throws -> Void) async throws {
        try await finishing(try await LoopbackHTTPServer(handler: Self.route), with: { await $0.shutdown() }) { server in
            try await CacheFixture.with { fixture in
                var configuration = fixture.configuration()
                configuration.unsplash.apiURL = server.baseURL + "/u"
                configuration.flickr.apiURL = server.baseURL + "/f"
                configuration.pixabay.apiURL = server.baseURL + "/p"
                try await SearchDaemon.with(configuration) { daemon in
                    try await finishing(try await daemon.connect(), with: { await $0.close() }, body)
                }
            }
        }
    }

    private func search(_ client: RawClient, _ id: Int, _ provider: String, perPage: Int) async throws -> [[String: Any]] {
        let answer = try await client.request(id, "search", ["query": "recorded answer", "provider": provider, "perPage": perPage])
        return try #require(answer.resultObject?["photos"] as? [[String: Any]], "\(provider): \(answer)")
    }

    @Test("Unsplash: the sponsored result, upload times in UTC, tags and a colour without a BlurHash, as recorded")
    func unsplash() async throws {
        try await withDaemon { client in
            let photos = try await search(client, 1, "unsplash", perPage: 10)
            let body = try #require(try recorded("api/unsplash/pyunsplash_search_photos_query_blue.json") as? [String: Any])
            let results = try #require(body["results"] as? [[String: Any]])
            #expect(photos.count == results.count)
            for (photo, item) in zip(photos, results) {
                #expect(photo["id"] as? String == "unsplash:\(item["id"] as? String ?? "")")
                let width = try #require(item["width"] as? Int), height = try #require(item["height"] as? Int)
                #expect(photo["width"] as? Int == width && photo["height"] as? Int == height)
                let color = try #require(item["color"] as? String)
                #expect(photo["color"] as? String == color.lowercased())
                #expect(photo["blurHash"] == nil)
                let sponsored = item["sponsored"] as? Bool == true
                #expect((photo["sponsored"] as? Bool == true) == sponsored)
                let sponsor = (item["sponsored_by"] as? [String: Any])?["name"] as? String
                #expect(sponsored == (sponsor != nil), "a sponsored result names its sponsor")
                #expect(photo["sponsor"] as? String == sponsor)
                let created = try #require(ISO8601DateFormatter().date(from: item["created_at"] as? String ?? ""))
                #expect(ISO8601DateFormatter().date(from: photo["uploadedAt"] as? String ?? "") == created)
                #expect(photo["takenAt"] == nil && photo["createdAt"] == nil && photo["media"] == nil)
                let tags = (item["tags"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
                #expect(photo["tags"] as? [String] == tags)
            }
            #expect(photos[0]["sponsor"] as? String == "Timberland")
        }
    }

    @Test("Flickr: tags, taken and upload times under their own names; the recorded video is a video, and not downloadable")
    func flickr() async throws {
        try await withDaemon { client in
            let photos = try await search(client, 1, "flickr", perPage: 100)
            let body = try #require(try recorded("api/flickr/flickrie_photos_search_all_url_extras.json") as? [String: Any])
            let items = try #require((body["photos"] as? [String: Any])?["photo"] as? [[String: Any]])
                .filter { $0["media"] as? String != "video" }
            #expect(photos.count == items.count)
            for (photo, item) in zip(photos, items) {
                #expect(photo["id"] as? String == "flickr:\(item["id"] as? String ?? "")")
                let tags = (item["tags"] as? String ?? "").split(separator: " ").map(String.init)
                #expect(photo["tags"] as? [String] == (tags.isEmpty ? nil : tags))
                let taken = try #require(item["datetaken"] as? String).replacingOccurrences(of: " ", with: "T") + "Z"
                #expect(photo["takenAt"] as? String == taken)
                let upload = try Date(timeIntervalSince1970: #require((item["dateupload"] as? String).flatMap(Double.init)))
                #expect(ISO8601DateFormatter().date(from: photo["uploadedAt"] as? String ?? "") == upload)
                #expect(photo["media"] == nil && photo["fullURL"] is String)
            }

            let video = try #require(try await client.request(2, "photo.get", ["photo": "flickr:7093038981"]).resultObject)
            #expect(video["media"] as? String == "video")
            #expect(video["fullURL"] is NSNull)
            #expect(video["takenAt"] as? String == "2012-04-19T03:44:55Z")
            #expect(video["uploadedAt"] as? String == "2012-04-19T10:44:55Z")
            #expect(video["tags"] as? [String] == ["Tag"])
            let refused = try await client.request(3, "download", ["photo": "flickr:7093038981"])
            #expect(refused.errorCode == 1014, "\(refused)")
        }
    }

    @Test("Pixabay: ids, sizes and tags of every hit, as recorded; no times")
    func pixabay() async throws {
        try await withDaemon { client in
            let photos = try await search(client, 1, "pixabay", perPage: 60)
            let body = try #require(try recorded("api/pixabay/sembamax_search_images_60hits.json") as? [String: Any])
            let hits = try #require(body["hits"] as? [[String: Any]])
            #expect(photos.count == hits.count)
            for (photo, hit) in zip(photos, hits) {
                #expect(photo["id"] as? String == "pixabay:\((hit["id"] as? Int).map(String.init) ?? "")")
                let width = try #require(hit["imageWidth"] as? Int), height = try #require(hit["imageHeight"] as? Int)
                #expect(photo["width"] as? Int == width && photo["height"] as? Int == height)
                let tags = (hit["tags"] as? String ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(photo["tags"] as? [String] == tags)
                #expect(photo["takenAt"] == nil && photo["uploadedAt"] == nil && photo["sponsored"] == nil)
            }
        }
    }
}
