import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit
#if canImport(Glibc)
import Glibc
#endif

/// `imagecache-bench footprint`: the resident memory each kind of remembered thing costs, for
/// the memory formula (docs/operating.md).
///
/// The memory tier is bounded by `memory_limit`, but three other structures grow with what
/// the daemon has seen, each up to a bound of its own: the disk tier's in-memory index (one
/// record per entry on disk, so up to `disk_limit` ÷ the average entry), the decoded
/// dimensions (up to 100 000 photo ids and 100 000 URLs) and the photo registry (up to 20 000
/// photos, each with its variants' URLs). Each is filled here with `count` items in a process
/// of its own making and measured as the growth of RSS after freed pages are returned
/// (`malloc_trim`), divided by the count.
struct FootprintBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "footprint",
        abstract: "Resident bytes per disk-index entry, per remembered dimension and per remembered photo.",
        discussion: """
            Example:
              swift run -c release --package-path Benchmarks imagecache-bench footprint --count 50000
            The photo records are the corpus's Unsplash search answer (\(FootprintBenchmark.corpusPage)),
            given distinct ids; the disk index is a real cache folder under --folder, removed after.
            """
    )

    static let corpusPage = "api/unsplash/pyunsplash_search_photos_query_blue.json"

    @Option(help: "Items of each kind.")
    var count: Int = 50_000

    @Option(help: "Folder for the disk cache (a fresh subfolder is made and removed).")
    var folder: String = NSTemporaryDirectory()

    @Option(help: "The test corpus folder (the repository's Tests/Fixtures/corpus, from Benchmarks/).")
    var corpus: String = "../Tests/Fixtures/corpus"

    @Option(help: .hidden)
    var fillDiskCache: String?

    func run() throws {
        if let fillDiskCache {
            // The child's part: fill the folder, so the parent's heap never held the entries.
            try Self.fill(fillDiskCache, count: count)
            return
        }
        let root = folder + "/imagecache-footprint-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        print("footprint: \(count) items of each kind; RSS after malloc_trim, before and after")
        try measureDiskIndex(root)
        measureDimensions()
        try measurePhotos()
    }

    /// Resident bytes now, after returning free heap pages to the kernel.
    static func residentBytes() -> Int {
        HeapTrimmer.releaseFreePages()
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kib * 1024
    }

    static func report(_ name: String, before: Int, after: Int, count: Int) {
        let growth = after - before
        print("  " + name.padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: "%8.1f MiB for %d = %6.0f B each", Double(growth) / 1_048_576, count, Double(growth) / Double(count)))
    }

    /// Puts `count` small entries into a new cache at `path`.
    static func fill(_ path: String, count: Int) throws {
        let cache = try DiskCache(directory: path, limit: 8 << 30, pathGrace: .seconds(60))
        let payload = Data(repeating: 1, count: 512)
        let info = CacheEntryInfo(contentType: "image/jpeg", width: 512, height: 341)
        for i in 0..<count {
            try cache.put(CacheKey.thumbnail(url: "https://images.unsplash.com/photo-\(1_500_000_000_000 + i)-\(i)?ixlib=rb-4.0.3&w=400", width: 512),
                          bytes: payload, info: info)
        }
        cache.close()
    }

    /// The disk tier's index, as a reopened cache holds it (records only, no content). The
    /// folder is filled by a child process: filled here, the freed pages of the fill would be
    /// reused by the index and hide its cost.
    func measureDiskIndex(_ root: String) throws {
        let path = root + "/disk"
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["footprint", "--count", String(count), "--fill-disk-cache", path]
        try child.run()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else { throw ValidationError("filling the disk cache failed") }
        let before = Self.residentBytes()
        let cache = try DiskCache(directory: path, limit: 8 << 30, pathGrace: .seconds(60), sweep: false)
        precondition(cache.statistics.entries == count)
        let after = Self.residentBytes()
        Self.report("disk index (per entry on disk)", before: before, after: after, count: count)
        cache.close()
    }

    /// Decoded sizes by photo id and by URL, in the store's memory.
    func measureDimensions() {
        let store = ImageDimensionsStore(capacity: max(count, 1))
        let before = Self.residentBytes()
        for i in 0..<count {
            store.record(.init(width: 4000 + i % 1000, height: 3000), photo: "unsplash:photo-\(i)-abcdefghij",
                         url: "https://images.unsplash.com/photo-\(1_500_000_000_000 + i)-\(i)?ixlib=rb-4.0.3")
        }
        let after = Self.residentBytes()
        Self.report("dimensions (per image: its id and URL)", before: before, after: after, count: count)
        withExtendedLifetime(store) {}
    }

    /// Photo records as a search remembers them.
    func measurePhotos() throws {
        let page = try Self.corpusPhotos(corpus + "/" + Self.corpusPage)
        precondition(!page.isEmpty, "no photos in the corpus page")
        let registry = PhotoRegistry(capacity: max(count, 1))
        let before = Self.residentBytes()
        let done = DispatchSemaphore(value: 0)
        let count = self.count
        Task {
            var batch: [ProviderPhoto] = []
            for i in 0..<count {
                var photo = page[i % page.count]
                photo.photo.id = "unsplash:\(i)-" + photo.photo.id.dropFirst("unsplash:".count)
                batch.append(photo)
                if batch.count == 100 {
                    await registry.remember(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            await registry.remember(batch)
            done.signal()
        }
        done.wait()
        let after = Self.residentBytes()
        Self.report("photo registry (per photo, corpus records)", before: before, after: after, count: count)
        // What `CachePhotoPersistence` writes per photo (its encoder), for the disk-index bound.
        let encoder = JSONEncoder()
        let recordSizes = page.compactMap { try? encoder.encode($0).count }
        print("  " + "photo record on disk (JSON, no sidecar)".padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: "%8.0f B on average over the corpus page's %d photos",
                       Double(recordSizes.reduce(0, +)) / Double(max(1, recordSizes.count)), recordSizes.count))
        withExtendedLifetime(registry) {}
    }

    /// The photos of a corpus Unsplash search answer, as the provider reads them.
    static func corpusPhotos(_ path: String) throws -> [ProviderPhoto] {
        let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var settings = ProviderSettings(CacheConfiguration(), for: .unsplash)
        settings.apiKey = "footprint"
        let provider = UnsplashProvider(settings: settings)
        let query = SearchQuery(term: .query("blue"), page: 1, perPage: 30)
        return try provider.decodeSearch(HTTPResponse(status: 200, headers: [], body: body), for: query).photos
    }
}
