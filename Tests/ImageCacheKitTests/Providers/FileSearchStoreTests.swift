import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing

/// The file-backed page store and photo persistence under `<cache_dir>/searches/`, on real files.
@Suite("FileSearchStore: pages and photos on disk", .timeLimit(.minutes(2)))
struct FileSearchStoreTests {
    private static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fss-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
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

    @Test("a saved page is loaded by a new store on the same folder (a restart)")
    func pageSurvivesReopen() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let page = Self.stored([Self.photo(1), Self.photo(2)])
        await (try FileSearchStore(cacheDirectory: folder)).pageStore.save(page, for: Self.key("red car"))

        let reopened = try FileSearchStore(cacheDirectory: folder)
        #expect(await reopened.pageStore.load(Self.key("red car")) == page)
        #expect(await reopened.pageStore.load(Self.key("red car", page: 2)) == nil)
        #expect(await reopened.pageStore.load(Self.key("blue car")) == nil)
    }

    @Test("a damaged page file reads as absent and is replaced by the next save")
    func damagedFileIsAbsent() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try FileSearchStore(cacheDirectory: folder)
        let page = Self.stored([Self.photo(1)])
        await store.pageStore.save(page, for: Self.key("red car"))
        let pages = store.directory.appendingPathComponent("pages").path
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: pages).first)
        try Data("{\"key\": tru".utf8).write(to: URL(fileURLWithPath: pages + "/" + file))

        #expect(await store.pageStore.load(Self.key("red car")) == nil)
        await store.pageStore.save(page, for: Self.key("red car"))
        #expect(await store.pageStore.load(Self.key("red car")) == page)
    }

    @Test("writes leave no temporary files, and leftovers of a crash are cleared on open")
    func noTemporaryFilesRemain() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try FileSearchStore(cacheDirectory: folder)
        for n in 0..<5 { await store.pageStore.save(Self.stored([Self.photo(n)]), for: Self.key("query \(n)")) }
        let pages = store.directory.appendingPathComponent("pages").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: pages).allSatisfy { $0.hasSuffix(".json") })

        #expect(FileManager.default.createFile(atPath: pages + "/.tmp-interrupted", contents: Data("{".utf8)))
        _ = try FileSearchStore(cacheDirectory: folder)
        #expect(!FileManager.default.fileExists(atPath: pages + "/.tmp-interrupted"))
    }

    @Test("removeAll forgets every page (cache.clear searches)")
    func removeAllForgetsPages() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try FileSearchStore(cacheDirectory: folder)
        await store.pageStore.save(Self.stored([Self.photo(1)]), for: Self.key("red car"))
        await store.pageStore.removeAll()
        #expect(await store.pageStore.load(Self.key("red car")) == nil)
    }

    @Test("remembered photos resolve through a registry over a reopened store")
    func photosSurviveReopen() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = PhotoRegistry(persistence: try FileSearchStore(cacheDirectory: folder).photoPersistence)
        await first.remember([Self.photo(1), Self.photo(2)])

        let second = PhotoRegistry(persistence: try FileSearchStore(cacheDirectory: folder).photoPersistence)
        #expect(await second.photo(id: "unsplash:p2") == Self.photo(2))
        #expect(await second.photo(id: "unsplash:p3") == nil)
    }

    @Test("the folder holds at most its capacity of pages; the oldest go first")
    func capacityBoundsFiles() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try FileSearchStore(cacheDirectory: folder, capacity: 20)
        for n in 0..<45 { await store.pageStore.save(Self.stored([Self.photo(n)]), for: Self.key("query \(n)")) }
        let pages = store.directory.appendingPathComponent("pages").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: pages).count <= 20)
        #expect(await store.pageStore.load(Self.key("query 44")) != nil)
    }

    @Test("a folder that cannot be created is an error, not a silent memory-only store")
    func unusableFolderThrows() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/file", contents: Data()))
        #expect(throws: (any Error).self) { _ = try FileSearchStore(cacheDirectory: folder + "/file") }
    }
}
