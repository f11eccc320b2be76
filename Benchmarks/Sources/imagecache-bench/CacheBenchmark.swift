import ArgumentParser
import Foundation
import ImageCacheConfig
import ImageCacheKit

/// `imagecache-bench cache`: the Caching part's throughput.
///
/// Memory get and insert (one thread), disk put and get of 30 KB entries (warm page
/// cache), and the time to open a cache of 100 000 entries. Beside each disk figure it
/// prints the floor the file system allows (the bare temp-write + rename, or read, of the
/// same files), so the cache's own overhead is visible. Targets: memory get
/// ≥ 3 M ops/s, disk put ≥ 5 000/s, disk get ≥ 50 000/s, open of 100 000 entries < 300 ms.
struct CacheBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Memory and disk cache throughput, and the open time of a 100 000-entry cache.",
        discussion: """
            Example:
              swift run -c release --package-path Benchmarks imagecache-bench cache --folder /var/tmp/bench
            The folder is created, used and removed; it should be on the disk the daemon would use.
            """
    )

    @Option(help: "Folder for the disk caches (a fresh subfolder is made and removed).")
    var folder: String = NSTemporaryDirectory()

    @Option(help: "Memory operations per measurement.")
    var memoryOperations: Int = 5_000_000

    @Option(help: "Disk puts of 30 KB entries.")
    var diskPuts: Int = 5_000

    @Option(help: "Disk gets (cycling over the entries put).")
    var diskGets: Int = 100_000

    @Option(help: "Entries in the cache whose open time is measured.")
    var openEntries: Int = 100_000

    func run() throws {
        let root = folder + "/imagecache-bench-cache-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        print("cache benchmark (\(ProcessInfo.processInfo.activeProcessorCount) cores, load \(Self.loadAverage()))")
        measureMemory()
        try measureImageCacheMemory(root + "/tiers")
        try measureDisk(root + "/disk")
        try measureOpen(root + "/open")
    }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func report(_ name: String, _ count: Int, _ seconds: Double, target: String) {
        let rate = Double(count) / seconds
        let formatted = rate >= 1e6 ? String(format: "%.2f M/s", rate / 1e6) : String(format: "%.0f /s", rate)
        print("  " + pad(name, 36) + pad(formatted, 12, left: true)
              + String(format: "   (%d in %.3f s; target ", count, seconds) + target + ")")
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return left ? fill + text : text + fill
    }

    func measureMemory() {
        print("memory (MemoryCache<CacheKey, Data> called from this module, unspecialised; one thread)")
        let keys = (0..<10_000).map { CacheKey.thumbnail(url: "https://images.example/photo-\($0).jpg", width: 256) }
        let value = Data(repeating: 7, count: 1024)
        let cache = MemoryCache<CacheKey, Data>(costLimit: 64 << 20)
        for key in keys { cache.insert(value, forKey: key, cost: value.count) }
        var found = 0
        let getTime = Self.seconds {
            for i in 0..<memoryOperations where cache.value(forKey: keys[i % keys.count]) != nil { found += 1 }
        }
        precondition(found == memoryOperations)
        Self.report("get (hit)", memoryOperations, getTime, target: "≥ 3 M/s")
        // Inserts into a full cache: every insert evicts one entry.
        let small = MemoryCache<CacheKey, Data>(costLimit: 5_000 * 1024)
        let insertTime = Self.seconds {
            for i in 0..<memoryOperations { small.insert(value, forKey: keys[i % keys.count], cost: value.count) }
        }
        Self.report("insert (with eviction)", memoryOperations, insertTime, target: "—")
    }

    /// The memory tier as the pipeline reaches it: `ImageCache.get` answered from memory
    /// (the generic cache specialised inside ImageCacheKit, plus the expiry check).
    func measureImageCacheMemory(_ path: String) throws {
        print("memory tier through ImageCache.get (one thread)")
        var configuration = CacheConfiguration.Cache()
        configuration.memoryLimit = 64 << 20
        let cache = try ImageCache(configuration: configuration, directory: path)
        defer { cache.close() }
        let keys = (0..<10_000).map { CacheKey.thumbnail(url: "https://images.example/photo-\($0).jpg", width: 256) }
        let value = Data(repeating: 7, count: 1024)
        let info = CacheEntryInfo(contentType: "image/jpeg", width: 256, height: 170)
        for key in keys { cache.put(key, bytes: value, info: info) }
        var found = 0
        let getTime = Self.seconds {
            for i in 0..<memoryOperations where cache.get(keys[i % keys.count], wantPath: false)?.source == .memory { found += 1 }
        }
        precondition(found == memoryOperations)
        Self.report("get (memory hit, bytes)", memoryOperations, getTime, target: "≥ 3 M/s")
    }

    func measureDisk(_ path: String) throws {
        print("disk (DiskCache, 30 KB entries)")
        let cache = try DiskCache(directory: path, limit: 4 << 30, pathGrace: .seconds(60))
        defer { cache.close() }
        let keys = (0..<diskPuts).map { CacheKey.thumbnail(url: "https://images.example/\($0).jpg", width: 256) }
        let payloads = (0..<16).map { seed in Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }) }
        let info = CacheEntryInfo(contentType: "image/jpeg", width: 256, height: 170)
        let putTime = try Self.seconds {
            for (i, key) in keys.enumerated() { try cache.put(key, bytes: payloads[i % 16], info: info) }
        }
        Self.report("put", diskPuts, putTime, target: "≥ 5 000/s")
        var hits = 0
        // First pass verifies every checksum; the measured passes are warm.
        for key in keys { _ = cache.get(key, wantPath: false) }
        let getTime = Self.seconds {
            for i in 0..<diskGets where cache.get(keys[i % keys.count], wantPath: false)?.bytes != nil { hits += 1 }
        }
        precondition(hits == diskGets)
        Self.report("get (bytes, warm)", diskGets, getTime, target: "≥ 50 000/s")
        let pathTime = Self.seconds {
            for i in 0..<diskGets where cache.get(keys[i % keys.count], wantBytes: false)?.path != nil { hits += 1 }
        }
        Self.report("get (path only)", diskGets, pathTime, target: "—")

        // The floor: the same files written (temp + rename) and read with no cache around them.
        let fs = PosixCacheFileSystem()
        let floorPath = path + "-floor"
        try fs.createDirectory(atPath: floorPath)
        let floorWrite = try Self.seconds {
            for i in 0..<diskPuts {
                try fs.writeNewFile(atPath: floorPath + "/t\(i)", contents: payloads[i % 16])
                try fs.rename(floorPath + "/t\(i)", to: floorPath + "/\(i)")
            }
        }
        Self.report("floor: write + rename", diskPuts, floorWrite, target: "—")
        let floorRead = try Self.seconds {
            for i in 0..<diskGets { _ = try fs.readFile(atPath: floorPath + "/\(i % diskPuts)") }
        }
        Self.report("floor: read", diskGets, floorRead, target: "—")
    }

    func measureOpen(_ path: String) throws {
        print("open (\(openEntries) entries of 2 KB)")
        var cache = try DiskCache(directory: path, limit: 4 << 30, pathGrace: .seconds(60))
        let payload = Data(repeating: 1, count: 2048)
        let info = CacheEntryInfo(contentType: "image/jpeg", width: 64, height: 64)
        let fill = try Self.seconds {
            for i in 0..<openEntries {
                try cache.put(CacheKey.thumbnail(url: "https://images.example/many/\(i).jpg", width: 64),
                              bytes: payload, info: info)
            }
        }
        Self.report("put (filling)", openEntries, fill, target: "—")
        cache.close()
        var times: [Double] = []
        for _ in 0..<5 {
            var opened: DiskCache?
            times.append(try Self.seconds {
                opened = try DiskCache(directory: path, limit: 4 << 30, pathGrace: .seconds(60), sweep: false)
            })
            precondition(opened!.statistics.entries == openEntries)
            opened!.close()
        }
        cache = try DiskCache(directory: path, limit: 4 << 30, pathGrace: .seconds(60), sweep: false)
        let sweep = Self.seconds { cache.sweepOrphans() }
        cache.close()
        let sorted = times.sorted()
        print("  " + Self.pad("open", 36) + Self.pad(String(format: "%.1f ms", sorted[2] * 1000), 12, left: true)
              + String(format: "   (median of 5; min %.1f, max %.1f; target < 300 ms)", sorted[0] * 1000, sorted[4] * 1000))
        print("  " + Self.pad("orphan sweep", 36) + Self.pad(String(format: "%.1f ms", sweep * 1000), 12, left: true)
              + "   (background, after open)")
    }
}
