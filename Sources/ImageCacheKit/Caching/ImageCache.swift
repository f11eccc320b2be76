import Foundation
import ImageCacheConfig
import ImageCacheProtocol
import Logging
import Synchronization

/// The cache the pipeline talks to: an LRU memory tier in front of the persistent disk tier.
///
/// Lookups try memory, then disk (a disk hit is promoted to memory); stores go to disk first
/// (so a path exists), then to memory. A failed disk write never fails the caller's request:
/// `put` still keeps the bytes in memory and reports the disk error for the log, so serving
/// continues from memory and the network when the disk is full or read-only.
///
/// Search pages live in the same tiers with an expiry of `search_ttl` and can be read stale
/// when the network is down.
public final class ImageCache: Sendable {
    /// A value of the memory tier.
    struct MemoryEntry: Sendable {
        var bytes: Data
        var info: CacheEntryInfo
        var created: Date
        /// The key's digest and content path, made once at insertion rather than on every
        /// hit (a SHA-256 of the key and a hex string each time).
        var digest: CacheDigest
        var path: String
        /// This entry's number, never given to another (`CacheHit.memoryEntry`): whatever a
        /// caller derives from the bytes (the server's inline answers) stays tied to them.
        var serial: UInt64
    }

    /// Puts `entry` in the memory tier, charged its content, its kept path and the fixed
    /// per-entry overhead.
    func remember(_ entry: MemoryEntry, forKey key: CacheKey) {
        memory.insert(entry, forKey: key, cost: entry.bytes.count + entry.path.utf8.count + Self.memoryOverhead)
    }

    /// A memory entry for `key`.
    func memoryEntry(_ key: CacheKey, bytes: Data, info: CacheEntryInfo, created: Date) -> MemoryEntry {
        let digest = key.digest
        let serial = memorySerials.add(1, ordering: .relaxed).newValue
        return MemoryEntry(bytes: bytes, info: info, created: created, digest: digest, path: disk.contentPath(digest), serial: serial)
    }

    /// Bytes charged per memory entry on top of its content and kept path (key, metadata,
    /// digest, list node), so that many tiny entries cannot exceed `memory_limit` unnoticed.
    static let memoryOverhead = 256

    let memory: MemoryCache<CacheKey, MemoryEntry>
    /// Bumped before an eviction or a clear removes anything. A lookup that read the disk
    /// (or wrote a memory entry back to it) while one ran must not keep what it read or
    /// wrote: the evicted image would come back, in memory and then on disk again.
    let removals = Atomic<UInt64>(0)
    /// The last memory entry's number (`MemoryEntry.serial`).
    private let memorySerials = Atomic<UInt64>(0)
    /// The disk tier. Callers go through the operations below, never to it directly, so the
    /// two tiers' rules (promotion, write-back, eviction order) stay in this type.
    let disk: DiskCache
    let searchTTL: Double
    let clock: CacheClock
    let logger: Logger
    /// Where placed entries are published (`publishLater`), one after the other: after the
    /// answer that carried their path, never in its way.
    let publisher = DispatchQueue(label: "imagecached.cache.publish")
    /// Bumped after each `publishLater` job has run (published or not): what a test awaits
    /// instead of sleeping.
    package let publications = Observed(0)
    /// Placements handed to `publishLater` and not yet published: spare files are made only
    /// when none waits, so they never delay a publication.
    let pendingPublications = Atomic<Int>(0)

    /// Opens both tiers with the limits of `[cache]`; `directory` is the resolved `cache_dir`.
    /// - Throws: `CacheOpenError` (e.g. `folderInUse` when another daemon owns the folder).
    public init(configuration: CacheConfiguration.Cache, directory: String,
                logger: Logger = Logger(label: "imagecached.cache"),
                fileSystem: any CacheFileSystem = PosixCacheFileSystem(), clock: CacheClock = .system) throws(CacheOpenError) {
        memory = MemoryCache(costLimit: configuration.memoryLimit)
        disk = try DiskCache(directory: directory, limit: configuration.diskLimit, pathGrace: configuration.pathGrace,
                             logger: logger, fileSystem: fileSystem, clock: clock)
        searchTTL = configuration.searchTTL.cacheSeconds
        self.clock = clock
        self.logger = logger
    }

    // MARK: Lookup

    /// Looks `key` up in memory, then on disk.
    ///
    /// - Parameters:
    ///   - wantBytes: return the content (a memory hit always has it; a disk hit reads it).
    ///   - wantPath: return the content file's path, valid for `path_grace`. On a memory hit
    ///     whose disk copy is gone, the bytes are written back to disk to get one.
    ///   - allowStale: return an expired entry (marked `isStale`) instead of missing.
    public func get(_ key: CacheKey, wantBytes: Bool = true, wantPath: Bool = true,
                    allowStale: Bool = false) -> CacheHit? {
        let now = clock.now()
        let generation = removals.load(ordering: .sequentiallyConsistent)
        if let entry = memory.value(forKey: key) {
            let expired = entry.info.expires.map { $0.timeIntervalSince1970 <= now } ?? false
            if !expired || allowStale {
                var path: String?
                if wantPath {
                    path = disk.lookup(key, wantBytes: false, wantPath: true, allowStale: true, counted: false)?.path
                    if path == nil, let written = try? disk.put(key, bytes: entry.bytes, info: entry.info) {
                        // Written back after an eviction began: take it out again (a miss).
                        guard removals.load(ordering: .sequentiallyConsistent) == generation else {
                            disk.remove(key)
                            return nil
                        }
                        path = written
                    }
                }
                return CacheHit(key: key, bytes: entry.bytes, path: path, info: entry.info,
                                byteCount: entry.bytes.count, created: entry.created, source: .memory, isStale: expired,
                                memoryEntry: entry.serial)
            }
        }
        guard let hit = disk.get(key, wantBytes: true, wantPath: wantPath, allowStale: allowStale),
              let bytes = hit.bytes else { return nil }
        remember(memoryEntry(key, bytes: bytes, info: hit.info, created: hit.created), forKey: key)
        if removals.load(ordering: .sequentiallyConsistent) != generation {
            // An eviction ran while the file was read: it may have removed the entry before
            // this put it in memory. The caller still gets what it read.
            memory.removeValue(forKey: key)
        }
        var result = hit
        if !wantBytes { result.bytes = nil }
        return result
    }

    /// Whether neither tier has anything under `keys`, from their indexes in memory with no
    /// I/O: a miss the caller may take without a trip to a thread that may block. The misses
    /// `get` would have counted for each key in each tier are counted, so `stats` reads the
    /// same either way; any key present (expired or not) answers false, for `get` to decide.
    package func holdsNone(of keys: [CacheKey]) -> Bool {
        guard memory.holdsNone(of: keys), disk.holdsNone(of: keys.map(\.digest)) else { return false }
        memory.countMisses(keys.count)
        disk.countMisses(keys.count)
        return true
    }

    /// A memory hit whose disk copy is known, with no I/O at all: what an event loop may
    /// call to answer a request inline. nil on anything else (a miss, an expired entry, a disk
    /// copy not yet verified): the caller then takes the ordinary road (`get`).
    /// The hit names its memory entry (`CacheHit.memoryEntry`), so the server can keep what
    /// it derives from the bytes (an inline answer's base64) for as long as they are the same.
    package func memoryHit(_ key: CacheKey) -> CacheHit? {
        guard let entry = memory.value(forKey: key) else { return nil }
        if let expires = entry.info.expires, expires.timeIntervalSince1970 <= clock.now() { return nil }
        guard disk.handOutPath(entry.digest) else { return nil }
        return CacheHit(key: key, bytes: entry.bytes, path: entry.path, info: entry.info, byteCount: entry.bytes.count,
                        created: entry.created, source: .memory, isStale: false, memoryEntry: entry.serial)
    }

    // MARK: Storing

    /// The outcome of a store: the entry is in memory in any case; `path` is its content file
    /// when the disk write succeeded, and `diskError` says why not otherwise (for the log).
    public struct StoreResult: Sendable {
        /// The content file (valid while the entry lives, and for `path_grace` after a lookup).
        public var path: String?
        /// Why the disk did not take the entry; the request that stored it should still succeed.
        package var diskError: CacheWriteError?
    }

    /// Marks the disk copy of `key` as handed out, so its path stays readable for
    /// `path_grace` whatever eviction or clearing comes next (a path going straight to clients).
    func handOutPath(_ key: CacheKey) {
        _ = disk.lookup(key, wantBytes: false, wantPath: true, allowStale: true, counted: false)
    }

    /// Removed entries whose files wait for their handed-out paths' grace before they are
    /// unlinked (for stats and tests).
    package var deferredUnlinkCount: Int { disk.deferredUnlinkCount }

    /// Stores a record on disk only: what must survive a restart but is never served from
    /// memory (a photo's provider record).
    /// - Returns: the record's path.
    @discardableResult
    func putRecord(_ key: CacheKey, bytes: Data, info: CacheEntryInfo) throws(CacheWriteError) -> String {
        try disk.put(key, bytes: bytes, info: info)
    }

    /// A record stored with `putRecord`, read from disk (nil when absent or expired).
    func record(_ key: CacheKey) -> Data? {
        disk.get(key, wantBytes: true, wantPath: false)?.bytes
    }

    /// Stores `bytes` for `key` on disk and in memory.
    @discardableResult
    public func put(_ key: CacheKey, bytes: Data, info: CacheEntryInfo) -> StoreResult {
        var result = StoreResult()
        do {
            result.path = try disk.put(key, bytes: bytes, info: info)
        } catch {
            result.diskError = error
        }
        remember(memoryEntry(key, bytes: bytes, info: info, created: Date(timeIntervalSince1970: clock.now())), forKey: key)
        return result
    }

    // MARK: Search pages

    /// Stores a search-result page (JSON), fresh for `ttl` (default `search_ttl`).
    @discardableResult
    package func putSearchPage(_ key: CacheKey, json: Data, ttl: Duration? = nil) -> StoreResult {
        let seconds = ttl?.cacheSeconds ?? searchTTL
        let info = CacheEntryInfo(contentType: "application/json",
                                  expires: Date(timeIntervalSince1970: clock.now() + seconds))
        return put(key, bytes: json, info: info)
    }

    /// A stored search page: fresh, or (with `allowStale`, when the network failed) expired
    /// with `isStale` set. Survives restarts.
    package func searchPage(_ key: CacheKey, allowStale: Bool = false) -> CacheHit? {
        get(key, wantBytes: true, wantPath: false, allowStale: allowStale)
    }

    // MARK: Evicting and clearing

    /// Removes one entry from both tiers (`cache.evict`). Handed-out paths stay valid for
    /// their grace.
    package func evict(_ key: CacheKey) {
        removals.add(1, ordering: .sequentiallyConsistent)
        memory.removeValue(forKey: key)
        disk.remove(key)
    }

    /// Removes every thumbnail of `url` (every width), or of every URL with that prefix.
    package func evict(url: String, asPrefix: Bool = false) {
        let clean = CacheKey.removingCredentials(from: url)
        removals.add(1, ordering: .sequentiallyConsistent)
        memory.removeAll { key in
            guard let keyURL = key.url else { return false }
            return asPrefix ? keyURL.hasPrefix(clean) : keyURL == clean
        }
        disk.remove(url: clean, asPrefix: asPrefix)
    }

    /// What `cache.clear` empties.
    package enum ClearScope: String, Sendable {
        /// Delivered thumbnails only.
        case thumbnails
        /// Search-result pages only (the next search goes to the network).
        case searches
        /// Everything, including remembered photo metadata.
        case all

        var namespaces: Set<CacheNamespace> {
            switch self {
            case .thumbnails: return [.thumbnail]
            case .searches: return [.search]
            case .all: return Set(CacheNamespace.allCases)
            }
        }
    }

    /// Empties a part of both tiers (`cache.clear`). Handed-out paths stay valid for their
    /// grace. `all` also forgets remembered photo metadata.
    package func clear(_ scope: ClearScope) {
        let namespaces = scope.namespaces
        removals.add(1, ordering: .sequentiallyConsistent)
        memory.removeAll { namespaces.contains($0.namespace) }
        disk.removeAll(in: namespaces)
    }

    // MARK: Statistics and configuration

    /// Both tiers' size and counters, for the `stats` method.
    public struct Statistics: Sendable, Equatable {
        /// `stats.memory`: bytes are content plus a fixed per-entry overhead.
        public var memory: CacheTierStatistics
        /// `stats.disk`: bytes are content files plus their descriptions.
        public var disk: CacheTierStatistics
    }

    /// A snapshot of both tiers.
    public var statistics: Statistics {
        Statistics(memory: memory.statistics, disk: disk.statistics)
    }

    /// Applies new limits after SIGHUP (memory and disk limits; grace and TTL apply at open).
    package func apply(_ configuration: CacheConfiguration.Cache) {
        memory.setLimits(costLimit: configuration.memoryLimit, countLimit: nil)
        disk.setLimit(configuration.diskLimit)
    }

    /// Publishes what was placed (`publishLater`), flushes access times and releases the
    /// folder (daemon shutdown).
    public func close() {
        publisher.sync {}
        disk.close()
    }
}
