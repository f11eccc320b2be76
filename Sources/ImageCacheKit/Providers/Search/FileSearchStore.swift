import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Result pages and remembered photos as small JSON files under `<cache_dir>/searches/`, so a
/// restarted daemon answers a search it already made without the network (`fromCache`, or
/// `stale` when expired and the provider is unreachable) and resolves photo ids it returned.
///
/// This is the disk layer until the disk cache (Caching/) backs searches: one file per page
/// (`pages/<sha256 of the page key>.json`) and per photo (`photos/<sha256 of the id>.json`),
/// each written to a temporary file in the same folder and renamed over the old one, so a
/// crash at any moment leaves either the old file or the new one, never a torn one; a file
/// that does not decode (damaged by hand, older format) is treated as absent and replaced at
/// the next save. File names are digests, and the page key holds no API key, so nothing secret
/// reaches the disk.
///
/// Bounded by `capacity` files per folder: past it, the least recently written tenth is
/// removed (a page that has to be fetched again costs one request; a forgotten photo id
/// answers `not_found` only if its provider is unreachable too).
public actor FileSearchStore {
    /// `<cache_dir>/searches`.
    public nonisolated let directory: URL
    private let pages: URL
    private let photos: URL
    private let capacity: Int
    private var counts: [URL: Int] = [:]
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()
    private let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// Opens (creating when needed) `<cacheDirectory>/searches`. Throws when the folder cannot
    /// be created, so the daemon can say so at start-up instead of silently caching nothing.
    public init(cacheDirectory: String, capacity: Int = 20_000) throws {
        directory = URL(fileURLWithPath: cacheDirectory, isDirectory: true).appendingPathComponent("searches", isDirectory: true)
        pages = directory.appendingPathComponent("pages", isDirectory: true)
        photos = directory.appendingPathComponent("photos", isDirectory: true)
        self.capacity = max(10, capacity)
        for folder in [pages, photos] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // Temporary files of a write interrupted by a crash are never renamed: clear them.
        for folder in [pages, photos] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names where name.hasPrefix(".tmp-") {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
            counts[folder] = names.filter { $0.hasSuffix(".json") }.count
        }
    }

    /// The page store view of this folder (for `LayeredSearchPageStore`'s backing layer).
    public nonisolated var pageStore: some SearchPageStore { FileSearchPageStore(store: self) }

    /// The photo persistence view of this folder (for `PhotoRegistry`).
    public nonisolated var photoPersistence: some PhotoPersisting { FilePhotoPersistence(store: self) }

    // MARK: pages

    func loadPage(_ key: SearchPageKey) -> StoredSearchPage? {
        guard let record = read(StoredPageRecord.self, from: file(in: pages, for: key.stableKey)),
              record.key == key else { return nil }
        return record.page
    }

    func savePage(_ page: StoredSearchPage, for key: SearchPageKey) {
        write(StoredPageRecord(key: key, page: page), to: file(in: pages, for: key.stableKey), folder: pages)
    }

    func removeAllPages() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: pages.path)) ?? []
        for name in names { try? FileManager.default.removeItem(at: pages.appendingPathComponent(name)) }
        counts[pages] = 0
    }

    // MARK: photos

    func loadPhoto(id: String) -> ProviderPhoto? {
        guard let photo = read(ProviderPhoto.self, from: file(in: photos, for: id)), photo.id == id else { return nil }
        return photo
    }

    func savePhotos(_ list: [ProviderPhoto]) {
        for photo in list { write(photo, to: file(in: photos, for: photo.id), folder: photos) }
    }

    // MARK: files

    private func file(in folder: URL, for key: String) -> URL {
        folder.appendingPathComponent(SHA256Digest.hex(Array(key.utf8)) + ".json")
    }

    private func read<T: Decodable>(_ type: T.Type, from url: URL) -> T? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try? decoder.decode(type, from: data)
    }

    /// Temp file in the same folder, then rename: readers see the old file or the new one.
    /// A failed write (disk full, read-only folder) only loses this copy; the answer the
    /// client gets does not depend on it.
    private func write<T: Encodable>(_ value: T, to url: URL, folder: URL) {
        guard let data = try? encoder.encode(value) else { return }
        let existed = FileManager.default.fileExists(atPath: url.path)
        let temporary = folder.appendingPathComponent(".tmp-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data) else { return }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            return
        }
        if !existed {
            counts[folder, default: 0] += 1
            if counts[folder, default: 0] > capacity { prune(folder, keeping: url) }
        }
    }

    /// Removes the least recently written tenth of a folder's files (never `kept`, the file
    /// just written, even when the clock's granularity gives it an older file's time).
    private func prune(_ folder: URL, keeping kept: URL) {
        let keys: [URLResourceKey] = [.contentModificationDateKey]
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys)) ?? []
        let dated = files.filter { $0.pathExtension == "json" && $0.lastPathComponent != kept.lastPathComponent }.map { url in
            (url, (try? url.resourceValues(forKeys: Set(keys)).contentModificationDate) ?? .distantPast)
        }.sorted { $0.1 < $1.1 }
        let excess = max(0, min(dated.count, dated.count + 1 - capacity + capacity / 10))
        for (url, _) in dated.prefix(excess) { try? FileManager.default.removeItem(at: url) }
        counts[folder] = dated.count + 1 - excess
    }
}

/// What a page file holds: the key too, so a digest collision or a misplaced file can never
/// answer another search.
private struct StoredPageRecord: Codable {
    var key: SearchPageKey
    var page: StoredSearchPage
}

/// `SearchPageStore` over a `FileSearchStore`.
struct FileSearchPageStore: SearchPageStore {
    let store: FileSearchStore
    func load(_ key: SearchPageKey) async -> StoredSearchPage? { await store.loadPage(key) }
    func save(_ page: StoredSearchPage, for key: SearchPageKey) async { await store.savePage(page, for: key) }
    func removeAll() async { await store.removeAllPages() }
}

/// `PhotoPersisting` over a `FileSearchStore`.
struct FilePhotoPersistence: PhotoPersisting {
    let store: FileSearchStore
    func save(_ photos: [ProviderPhoto]) async { await store.savePhotos(photos) }
    func load(id: String) async -> ProviderPhoto? { await store.loadPhoto(id: id) }
}
