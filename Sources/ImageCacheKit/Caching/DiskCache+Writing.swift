import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DiskCache {
    /// Where a put's content comes from.
    enum Content {
        case bytes(Data)
    }

    /// Stores `bytes` for `key`, replacing any earlier entry, and returns the content path.
    ///
    /// The entry becomes visible only once complete (temp file → rename → index). When the
    /// limit is exceeded, least recently used entries are evicted in the same index commit.
    /// - Throws: `CacheWriteError` when the write was skipped (disk full, read-only folder,
    ///   permissions, index failure); nothing partial is left behind.
    @discardableResult
    public func put(_ key: CacheKey, bytes: Data, info: CacheEntryInfo) throws(CacheWriteError) -> String {
        try store(key, content: .bytes(bytes), size: bytes.count, checksum: Self.checksum(of: bytes), info: info)
    }

    func store(_ key: CacheKey, content: Content, size: Int, checksum: CacheDigest,
               info: CacheEntryInfo) throws(CacheWriteError) -> String {
        let now = clock.now()
        let digest = key.digest
        let entry = StoredEntry(size: size, checksum: checksum, info: info, created: now)
        let sidecar = EntrySidecar(key: key, entry: entry).encoded()
        let stored = size + sidecar.count
        let limit = state.withLock { $0.limit }
        guard stored <= limit else { throw .tooLarge(bytes: stored, limit: limit) }
        var recovered = false
        while true {
            do {
                try storeOnce(key, digest: digest, content: content, entry: entry, stored: stored, sidecar: sidecar)
                return contentPath(digest)
            } catch .fileSystem(let error) where error.code == ENOENT && !recovered {
                // The folder (or part of it) was removed from outside: rebuild the tree once.
                recovered = true
                recoverFolder()
            }
        }
    }

    private func storeOnce(_ key: CacheKey, digest: CacheDigest, content: Content, entry: StoredEntry, stored: Int,
                           sidecar: Data) throws(CacheWriteError) {
        let now = entry.created
        let n = tempCounter.add(1, ordering: .relaxed).newValue
        let hex = digest.hex
        let tempContent = "\(tempDirectory)/\(hex).\(n)"
        switch content {
        case .bytes(let data):
            do {
                try fileSystem.writeNewFile(atPath: tempContent, contents: data)
            } catch {
                throw .fileSystem(error)
            }
        }

        let result: Result<[(CacheDigest, DiskRecord)], CacheWriteError> = writer.withLock { w in
            guard let index = w.index else { return .failure(.closed) }
            let finalSidecar = sidecarPath(digest)
            let finalContent = contentPath(digest)
            // The sidecar is written in place, not renamed: it is read only to rebuild a lost
            // index, where a torn one is recognised (its trailer) and its entry dropped. It
            // goes first, so a published content file always has one.
            do throws(CacheFileSystemError) {
                try writeCreatingShard(finalSidecar, sidecar)
            } catch {
                return .failure(.fileSystem(error))
            }
            do throws(CacheFileSystemError) {
                try renameCreatingShard(tempContent, to: finalContent)
            } catch {
                try? fileSystem.removeFile(atPath: finalSidecar)
                return .failure(.fileSystem(error))
            }

            let record = DiskRecord(namespace: key.namespace, entry: entry, verified: true, graceUntil: 0)
            let (previous, victims, access) = state.withLock { s in
                s.deferred.removeValue(forKey: digest)
                let previous = s.list.peek(digest)
                s.list.insert(digest, record, cost: stored)
                var victims: [(CacheDigest, DiskRecord, Int)] = []
                while s.list.totalCost > s.limit, let lru = s.list.leastRecent, lru.key != digest {
                    s.list.removeLeastRecent()
                    s.pendingAccess.removeValue(forKey: lru.key)
                    victims.append((lru.key, lru.value, lru.cost))
                }
                s.evictions += victims.count
                var access: [CacheDigest: Double] = [:]
                if s.pendingAccess.count >= 1024 || now - s.lastFlush >= 5 {
                    swap(&access, &s.pendingAccess)
                    s.lastFlush = now
                }
                return (previous, victims, access)
            }

            let row = IndexRow(digest: digest, key: key, entry: entry, stored: stored, lastAccess: now)
            do {
                try index.apply(upserts: [row], deletes: victims.map(\.0), accessTimes: access)
            } catch {
                // Undo: the entry is not published; the victims stay (they are still indexed).
                state.withLock { s in
                    s.list.remove(digest)
                    for (victim, record, cost) in victims.reversed() { s.list.append(victim, record, cost: cost) }
                    s.evictions -= victims.count
                    s.pendingAccess.merge(access) { current, _ in current }
                }
                try? fileSystem.removeFile(atPath: finalContent)
                try? fileSystem.removeFile(atPath: finalSidecar)
                _ = previous
                return .failure(.index("\(error)"))
            }
            for (victim, record, _) in victims { unlinkOrDefer(victim, record, now: now) }
            return .success([])
        }
        if case .failure(let error) = result {
            try? fileSystem.removeFile(atPath: tempContent)
            throw error
        }
        reapDeferred()
    }

    /// Writes into a shard, recreating the shard folder once if it was removed from outside.
    private func writeCreatingShard(_ path: String, _ contents: Data) throws(CacheFileSystemError) {
        do {
            try fileSystem.writeFile(atPath: path, contents: contents)
        } catch where error.code == ENOENT {
            try fileSystem.createDirectory(atPath: (path as NSString).deletingLastPathComponent)
            try fileSystem.writeFile(atPath: path, contents: contents)
        }
    }

    /// Renames into a shard, recreating the shard folder once if it was removed from outside.
    private func renameCreatingShard(_ source: String, to destination: String) throws(CacheFileSystemError) {
        do {
            try fileSystem.rename(source, to: destination)
        } catch where error.code == ENOENT && fileSystem.fileSize(atPath: source) != nil {
            try fileSystem.createDirectory(atPath: (destination as NSString).deletingLastPathComponent)
            try fileSystem.rename(source, to: destination)
        }
    }
}
