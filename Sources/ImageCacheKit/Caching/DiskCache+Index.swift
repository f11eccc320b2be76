import Foundation

extension DiskCache {
    /// Opens the index and reads it whole; rebuilds it from the entries' descriptions when it
    /// is missing, cannot be read, or something other than a file stood at its paths (moved
    /// aside: `moveAsideWhatIsInTheWay`); logged either way.
    func openIndex() throws(CacheOpenError) -> (CacheIndex, [CacheIndex.Loaded]) {
        let movedAside = try moveAsideWhatIsInTheWay()
        let existed = fileSystem.fileSize(atPath: indexPath) != nil
        if movedAside {
            // What is left of the index lacks a part it was written with: rebuilt like a damaged one.
            for path in indexPaths { try? fileSystem.removeFile(atPath: path) }
        } else if existed {
            do {
                let index = try CacheIndex(path: indexPath)
                do {
                    return (index, try index.loadAll())
                } catch {
                    index.close()
                    throw error
                }
            } catch {
                logger.error("cache index damaged; rebuilding it from the content files",
                             metadata: ["index": "\(indexPath)", "error": "\(error)"])
                for suffix in ["", "-wal", "-shm"] { try? fileSystem.removeFile(atPath: indexPath + suffix) }
            }
        } else {
            // A WAL or shared-memory file without its database belongs to nothing.
            for suffix in ["-wal", "-shm"] { try? fileSystem.removeFile(atPath: indexPath + suffix) }
        }
        do {
            let index = try CacheIndex(path: indexPath)
            let rows = try rebuild(into: index)
            if movedAside || existed || !rows.isEmpty {
                logger.warning("cache index rebuilt from the content files",
                               metadata: ["index": "\(indexPath)", "entries": "\(rows.count)"])
            }
            return (index, rows)
        } catch {
            throw .index(path: indexPath, reason: "\(error)")
        }
    }

    /// Scans every shard for content files and indexes each one whose description (its
    /// attribute, else its `.m` file) decodes, names it, and states the size it has. Anything
    /// else found is removed. Checksums are not computed here: entries are verified on first
    /// read, as after any open.
    func rebuild(into index: CacheIndex) throws -> [CacheIndex.Loaded] {
        var rows: [IndexRow] = []
        let suffix = EntryDescription.fileSuffix
        for shard in 0..<256 {
            let folder = dataDirectory + "/" + Self.shardName(shard)
            guard let names = try? fileSystem.contentsOfDirectory(atPath: folder) else { continue }
            let present = Set(names)
            for name in names {
                if name.hasSuffix(suffix) {
                    // A description file goes with its content file, below; alone, it goes.
                    let content = String(name.dropLast(suffix.count))
                    if !present.contains(content) || CacheDigest(hex: Substring(content)) == nil {
                        try? fileSystem.removeFile(atPath: folder + "/" + name)
                    }
                    continue
                }
                let contentFile = folder + "/" + name
                guard let digest = CacheDigest(hex: Substring(name)),
                      let found = readDescription(of: name, in: folder, names: present),
                      found.description.key.digest == digest,
                      fileSystem.fileSize(atPath: contentFile) == found.description.entry.size
                else {
                    try? fileSystem.removeFile(atPath: contentFile)
                    try? fileSystem.removeFile(atPath: contentFile + suffix)
                    continue
                }
                let entry = found.description.entry
                rows.append(IndexRow(digest: digest, key: found.description.key, entry: entry,
                                     stored: entry.size + found.stored, lastAccess: entry.created))
            }
        }
        var start = 0
        while start < rows.count {
            let batch = Array(rows[start..<min(start + 2000, rows.count)])
            try index.apply(upserts: batch, deletes: [], accessTimes: [:])
            start += batch.count
        }
        return rows.map {
            CacheIndex.Loaded(digest: $0.digest, namespace: $0.key.namespace, entry: $0.entry, stored: $0.stored,
                              lastAccess: $0.lastAccess)
        }
    }

    /// The in-memory mirror of loaded rows, most recently used first; nothing verified yet.
    static func mirror(of rows: [CacheIndex.Loaded]) -> LRUList<CacheDigest, DiskRecord> {
        var list = LRUList<CacheDigest, DiskRecord>(minimumCapacity: rows.count)
        for row in rows.sorted(by: { $0.lastAccess > $1.lastAccess }) {
            list.append(row.digest, DiskRecord(namespace: row.namespace, entry: row.entry, verified: false, graceUntil: 0),
                        cost: row.stored)
        }
        return list
    }
}
