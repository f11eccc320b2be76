import Foundation

/// Search-result pages in the daemon's `ImageCache` (namespace `search`): in its memory tier
/// and on disk beside the thumbnails, so they survive a restart, count against `disk_limit`
/// (least recently used out first, whatever the namespace) and go with
/// `cache.clear {what: "searches"}`.
///
/// Each entry holds the page's key with the page, so a digest collision or a misplaced entry
/// can never answer another search; an entry that does not decode (an older format) reads as
/// absent and is replaced at the next save. The key holds no API key (`SearchPageKey`), so
/// nothing secret reaches the disk. The cache's own expiry (`search_ttl` at open) is not
/// what decides freshness: pages are read stale-allowed and the coordinator compares
/// `storedAt` with the running `search_ttl`, which a reload may change.
public struct CacheSearchPageStore: SearchPageStore {
    /// The cache the pages live in.
    public let cache: ImageCache

    /// Pages in `cache`.
    public init(cache: ImageCache) {
        self.cache = cache
    }

    /// The stored copy, however old; nil when absent or unreadable. Read (from disk when it is
    /// not in memory) on `BlockingIO`'s threads, never the cooperative pool's.
    public func load(_ key: SearchPageKey) async -> StoredSearchPage? {
        let cache = cache
        return await BlockingIO.read {
            guard let hit = cache.searchPage(Self.cacheKey(key), allowStale: true), let bytes = hit.bytes else { return nil }
            return SearchPageRecord.decode(bytes, for: key)
        }
    }

    /// Stores the page in both tiers, on `BlockingIO`'s threads. A disk that refuses it (full,
    /// read-only) leaves it in memory: the search that produced it has its answer either way.
    public func save(_ page: StoredSearchPage, for key: SearchPageKey) async {
        guard let json = SearchPageRecord.encode(page, for: key) else { return }
        let cache = cache
        _ = await BlockingIO.run { cache.putSearchPage(Self.cacheKey(key), json: json) }
    }

    /// `cache.clear {what: "searches"}`: every page, both tiers (files removed on
    /// `BlockingIO`'s threads). Paths are never handed out for pages, so nothing waits for
    /// `path_grace`.
    public func removeAll() async {
        let cache = cache
        _ = await BlockingIO.run { cache.clear(.searches) }
    }

    /// The cache key of a page: every field of the clamped query.
    package static func cacheKey(_ key: SearchPageKey) -> CacheKey {
        let query = key.query
        switch query.term {
        case .query(let text):
            return .searchPage(provider: key.provider.rawValue, query: text, page: query.page, perPage: query.perPage,
                               safe: query.safe)
        case .recent:
            return .searchPage(provider: key.provider.rawValue, query: nil, feed: "recent", page: query.page,
                               perPage: query.perPage, safe: query.safe)
        }
    }
}
