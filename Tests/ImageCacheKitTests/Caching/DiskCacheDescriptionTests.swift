import Foundation
@testable import ImageCacheKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where an entry's description is kept (an extended attribute of its content file, or a
/// `.m` file beside it where the file system keeps none), and that a lost index is rebuilt
/// from either, including a folder written with `.m` files only.
@Suite("Caching: disk cache entries' descriptions", .timeLimit(.minutes(2)))
struct DiskCacheDescriptionTests {
    typealias T = CacheTesting

    /// Whether the file system of the system temp folder keeps user extended attributes
    /// (ext4 does; tmpfs only since Linux 6.6).
    static let attributesHere: Bool = {
        let folder = TemporaryFolder("xattr-probe")
        defer { folder.remove() }
        let fs = PosixCacheFileSystem()
        let file = folder.path + "/probe"
        guard (try? fs.writeNewFile(atPath: file, contents: Data())) != nil else { return false }
        return (try? fs.setAttribute(EntryDescription.attributeName, to: Data("x".utf8), atPath: file)) != nil
    }()

    /// Both ways of keeping descriptions where this file system has attributes; the `.m`
    /// files alone otherwise.
    static let ways: [Bool] = attributesHere ? [true, false] : [false]

    /// A file system keeping descriptions in attributes, or one refusing them as tmpfs
    /// before Linux 6.6 does.
    static func fileSystem(attributes: Bool) -> FaultyFileSystem {
        let fs = FaultyFileSystem()
        if !attributes { fs.inject(.attributesRefused(ENOTSUP)) }
        return fs
    }

    func open(_ folder: TemporaryFolder, limit: Int = 10 << 20, fileSystem: any CacheFileSystem = PosixCacheFileSystem()) throws -> DiskCache {
        try DiskCache(directory: folder.path, limit: limit, pathGrace: .seconds(0), logger: T.logger,
                      fileSystem: fileSystem, sweep: false)
    }

    func deleteIndex(_ folder: TemporaryFolder) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: folder.path + "/index.sqlite" + suffix) }
    }

    func descriptionFiles(in folder: TemporaryFolder) -> [String] {
        T.dataFiles(in: folder.path).keys.filter { $0.hasSuffix(EntryDescription.fileSuffix) }.sorted()
    }

    func attribute(of path: String) -> Data? {
        try? PosixCacheFileSystem().attribute(EntryDescription.attributeName, atPath: path)
    }

    @Test("the real file system writes a file and its attribute through one descriptor; a refused attribute leaves the file written and says why",
          .enabled(if: attributesHere, "needs user extended attributes in the temp folder"))
    func writeWithAttribute() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = PosixCacheFileSystem()
        let path = folder.path + "/entry"
        let refused = try fs.writeFile(atPath: path, contents: T.bytes(1), exclusive: true,
                                       attribute: (EntryDescription.attributeName, Data("described".utf8)))
        #expect(refused == nil)
        #expect(try fs.readFile(atPath: path) == T.bytes(1))
        #expect(attribute(of: path) == Data("described".utf8))
        // Exclusive: an existing file is left as it was.
        #expect(throws: CacheFileSystemError.self) {
            _ = try fs.writeFile(atPath: path, contents: T.bytes(2), exclusive: true,
                                 attribute: (EntryDescription.attributeName, Data("other".utf8)))
        }
        #expect(try fs.readFile(atPath: path) == T.bytes(1))
        // Truncating a spare, with an attribute no file system takes (no namespace): written, and the refusal returned.
        let failure = try fs.writeFile(atPath: path, contents: T.bytes(3, count: 50), exclusive: false,
                                       attribute: ("no-namespace", Data("x".utf8)))
        #expect(failure?.operation == "fsetxattr" && failure?.code == EOPNOTSUPP && failure?.path == path)
        #expect(try fs.readFile(atPath: path) == T.bytes(3, count: 50))
    }

    @Test("an entry is one file, its description in an attribute; a lost index is rebuilt from the attributes",
          .enabled(if: attributesHere, "needs user extended attributes in the temp folder"))
    func oneFilePerEntry() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var cache = try open(folder)
        #expect(cache.descriptionsInAttributes)
        let search = CacheKey.searchPage(provider: "pixabay", query: "sea", page: 1, perPage: 20, safe: true)
        let expires = Date(timeIntervalSince1970: 1_900_000_000)
        let path = try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try cache.put(search, bytes: Data("[1]".utf8), info: CacheEntryInfo(contentType: "application/json", expires: expires))
        #expect(T.dataFiles(in: folder.path).count == 2)
        #expect(descriptionFiles(in: folder).isEmpty)
        let described = try #require(attribute(of: path).flatMap(EntryDescription.init(decoding:)))
        #expect(described.key == T.thumbKey(0) && described.entry.size == T.bytes(0).count)
        let bytes = cache.statistics.bytes
        #expect(T.storedBytes(in: folder.path) == bytes && bytes > T.bytes(0).count + 3)
        cache.close()

        deleteIndex(folder)
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.statistics.entries == 2 && cache.statistics.bytes == bytes)
        let hit = try #require(cache.get(T.thumbKey(0)))
        #expect(hit.bytes == T.bytes(0) && hit.info == T.jpeg)
        #expect(cache.get(search)?.info.expires == expires)
        #expect(T.dataFiles(in: folder.path).count == 2 && descriptionFiles(in: folder).isEmpty)
    }

    @Test("where the file system refuses extended attributes, each entry gets a .m file, and a lost index is rebuilt from them")
    func descriptionFilesWhereNoAttributes() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = Self.fileSystem(attributes: false)
        var cache = try open(folder, fileSystem: fs)
        #expect(!cache.descriptionsInAttributes)
        var paths: [String] = []
        for i in 0..<3 { paths.append(try cache.put(T.thumbKey(i), bytes: T.bytes(i), info: T.jpeg)) }
        #expect(descriptionFiles(in: folder) == paths.map { $0 + EntryDescription.fileSuffix }.sorted())
        for path in paths { #expect(attribute(of: path) == nil) }
        let bytes = cache.statistics.bytes
        #expect(T.storedBytes(in: folder.path) == bytes)
        cache.close()

        deleteIndex(folder)
        cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        #expect(cache.statistics.entries == 3 && cache.statistics.bytes == bytes)
        for i in 0..<3 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i)) }
    }

    @Test("on a real file system without extended attributes (ramfs), descriptions go in .m files and a lost index is rebuilt from them",
          .enabled(if: CacheTesting.canMount, "needs permission to mount a ramfs"))
    func ramfsKeepsNoAttributes() throws {
        let folder = TemporaryFolder("ramfs")
        defer {
            T.run("/bin/umount", ["-l", folder.path])
            folder.remove()
        }
        try #require(T.run("/bin/mount", ["-t", "ramfs", "ramfs", folder.path]) == 0)
        var cache = try open(folder, limit: 42_000)
        #expect(!cache.descriptionsInAttributes)
        for i in 0..<6 { try cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 10_000), info: T.jpeg) }
        let stats = cache.statistics
        #expect(stats.entries == 4 && stats.evictions == 2)
        #expect(descriptionFiles(in: folder).count == 4 && T.dataFiles(in: folder.path).count == 8)
        #expect(T.storedBytes(in: folder.path) == stats.bytes)
        cache.close()

        deleteIndex(folder)
        cache = try open(folder, limit: 42_000)
        defer { cache.close() }
        #expect(cache.statistics.entries == 4 && cache.statistics.bytes == stats.bytes)
        for i in 2..<6 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i, count: 10_000)) }
        cache.removeAll(in: [.thumbnail])
        #expect(T.dataFiles(in: folder.path).isEmpty)
    }

    @Test("an attribute that fails for another reason (EIO) fails that put and leaves no file; attributes stay on for the next",
          .enabled(if: attributesHere, "needs user extended attributes in the temp folder"))
    func attributeFailsOtherwise() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        let cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        fs.inject(.attributesRefused(EIO))
        #expect(throws: CacheWriteError.self) { try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg) }
        #expect(T.dataFiles(in: folder.path).isEmpty)
        let temporary = (try? FileManager.default.contentsOfDirectory(atPath: cache.tempDirectory)) ?? []
        #expect(temporary.filter { !$0.hasPrefix("spare.") }.isEmpty, "\(temporary)")
        #expect(cache.descriptionsInAttributes && cache.statistics.entries == 0)
        fs.inject(nil)
        let path = try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(attribute(of: path) != nil && descriptionFiles(in: folder).isEmpty)
        #expect(cache.get(T.thumbKey(1))?.bytes == T.bytes(1))
    }

    @Test("a description too big for the file system's attributes goes in a .m file for that entry alone",
          .enabled(if: attributesHere, "needs user extended attributes in the temp folder"))
    func tooBigForAnAttribute() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        var cache = try open(folder, fileSystem: fs)
        fs.inject(.attributesRefused(E2BIG))
        let big = try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        fs.inject(nil)
        let small = try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(cache.descriptionsInAttributes)
        #expect(descriptionFiles(in: folder) == [big + EntryDescription.fileSuffix])
        #expect(attribute(of: big) == nil && attribute(of: small) != nil)
        let bytes = cache.statistics.bytes
        #expect(T.storedBytes(in: folder.path) == bytes)
        cache.close()

        deleteIndex(folder)
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.statistics.entries == 2 && cache.statistics.bytes == bytes)
        for i in 0..<2 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i)) }
    }

    @Test("a file system refusing attributes after open: that entry and the later ones get .m files",
          .enabled(if: attributesHere, "needs user extended attributes in the temp folder"))
    func refusedAfterOpen() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = FaultyFileSystem()
        let cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        let first = try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        fs.inject(.attributesRefused(ENOTSUP))
        let refused = try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        #expect(!cache.descriptionsInAttributes)
        fs.inject(nil)
        let later = try cache.put(T.thumbKey(2), bytes: T.bytes(2), info: T.jpeg)
        #expect(attribute(of: first) != nil && attribute(of: later) == nil)
        #expect(descriptionFiles(in: folder) == [refused, later].map { $0 + EntryDescription.fileSuffix }.sorted())
        #expect(T.storedBytes(in: folder.path) == cache.statistics.bytes)
    }

    @Test("a folder written with a .m file beside each content file rebuilds, serves, is rewritten entry by entry, and sweeps")
    func earlierLayoutRebuilds() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        try open(folder).close()
        let fs = PosixCacheFileSystem()
        let suffix = EntryDescription.fileSuffix
        func file(_ key: CacheKey) -> String {
            folder.path + "/data/" + key.digest.hex.prefix(2) + "/" + key.digest.hex
        }
        func writeEntry(_ key: CacheKey, _ content: Data, description: Data? = nil) throws {
            let entry = StoredEntry(size: content.count, checksum: DiskCache.checksum(of: content), info: T.jpeg, created: 1_000)
            try fs.writeNewFile(atPath: file(key), contents: content)
            try fs.writeNewFile(atPath: file(key) + suffix,
                                contents: description ?? EntryDescription(key: key, entry: entry).encoded())
        }
        for i in 0..<3 { try writeEntry(T.thumbKey(i), T.bytes(i)) }
        // A description without its content, a content without a description, and a damaged one.
        try fs.writeNewFile(atPath: file(T.thumbKey(10)) + suffix, contents: EntryDescription(
            key: T.thumbKey(10), entry: StoredEntry(size: 5, checksum: CacheDigest(of: "x"), info: T.jpeg, created: 1)).encoded())
        try fs.writeNewFile(atPath: file(T.thumbKey(11)), contents: T.bytes(11))
        try writeEntry(T.thumbKey(12), T.bytes(12), description: Data("ICE1 torn".utf8))

        deleteIndex(folder)
        var cache = try open(folder)
        #expect(cache.statistics.entries == 3)
        for i in 0..<3 { #expect(cache.get(T.thumbKey(i))?.bytes == T.bytes(i)) }
        #expect(Set(T.dataFiles(in: folder.path).keys) == Set((0..<3).flatMap { [file(T.thumbKey($0)), file(T.thumbKey($0)) + suffix] }))
        #expect(T.storedBytes(in: folder.path) == cache.statistics.bytes)

        // A new entry for an old key drops the old key's .m file where attributes hold descriptions.
        try cache.put(T.thumbKey(0), bytes: T.bytes(100), info: T.jpeg)
        #expect(cache.descriptionsInAttributes == (fs.fileSize(atPath: file(T.thumbKey(0)) + suffix) == nil))
        // Removing an old entry removes its .m file.
        cache.remove(T.thumbKey(1))
        #expect(fs.fileSize(atPath: file(T.thumbKey(1))) == nil && fs.fileSize(atPath: file(T.thumbKey(1)) + suffix) == nil)
        #expect(T.storedBytes(in: folder.path) == cache.statistics.bytes)
        cache.close()

        // Files of no entry, in the old layout, are orphans to the sweep.
        try writeEntry(T.thumbKey(20), T.bytes(20))
        try fs.writeNewFile(atPath: file(T.thumbKey(21)) + suffix, contents: Data("x".utf8))
        cache = try open(folder)
        cache.sweepOrphans()
        #expect(fs.fileSize(atPath: file(T.thumbKey(20))) == nil && fs.fileSize(atPath: file(T.thumbKey(20)) + suffix) == nil)
        #expect(fs.fileSize(atPath: file(T.thumbKey(21)) + suffix) == nil)
        #expect(cache.statistics.entries == 2)
        #expect(T.storedBytes(in: folder.path) == cache.statistics.bytes)
        let bytes = cache.statistics.bytes
        cache.close()

        // Both layouts at once (key 0 rewritten, key 2 as it was) rebuild together.
        deleteIndex(folder)
        cache = try open(folder)
        defer { cache.close() }
        #expect(cache.statistics.entries == 2 && cache.statistics.bytes == bytes)
        #expect(cache.get(T.thumbKey(0))?.bytes == T.bytes(100) && cache.get(T.thumbKey(2))?.bytes == T.bytes(2))
    }

    @Test("a torn description drops its entry on rebuild, the others stay", arguments: ways)
    func tornDescriptionDropped(attributes: Bool) throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let fs = Self.fileSystem(attributes: attributes)
        var cache = try open(folder, fileSystem: fs)
        #expect(cache.descriptionsInAttributes == attributes)
        let torn = try cache.put(T.thumbKey(0), bytes: T.bytes(0), info: T.jpeg)
        try cache.put(T.thumbKey(1), bytes: T.bytes(1), info: T.jpeg)
        cache.close()

        let real = PosixCacheFileSystem()
        if attributes {
            let value = try real.attribute(EntryDescription.attributeName, atPath: torn)
            try real.setAttribute(EntryDescription.attributeName, to: value.dropLast(3), atPath: torn)
        } else {
            let value = try real.readFile(atPath: torn + EntryDescription.fileSuffix)
            try real.writeFile(atPath: torn + EntryDescription.fileSuffix, contents: value.dropLast(3))
        }
        deleteIndex(folder)
        cache = try open(folder, fileSystem: fs)
        defer { cache.close() }
        #expect(!cache.contains(T.thumbKey(0)) && cache.get(T.thumbKey(1))?.bytes == T.bytes(1))
        #expect(real.fileSize(atPath: torn) == nil && real.fileSize(atPath: torn + EntryDescription.fileSuffix) == nil)
        #expect(T.dataFiles(in: folder.path).count == T.filesPerEntry(cache))
        #expect(T.storedBytes(in: folder.path) == cache.statistics.bytes)
    }

    @Test("eviction, removal and clearing leave no stray file", arguments: ways)
    func nothingLeftBehind(attributes: Bool) throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        // Room for about four 10 KB entries with their descriptions.
        let cache = try open(folder, limit: 42_000, fileSystem: Self.fileSystem(attributes: attributes))
        defer { cache.close() }
        #expect(cache.descriptionsInAttributes == attributes)
        for i in 0..<10 { try cache.put(T.thumbKey(i), bytes: T.bytes(i, count: 10_000), info: T.jpeg) }
        var stats = cache.statistics
        #expect(stats.evictions == 6 && stats.entries == 4)
        #expect(T.dataFiles(in: folder.path).count == (attributes ? 1 : 2) * stats.entries)
        #expect(T.storedBytes(in: folder.path) == stats.bytes)
        cache.remove(T.thumbKey(9))
        stats = cache.statistics
        #expect(T.dataFiles(in: folder.path).count == (attributes ? 1 : 2) * stats.entries)
        #expect(T.storedBytes(in: folder.path) == stats.bytes)
        cache.removeAll(in: [.thumbnail])
        #expect(T.dataFiles(in: folder.path).isEmpty && cache.statistics.bytes == 0)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/tmp")) ?? []).isEmpty)
    }
}
