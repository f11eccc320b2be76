import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// `cache.evict` and `cache.clear` through a real daemon on a real socket, with thumbnails
/// fetched from the simulator by the daemon's pipeline: what goes, what stays, and delivered
/// paths that stay readable for their `path_grace`.
@Suite("cache.evict and cache.clear on the socket", .timeLimit(.minutes(5)))
struct CacheDaemonTests {
    private func readable(_ path: String) -> Bool { FileManager.default.contents(atPath: path) != nil }

    @Test("evict by photo removes every cached size of that photo, and only that photo")
    func evictPhoto() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await daemon.thumbnail(ids[0], size: 200)
                _ = try await daemon.thumbnail(ids[0], size: 120)
                _ = try await daemon.thumbnail(ids[1], size: 200)

                let answer = try #require(try await client.request(1, "cache.evict", ["photo": ids[0]]).resultObject)
                #expect(answer["removed"] as? Int ?? 0 >= 4, "two sizes, memory and disk: \(answer)")
                #expect(answer["bytes"] as? Int ?? 0 > 0)
                #expect(try await daemon.cachedThumbnail(ids[0], size: 200) == nil)
                #expect(try await daemon.cachedThumbnail(ids[0], size: 120) == nil)
                #expect(try await daemon.cachedThumbnail(ids[1], size: 200) != nil)
                await client.close()
            }
        }
    }

    @Test("evict by url removes that image's thumbnails")
    func evictURL() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let url = fixture.sim.baseURL + "/img/640x480/abc.jpg"
                let pipeline = daemon.services.pipeline
                _ = try await withTimeout(seconds: 60) { try await pipeline.load(ThumbnailRequest(image: .url(url), size: 200)) }
                #expect(await pipeline.cachedOnly(ThumbnailRequest(image: .url(url), size: 200)) != nil)

                let answer = try #require(try await client.request(1, "cache.evict", ["url": url]).resultObject)
                #expect(answer["removed"] as? Int ?? 0 >= 2)
                #expect(await pipeline.cachedOnly(ThumbnailRequest(image: .url(url), size: 200)) == nil)
                await client.close()
            }
        }
    }

    @Test("evict of a photo id the daemon never returned answers 1006; bad params -32602")
    func evictErrors() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let unknown = try await client.request(1, "cache.evict", ["photo": "unsplash:never-seen"])
                #expect(unknown.errorCode == 1006)
                let both = try await client.request(2, "cache.evict", ["photo": "unsplash:a", "url": "https://x.example/a.jpg"])
                #expect(both.errorCode == -32602)
                let neither = try await client.request(3, "cache.evict", [:])
                #expect(neither.errorCode == -32602)
                let badScope = try await client.request(4, "cache.clear", ["what": "everything"])
                #expect(badScope.errorCode == -32602)
                #expect(badScope.errorData["field"] as? String == "what")
                await client.close()
            }
        }
    }

    @Test("clear thumbnails empties the thumbnails and keeps search pages")
    func clearThumbnails() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await daemon.thumbnail(ids[0])
                _ = try await daemon.thumbnail(ids[1])

                let answer = try #require(try await client.request(1, "cache.clear", ["what": "thumbnails"]).resultObject)
                #expect(answer["removed"] as? Int ?? 0 >= 4)
                #expect(try await daemon.cachedThumbnail(ids[0]) == nil)
                #expect(try await daemon.cachedThumbnail(ids[1]) == nil)
                let again = try #require(try await client.request(2, "search", ["query": "harbour lights", "provider": "unsplash", "perPage": 10]).resultObject)
                #expect(again["fromCache"] as? Bool == true)
                #expect(fixture.sim.api.requestCount("unsplash") == 1)
                await client.close()
            }
        }
    }

    @Test("clear searches empties the pages (the next search asks the provider) and keeps thumbnails and photo ids")
    func clearSearches() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await daemon.thumbnail(ids[0])
                let before = daemon.services.cache.statistics.disk

                let answer = try #require(try await client.request(1, "cache.clear", ["what": "searches"]).resultObject)
                #expect(answer["removed"] as? Int ?? 0 >= 1)
                #expect(daemon.services.cache.statistics.disk.entries < before.entries)
                #expect(try await daemon.cachedThumbnail(ids[0]) != nil)
                let again = try #require(try await client.request(2, "search", ["query": "harbour lights", "provider": "unsplash", "perPage": 10]).resultObject)
                #expect(again["fromCache"] as? Bool == false)
                #expect(fixture.sim.api.requestCount("unsplash") == 2)
                // Remembered photos are not search pages: ids still resolve (layout places them).
                let layout = try await client.request(3, "layout", ["photos": ids, "columns": 2, "width": 400])
                #expect(layout.resultObject != nil)
                await client.close()
            }
        }
    }

    @Test("clear all empties thumbnails and search pages")
    func clearAll() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await daemon.thumbnail(ids[0])

                _ = try #require(try await client.request(1, "cache.clear", ["what": "all"]).resultObject)
                #expect(try await daemon.cachedThumbnail(ids[0]) == nil)
                let again = try #require(try await client.request(2, "search", ["query": "harbour lights", "provider": "unsplash", "perPage": 10]).resultObject)
                #expect(again["fromCache"] as? Bool == false)
                await client.close()
            }
        }
    }

    @Test("a path delivered from the cache stays readable after evict and after clear, within path_grace")
    func pathGraceUnderEviction() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(pathGrace: .seconds(600))) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await daemon.thumbnail(ids[0])
                _ = try await daemon.thumbnail(ids[1])
                // What thumbnail.show delivers on a memory or disk hit.
                let evicted = try #require(try await daemon.cachedThumbnail(ids[0]))
                let cleared = try #require(try await daemon.cachedThumbnail(ids[1]))
                let bytes = try #require(FileManager.default.contents(atPath: evicted.path))

                _ = try #require(try await client.request(1, "cache.evict", ["photo": ids[0]]).resultObject)
                _ = try #require(try await client.request(2, "cache.clear", ["what": "all"]).resultObject)
                #expect(FileManager.default.contents(atPath: evicted.path) == bytes)
                #expect(readable(cleared.path))
                #expect(daemon.services.cache.deferredUnlinkCount >= 2)
                #expect(try await daemon.cachedThumbnail(ids[0]) == nil, "readable, but no longer an entry")
                await client.close()
            }
        }
    }

    @Test("a path delivered from the network stays readable after evict, within path_grace")
    func pathGraceOfNetworkDelivery() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(pathGrace: .seconds(600))) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                let delivered = try await daemon.thumbnail(ids[0])
                _ = try #require(try await client.request(1, "cache.evict", ["photo": ids[0]]).resultObject)
                #expect(readable(delivered.path))
                await client.close()
            }
        }
    }

    @Test("with no path_grace, evict and clear unlink the files at once")
    func noGraceUnlinks() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(pathGrace: .zero)) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                let evicted = try await daemon.thumbnail(ids[0])
                let cleared = try await daemon.thumbnail(ids[1])

                _ = try #require(try await client.request(1, "cache.evict", ["photo": ids[0]]).resultObject)
                #expect(!readable(evicted.path))
                #expect(readable(cleared.path))
                _ = try #require(try await client.request(2, "cache.clear", ["what": "thumbnails"]).resultObject)
                #expect(!readable(cleared.path))
                await client.close()
            }
        }
    }
}
