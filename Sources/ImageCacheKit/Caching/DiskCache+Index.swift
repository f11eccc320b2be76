import Foundation

extension DiskCache {
    /// Opens the index and reads it whole; rebuilds it from the sidecars when it is missing,
    /// cannot be read, or something other than a file stood at its paths (moved aside:
    /// `moveAsideWhatIsInTheWay`); logged either way.
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

    /// Scans every shard for sidecars and indexes each one whose content file is present with
    /// the size it states. Anything else found is removed. Checksums are not computed here:
    /// entries are verified on first read, as after any open.
    func rebuild(into index: CacheIndex) throws -> [CacheIndex.Loaded] {
        var rows: [IndexRow] = []
        for shard in 0..<256 {
            let folder = dataDirectory + "/" + Self.shardName(shard)
            guard let names = try? fileSystem.contentsOfDirectory(atPath: folder) else { continue }
            let present = Set(names)
            for name in names {
                let path = folder + "/" + name
                guard name.hasSuffix(".m") else {
                    if !present.contains(name + ".m") || CacheDigest(hex: Substring(name)) == nil {
                        try? fileSystem.removeFile(atPath: path)
                    }
                    continue
                }
                let hex = name.dropLast(2)
                let contentFile = folder + "/" + hex
                guard let digest = CacheDigest(hex: hex),
                      let data = try? fileSystem.readFile(atPath: path),
                      let sidecar = EntrySidecar(decoding: data),
                      sidecar.key.digest == digest,
                      fileSystem.fileSize(atPath: contentFile) == sidecar.entry.size
                else {
                    try? fileSystem.removeFile(atPath: path)
                    try? fileSystem.removeFile(atPath: contentFile)
                    continue
                }
                rows.append(IndexRow(digest: digest, key: sidecar.key, entry: sidecar.entry,
                                     stored: sidecar.entry.size + data.count, lastAccess: sidecar.entry.created))
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
