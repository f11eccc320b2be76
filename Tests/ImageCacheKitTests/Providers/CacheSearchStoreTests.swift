import Foundation
import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import Logging
import Testing
import TestSupport

/// Search pages and remembered photos in the daemon's `ImageCache` (they replaced the files of
/// `cache_dir/searches/`), on a real cache folder: they survive a reopen, count in the disk
/// figures, and `cache.clear searches` takes the pages but not the photos.
@Suite("CacheSearchPageStore and CachePhotoPersistence: pages and photos in the cache", .timeLimit(.minutes(2)))
struct CacheSearchStoreTests {
    private static let logger: Logger = {
        var logger = Logger(label: "cache-search-store-test")
        logger.logLevel = .critical
        return logger
    }()

    private static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("css-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static func cache(_ folder: String, diskLimit: Int = 1 << 30, searchTTL: Duration = .seconds(3600)) throws -> ImageCache {
        var configuration = CacheConfiguration().cache
        configuration.diskLimit = diskLimit
        configuration.searchTTL = searchTTL
        return try ImageCache(configuration: configuration, directory: folder, logger: logger)
    }

    private static func photo(_ n: Int) -> ProviderPhoto {
        ProviderPhoto(photo: Photo(id: "unsplash:p\(n)", provider: "unsplash", width: 4000, height: 3000,
                                   thumbURL: "https://images.unsplash.com/p\(n)?w=200", fullURL: "https://images.unsplash.com/p\(n)",
                                   author: .init(name: "Ann \(n)", profileURL: nil), likes: n, description: "photo \(n)",
                                   pageURL: nil),
                      variants: [ImageVariant(name: "small", url: "https://images.unsplash.com/p\(n)?w=400", width: 400, height: 300)])
    }

    private static func key(_ text: String, page: Int = 1) -> SearchPageKey {
        SearchPageKey(provider: .unsplash, query: SearchQuery(term: .query(text), page: page, perPage: 10))
    }

    private static func stored(_ photos: [ProviderPhoto]) -> StoredSearchPage {
        StoredSearchPage(page: ProviderSearchPage(photos: photos, page: 1, perPage: 10, total: 42),
                         storedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test("a saved page is loaded from a reopened cache (a restart); other pages are absent")
    func pageSurvivesReopen() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let page = Self.stored([Self.photo(1), Self.photo(2)])
        let first = try Self.cache(folder)
        await CacheSearchPageStore(cache: first).save(page, for: Self.key("red car"))
        first.close()

        let reopened = CacheSearchPageStore(cache: try Self.cache(folder))
        #expect(await reopened.load(Self.key("red car")) == page)
        #expect(await reopened.load(Self.key("red car", page: 2)) == nil)
        #expect(await reopened.load(Self.key("blue car")) == nil)
        let feed = SearchPageKey(provider: .unsplash, query: SearchQuery(term: .recent, page: 1, perPage: 10))
        #expect(await reopened.load(feed) == nil)
        reopened.cache.close()
    }

    @Test("an expired page is still returned: freshness is the coordinator's decision (stale answers)")
    func expiredPageIsReturned() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = CacheSearchPageStore(cache: try Self.cache(folder, searchTTL: .zero))
        let page = Self.stored([Self.photo(1)])
        await store.save(page, for: Self.key("red car"))
        #expect(await store.load(Self.key("red car")) == page)
        store.cache.close()
    }

    @Test("an entry that does not decode reads as absent and is replaced by the next save")
    func damagedEntryIsAbsent() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = CacheSearchPageStore(cache: try Self.cache(folder))
        store.cache.putSearchPage(CacheSearchPageStore.cacheKey(Self.key("red car")), json: Data("{\"key\": tru".utf8))
        #expect(await store.load(Self.key("red car")) == nil)
        let page = Self.stored([Self.photo(1)])
        await store.save(page, for: Self.key("red car"))
        #expect(await store.load(Self.key("red car")) == page)
        store.cache.close()
    }

    @Test("pages count in the disk figures (disk_limit applies to them)")
    func pagesCountOnDisk() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = CacheSearchPageStore(cache: try Self.cache(folder))
        let before = store.cache.statistics.disk
        for n in 0..<3 { await store.save(Self.stored([Self.photo(n)]), for: Self.key("query \(n)")) }
        let after = store.cache.statistics.disk
        #expect(after.entries == before.entries + 3)
        #expect(after.bytes > before.bytes)
        store.cache.close()
    }

    @Test("a page the disk refuses (over disk_limit) is still answered from memory")
    func refusedPageStaysInMemory() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = CacheSearchPageStore(cache: try Self.cache(folder, diskLimit: 64))
        let page = Self.stored([Self.photo(1)])
        await store.save(page, for: Self.key("red car"))
        #expect(store.cache.statistics.disk.entries == 0)
        #expect(await store.load(Self.key("red car")) == page)
        store.cache.close()
    }

    @Test("removeAll forgets every page (cache.clear searches) but keeps remembered photos")
    func removeAllForgetsPagesOnly() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try Self.cache(folder)
        let store = CacheSearchPageStore(cache: cache)
        let photos = CachePhotoPersistence(cache: cache)
        await store.save(Self.stored([Self.photo(1)]), for: Self.key("red car"))
        await photos.save([Self.photo(1)])
        await store.removeAll()
        #expect(await store.load(Self.key("red car")) == nil)
        #expect(await photos.load(id: "unsplash:p1") == Self.photo(1))
        cache.close()
    }

    @Test("remembered photos resolve through a registry over a reopened cache")
    func photosSurviveReopen() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let firstCache = try Self.cache(folder)
        let first = PhotoRegistry(persistence: CachePhotoPersistence(cache: firstCache))
        await first.remember([Self.photo(1), Self.photo(2)])
        #expect(firstCache.statistics.disk.entries == 2)
        firstCache.close()

        let secondCache = try Self.cache(folder)
        let second = PhotoRegistry(persistence: CachePhotoPersistence(cache: secondCache))
        #expect(await second.photo(id: "unsplash:p2") == Self.photo(2))
        #expect(await second.photo(id: "unsplash:p3") == nil)
        secondCache.close()
    }

    /// A persistence whose loads wait until the test lets them go.
    private final class HeldPersistence: PhotoPersisting {
        let stored: ProviderPhoto
        let loading = Observed(0)
        let released = Observed(false)
        init(stored: ProviderPhoto) { self.stored = stored }
        func save(_ photos: [ProviderPhoto]) async {}
        func load(id: String) async -> ProviderPhoto? {
            loading.update { $0 += 1 }
            try? await released.wait { $0 }
            return stored
        }
    }

    @Test("a record remembered while the stored one is read wins over it")
    func newerRecordWinsOverStored() async throws {
        var older = Self.photo(1)
        older.photo.likes = 1
        var newer = Self.photo(1)
        newer.photo.likes = 99
        let persistence = HeldPersistence(stored: older)
        let registry = PhotoRegistry(persistence: persistence)
        let lookup = Task { await registry.photo(id: "unsplash:p1") }
        try await withTimeout(seconds: 20) { try await persistence.loading.wait { $0 >= 1 } }
        await registry.remember([newer])
        persistence.released.publish(true)
        #expect(await lookup.value?.photo.likes == 99)
        #expect(registry.remembered(id: "unsplash:p1")?.photo.likes == 99)
    }

    @Test("photo records stay out of the memory tier (the registry is the memory layer)")
    func photosSkipMemoryTier() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try Self.cache(folder)
        await CachePhotoPersistence(cache: cache).save([Self.photo(1), Self.photo(2)])
        #expect(cache.statistics.memory.entries == 0)
        #expect(cache.statistics.disk.entries == 2)
        cache.close()
    }
}
