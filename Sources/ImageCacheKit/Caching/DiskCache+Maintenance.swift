import Foundation

extension DiskCache {
    // MARK: Eviction on request

    /// Removes the entry for `key` (`cache.evict`). A path handed out within `path_grace`
    /// stays readable until its grace ends.
    public func remove(_ key: CacheKey) {
        removeDigests([key.digest])
    }

    /// Removes every thumbnail of `url` (all widths), or of every URL starting with `url`
    /// when `asPrefix`. The URL is cleaned of credentials first, as keys are.
    public func remove(url: String, asPrefix: Bool = false) {
        let clean = CacheKey.removingCredentials(from: url)
        let digests = writer.withLock { w -> [CacheDigest] in
            do {
                return try w.index?.digests(url: clean, asPrefix: asPrefix) ?? []
            } catch {
                logger.error("cache index query failed", metadata: ["error": "\(error)"])
                return []
            }
        }
        removeDigests(digests)
    }

    /// Empties the given parts (`cache.clear`). Paths within their grace stay readable.
    public func removeAll(in namespaces: Set<CacheNamespace>) {
        let now = clock.now()
        writer.withLock { w in
            let removed = state.withLock { s -> [(CacheDigest, DiskRecord)] in
                let doomed = s.list.entries.filter { namespaces.contains($0.value.namespace) }
                for entry in doomed {
                    s.list.remove(entry.key)
                    s.pendingAccess.removeValue(forKey: entry.key)
                }
                return doomed.map { ($0.key, $0.value) }
            }
            do {
                try w.index?.deleteAll(namespaces: namespaces)
            } catch {
                logger.error("cache index update failed while clearing", metadata: ["error": "\(error)"])
            }
            for (digest, record) in removed { unlinkOrDefer(digest, record, now: now) }
        }
    }

    func removeDigests(_ digests: [CacheDigest]) {
        guard !digests.isEmpty else { return }
        let now = clock.now()
        writer.withLock { w in
            let removed = state.withLock { s -> [(CacheDigest, DiskRecord)] in
                digests.compactMap { digest in
                    s.pendingAccess.removeValue(forKey: digest)
                    return s.list.remove(digest).map { (digest, $0) }
                }
            }
            guard !removed.isEmpty else { return }
            do {
                try w.index?.apply(upserts: [], deletes: removed.map(\.0), accessTimes: [:])
            } catch {
                logger.error("cache index update failed while evicting", metadata: ["error": "\(error)"])
            }
            for (digest, record) in removed { unlinkOrDefer(digest, record, now: now) }
        }
    }

    /// Changes `disk_limit` (SIGHUP), evicting least recently used entries at once if needed.
    package func setLimit(_ limit: Int) {
        let now = clock.now()
        writer.withLock { w in
            let victims = state.withLock { s -> [(CacheDigest, DiskRecord)] in
                s.limit = limit
                var victims: [(CacheDigest, DiskRecord)] = []
                while s.list.totalCost > s.limit, let lru = s.list.removeLeastRecent() {
                    s.pendingAccess.removeValue(forKey: lru.key)
                    victims.append((lru.key, lru.value))
                }
                s.evictions += victims.count
                return victims
            }
            guard !victims.isEmpty else { return }
            do {
                try w.index?.apply(upserts: [], deletes: victims.map(\.0), accessTimes: [:])
            } catch {
                logger.error("cache index update failed while evicting", metadata: ["error": "\(error)"])
            }
            for (digest, record) in victims { unlinkOrDefer(digest, record, now: now) }
        }
    }

    // MARK: Path grace

    /// Unlinks an entry's files, or defers that until its handed-out path's grace ends.
    /// Called with the writer lock held.
    func unlinkOrDefer(_ digest: CacheDigest, _ record: DiskRecord, now: Double) {
        if record.graceUntil > now {
            state.withLock { s in
                s.deferred[digest] = max(s.deferred[digest] ?? 0, record.graceUntil)
                s.nextDeferred = min(s.nextDeferred, record.graceUntil)
            }
        } else {
            try? fileSystem.removeFile(atPath: contentPath(digest))
            try? fileSystem.removeFile(atPath: descriptionFilePath(digest))
        }
    }

    /// Unlinks the files whose deferral has ended. Cheap when none is due; called after
    /// writes and from lookups once the earliest deadline has passed.
    package func reapDeferred() {
        let now = clock.now()
        guard state.withLock({ now >= $0.nextDeferred }) else { return }
        writer.withLock { _ in
            let due = state.withLock { s -> [CacheDigest] in
                let due = s.deferred.filter { $0.value <= now }.map(\.key)
                for digest in due { s.deferred.removeValue(forKey: digest) }
                s.nextDeferred = s.deferred.values.min() ?? .infinity
                return due
            }
            for digest in due {
                try? fileSystem.removeFile(atPath: contentPath(digest))
                try? fileSystem.removeFile(atPath: descriptionFilePath(digest))
            }
        }
    }

    /// How many removed entries still wait for their path grace to end before being unlinked.
    package var deferredUnlinkCount: Int { state.withLock { $0.deferred.count } }

    // MARK: Access times

    /// Writes the batched access times to the index (also done by writes, and at close).
    package func flushAccessTimes() {
        writer.withLock { w in
            let access = state.withLock { s -> [CacheDigest: Double] in
                var access: [CacheDigest: Double] = [:]
                swap(&access, &s.pendingAccess)
                s.lastFlush = clock.now()
                return access
            }
            guard !access.isEmpty, let index = w.index else { return }
            do {
                try index.apply(upserts: [], deletes: [], accessTimes: access)
            } catch {
                logger.warning("cache access times not recorded", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: Orphans

    /// Removes files without an index entry and entries without a content file. Runs in the
    /// background after open (so opening never reads every file) and holds the writer lock
    /// one shard at a time, so writes go on meanwhile. Files whose unlink is deferred for
    /// their path grace are kept, and so are files placed by a put not yet published.
    public func sweepOrphans() {
        var orphanFiles = 0
        for shard in 0..<256 {
            let folder = dataDirectory + "/" + Self.shardName(shard)
            guard let names = try? fileSystem.contentsOfDirectory(atPath: folder), !names.isEmpty else { continue }
            let stop = writer.withLock { w -> Bool in
                guard w.index != nil else { return true }
                let doomed = state.withLock { s in
                    names.filter { name in
                        let suffix = EntryDescription.fileSuffix
                        let hex = name.hasSuffix(suffix) ? name.dropLast(suffix.count) : Substring(name)
                        guard let digest = CacheDigest(hex: hex) else { return true }
                        return s.list.peek(digest) == nil && s.deferred[digest] == nil && s.placed[digest] == nil
                    }
                }
                for name in doomed { try? fileSystem.removeFile(atPath: folder + "/" + name) }
                orphanFiles += doomed.count
                return false
            }
            if stop { return }
        }
        let digests = state.withLock { Array($0.list.keys) }
        let missing = digests.filter { fileSystem.fileSize(atPath: contentPath($0)) == nil }
        var orphanEntries = 0
        if !missing.isEmpty {
            writer.withLock { w in
                let removed = state.withLock { s in
                    missing.filter { digest in
                        guard s.list.peek(digest) != nil, fileSystem.fileSize(atPath: contentPath(digest)) == nil else { return false }
                        s.list.remove(digest)
                        s.pendingAccess.removeValue(forKey: digest)
                        return true
                    }
                }
                orphanEntries = removed.count
                do {
                    try w.index?.apply(upserts: [], deletes: removed, accessTimes: [:])
                } catch {
                    logger.error("cache index update failed while sweeping", metadata: ["error": "\(error)"])
                }
                for digest in removed { try? fileSystem.removeFile(atPath: descriptionFilePath(digest)) }
            }
        }
        if orphanFiles > 0 || orphanEntries > 0 {
            logger.notice("cache orphans swept", metadata: ["files": "\(orphanFiles)", "entries": "\(orphanEntries)"])
        }
    }

    /// The background sweep `init` started (nil when it started none): its `value` is the
    /// moment the sweep has finished, for whoever must know (the tests).
    package var backgroundSweep: Task<Void, Never>? { sweepTask.withLock { $0 } }

    // MARK: Faults and lifetime

    /// Recreates the folder tree after it was removed or emptied from outside, reopening (and
    /// rebuilding) the index and retaking the lock when those went with it.
    func recoverFolder() {
        writer.withLock { w in
            guard w.index != nil else { return }
            logger.warning("cache folder missing parts; recreating it", metadata: ["folder": "\(directory)"])
            do {
                try createTree()
            } catch {
                logger.error("cache folder cannot be recreated", metadata: ["error": "\(error)"])
                return
            }
            if fileSystem.fileSize(atPath: lockPath) == nil {
                w.lock?.release()
                w.lock = try? FolderLock(lockFile: lockPath, folder: directory)
            }
            if fileSystem.fileSize(atPath: indexPath) == nil {
                w.index?.close()
                do {
                    let index = try CacheIndex(path: indexPath)
                    let rows = try rebuild(into: index)
                    w.index = index
                    state.withLock { s in
                        s.list = Self.mirror(of: rows)
                        s.pendingAccess = [:]
                        s.deferred = [:]
                        s.nextDeferred = .infinity
                    }
                    logger.warning("cache index recreated after the folder was removed",
                                   metadata: ["entries": "\(rows.count)"])
                } catch {
                    logger.error("cache index cannot be recreated", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Writes pending access times, closes the index and releases the folder lock. Later
    /// lookups miss and writes throw `closed`. Files still within their path grace are left
    /// in place (the next open sweeps them).
    public func close() {
        flushAccessTimes()
        writer.withLock { w in
            state.withLock { $0.closed = true }
            w.index?.close()
            w.index = nil
            w.lock?.release()
            w.lock = nil
        }
    }
}
