import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DiskCache {
    /// Where a put's content comes from.
    enum Content {
        case bytes(Data)
    }

    /// A content file in its place, its index row (and description file, if it needs one)
    /// not yet written (`publish`). Its path is readable at once; until it is published
    /// lookups miss it and the orphan sweep leaves it alone, and a crash before that leaves an
    /// orphan the sweep after the next open removes.
    struct Placed: Sendable {
        let key: CacheKey
        let digest: CacheDigest
        let entry: StoredEntry
        /// The description to write beside the content file at publication; nil when the
        /// content file's attribute holds it.
        let descriptionFile: Data?
        /// Bytes charged against the limit: content plus description, wherever it is kept.
        let stored: Int
        /// The content file.
        let path: String
    }

    /// Stores `bytes` for `key`, replacing any earlier entry, and returns the content path.
    ///
    /// The entry becomes visible only once complete (temp file → rename → index). When the
    /// limit is exceeded, least recently used entries are evicted in the same index commit.
    /// - Throws: `CacheWriteError` when the write was skipped (disk full, read-only folder,
    ///   permissions, index failure); nothing partial is left behind.
    @discardableResult
    public func put(_ key: CacheKey, bytes: Data, info: CacheEntryInfo) throws(CacheWriteError) -> String {
        let placed = try place(key, bytes: bytes, checksum: Self.checksum(of: bytes), info: info)
        do {
            try publish(placed, handOut: false)
        } catch {
            abandon(placed, handedOut: false)
            throw error
        }
        return placed.path
    }

    /// The first half of a put: the content file in place with its description (temp file →
    /// attribute → rename), no index row yet. An earlier entry for the key stops being found
    /// at once (its file is the one replaced). `publish` makes it an entry. With `spare`, the
    /// temp file is one made ahead of time when there is one (`makeSpares`): what a caller
    /// answering with the path asks for.
    /// - Throws: `CacheWriteError` when the file could not be written (disk full, read-only
    ///   folder, permissions) or the cache is closed; nothing partial is left behind.
    func place(_ key: CacheKey, bytes: Data, checksum: CacheDigest, info: CacheEntryInfo,
               spare: Bool = false) throws(CacheWriteError) -> Placed {
        let digest = key.digest
        let entry = StoredEntry(size: bytes.count, checksum: checksum, info: info, created: clock.now())
        let description = EntryDescription(key: key, entry: entry).encoded()
        let stored = bytes.count + description.count
        let limit = state.withLock { $0.limit }
        guard stored <= limit else { throw .tooLarge(bytes: stored, limit: limit) }
        var recovered = false
        while true {
            do {
                let descriptionFile = try placeOnce(digest, content: .bytes(bytes), description: description, spare: spare)
                return Placed(key: key, digest: digest, entry: entry, descriptionFile: descriptionFile, stored: stored,
                              path: contentPath(digest))
            } catch .fileSystem(let error) where error.code == ENOENT && !recovered {
                // The folder (or part of it) was removed from outside: rebuild the tree once.
                recovered = true
                recoverFolder()
            }
        }
    }

    /// Returns the description still to be written as a file (see `describe`).
    private func placeOnce(_ digest: CacheDigest, content: Content, description: Data,
                           spare: Bool) throws(CacheWriteError) -> Data? {
        // An empty file made ahead of time (`makeSpares`) when one is there: creating a file
        // allocates an inode, which on a file system with much recent churn took half a
        // millisecond (measured), more than all the rest of a shared-tier hit.
        let made = spare ? state.withLock { $0.spares.popLast() } : nil
        let tempContent = made ?? "\(tempDirectory)/\(digest.hex).\(tempCounter.add(1, ordering: .relaxed).newValue)"
        let descriptionFile: Data?
        switch content {
        case .bytes(let data):
            do {
                descriptionFile = try writeDescribed(tempContent, contents: data, exclusive: made == nil, description: description)
            } catch {
                try? fileSystem.removeFile(atPath: tempContent)
                throw .fileSystem(error)
            }
        }
        let result: Result<Void, CacheWriteError> = writer.withLock { w in
            guard w.index != nil else { return .failure(.closed) }
            do throws(CacheFileSystemError) {
                try renameCreatingShard(tempContent, to: contentPath(digest))
            } catch {
                return .failure(.fileSystem(error))
            }
            state.withLock { s in
                // The file now holds the new content: the earlier entry's record (whose
                // checksum it no longer matches) and a deferred unlink of its files must not
                // touch it. Its index row (and description file, if any) stay until `publish`
                // replaces them; a crash before then leaves a row whose first read fails the
                // checksum (a miss).
                s.list.remove(digest)
                s.pendingAccess.removeValue(forKey: digest)
                s.deferred.removeValue(forKey: digest)
                s.placed[digest, default: 0] += 1
            }
            return .success(())
        }
        if case .failure(let error) = result {
            try? fileSystem.removeFile(atPath: tempContent)
            throw error
        }
        return descriptionFile
    }

    /// The second half of a put: the placed file becomes an entry (mirror and index row in
    /// one commit, evicting least recently used entries past the limit). With `handOut`, its
    /// path is kept readable for `path_grace` from now, as a lookup that hands it out does.
    /// - Throws: `CacheWriteError` when the index refused it (or the cache closed); the
    ///   placement is then the caller's to `abandon`.
    func publish(_ placed: Placed, handOut: Bool) throws(CacheWriteError) {
        let digest = placed.digest
        let now = clock.now()
        // A description file is written in place, not renamed: it is read only to rebuild a
        // lost index, where a torn one is recognised (its trailer) and its entry dropped. It
        // goes before the row, so an indexed content file always has its description; and
        // outside the writer lock, which a placement answering with its path waits for
        // (creating the file can take a millisecond), while the sweep keeps a placed
        // digest's files. When the attribute holds the description, a file left by an
        // earlier entry of the key goes (an unlink of nothing otherwise: microseconds); one
        // that stays is harmless, since a rebuild reads the attribute first.
        if let description = placed.descriptionFile {
            do throws(CacheFileSystemError) {
                try writeCreatingShard(descriptionFilePath(digest), description)
            } catch {
                throw .fileSystem(error)
            }
        } else {
            try? fileSystem.removeFile(atPath: descriptionFilePath(digest))
        }
        let result: Result<Void, CacheWriteError> = writer.withLock { w in
            guard let index = w.index else { return .failure(.closed) }
            let record = DiskRecord(namespace: placed.key.namespace, entry: placed.entry, verified: true,
                                    graceUntil: handOut ? now + pathGrace : 0)
            let (victims, access) = state.withLock { s in
                s.donePlacing(digest)
                s.list.insert(digest, record, cost: placed.stored)
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
                return (victims, access)
            }

            let row = IndexRow(digest: digest, key: placed.key, entry: placed.entry, stored: placed.stored, lastAccess: now)
            do {
                try index.apply(upserts: [row], deletes: victims.map(\.0), accessTimes: access)
            } catch {
                // Undo: the entry is not published; the victims stay (they are still indexed).
                state.withLock { s in
                    s.list.remove(digest)
                    s.placed[digest, default: 0] += 1
                    for (victim, record, cost) in victims.reversed() { s.list.append(victim, record, cost: cost) }
                    s.evictions -= victims.count
                    s.pendingAccess.merge(access) { current, _ in current }
                }
                return .failure(.index("\(error)"))
            }
            for (victim, record, _) in victims { unlinkOrDefer(victim, record, now: now) }
            return .success(())
        }
        try result.get()
        reapDeferred()
    }

    /// Removes a placed file that will not be published (its publication failed, or it is
    /// not wanted): at once, or, when its path was handed out, once `path_grace` from now has
    /// passed (until then the sweep keeps it).
    func abandon(_ placed: Placed, handedOut: Bool) {
        let now = clock.now()
        writer.withLock { _ in
            // A newer put of the same key may have placed or published its own file here.
            let mine = state.withLock { s in
                s.donePlacing(placed.digest)
                return s.list.peek(placed.digest) == nil && s.placed[placed.digest] == nil
            }
            guard mine else { return }
            unlinkOrDefer(placed.digest, DiskRecord(namespace: placed.key.namespace, entry: placed.entry, verified: true,
                                                    graceUntil: handedOut ? now + pathGrace : 0), now: now)
        }
    }

    /// Empty files made ahead of time in `tmp/` for `place(spare:)`, so a put whose path is
    /// answered first allocates no inode then. Off any request's path (the cache's publisher
    /// calls it when it has nothing else to do, and stops when `busy` says it has);
    /// leftovers go with `tmp/` at the next open.
    func makeSpares(until busy: () -> Bool = { false }) {
        while !busy(), state.withLock({ !$0.closed && $0.spares.count < Self.spareFiles }) {
            let path = "\(tempDirectory)/spare.\(tempCounter.add(1, ordering: .relaxed).newValue)"
            do {
                try fileSystem.writeNewFile(atPath: path, contents: Data())
            } catch {
                return
            }
            state.withLock { $0.spares.append(path) }
        }
    }

    /// Spare files kept: one per shared-tier hit answered while the publisher is busy, so a
    /// burst of that many hits allocates no inode before its answers; past them a put creates
    /// its temp file as usual. Empty files: an inode each, no data.
    static let spareFiles = 64

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

extension DiskCache.State {
    /// One placed file of `digest` published or given up.
    mutating func donePlacing(_ digest: CacheDigest) {
        guard let count = placed[digest] else { return }
        placed[digest] = count > 1 ? count - 1 : nil
    }
}
