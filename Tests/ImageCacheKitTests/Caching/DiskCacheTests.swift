import Foundation
@testable import ImageCacheKit
import Testing
import TestSupport

@Suite("Caching: disk cache", .timeLimit(.minutes(10)))
struct DiskCacheTests {
    typealias T = CacheTesting

    func open(_ folder: TemporaryFolder, limit: Int = 10 << 20, grace: Duration = .seconds(60),
              clock: CacheTestClock = CacheTestClock(), fileSystem: any CacheFileSystem = PosixCacheFileSystem(),
              sweep: Bool = false) throws -> DiskCache {
        try DiskCache(directory: folder.path, limit: limit, pathGrace: grace, logger: T.logger,
                      fileSystem: fileSystem, clock: clock.cacheClock, sweep: sweep)
    }

    @Test("a stored entry is served with its bytes, metadata and a path holding exactly those bytes")
    func putThenGet() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        let bytes = T.bytes(1, count: 30_000)
        let path = try cache.put(T.thumbKey(1), bytes: bytes, info: T.jpeg)
        let hit = try #require(cache.get(T.thumbKey(1)))
        #expect(hit.bytes == bytes && hit.byteCount == 30_000 && hit.source == .disk && !hit.isStale)
        #expect(hit.info == T.jpeg)
        #expect(hit.path == path)
        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(cache.get(T.thumbKey(2)) == nil)
        let stats = cache.statistics
        #expect(stats.hits == 1 && stats.misses == 1 && stats.entries == 1)
    }

    @Test("entries survive closing and reopening, with their accounting")
    func survivesReopen() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        for i in 0..<20 { try cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 500 + i), info: T.jpeg) }
        let before = cache.statistics
        cache.close()
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.statistics.entries == 20 && cache.statistics.bytes == before.bytes)
        for i in 0..<20 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i, count: 500 + i)) }
        #expect(before.bytes == T.storedBytes(in: folder.path))
    }

    @Test("the least recently used entries are evicted first to stay under the limit")
    func evictionOrder() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        // Room for about four 10 KB entries with their descriptions.
        let cache = try open(folder, limit: 42_000, grace: .seconds(0), clock: clock)
        defer { cache.close() }
        for i in 0..<4 { try cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 10_000), info: T.jpeg) }
        _ = cache.get(T.thumbKey(0), wantPath: false)   // 0 is now the most recent; 1 the least
        clock.advance(by: 1)
        try cache.put(T.thumbKey(4), bytes: T.bytes(4, count: 10_000), info: T.jpeg)
        #expect(!cache.contains(T.thumbKey(1)))
        #expect(cache.contains(T.thumbKey(0)) && cache.contains(T.thumbKey(2)) && cache.contains(T.thumbKey(4)))
        let stats = cache.statistics
        #expect(stats.bytes <= 42_000 && stats.evictions == 1)
        #expect(T.dataFiles(in: folder.path).count == T.filesPerEntry(cache) * stats.entries)
    }

    @Test("access order survives a restart (batched access times are flushed at close)")
    func accessOrderPersists() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        var cache = try open(folder, limit: 42_000, grace: .seconds(0), clock: clock)
        for i in 0..<4 {
            try cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 10_000), info: T.jpeg)
            clock.advance(by: 1)
        }
        _ = cache.get(T.thumbKey(0), wantPath: false)
        cache.close()
        cache = try open(folder, limit: 42_000, grace: .seconds(0), clock: clock)
        defer { cache.close() }
        try cache.put(T.thumbKey(4), bytes: T.bytes(4, count: 10_000), info: T.jpeg)
        #expect(cache.contains(T.thumbKey(0)))
        #expect(!cache.contains(T.thumbKey(1)))
    }

    @Test("an entry larger than the whole limit is refused with tooLarge")
    func tooLargeRefused() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder, limit: 5_000)
        defer { cache.close() }
        #expect(throws: CacheWriteError.self) { try cache.put(T.thumbKey(1), bytes: T.bytes(1, count: 6_000), info: T.jpeg) }
        #expect(cache.statistics.entries == 0)
    }

    @Test("an expired entry misses, unless stale reads are asked, and then says it is stale")
    func expiryAndStaleReads() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        let cache = try open(folder, clock: clock)
        defer { cache.close() }
        let key = CacheKey.searchPage(provider: "unsplash", query: "cats", page: 1, perPage: 20, safe: true)
        let expires = Date(timeIntervalSince1970: clock.cacheClock.now() + 100)
        try cache.put(key, bytes: Data("{}".utf8), info: CacheEntryInfo(contentType: "application/json", expires: expires))
        #expect(cache.get(key)?.isStale == false)
        clock.advance(by: 101)
        #expect(cache.get(key) == nil)
        let stale = try #require(cache.get(key, allowStale: true))
        #expect(stale.isStale && stale.bytes == Data("{}".utf8))
    }

    @Test("a handed-out path stays on disk through eviction until path_grace has passed")
    func pathGraceUnderEviction() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        let cache = try open(folder, limit: 25_000, grace: .seconds(60), clock: clock)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0, count: 10_000), info: T.jpeg)
        let path = try #require(cache.get(T.thumbKey(0))?.path)
        try cache.put(T.thumbKey(1), bytes: T.bytes(1, count: 10_000), info: T.jpeg)
        try cache.put(T.thumbKey(2), bytes: T.bytes(2, count: 10_000), info: T.jpeg) // evicts 0
        #expect(!cache.contains(T.thumbKey(0)))
        #expect(FileManager.default.contents(atPath: path) == T.bytes(0, count: 10_000))
        #expect(cache.deferredUnlinkCount == 1)
        clock.advance(by: 59)
        cache.reapDeferred()
        #expect(FileManager.default.fileExists(atPath: path))
        clock.advance(by: 2)
        cache.reapDeferred()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + ".m"))
    }

    @Test("a handed-out path stays on disk through clear and evict; others go at once")
    func pathGraceUnderClear() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        let cache = try open(folder, clock: clock)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        try cache.put(T.thumbKey(2), bytes: T.bytes(2), info: T.jpeg)
        let handed = try #require(cache.get(T.thumbKey(0))?.path)
        let handedToo = try #require(cache.get(T.thumbKey(2))?.path)
        let notHanded = cache.path(for: T.thumbKey(1))
        cache.removeAll(in: [.thumbnail])
        cache.remove(T.thumbKey(2))
        #expect(cache.statistics.entries == 0)
        #expect(FileManager.default.contents(atPath: handed) == T.bytes(0))
        #expect(FileManager.default.contents(atPath: handedToo) == T.bytes(2))
        #expect(!FileManager.default.fileExists(atPath: notHanded))
        clock.advance(by: 61)
        cache.reapDeferred()
        #expect(!FileManager.default.fileExists(atPath: handed))
    }

    @Test("storing a key again within its grace cancels the deferred unlink")
    func reputCancelsDeferredUnlink() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let clock = CacheTestClock()
        let cache = try open(folder, clock: clock)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        let path = try #require(cache.get(T.thumbKey(0))?.path)
        cache.remove(T.thumbKey(0))
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        clock.advance(by: 120)
        cache.reapDeferred()
        #expect(FileManager.default.contents(atPath: path) == T.bytes(0))
        #expect(cache.get(T.thumbKey(0))?.bytes == T.bytes(0))
    }

    @Test("evicting by URL removes every width of that image, and a prefix removes a host's")
    func evictByURL() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        let a256 = CacheKey.thumbnail(url: "https://a.test/1.jpg", width: 256)
        let a512 = CacheKey.thumbnail(url: "https://a.test/1.jpg", width: 512)
        let a2 = CacheKey.thumbnail(url: "https://a.test/2.jpg", width: 256)
        let b = CacheKey.thumbnail(url: "https://b.test/1.jpg", width: 256)
        for (i, key) in [a256, a512, a2, b].enumerated() { try cache.put(key, bytes: T.bytes(i), info: T.jpeg) }
        cache.remove(url: "https://a.test/1.jpg?api_key=SECRET")
        #expect(!cache.contains(a256) && !cache.contains(a512) && cache.contains(a2))
        cache.remove(url: "https://a.test/", asPrefix: true)
        #expect(!cache.contains(a2) && cache.contains(b))
    }

    @Test("clearing searches leaves thumbnails, and clearing all leaves nothing")
    func clearScopes() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        let search = CacheKey.searchPage(provider: "flickr", query: "dogs", page: 1, perPage: 10, safe: true)
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try cache.put(search, bytes: Data("[]".utf8), info: CacheEntryInfo(contentType: "application/json"))
        try cache.put(.photo(id: "flickr:1"), bytes: Data("{}".utf8), info: CacheEntryInfo(contentType: "application/json"))
        cache.removeAll(in: [.search])
        #expect(cache.contains(T.thumbKey(0)) && !cache.contains(search) && cache.contains(.photo(id: "flickr:1")))
        cache.removeAll(in: Set(CacheNamespace.allCases))
        #expect(cache.statistics.entries == 0 && cache.statistics.bytes == 0)
        #expect(T.dataFiles(in: folder.path).isEmpty)
    }

    @Test("a content file changed behind the cache's back is dropped on its first read after open")
    func checksumVerifiedOnFirstRead() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        let path = try cache.put(T.thumbKey(0), bytes: T.bytes(0, count: 4_000), info: T.jpeg)
        try cache.put(T.thumbKey(1), bytes: T.bytes(1, count: 4_000), info: T.jpeg)
        cache.close()
        var damaged = T.bytes(0, count: 4_000)
        damaged[100] ^= 0xff
        try damaged.write(to: URL(fileURLWithPath: path))
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.get(T.thumbKey(0), wantBytes: false) == nil)
        #expect(!cache.contains(T.thumbKey(0)))
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.get(T.thumbKey(1))?.bytes == T.bytes(1, count: 4_000))
        #expect(cache.statistics.misses == 1 && cache.statistics.hits == 1)
    }

    @Test("orphans are swept after open: files without entries and entries without files")
    func orphansSwept() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        let lost = try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        cache.close()
        // A file published by a writer killed before its index commit, and a file deleted.
        let stray = folder.path + "/data/ab/" + String(repeating: "ab", count: 32)
        try T.bytes(9).write(to: URL(fileURLWithPath: stray))
        try FileManager.default.removeItem(atPath: lost)
        try Data("partial".utf8).write(to: URL(fileURLWithPath: folder.path + "/tmp/x.1"))
        let swept = try open(folder, sweep: true)
        cache = swept
        defer { swept.close() }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/tmp/x.1"))
        try await withTimeout(seconds: 60) { await swept.waitForSweep() }
        #expect(!FileManager.default.fileExists(atPath: stray))
        #expect(!cache.contains(T.thumbKey(1)))
        #expect(cache.contains(T.thumbKey(0)))
        #expect(T.dataFiles(in: folder.path).count == T.filesPerEntry(cache))
        #expect(T.storedBytes(in: folder.path) == cache.statistics.bytes)
    }

    @Test("a deleted index is rebuilt from the entries' descriptions, keys and metadata included")
    func indexDeletedIsRebuilt() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        let search = CacheKey.searchPage(provider: "pixabay", query: "sea", page: 1, perPage: 20, safe: true)
        let expires = Date(timeIntervalSince1970: 1_900_000_000)
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try cache.put(search, bytes: Data("[1]".utf8), info: CacheEntryInfo(contentType: "application/json", expires: expires))
        let bytes = cache.statistics.bytes
        cache.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder.path + "/index.sqlite" + suffix) }
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.statistics.entries == 2 && cache.statistics.bytes == bytes)
        let hit = try #require(cache.get(T.thumbKey(0)))
        #expect(hit.bytes == T.bytes(0) && hit.info == T.jpeg)
        #expect(cache.get(search)?.info.expires == expires)
        cache.remove(url: "https://images.test/0.jpg")
        #expect(!cache.contains(T.thumbKey(0)))
    }

    @Test("a damaged index is rebuilt from the files")
    func indexCorruptedIsRebuilt() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        for i in 0..<5 { try cache.put(T.thumbKey(i), bytes: T.bytes(i), info: T.jpeg) }
        cache.close()
        let index = folder.path + "/index.sqlite"
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: index))
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.statistics.entries == 5)
        for i in 0..<5 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i)) }
    }

    @Test("a second owner of the folder is refused with a clear error")
    func secondOwnerRefused() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        #expect {
            _ = try open(folder)
        } throws: { error in
            guard case .folderInUse(let path) = error as? CacheOpenError else { return false }
            return path == folder.path && "\(error)".contains("in use")
        }
        cache.close()
        let again = try open(folder)   // the lock goes with the first owner
        again.close()
    }

    @Test("the folder removed while running is recreated by the next write")
    func folderRemovedWhileRunning() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try FileManager.default.removeItem(atPath: folder.path)
        #expect(cache.get(T.thumbKey(0)) == nil)      // its file is gone: a miss, not a crash
        let path = try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(FileManager.default.contents(atPath: path) == T.bytes(1))
        #expect(FileManager.default.fileExists(atPath: folder.path + "/index.sqlite"))
        #expect(cache.statistics.entries == 1)
        #expect(cache.get(T.thumbKey(1))?.bytes == T.bytes(1))
        // And the new index really holds it: a reopen by a new owner serves it.
        cache.close()
        let reopened = try open(folder)
        defer { reopened.close() }
        #expect(reopened.get(T.thumbKey(1))?.bytes == T.bytes(1))
    }

    @Test("the folder emptied while running (index kept) is refilled by the next write")
    func folderEmptiedWhileRunning() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try FileManager.default.removeItem(atPath: folder.path + "/data")
        try FileManager.default.removeItem(atPath: folder.path + "/tmp")
        let path = try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(FileManager.default.contents(atPath: path) == T.bytes(1))
        #expect(cache.get(T.thumbKey(0)) == nil && !cache.contains(T.thumbKey(0)))
    }

    @Test("concurrent readers and writers see only complete entries and keep the accounting")
    func concurrentReadersAndWriters() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder, limit: 400_000, grace: .seconds(0))
        defer { cache.close() }
        try await withTimeout(seconds: 120) {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<6 {
                    group.addTask {
                        for i in 0..<150 {
                            let n = (i * 13 + worker * 5) % 60
                            let bytes = T.bytes(n, count: 2_000 + n * 100)
                            if worker % 2 == 0 {
                                _ = try? cache.put(T.thumbKey(n), bytes: bytes, info: T.jpeg)
                            } else if let hit = cache.get(T.thumbKey(n)) {
                                #expect(hit.bytes == bytes)
                            }
                            if i % 50 == 49 { cache.remove(T.thumbKey(n)) }
                        }
                    }
                }
            }
        }
        let stats = cache.statistics
        #expect(stats.bytes <= 400_000)
        #expect(T.dataFiles(in: folder.path).count == T.filesPerEntry(cache) * stats.entries)
        #expect(T.storedBytes(in: folder.path) == stats.bytes)
    }

    @Test("a cache of 100 000 entries opens and serves; the sweep drops the entries without files")
    func hundredThousandEntries() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let cache = try open(folder, limit: 1 << 30)
        cache.close()
        // Build the index directly: 100 000 puts through the debug build on a loaded machine
        // would take minutes. Only every hundredth entry gets its files, so the sweep also has
        // 99 000 entries without a file to find among 100 000. Seconds of synchronous work
        // (a minute under ThreadSanitizer): on a thread of its own, not one of the pool's two.
        let path = folder.path
        try await offCooperativePool {
            let index = try CacheIndex(path: path + "/index.sqlite")
            let fs = PosixCacheFileSystem()
            var rows: [IndexRow] = []
            for i in 0..<100_000 {
                let key = CacheKey.thumbnail(url: "https://many.test/\(i).jpg", width: 64)
                let content = Data("entry \(i)".utf8)
                let digest = key.digest
                let entry = StoredEntry(size: content.count, checksum: DiskCache.checksum(of: content),
                                        contentType: "image/jpeg", width: 64, height: 64, created: Double(i), expires: nil)
                let description = EntryDescription(key: key, entry: entry).encoded()
                if i % 100 == 0 {
                    let file = path + "/data/" + digest.hex.prefix(2) + "/" + digest.hex
                    try fs.writeNewFile(atPath: file, contents: content)
                    try fs.writeNewFile(atPath: file + EntryDescription.fileSuffix, contents: description)
                }
                rows.append(IndexRow(digest: digest, key: key, entry: entry, stored: content.count + description.count,
                                     lastAccess: Double(i)))
                if rows.count == 10_000 {
                    try index.apply(upserts: rows, deletes: [], accessTimes: [:])
                    rows.removeAll()
                }
            }
            index.close()
        }
        // Opening loads and orders the 100 000 rows: off the pool too. The sweep is run by hand
        // after the first look: started by the open, it could finish before that look on a
        // loaded machine (the background start is the subject of the orphan tests above).
        let big = try await offCooperativePool { [self] in try open(folder, limit: 1 << 30, sweep: false) }
        defer { big.close() }
        #expect(big.statistics.entries == 100_000)
        #expect(big.get(CacheKey.thumbnail(url: "https://many.test/77700.jpg", width: 64))?.bytes == Data("entry 77700".utf8))
        try await offCooperativePool { big.sweepOrphans() }
        #expect(big.statistics.entries == 1_000)
        #expect(big.get(CacheKey.thumbnail(url: "https://many.test/500.jpg", width: 64))?.bytes == Data("entry 500".utf8))
        #expect(T.storedBytes(in: folder.path) == big.statistics.bytes)
    }
}
