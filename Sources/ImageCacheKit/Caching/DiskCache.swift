import Synchronization
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The persistent tier: content files on disk, described by a crash-safe SQLite index.
///
/// **Layout** of the folder: `lock` (the single-owner `flock`), `index.sqlite` (+ WAL),
/// `tmp/` (files being written) and `data/xx/<sha256 of key>`, one content file per entry
/// carrying its description in an extended attribute (or, where the file system keeps none,
/// a `.m` file beside it: see `EntryDescription`; which one is probed at each open),
/// sharded by the first two hex digits so no folder holds more than a few hundred files at
/// 100 000 entries.
///
/// **Crash safety**: a put writes the content under `tmp/` with its description in an
/// extended attribute, renames it into place (so the two appear together), then commits the
/// index row; where the file system keeps no attributes, a `.m` description file is written
/// in place between the rename and the row. A caller that must answer with the path first
/// does the two halves apart (`place`, then `publish`), and the sweep keeps a placed file
/// meanwhile. A `kill -9` at any moment leaves either no row (the renamed files are orphans,
/// swept in the background after the next open) or a complete row with complete files; a
/// description torn by a crash is recognised and its entry dropped if the index must be
/// rebuilt. Since a crash loses no page
/// cache, no fsync is paid per entry; instead every entry's checksum is verified on its
/// first read after an open, and a mismatch (a power loss, a file changed from outside) is
/// dropped and reported as a miss.
///
/// **Bounds**: the bytes of content plus descriptions stay under the limit (`disk_limit`);
/// least recently used entries are evicted first. Access order lives in memory and is
/// written to the index in batches, so a read costs no SQLite write.
///
/// **Paths**: a lookup that hands out a path keeps that file on disk for at least
/// `path_grace`, whatever eviction or clearing happens meanwhile: the unlink is deferred.
///
/// **Faults**: a failed write (disk full, read-only folder, permissions) throws
/// `CacheWriteError` and leaves nothing behind; a folder removed from outside is recreated
/// on the next write; a missing or damaged index is rebuilt from the entries' descriptions
/// and logged.
///
/// All methods are synchronous and thread-safe; they do blocking file I/O, as small and
/// short as the cache's files are.
public final class DiskCache: Sendable {
    /// The cache folder.
    public let directory: String
    let dataDirectory: String
    let tempDirectory: String
    let indexPath: String
    let lockPath: String
    let fileSystem: any CacheFileSystem
    let clock: CacheClock
    let logger: Logger
    let pathGrace: Double

    /// What the writer lock guards: the index connection and the folder lock. Every change to
    /// the folder's files and index happens while holding it, so renames, index commits and
    /// the orphan sweep never interleave; the one exception is a placed entry's description
    /// file (`publish`), whose digest the sweep keeps.
    struct Writer {
        var index: CacheIndex?
        var lock: FolderLock?
    }

    /// What the state lock guards: the in-memory mirror of the index and the counters. Held
    /// only for short, I/O-free sections; lock order is writer, then state.
    struct State {
        var list = LRUList<CacheDigest, DiskRecord>()
        var limit: Int
        var hits = 0
        var misses = 0
        var evictions = 0
        var pendingAccess: [CacheDigest: Double] = [:]
        var lastFlush: Double
        var deferred: [CacheDigest: Double] = [:]
        var nextDeferred = Double.infinity
        /// Files in place and not yet published (`place`), by how many puts placed them: the
        /// orphan sweep keeps them.
        var placed: [CacheDigest: Int] = [:]
        /// Empty files in `tmp/` made ahead of time (`makeSpares`).
        var spares: [String] = []
        /// A housekeeping job from `handOutPath` is queued and has not started: hits meanwhile
        /// queue no other.
        var housekeepingQueued = false
        var closed = false
    }

    let writer: LockedState<Writer>
    let state: LockedState<State>
    let tempCounter = Atomic<Int>(0)
    let sweepTask = LockedState<Task<Void, Never>?>(nil)
    /// Whether entries' descriptions go in an extended attribute of their content file
    /// (false: in a `.m` file beside it). Probed at open; turned off for good if the file
    /// system refuses an attribute later.
    let attributesKept = Atomic<Bool>(true)

    /// Opens the cache in `directory` (created if needed), taking its lock, loading its index
    /// (or rebuilding it from the files), and starting the background orphan sweep.
    ///
    /// - Parameters:
    ///   - limit: `disk_limit` in bytes.
    ///   - pathGrace: `path_grace`: how long a handed-out path stays on disk.
    ///   - fileSystem: the file layer (a failing one in tests).
    ///   - clock: "now" for expiry, grace and access times.
    ///   - sweep: whether to start the background orphan sweep (tests that inspect orphans
    ///     turn it off and call `sweepOrphans()` themselves).
    /// - Throws: `CacheOpenError.folderInUse` when another process owns the folder.
    public init(directory: String, limit: Int, pathGrace: Duration,
                logger: Logger = Logger(label: "imagecached.cache"),
                fileSystem: any CacheFileSystem = PosixCacheFileSystem(), clock: CacheClock = .system,
                sweep: Bool = true) throws(CacheOpenError) {
        let directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.directory = directory
        dataDirectory = directory + "/data"
        tempDirectory = directory + "/tmp"
        indexPath = directory + "/index.sqlite"
        lockPath = directory + "/lock"
        self.fileSystem = fileSystem
        self.clock = clock
        self.logger = logger
        self.pathGrace = pathGrace.cacheSeconds
        state = LockedState(State(limit: limit, lastFlush: clock.now()))
        writer = LockedState(Writer())

        do {
            try fileSystem.createDirectory(atPath: directory)
        } catch {
            throw .fileSystem(error)
        }
        let lock = try FolderLock(lockFile: lockPath, folder: directory)
        do {
            try createTree()
            // Temp files can only be left by a dead owner: we hold the lock now.
            for name in (try? fileSystem.contentsOfDirectory(atPath: tempDirectory)) ?? [] {
                try? fileSystem.removeFile(atPath: tempDirectory + "/" + name)
            }
            describeEntriesAsProbed()
            let (index, rows) = try openIndex()
            writer.withLock { $0 = Writer(index: index, lock: lock) }
            state.withLock { $0.list = Self.mirror(of: rows) }
        } catch {
            lock.release()
            throw error
        }
        if sweep {
            let task = Task.detached(priority: .background) { [self] in self.sweepOrphans() }
            sweepTask.withLock { $0 = task }
        }
    }

    deinit {
        close()
    }

    // MARK: Paths

    func contentPath(_ digest: CacheDigest) -> String {
        let hex = digest.hex
        return dataDirectory + "/" + hex.prefix(2) + "/" + hex
    }
    /// Where an entry's description file is, if it has one (see `EntryDescription`).
    func descriptionFilePath(_ digest: CacheDigest) -> String { contentPath(digest) + EntryDescription.fileSuffix }

    /// The path an entry for `key` has (or would have). Stable: derived from the key alone.
    public func path(for key: CacheKey) -> String { contentPath(key.digest) }

    /// Creates the folder tree (idempotent): top, `tmp/`, `data/` and its 256 shards.
    func createTree() throws(CacheOpenError) {
        do {
            try fileSystem.createDirectory(atPath: directory)
            try fileSystem.createDirectory(atPath: tempDirectory)
            try fileSystem.createDirectory(atPath: dataDirectory)
            for i in 0..<256 {
                try fileSystem.createDirectory(atPath: dataDirectory + "/" + Self.shardName(i))
            }
        } catch {
            throw .fileSystem(error)
        }
    }

    static func shardName(_ i: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[i >> 4], digits[i & 15]])
    }

    // MARK: Reading

    /// Whether the index, in memory, has no entry under any of `digests` (an expired one
    /// counts as an entry: `get` decides it); nothing is marked used or counted. Reads no file.
    func holdsNone(of digests: [CacheDigest]) -> Bool {
        state.withLock { s in s.closed || digests.allSatisfy { !s.list.contains($0) } }
    }

    /// Counts misses for reads a caller answered from `holdsNone` instead of making them.
    func countMisses(_ count: Int) {
        state.withLock { $0.misses += count }
    }

    /// Looks `key` up. Returns nil on a miss, which includes an expired entry unless
    /// `allowStale` (then `isStale` is true), a content file gone missing, and a content file
    /// whose checksum does not match on its first read since open (that entry is dropped).
    ///
    /// - Parameters:
    ///   - wantBytes: read the content into `bytes` (otherwise only the path is given).
    ///   - wantPath: hand out the path, which then stays valid for `path_grace`.
    public func get(_ key: CacheKey, wantBytes: Bool = true, wantPath: Bool = true,
                    allowStale: Bool = false) -> CacheHit? {
        lookup(key, wantBytes: wantBytes, wantPath: wantPath, allowStale: allowStale, counted: true)
    }

    func lookup(_ key: CacheKey, wantBytes: Bool, wantPath: Bool, allowStale: Bool, counted: Bool) -> CacheHit? {
        let digest = key.digest
        let now = clock.now()
        let found = state.withLock { s -> (record: DiskRecord, reap: Bool, flush: Bool)? in
            // One probe: an expired entry (unless stale reads are allowed) is a miss and keeps
            // its place; a found one moves to the front with its grace extended.
            var found: DiskRecord?
            if !s.closed {
                _ = s.list.use(digest) { record in
                    if record.entry.isExpired(at: now), !allowStale { return false }
                    if wantPath { record.graceUntil = max(record.graceUntil, now + pathGrace) }
                    found = record
                    return true
                }
            }
            guard let record = found else {
                if counted { s.misses += 1 }
                return nil
            }
            s.pendingAccess[digest] = now
            if counted && record.verified && !wantBytes { s.hits += 1 }
            return (record, now >= s.nextDeferred, s.pendingAccess.count >= 8192)
        }
        guard let (record, reap, flush) = found else { return nil }
        if reap { reapDeferred() }
        if flush { flushAccessTimes() }

        var bytes: Data?
        if wantBytes || !record.verified {
            let path = contentPath(digest)
            let data: Data
            do {
                data = try fileSystem.readFile(atPath: path)
            } catch {
                logger.warning("cache entry dropped: content file unreadable", metadata: ["path": "\(path)", "error": "\(error)"])
                drop(digest, checksum: record.entry.checksum, counted: counted)
                return nil
            }
            if !record.verified {
                guard data.count == record.entry.size, Self.checksum(of: data) == record.entry.checksum else {
                    logger.warning("cache entry dropped: checksum mismatch on first read", metadata: ["path": "\(path)"])
                    drop(digest, checksum: record.entry.checksum, counted: counted)
                    return nil
                }
            }
            state.withLock { s in
                if !record.verified { s.list.update(digest) { if $0.entry.checksum == record.entry.checksum { $0.verified = true } } }
                if counted { s.hits += 1 }
            }
            if wantBytes { bytes = data }
        }
        return CacheHit(
            key: key, bytes: bytes, path: wantPath ? contentPath(digest) : nil,
            info: record.entry.info, byteCount: record.entry.size,
            created: Date(timeIntervalSince1970: record.entry.created), source: .disk,
            isStale: record.entry.isExpired(at: now))
    }

    /// Removes an entry found damaged or missing, unless it was replaced meanwhile.
    func drop(_ digest: CacheDigest, checksum: CacheDigest, counted: Bool) {
        writer.withLock { w in
            let removed = state.withLock { s -> DiskRecord? in
                if counted { s.misses += 1 }
                guard let record = s.list.peek(digest), record.entry.checksum == checksum else { return nil }
                s.list.remove(digest)
                s.pendingAccess.removeValue(forKey: digest)
                return record
            }
            guard removed != nil else { return }
            do {
                try w.index?.apply(upserts: [], deletes: [digest], accessTimes: [:])
            } catch {
                logger.error("cache index update failed while dropping an entry", metadata: ["error": "\(error)"])
            }
            try? fileSystem.removeFile(atPath: contentPath(digest))
            try? fileSystem.removeFile(atPath: descriptionFilePath(digest))
        }
    }

    static func checksum(of data: Data) -> CacheDigest {
        CacheDigest(bytes: SHA256Digest.digest(data))!
    }

    // MARK: Statistics

    /// Entries, bytes (content plus descriptions), limit and counters of the disk tier.
    public var statistics: CacheTierStatistics {
        state.withLock { s in
            CacheTierStatistics(entries: s.list.count, bytes: s.list.totalCost, limit: s.limit,
                                hits: s.hits, misses: s.misses, evictions: s.evictions)
        }
    }

    /// Whether an entry for `key` is indexed (fresh or not), without counting or touching it.
    public func contains(_ key: CacheKey) -> Bool {
        state.withLock { $0.list.peek(key.digest) != nil }
    }
}

/// The in-memory mirror of one index row.
struct DiskRecord {
    var namespace: CacheNamespace
    var entry: StoredEntry
    /// Whether the content matched its checksum since open (entries written since open are).
    var verified: Bool
    /// Until when the content file must stay on disk because its path was handed out.
    var graceUntil: Double
}

extension DiskCache {
    /// Hands out the content path of the verified entry with `digest` (it stays valid for
    /// `path_grace`) and counts an access, without touching the disk: false when the entry is
    /// missing or has not been verified since the cache opened (its first read must check
    /// it). The caller knows the path (`contentPath(digest)`; a memory entry keeps it). Index
    /// maintenance that falls due (access-time flush, deferred unlinks) is sent to a
    /// background queue, so this can run on an event loop.
    func handOutPath(_ digest: CacheDigest) -> Bool {
        let now = clock.now()
        let found = state.withLock { s -> (reap: Bool, flush: Bool)? in
            guard !s.closed else { return nil }
            let used = s.list.use(digest) { record in
                guard record.verified else { return false }
                record.graceUntil = max(record.graceUntil, now + pathGrace)
                return true
            }
            guard used == true else { return nil }
            s.pendingAccess[digest] = now
            let due = (reap: now >= s.nextDeferred, flush: s.pendingAccess.count >= 8192)
            guard due.reap || due.flush, !s.housekeepingQueued else { return (false, false) }
            s.housekeepingQueued = true
            return due
        }
        guard let (reap, flush) = found else { return false }
        if reap || flush {
            // Unlinks and a SQLite write: the bulk lane of `BlockingIO`, like every other
            // piece of the disk tier's housekeeping; one job at a time, however many hits
            // arrive before it starts.
            BlockingIO.queue.async { [self] in
                state.withLock { $0.housekeepingQueued = false }
                if reap { reapDeferred() }
                if flush { flushAccessTimes() }
            }
        }
        return true
    }
}
