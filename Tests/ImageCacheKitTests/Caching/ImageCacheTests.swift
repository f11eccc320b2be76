import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Caching: memory in front of disk", .timeLimit(.minutes(1)))
struct ImageCacheTests {
    typealias T = CacheTesting

    func open(_ folder: TemporaryFolder, clock: CacheTestClock = CacheTestClock(), memoryLimit: Int = 1 << 20,
              fileSystem: any CacheFileSystem = PosixCacheFileSystem()) throws -> ImageCache {
        var configuration = CacheConfiguration.Cache()
        configuration.memoryLimit = memoryLimit
        configuration.diskLimit = 10 << 20
        configuration.searchTTL = .seconds(3600)
        return try ImageCache(configuration: configuration, directory: folder.path, logger: T.logger,
                              fileSystem: fileSystem, clock: clock.cacheClock)
    }

    @Test("a stored entry is served from memory, then from disk after a restart, then memory again")
    func tiersAndSources() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        let stored = cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        #expect(stored.diskError == nil && stored.path != nil)
        let first = try #require(cache.get(T.thumbKey(0)))
        #expect(first.source == .memory && first.path == stored.path && first.bytes == T.bytes(0))
        cache.close()
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.get(T.thumbKey(0))?.source == .disk)
        #expect(cache.get(T.thumbKey(0))?.source == .memory)
        let stats = cache.statistics
        #expect(stats.memory.hits == 1 && stats.memory.misses == 1 && stats.disk.hits == 1 && stats.disk.entries == 1)
    }

    @Test("an eviction while the entry is read from disk does not bring it back", arguments: ["key", "url", "clear"])
    func evictionDuringDiskRead(how: String) async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        let key = CacheKey.thumbnail(url: "https://images.test/evicted.jpg", width: 256)
        cache.put(key, bytes: T.bytes(7), info: T.jpeg)
        cache.close()
        // A restart: the entry is on disk only, so the next get reads its file.
        let fs = FaultyFileSystem()
        cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        fs.reads.hold()
        let reading = cache
        // The read blocks in the file system: on a thread of its own, not the cooperative pool.
        let reader = Task {
            await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: reading.get(key)) }.start()
            }
        }
        // Evict in the middle of the read, then let it finish.
        try await withTimeout(seconds: 20) { try await fs.reads.waiting.wait { $0 >= 1 } }
        switch how {
        case "key": cache.evict(key)
        case "url": cache.evict(url: "https://images.test/evicted.jpg")
        default: cache.clear(.thumbnails)
        }
        fs.reads.release()
        let read = await reader.value
        #expect(read?.bytes == T.bytes(7), "the reader still gets what it read")
        #expect(cache.memoryHit(key) == nil)
        #expect(cache.get(key) == nil, "evicted, the entry must not come back from memory or disk")
    }

    @Test("a memory hit whose disk copy is being written back when the entry is evicted is a miss, and leaves nothing on disk")
    func evictionDuringWriteBack() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        let cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        let key = CacheKey.thumbnail(url: "https://images.test/written-back.jpg", width: 256)
        cache.put(key, bytes: T.bytes(8), info: T.jpeg)
        // The disk copy goes (a sweep, a clear from outside); memory still has the entry, so
        // asking for a path writes it back.
        cache.disk.remove(key)
        fs.writes.hold()
        let reading = cache
        let reader = Task {
            await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: reading.get(key)) }.start()
            }
        }
        // Evict while the write-back is in the file system, then let it finish.
        try await withTimeout(seconds: 20) { try await fs.writes.waiting.wait { $0 >= 1 } }
        cache.evict(key)
        fs.writes.release()
        let read = await reader.value
        #expect(read == nil, "evicted during the write-back: a miss, not a path to a file that is going")
        #expect(cache.disk.get(key) == nil, "the written-back copy is taken out again")
        #expect(cache.get(key) == nil)
    }

    @Test("with the disk refusing writes, entries are still served from memory and the error is reported")
    func diskFailureFallsBackToMemory() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        let cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        fs.inject(.writeFails(ENOSPC))
        let stored = cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        #expect(stored.path == nil && stored.diskError != nil)
        let hit = try #require(cache.get(T.thumbKey(0)))
        #expect(hit.source == .memory && hit.bytes == T.bytes(0) && hit.path == nil)
        // Once the disk recovers, asking for a path writes the memory copy back.
        fs.inject(nil)
        let healed = try #require(cache.get(T.thumbKey(0)))
        #expect(healed.path.flatMap { FileManager.default.contents(atPath: $0) } == T.bytes(0))
    }

    @Test("the memory tier holds payload bytes only, and a hit names its entry: new bytes, a new number")
    func memoryHitNamesItsEntry() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        let charged = cache.statistics.memory.bytes
        let first = try #require(cache.memoryHit(T.thumbKey(0)))
        #expect(first.bytes == T.bytes(0))
        let entry = try #require(first.memoryEntry)
        // Hits of the same entry name it alike and charge nothing more.
        #expect(cache.memoryHit(T.thumbKey(0))?.memoryEntry == entry)
        #expect(cache.get(T.thumbKey(0))?.memoryEntry == entry)
        #expect(cache.statistics.memory.bytes == charged)
        // New bytes for the key are a new entry, under a number never used before.
        cache.put(T.thumbKey(0), bytes: T.bytes(1), info: T.jpeg)
        let second = try #require(cache.memoryHit(T.thumbKey(0)))
        #expect(second.bytes == T.bytes(1))
        #expect(second.memoryEntry != nil && second.memoryEntry != entry)
        // A disk hit names no memory entry.
        #expect(try #require(cache.disk.get(T.thumbKey(0))).memoryEntry == nil)
    }

    @Test("the memory tier stays under its limit whatever is stored")
    func memoryBounded() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder, memoryLimit: 50_000)
        defer { cache.close() }
        for i in 0..<30 { cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 5_000), info: T.jpeg) }
        let stats = cache.statistics
        #expect(stats.memory.bytes <= 50_000 && stats.memory.evictions > 0)
        #expect(stats.disk.entries == 30)
        #expect(cache.get(T.thumbKey(0))?.source == .disk)
    }

    @Test("a search page is fresh for its TTL, stale after, and survives a restart")
    func searchPages() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        var cache = try open(folder, clock: clock)
        let key = CacheKey.searchPage(provider: "unsplash", query: "lake", page: 1, perPage: 30, safe: true)
        cache.putSearchPage(key, json: Data(#"{"photos":[]}"#.utf8))
        #expect(cache.searchPage(key)?.isStale == false)
        clock.advance(by: 3601)
        #expect(cache.searchPage(key) == nil)
        #expect(cache.searchPage(key, allowStale: true)?.isStale == true)
        cache.close()
        cache = try open(folder, clock: clock)
        defer { cache.close() }
        let stale = try #require(cache.searchPage(key, allowStale: true))
        #expect(stale.isStale && stale.source == .disk && stale.bytes == Data(#"{"photos":[]}"#.utf8))
    }

    @Test("holdsNone answers a miss from the indexes alone, counted as get counts it; any key held, expired or not, leaves it to get")
    func missesKnownWithoutReading() throws {
        let folder = TemporaryFolder(), twin = TemporaryFolder()
        defer { folder.remove(); twin.remove() }
        let clock = CacheTestClock()
        var cache = try open(folder, clock: clock)
        let reference = try open(twin, clock: clock)
        defer { reference.close() }
        let keys = [T.thumbKey(1), T.thumbKey(2), T.thumbKey(3)]
        #expect(cache.holdsNone(of: keys))
        for key in keys { #expect(reference.get(key) == nil) }
        // The misses it answered read as get's would have.
        #expect(cache.statistics.memory.misses == reference.statistics.memory.misses)
        #expect(cache.statistics.disk.misses == reference.statistics.disk.misses)
        #expect(cache.statistics.disk.misses == keys.count)

        cache.put(keys[2], bytes: T.bytes(2), info: T.jpeg)
        let before = cache.statistics
        // One key held: not answered, nothing counted (get will count what it finds).
        #expect(!cache.holdsNone(of: keys))
        #expect(cache.statistics.disk.misses == before.disk.misses && cache.statistics.memory.misses == before.memory.misses)
        #expect(cache.holdsNone(of: Array(keys.prefix(2))))
        #expect(cache.statistics.disk.misses == before.disk.misses + 2)
        // After a restart the entry is on disk only (no memory tier): still held.
        cache.close()
        cache = try open(folder, clock: clock, memoryLimit: 0)
        #expect(!cache.holdsNone(of: [keys[2]]))
        #expect(cache.get(keys[2])?.source == .disk)
        // An expired entry is still held: get decides it (a miss unless stale reads are allowed).
        let page = CacheKey.searchPage(provider: "unsplash", query: "lake", page: 1, perPage: 30, safe: true)
        cache.putSearchPage(page, json: Data(#"{"photos":[]}"#.utf8))
        clock.advance(by: 3601)
        #expect(!cache.holdsNone(of: [page]))
        #expect(cache.searchPage(page, allowStale: true)?.isStale == true)
        cache.close()
    }

    @Test("evict and clear empty both tiers")
    func evictAndClear() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        let search = CacheKey.searchPage(provider: "pixabay", query: "sky", page: 1, perPage: 20, safe: true)
        cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        cache.putSearchPage(search, json: Data("{}".utf8))
        cache.evict(url: "https://images.test/0.jpg")
        #expect(cache.get(T.thumbKey(0)) == nil)
        cache.clear(.thumbnails)
        #expect(cache.get(T.thumbKey(1)) == nil && cache.searchPage(search) != nil)
        cache.clear(.all)
        #expect(cache.searchPage(search) == nil)
        let stats = cache.statistics
        #expect(stats.memory.entries == 0 && stats.disk.entries == 0)
    }
}
