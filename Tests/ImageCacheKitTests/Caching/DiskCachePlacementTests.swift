import Foundation
import ImageCacheConfig
@testable import ImageCacheKit
import Testing
import TestSupport

/// A put in two halves (`place`, then `publish`), as a shared-tier hit stores its thumbnail: the
/// file is complete and readable before its index row exists, and the disk cache's guarantees
/// (crash safety, path grace, the orphan sweep) hold across the gap.
@Suite("Caching: a placed file before and after its publication", .timeLimit(.minutes(2)))
struct DiskCachePlacementTests {
    typealias T = CacheTesting

    func open(_ folder: TemporaryFolder, clock: CacheTestClock) throws -> DiskCache {
        try DiskCache(directory: folder.path, limit: 10 << 20, pathGrace: .seconds(60), logger: T.logger,
                      fileSystem: PosixCacheFileSystem(), clock: clock.cacheClock, sweep: false)
    }

    @Test("a placed file is readable at once, unseen by lookups and kept by the sweep; published, its path keeps its grace")
    func placeThenPublish() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        let cache = try open(folder, clock: clock)
        defer { cache.close() }
        let bytes = T.bytes(1, count: 20_000)
        let placed = try cache.place(T.thumbKey(1), bytes: bytes, checksum: DiskCache.checksum(of: bytes), info: T.jpeg)
        #expect(FileManager.default.contents(atPath: placed.path) == bytes)
        #expect(!cache.contains(T.thumbKey(1)))
        #expect(cache.get(T.thumbKey(1)) == nil)
        cache.sweepOrphans()
        #expect(FileManager.default.contents(atPath: placed.path) == bytes)

        try cache.publish(placed, handOut: true)
        let hit = try #require(cache.get(T.thumbKey(1), wantBytes: true, wantPath: false))
        #expect(hit.bytes == bytes && hit.info == T.jpeg)
        #expect(cache.statistics.entries == 1 && cache.statistics.bytes > bytes.count)
        // Published with its path handed out: an eviction defers the unlink for the grace.
        cache.remove(T.thumbKey(1))
        #expect(cache.deferredUnlinkCount == 1)
        #expect(FileManager.default.fileExists(atPath: placed.path))
        clock.advance(by: 61)
        cache.reapDeferred()
        #expect(!FileManager.default.fileExists(atPath: placed.path))
    }

    @Test("a file placed and never published (the daemon died before the index commit) is swept after the next open")
    func unpublishedIsAnOrphan() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        var cache = try open(folder, clock: clock)
        let bytes = T.bytes(2, count: 5_000)
        let placed = try cache.place(T.thumbKey(2), bytes: bytes, checksum: DiskCache.checksum(of: bytes), info: T.jpeg)
        cache.close()
        cache = try open(folder, clock: clock)
        defer { cache.close() }
        #expect(!cache.contains(T.thumbKey(2)))
        cache.sweepOrphans()
        #expect(!FileManager.default.fileExists(atPath: placed.path))
        #expect(!FileManager.default.fileExists(atPath: placed.path + ".m"))
        #expect(T.dataFiles(in: folder.path).isEmpty)
    }

    @Test("placing over an entry not yet verified: no lookup meanwhile drops the new file for the old checksum")
    func placeOverAnUnverifiedEntry() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        var cache = try open(folder, clock: clock)
        try cache.put(T.thumbKey(3), bytes: T.bytes(3, count: 4_000), info: T.jpeg)
        cache.close()
        // Reopened, the entry is unverified: its first read checks the file against its checksum.
        cache = try open(folder, clock: clock)
        defer { cache.close() }
        let newer = T.bytes(4, count: 6_000)
        let placed = try cache.place(T.thumbKey(3), bytes: newer, checksum: DiskCache.checksum(of: newer), info: T.jpeg)
        #expect(cache.get(T.thumbKey(3)) == nil)
        #expect(FileManager.default.contents(atPath: placed.path) == newer)
        try cache.publish(placed, handOut: false)
        #expect(cache.get(T.thumbKey(3))?.bytes == newer)
        #expect(cache.statistics.entries == 1)
    }

    @Test("a placement asking for a spare takes an empty file made ahead of time; spares left at close go at the next open")
    func sparesMadeAhead() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        var cache = try open(folder, clock: clock)
        let temp = { (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/tmp")) ?? [] }
        cache.makeSpares()
        #expect(temp().count == DiskCache.spareFiles)
        let bytes = T.bytes(6, count: 7_000)
        let placed = try cache.place(T.thumbKey(6), bytes: bytes, checksum: DiskCache.checksum(of: bytes), info: T.jpeg, spare: true)
        #expect(temp().count == DiskCache.spareFiles - 1)
        #expect(FileManager.default.contents(atPath: placed.path) == bytes)
        try cache.publish(placed, handOut: false)
        #expect(cache.get(T.thumbKey(6))?.bytes == bytes)
        // Without a spare asked for, a put makes its own temp file and takes none.
        try cache.put(T.thumbKey(7), bytes: bytes, info: T.jpeg)
        #expect(temp().count == DiskCache.spareFiles - 1)
        cache.makeSpares()
        #expect(temp().count == DiskCache.spareFiles)
        cache.close()
        cache = try open(folder, clock: clock)
        defer { cache.close() }
        #expect(temp().isEmpty)
        #expect(cache.get(T.thumbKey(6))?.bytes == bytes)
    }

    @Test("closing the cache publishes what was placed first: the entry is found after a reopen")
    func closePublishesFirst() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let configuration = CacheConfiguration.Cache()
        var cache = try ImageCache(configuration: configuration, directory: folder.path, logger: T.logger)
        let bytes = T.bytes(8, count: 2_000)
        cache.publishLater(try cache.place(T.thumbKey(8), bytes: bytes, info: T.jpeg))
        cache.close()
        cache = try ImageCache(configuration: configuration, directory: folder.path, logger: T.logger)
        defer { cache.close() }
        #expect(cache.get(T.thumbKey(8))?.bytes == bytes)
    }

    @Test("a placement given up after its path went out stays readable for the grace, then goes")
    func abandonedAfterHandingOut() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        let cache = try open(folder, clock: clock)
        defer { cache.close() }
        let bytes = T.bytes(5, count: 3_000)
        let placed = try cache.place(T.thumbKey(5), bytes: bytes, checksum: DiskCache.checksum(of: bytes), info: T.jpeg)
        cache.abandon(placed, handedOut: true)
        #expect(cache.deferredUnlinkCount == 1)
        cache.sweepOrphans()
        #expect(FileManager.default.contents(atPath: placed.path) == bytes)
        clock.advance(by: 61)
        cache.reapDeferred()
        #expect(!FileManager.default.fileExists(atPath: placed.path))
        #expect(T.dataFiles(in: folder.path).isEmpty)
    }
}
