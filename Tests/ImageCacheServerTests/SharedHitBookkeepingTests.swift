import Foundation
import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheServer
import ProviderSimulator
import Testing
import TestSupport

/// A shared-tier hit answers as soon as its file is written: the disk index row, the memory
/// copy and the width note follow on the cache's publisher, after the answer. A real memcached
/// holds the value; the publisher is held (suspended) to show the answer does not wait for it.
@Suite("Shared tier: a hit answers before its bookkeeping", .timeLimit(.minutes(2)))
struct SharedHitBookkeepingTests {
    /// A pipeline over a real memcached node as its only tier, with its cache and dimensions
    /// store in `folder`; nothing listens at the test's image URLs, so only the tier answers.
    private struct Fixture {
        let configuration: CacheConfiguration
        let store: MemcachedSharedStore
        let cache: ImageCache
        let dimensions: ImageDimensionsStore
        let engine: TransferEngine
        let pipeline: ImagePipeline

        init(node: MemcachedServer, folder: String, label: String) throws {
            var configuration = CacheConfiguration()
            configuration.network.allowHTTP = true
            configuration.network.allowedHosts = ["127.0.0.1"]
            configuration.shared.servers = [try #require(SharedTierSettings.Server.parse(node.address))]
            configuration.shared.prefix = "\(label)-\(UUID().uuidString):"
            configuration.shared.timeout = .seconds(2)
            self.configuration = configuration
            store = MemcachedSharedStore(settings: configuration.shared, logger: .init(label: label))
            cache = try ImageCache(configuration: configuration.cache, directory: folder + "/cache")
            dimensions = try ImageDimensionsStore(directory: folder)
            engine = TransferEngine(configuration: configuration)
            let settings = ImagePipeline.Settings(configuration)
            pipeline = ImagePipeline(cache: cache, transfers: engine, registry: PhotoRegistry(), dimensions: dimensions,
                                     decodes: DecodeBudget(memory: configuration.network.decodeMemory, slots: 2),
                                     settings: { settings }, shared: store)
        }

        func close() async {
            engine.shutdown()
            dimensions.close()
            cache.close()
            await store.shutdown()
        }
    }
    @Test("the path is answered, complete, while the bookkeeping is held; released, it runs, with the path's grace and the size recorded once")
    func answersBeforeBookkeeping() async throws {
        let node = try await MemcachedServer.start()
        let folder = NSTemporaryDirectory() + "shared-hit-\(UUID().uuidString)"
        let fixture = try Fixture(node: node, folder: folder, label: "hit")
        let (store, cache, dimensions, pipeline) = (fixture.store, fixture.cache, fixture.dimensions, fixture.pipeline)

        // An original narrower than twice the size: delivered at its own width, with a width
        // note. Nothing listens at its URL: only the tier can answer.
        let thumbnail = SyntheticImages.jpeg(width: 200, height: 150)
        let url = "http://127.0.0.1:9/shared-hit.jpg"
        let key = SharedThumbnailValue.key(url: url, size: 256)
        let value = SharedThumbnailValue(format: .jpeg, width: 200, height: 150, originalWidth: 200, originalHeight: 150,
                                         image: thumbnail)
        #expect(await store.store(key, value.encoded(key: key), ttl: .seconds(600)))
        let entry = CacheKey.thumbnail(url: url, width: 200)
        let note = CacheKey.thumbnailWidthNote(url: url, size: 256)

        // A suspended queue must be resumed before it is released, whatever fails below.
        let held = LockedState(true)
        cache.publisher.suspend()
        defer { if held.withLock({ $0 }) { cache.publisher.resume() } }
        let delivered = try await withTimeout(seconds: 30) {
            try await pipeline.load(ThumbnailRequest(image: .url(url), size: 256))
        }
        #expect(delivered.source == .shared && delivered.width == 200 && delivered.height == 150)
        #expect(FileManager.default.contents(atPath: delivered.path) == Data(thumbnail))
        #expect(!cache.disk.contains(entry) && !cache.disk.contains(note))
        #expect(cache.publications.value == 0)
        // The original's size is known at once (the answer's `thumbnail.dimensions` went out).
        #expect(dimensions.decoded(url: url) == .init(width: 200, height: 150))

        held.withLock { $0 = false }
        cache.publisher.resume()
        try await withTimeout(seconds: 30) { try await cache.publications.wait { $0 >= 1 } }
        #expect(cache.disk.contains(entry) && cache.disk.contains(note))
        #expect(cache.disk.path(for: entry) == delivered.path)
        // Published as handed out: evicted now, the file stays for its path grace.
        cache.evict(url: url)
        #expect(cache.deferredUnlinkCount == 1)
        #expect(FileManager.default.contents(atPath: delivered.path) == Data(thumbnail))
        // The size went to the store once (one record: the URL's).
        dimensions.flush()
        #expect(dimensions.writtenRecords.value == 1)

        await fixture.close()
        await node.kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test("a shared hit's disk entry keeps the image's own SHA-256, computed once by the value's check: read after a reopen, it is verified and served")
    func sharedEntryChecksum() async throws {
        let node = try await MemcachedServer.start()
        let folder = NSTemporaryDirectory() + "shared-sum-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixture = try Fixture(node: node, folder: folder, label: "sum")
        let (store, cache) = (fixture.store, fixture.cache)
        let thumbnail = SyntheticImages.jpeg(width: 256, height: 192, seed: 9)
        let url = "http://127.0.0.1:9/shared-sum.jpg"
        let key = SharedThumbnailValue.key(url: url, size: 256)
        let value = SharedThumbnailValue(format: .jpeg, width: 256, height: 192, originalWidth: 1024, originalHeight: 768,
                                         image: thumbnail)
        let encoded = value.encoded(key: key)
        #expect(SharedThumbnailValue.decodeVerified(encoded, key: key)?.checksum == SHA256Digest.digest(thumbnail))
        #expect(await store.store(key, encoded, ttl: .seconds(600)))
        let delivered = try await withTimeout(seconds: 30) {
            try await fixture.pipeline.load(ThumbnailRequest(image: .url(url), size: 256))
        }
        #expect(delivered.source == .shared)
        try await withTimeout(seconds: 30) { try await cache.publications.wait { $0 >= 1 } }
        await fixture.close()
        await node.kill()

        // A new open verifies each entry's checksum on its first read: a wrong one is a miss.
        let reopened = try ImageCache(configuration: fixture.configuration.cache, directory: folder + "/cache")
        defer { reopened.close() }
        let hit = reopened.disk.get(CacheKey.thumbnail(url: url, width: 256))
        #expect(hit?.bytes == Data(thumbnail))
    }
}
