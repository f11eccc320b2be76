import Foundation
@testable import ImageCacheKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Caching: disk cache faults", .timeLimit(.minutes(2)))
struct DiskCacheFaultTests {
    typealias T = CacheTesting

    func expectIntact(_ cache: DiskCache, folder: TemporaryFolder, entries: Int) {
        let stats = cache.statistics
        #expect(stats.entries == entries)
        let files = T.dataFiles(in: folder.path)
        #expect(files.count == T.filesPerEntry(cache) * entries)
        #expect(T.storedBytes(in: folder.path) == stats.bytes)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/tmp")) ?? []).isEmpty)
    }

    @Test("disk full: the write is reported and skipped, earlier entries stay, later writes work")
    func diskFullInjected() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        let cache = try DiskCache(directory: folder.path, limit: 1 << 20, pathGrace: .seconds(1), logger: T.logger,
                                  fileSystem: fs, sweep: false)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        fs.inject(.writeFails(ENOSPC))
        #expect {
            try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        } throws: { error in
            guard case .fileSystem(let failure) = error as? CacheWriteError else { return false }
            return failure.code == ENOSPC
        }
        #expect(cache.get(T.thumbKey(1)) == nil)
        #expect(cache.get(T.thumbKey(0))?.bytes == T.bytes(0))
        expectIntact(cache, folder: folder, entries: 1)
        fs.inject(nil)
        try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(cache.get(T.thumbKey(1))?.bytes == T.bytes(1))
    }

    @Test("read-only folder: writes are reported and skipped, reads go on")
    func readOnlyInjected() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        let cache = try DiskCache(directory: folder.path, limit: 1 << 20, pathGrace: .seconds(1), logger: T.logger,
                                  fileSystem: fs, sweep: false)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        fs.inject(.readOnly(EROFS))
        #expect(throws: CacheWriteError.self) { try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg) }
        fs.inject(.readOnly(EACCES))
        #expect(throws: CacheWriteError.self) { try cache.put(T.thumbKey(2), bytes: T.bytes(2), info: T.jpeg) }
        fs.inject(nil)
        #expect(cache.get(T.thumbKey(0))?.bytes == T.bytes(0))
        expectIntact(cache, folder: folder, entries: 1)
    }

    @Test("disk full on a real size-limited tmpfs: writes past the space fail cleanly",
          .enabled(if: CacheTesting.canMount, "needs permission to mount a tmpfs"))
    func diskFullOnTmpfs() throws {
        let folder = TemporaryFolder("tmpfs")
        defer {
            T.run("/bin/umount", ["-l", folder.path])
            folder.remove()
        }
        try #require(T.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", folder.path]) == 0)
        let cache = try DiskCache(directory: folder.path + "/cache", limit: 100 << 20, pathGrace: .seconds(1),
                                  logger: T.logger, sweep: false)
        defer { cache.close() }
        var stored: [Int] = []
        var failures = 0
        for i in 0..<40 {
            do {
                try cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 60_000), info: T.jpeg)
                stored.append(i)
            } catch {
                failures += 1
            }
        }
        #expect(failures > 0 && !stored.isEmpty)
        for i in stored { #expect(cache.get(T.thumbKey(i), wantPath: false)?.bytes == T.bytes(i, count: 60_000)) }
        let stats = cache.statistics
        #expect(stats.entries == stored.count)
        #expect(T.storedBytes(in: folder.path + "/cache") == stats.bytes)
        // Space freed, writing works again.
        cache.removeAll(in: [.thumbnail])
        try cache.put(T.thumbKey(99), bytes: T.bytes(99, count: 60_000), info: T.jpeg)
    }

    @Test("the folder turning read-only while running (a read-only bind mount): writes fail with EROFS, reads go on",
          .enabled(if: CacheTesting.canMount, "needs permission to mount"))
    func readOnlyMountWhileRunning() throws {
        let folder = TemporaryFolder("romount")
        var mounted = false
        defer {
            if mounted { T.run("/bin/umount", ["-l", folder.path]) }
            folder.remove()
        }
        let cache = try DiskCache(directory: folder.path, limit: 10 << 20, pathGrace: .seconds(1),
                                  logger: T.logger, sweep: false)
        defer { cache.close() }
        try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try #require(T.run("/bin/mount", ["--bind", folder.path, folder.path]) == 0)
        mounted = true
        try #require(T.run("/bin/mount", ["-o", "remount,bind,ro", folder.path]) == 0)
        #expect {
            try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        } throws: { error in
            guard case .fileSystem(let failure) = error as? CacheWriteError else { return false }
            return failure.code == EROFS
        }
        #expect(cache.get(T.thumbKey(0))?.bytes == T.bytes(0))
        #expect(cache.get(T.thumbKey(1)) == nil)
        // A second daemon opening the read-only folder is told why it cannot use it.
        #expect {
            _ = try DiskCache(directory: folder.path, limit: 10 << 20, pathGrace: .seconds(1), logger: T.logger, sweep: false)
        } throws: { error in
            "\(error)".contains(folder.path)
        }
        // Writable again: writes resume.
        try #require(T.run("/bin/umount", [folder.path]) == 0)
        mounted = false
        try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(cache.get(T.thumbKey(1))?.bytes == T.bytes(1))
        #expect(cache.statistics.entries == 2)
    }
}
