import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// What survives a daemon restart (a second daemon on the same `cache_dir`), and what never
/// leaves the daemon: API keys.
@Suite("Search pages and photos across restarts; keys kept secret", .timeLimit(.minutes(5)))
struct SearchRestartTests {
    static let providers = ["unsplash", "flickr", "pixabay"]

    @Test("after a restart a searched page is answered from disk, and stale when expired and the provider is down",
          arguments: providers)
    func cachedPageSurvivesRestart(provider: String) async throws {
        try await SearchFixture.with { fixture in
            let params: [String: Any] = ["query": "quiet harbour", "provider": provider, "perPage": 10]

            let original = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await first.connect()
                let original = try #require(try await client.request(1, "search", params).resultObject)
                await client.close()
                return original
            }
            #expect(fixture.api.requestCount(provider) == 1)

            try await SearchDaemon.with(fixture.configuration()) { second in
                let client = try await second.connect()
                let cached = try #require(try await client.request(1, "search", params).resultObject)
                #expect(cached["fromCache"] as? Bool == true)
                #expect(cached["stale"] as? Bool == false)
                #expect(photoIDs(cached) == photoIDs(original))
                #expect(try cached.decoded(as: SearchResult.self).total == original.decoded(as: SearchResult.self).total)
                #expect(fixture.api.requestCount(provider) == 1)
                await client.close()
            }

            // Expired at once (search_ttl 0), and the provider cannot be reached.
            await fixture.stopSimulator()
            try await SearchDaemon.with(fixture.configuration(searchTTL: .zero)) { third in
                let client = try await third.connect()
                let stale = try #require(try await client.request(1, "search", params).resultObject)
                #expect(stale["stale"] as? Bool == true)
                #expect(stale["fromCache"] as? Bool == true)
                #expect(photoIDs(stale) == photoIDs(original))
                await client.close()
            }
        }
    }

    @Test("an expired page is fetched again when the provider is up (not answered stale)")
    func expiredPageIsRefetched() async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(searchTTL: .zero)) { daemon in
                let client = try await daemon.connect()
                let params: [String: Any] = ["query": "quiet harbour", "provider": "unsplash"]
                _ = try #require(try await client.request(1, "search", params).resultObject)
                let again = try #require(try await client.request(2, "search", params).resultObject)
                #expect(again["fromCache"] as? Bool == false)
                #expect(again["stale"] as? Bool == false)
                #expect(fixture.api.requestCount("unsplash") == 2)
                await client.close()
            }
        }
    }

    @Test("photo.get resolves a photo id after a restart, with the provider down", arguments: providers)
    func photoResolvesAfterRestart(provider: String) async throws {
        try await SearchFixture.with { fixture in
            let (photo, id) = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await first.connect()
                let page = try #require(try await client.request(1, "search", ["query": "old bridge", "provider": provider]).resultObject)
                let photo = try #require((page["photos"] as? [[String: Any]])?.first)
                let id = try #require(photo["id"] as? String)
                await client.close()
                return (photo, id)
            }
            await fixture.stopSimulator()

            try await SearchDaemon.with(fixture.configuration()) { second in
                let client = try await second.connect()
                let resolved = try #require(try await client.request(1, "photo.get", ["photo": id]).resultObject)
                #expect(resolved["id"] as? String == id)
                #expect(resolved["provider"] as? String == provider)
                let after = try resolved.decoded(as: Photo.self), before = try photo.decoded(as: Photo.self)
                #expect(after.author.name == before.author.name)
                #expect(after.thumbURL == before.thumbURL)

                // An id this daemon never returned cannot be resolved without the provider.
                let unknown = try await client.request(2, "photo.get", ["photo": "\(provider):neverseen123"])
                #expect(unknown.errorCode != nil)
                await client.close()
            }
        }
    }

    @Test("photo.get asks the provider for details when it is up", arguments: providers)
    func photoGetFetchesDetails(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let page = try #require(try await client.request(1, "search", ["query": "old bridge", "provider": provider]).resultObject)
                let id = try #require((page["photos"] as? [[String: Any]])?.first?["id"] as? String)
                let before = fixture.api.requestCount(provider)
                let detail = try #require(try await client.request(2, "photo.get", ["photo": id]).resultObject)
                #expect(detail["id"] as? String == id)
                #expect(fixture.api.requestCount(provider) == before + 1)
                // Detail fields only `photo.get` carries (null or absent in a search answer).
                #expect(detail["views"] as? Int != nil || (detail["tags"] as? [String])?.isEmpty == false)
                await client.close()
            }
        }
    }

    @Test("keys appear in no error text, no stats and no cache file", arguments: providers)
    func keysNeverLeak(provider: String) async throws {
        try await SearchFixture.with { fixture in
            let wrongKey = "wrong-\(provider)-S3CRET-key"
            try await SearchDaemon.with(fixture.configuration(keys: [provider: wrongKey])) { daemon in
                let client = try await daemon.connect()
                var lines: [String] = []

                // The provider refuses the key.
                lines.append(try await client.requestRaw(1, "search", ["query": "forest", "provider": provider]))
                // The provider's error body quotes the key back.
                fixture.api.setFault(.status(400, body: "bad request for key=\(wrongKey)&q=forest"), for: provider)
                lines.append(try await client.requestRaw(2, "search", ["query": "forest", "provider": provider]))
                fixture.api.setFault(.status(503, body: "unavailable, key \(wrongKey)"), for: provider)
                lines.append(try await client.requestRaw(3, "search", ["query": "river", "provider": provider]))
                lines.append(try await client.requestRaw(4, "photo.get", ["photo": "\(provider):abc123"]))
                lines.append(try await client.requestRaw(5, "stats"))
                lines.append(try await client.requestRaw(6, "hello"))

                #expect(lines.count == 6)
                for line in lines {
                    #expect(!line.contains(wrongKey), "key leaked in \(line)")
                }
                // Errors were really answered (the test would be empty otherwise).
                #expect(lines[0...3].allSatisfy { $0.contains("\"error\"") })
                await client.close()
            }

            let cacheFolder = fixture.folder + "/cache"
            let files = FileManager.default.enumerator(atPath: cacheFolder)?.compactMap { $0 as? String } ?? []
            for file in files {
                let text = String(decoding: FileManager.default.contents(atPath: cacheFolder + "/" + file) ?? Data(), as: UTF8.self)
                #expect(!text.contains(wrongKey), "key written into \(file)")
            }
        }
    }

    @Test("stored pages hold no key: a successful search's cache files never contain it", arguments: providers)
    func cacheFilesHoldNoKey(provider: String) async throws {
        try await SearchFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                _ = try #require(try await client.request(1, "search", ["query": "forest", "provider": provider]).resultObject)
                await client.close()
            }

            let key = try #require(ProviderAPISimulator.defaultKeys[provider])
            // Pages and photos live in the cache's entries (`data/xx/<digest>`, with their descriptions) and index.
            let cacheFolder = fixture.folder + "/cache"
            let files = FileManager.default.enumerator(atPath: cacheFolder)?.compactMap { $0 as? String }
                .filter { $0.hasPrefix("data/") || $0.hasPrefix("index.sqlite") } ?? []
            #expect(files.contains { $0.hasPrefix("data/") && !$0.hasSuffix(".m") && $0.count > 10 })
            for file in files {
                let text = String(decoding: FileManager.default.contents(atPath: cacheFolder + "/" + file) ?? Data(), as: UTF8.self)
                #expect(!text.contains(key), "key written into \(file)")
            }
        }
    }

    private func photoIDs(_ page: [String: Any]) -> [String] {
        (page["photos"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }
}
