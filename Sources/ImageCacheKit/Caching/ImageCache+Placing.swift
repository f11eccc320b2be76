import Foundation
import Synchronization

extension ImageCache {
    /// An entry whose content file is complete and in place, so its path can be answered at
    /// once, and whose bookkeeping (the disk index row, the memory copy, notes beside it) is
    /// still to do: `publishLater`. A cache file is re-fetchable by definition, so nothing
    /// of that needs to happen before the answer.
    struct Placement: Sendable {
        let disk: DiskCache.Placed
        let bytes: Data
        let info: CacheEntryInfo
        /// The `removals` count when the file was placed: an eviction or a clear since then
        /// takes the entry out again once it is published.
        let generation: UInt64

        /// The content file: complete, readable, and kept for `path_grace` once published.
        var path: String { disk.path }
    }

    /// A small entry stored beside a placed one when it is published (a thumbnail's width note).
    struct Note: Sendable {
        var key: CacheKey
        var bytes: Data
        var info: CacheEntryInfo
    }

    /// Writes the content file of `key` with its description (a temp file made ahead of time
    /// when there is one, renamed into place), without its index row. `checksum` is the SHA-256 of
    /// `bytes` when the caller has verified it already, computed here otherwise.
    /// - Throws: `CacheWriteError` when the disk did not take the file (disk full, read-only
    ///   folder, permissions, closed): nothing is left behind.
    func place(_ key: CacheKey, bytes: Data, checksum: CacheDigest? = nil, info: CacheEntryInfo) throws(CacheWriteError) -> Placement {
        let generation = removals.load(ordering: .sequentiallyConsistent)
        let placed = try disk.place(key, bytes: bytes, checksum: checksum ?? DiskCache.checksum(of: bytes), info: info, spare: true)
        return Placement(disk: placed, bytes: bytes, info: info, generation: generation)
    }

    /// Publishes a placement whose path went to clients, on `publisher`: the index row, after
    /// a description file where the file system keeps no attribute (the path then stays
    /// readable for `path_grace` from that moment, as a handed-out path does), the memory
    /// copy, then `notes`; then, when nothing else waits, spare files for the next placements. An index that refuses the row leaves the file to be
    /// unlinked once that grace has passed; an eviction or clear since the file was placed
    /// takes the entry out again (its path still keeps its grace).
    func publishLater(_ placement: Placement, notes: [Note] = []) {
        pendingPublications.add(1, ordering: .relaxed)
        publisher.async { [self] in
            publish(placement, notes: notes)
            let waiting = pendingPublications.subtract(1, ordering: .relaxed).newValue
            publications.update { $0 &+= 1 }
            // Spare files for the next hits, while no publication waits.
            if waiting == 0 { disk.makeSpares(until: { pendingPublications.load(ordering: .relaxed) > 0 }) }
        }
    }

    private func publish(_ placement: Placement, notes: [Note]) {
        let key = placement.disk.key
        do {
            try disk.publish(placement.disk, handOut: true)
        } catch {
            logger.error("a thumbnail's file was written but not indexed; it goes after its path grace",
                         metadata: ["reason": "\(error)"])
            disk.abandon(placement.disk, handedOut: true)
        }
        remember(memoryEntry(key, bytes: placement.bytes, info: placement.info,
                             created: Date(timeIntervalSince1970: placement.disk.entry.created)), forKey: key)
        for note in notes { put(note.key, bytes: note.bytes, info: note.info) }
        if removals.load(ordering: .sequentiallyConsistent) != placement.generation {
            // Removed while it was on its way: as if the removal had come after the put.
            for removed in [key] + notes.map(\.key) {
                memory.removeValue(forKey: removed)
                disk.remove(removed)
            }
        }
    }
}
