import Foundation
@testable import ImageCacheKit
import Logging
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Something other than a regular file at the index's paths (a folder, a FIFO, a symlink) is
/// moved aside, never followed nor deleted, and the index is rebuilt from the content files;
/// when it cannot be moved, opening fails naming what to remove (docs/operating.md,
/// "Configuration").
@Suite("Caching: what stands in the index's way", .timeLimit(.minutes(5)))
struct IndexInTheWayTests {
    typealias T = CacheTesting

    /// `CacheTestClock`'s start, 1 800 000 000 s after the epoch, in the aside name's form.
    static let stamp = "20270115T080000Z"

    /// A cache of five entries, closed, in a fresh folder.
    func filledFolder() throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        let cache = try open(folder)
        for i in 0..<5 { try cache.put(T.thumbKey(i), bytes: T.bytes(i), info: T.jpeg) }
        cache.close()
        return folder
    }

    func open(_ folder: TemporaryFolder, logger: Logger = T.logger,
              fileSystem: any CacheFileSystem = PosixCacheFileSystem()) throws -> DiskCache {
        try DiskCache(directory: folder.path, limit: 10 << 20, pathGrace: .seconds(60), logger: logger,
                      fileSystem: fileSystem, clock: CacheTestClock().cacheClock, sweep: false)
    }

    /// Removes the index's files, so that `make` can put something else in their place.
    func removeIndex(_ folder: TemporaryFolder) {
        for suffix in ["", "-wal", "-shm"] { unlink(folder.path + "/index.sqlite" + suffix) }
    }

    /// Opens the folder with something at `name`, and checks the entries came back, the thing
    /// was moved aside whole and a notice said so.
    func expectMovedAside(_ name: String, kind: String, make: (String) throws -> Void,
                          check: (String) throws -> Void) throws {
        let folder = try filledFolder()
        defer { folder.remove() }
        removeIndex(folder)
        let path = folder.path + "/" + name
        try make(path)
        let capture = LeftOutLogTests.Capture()
        let cache = try open(folder, logger: Logger(label: "test") { _ in capture })
        defer { cache.close() }
        #expect(cache.statistics.entries == 5)
        for i in 0..<5 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i)) }
        let aside = path + ".in-the-way." + Self.stamp
        #expect(DiskCache.nonRegularKind(atPath: aside) == kind)
        try check(aside)
        #expect(DiskCache.nonRegularKind(atPath: folder.path + "/index.sqlite") == nil)
        let notices = capture.all.filter { $0.0 == .notice && $0.2["path"] == path }
        #expect(notices.count == 1 && notices.first?.2["now"] == aside && notices.first?.2["was"] == kind)
        // The new index is a real one: reopening finds the entries without a rebuild.
        cache.close()
        let again = try open(folder)
        defer { again.close() }
        #expect(again.statistics.entries == 5)
    }

    @Test("a folder at the index's path is moved aside with what it holds, and the index rebuilt")
    func folderMovedAside() throws {
        try expectMovedAside("index.sqlite", kind: "a folder") { path in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/notes.txt"))
        } check: { aside in
            #expect(FileManager.default.contents(atPath: aside + "/notes.txt") == Data("mine".utf8))
        }
    }

    @Test("a symlink at the index's path is moved itself; the file it points to is untouched")
    func symlinkNotFollowed() throws {
        let outside = TemporaryFolder("outside")
        defer { outside.remove() }
        let target = outside.path + "/precious.db"
        try Data("not an index".utf8).write(to: URL(fileURLWithPath: target))
        try expectMovedAside("index.sqlite", kind: "a symlink") { path in
            #expect(symlink(target, path) == 0)
        } check: { aside in
            let destination = try FileManager.default.destinationOfSymbolicLink(atPath: aside)
            #expect(destination == target)
        }
        #expect(FileManager.default.contents(atPath: target) == Data("not an index".utf8))
    }

    @Test("a FIFO at the index's path is moved aside (opening it would block)")
    func fifoMovedAside() throws {
        try expectMovedAside("index.sqlite", kind: "a FIFO") { path in
            #expect(mkfifo(path, 0o600) == 0)
        } check: { _ in }
    }

    @Test("a folder at the WAL's path is moved aside too, and the index rebuilt")
    func walFolderMovedAside() throws {
        try expectMovedAside("index.sqlite-wal", kind: "a folder") { path in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        } check: { _ in }
    }

    @Test("a name already taken by an earlier move is never replaced")
    func asideNameNotReused() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/index.sqlite"
        let first = DiskCache.asideName(for: path, now: 1_800_000_000)
        #expect(first == path + ".in-the-way." + Self.stamp)
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: first))
        #expect(DiskCache.asideName(for: path, now: 1_800_000_000) == first + "-2")
    }

    @Test("when the move fails the open fails naming the path to remove, and nothing is touched")
    func moveRefused() throws {
        let folder = try filledFolder()
        defer { folder.remove() }
        removeIndex(folder)
        let path = folder.path + "/index.sqlite"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let fs = FaultyFileSystem()
        fs.inject(.readOnly(EROFS))
        #expect {
            _ = try open(folder, fileSystem: fs)
        } throws: { error in
            guard case .inTheWay(let at, let kind, _, let failure) = error as? CacheOpenError else { return false }
            return at == path && kind == "a folder" && failure.code == EROFS
                && "\(error)".contains("remove or rename \(path) yourself")
        }
        #expect(DiskCache.nonRegularKind(atPath: path) == "a folder")
        // The lock went with the failed open: a fixed folder opens at once.
        fs.inject(nil)
        let cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        #expect(cache.statistics.entries == 5)
    }
}
