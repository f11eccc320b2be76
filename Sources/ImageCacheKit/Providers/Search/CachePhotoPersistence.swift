import Foundation

/// Remembered photos in the daemon's disk cache (namespace `metadata`, key `photo|<id>`), so a
/// photo id resolves after a restart (docs/protocol.md, "Objects") and the records count against `disk_limit`.
///
/// Disk tier only: `PhotoRegistry` is the memory layer, so keeping the JSON in the cache's
/// memory tier too would only take room from thumbnails. A record that does not decode, or
/// names another id, reads as absent. `cache.clear` with `thumbnails` or `searches` leaves
/// these records, so ids a client holds keep resolving.
public struct CachePhotoPersistence: PhotoPersisting {
    /// The cache whose disk tier holds the records.
    public let cache: ImageCache

    /// Records in `cache`'s disk tier.
    public init(cache: ImageCache) {
        self.cache = cache
    }

    /// Writes each photo's record; a refused write (disk full) only loses that copy, and the
    /// id still resolves from memory until the daemon restarts. The files are written on
    /// `BlockingIO`'s threads: a page of results is dozens of them.
    public func save(_ photos: [ProviderPhoto]) async {
        let cache = cache
        await BlockingIO.run {
            let encoder = JSONEncoder()
            for photo in photos {
                guard let json = try? encoder.encode(photo) else { continue }
                _ = try? cache.putRecord(CacheKey.photo(id: photo.id), bytes: json,
                                         info: CacheEntryInfo(contentType: "application/json"))
            }
        }
    }

    /// The stored record of `id`, or nil; read on `BlockingIO`'s threads.
    public func load(id: String) async -> ProviderPhoto? {
        let cache = cache
        return await BlockingIO.read {
            guard let bytes = cache.record(CacheKey.photo(id: id)),
                  let photo = try? JSONDecoder().decode(ProviderPhoto.self, from: bytes), photo.id == id else { return nil }
            return photo
        }
    }
}
