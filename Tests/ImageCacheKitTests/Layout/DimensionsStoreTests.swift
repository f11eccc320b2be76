import Foundation
@testable import ImageCacheKit
import Testing
import TestSupport

/// `ImageDimensionsStore` over its database in a real folder: what `layout` reads as `decoded`
/// survives a reopen, is written in batches without `record` waiting, and stays bounded.
@Suite("ImageDimensionsStore: decoded sizes persist", .timeLimit(.minutes(2)))
struct DimensionsStoreTests {
    private static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dims-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static let size = ImageDimensionsStore.Size(width: 640, height: 427)

    @Test("sizes recorded by photo and by URL are found by a store reopened on the folder")
    func survivesReopen() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try ImageDimensionsStore(directory: folder)
        #expect(first.isPersistent)
        first.record(Self.size, photo: "unsplash:a", url: "https://images.example/a.jpg")
        first.record(.init(width: 10, height: 20), photo: nil, url: "https://images.example/b.jpg")
        first.close()

        let second = try ImageDimensionsStore(directory: folder)
        #expect(second.decoded(photo: "unsplash:a") == Self.size)
        #expect(second.decoded(url: "https://images.example/a.jpg") == Self.size)
        #expect(second.decoded(url: "https://images.example/b.jpg") == .init(width: 10, height: 20))
        #expect(second.decoded(photo: "unsplash:b") == nil)
    }

    @Test("record returns before the write; the batch lands on disk a moment later, without close")
    func recordDoesNotWrite() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try ImageDimensionsStore(directory: folder)
        for n in 0..<100 { store.record(Self.size, photo: "unsplash:p\(n)", url: nil) }
        // Nothing flushed by hand: the scheduled batch writes it. A second store on the same
        // file sees it once it has.
        let reader = try ImageDimensionsStore(directory: folder)
        try await withTimeout(seconds: 30) { try await store.writtenRecords.wait { $0 >= 100 } }
        #expect(reader.decoded(photos: (0..<100).map { "unsplash:p\($0)" }).count == 100)
        store.close()
    }

    @Test("the batch lookup answers memory hits and database hits together, and skips unknown ids")
    func batchLookup() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try ImageDimensionsStore(directory: folder)
        first.record(Self.size, photo: "unsplash:old", url: nil)
        first.close()
        let second = try ImageDimensionsStore(directory: folder)
        second.record(.init(width: 1, height: 2), photo: "unsplash:new", url: nil)
        let found = second.decoded(photos: ["unsplash:old", "unsplash:new", "unsplash:none", "unsplash:old"])
        #expect(found == ["unsplash:old": Self.size, "unsplash:new": .init(width: 1, height: 2)])
    }

    @Test("a newer size for the same photo replaces the older one on disk")
    func newerWins() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try ImageDimensionsStore(directory: folder)
        store.record(Self.size, photo: "unsplash:a", url: nil)
        store.flush()
        store.record(.init(width: 3, height: 4), photo: "unsplash:a", url: nil)
        store.close()
        #expect(try ImageDimensionsStore(directory: folder).decoded(photo: "unsplash:a") == .init(width: 3, height: 4))
    }

    @Test("the database keeps at most its capacity, the least recently recorded going first")
    func boundedOnDisk() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try ImageDimensionsStore(capacity: 10, directory: folder)
        for n in 0..<50 { store.record(Self.size, photo: "unsplash:p\(n)", url: nil) }
        store.close()
        let reopened = try ImageDimensionsStore(capacity: 10, directory: folder)
        let found = reopened.decoded(photos: (0..<50).map { "unsplash:p\($0)" })
        #expect(found.count == 20, "capacity per index, photos and URLs sharing twice that")
        #expect(found["unsplash:p49"] != nil)
        #expect(found["unsplash:p0"] == nil)
    }

    @Test("a damaged database file is replaced, not fatal")
    func damagedFileReplaced() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/dimensions.sqlite",
                                               contents: Data(repeating: 0x5A, count: 4096)))
        let store = try ImageDimensionsStore(directory: folder)
        store.record(Self.size, photo: "unsplash:a", url: nil)
        store.close()
        #expect(try ImageDimensionsStore(directory: folder).decoded(photo: "unsplash:a") == Self.size)
    }

    @Test("a folder that cannot hold the database is an error (the daemon then keeps sizes in memory)")
    func unusableFolderThrows() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/file", contents: Data()))
        #expect(throws: (any Error).self) { _ = try ImageDimensionsStore(directory: folder + "/file") }
    }

    @Test("sizes with a side of 0 are ignored")
    func zeroIgnored() throws {
        let store = ImageDimensionsStore()
        store.record(.init(width: 0, height: 10), photo: "unsplash:a", url: "https://x.example/a.jpg")
        #expect(store.decoded(photo: "unsplash:a") == nil)
        #expect(store.decoded(url: "https://x.example/a.jpg") == nil)
        #expect(!store.isPersistent)
    }
}
