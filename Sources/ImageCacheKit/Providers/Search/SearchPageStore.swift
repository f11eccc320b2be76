import Foundation

/// The identity of a cached result page: provider + the clamped query. Contains no key, so it
/// is safe as a cache key and in logs.
public struct SearchPageKey: Sendable, Hashable, Codable {
    public var provider: ProviderID
    public var query: SearchQuery


    /// A stable text form (`unsplash|q=red car|p=2|n=20|safe=1`) for a disk index.
    package var stableKey: String {
        let term: String
        switch query.term {
        case .query(let text): term = "q=" + text
        case .recent: term = "feed=recent"
        }
        return "\(provider.rawValue)|\(term)|p=\(query.page)|n=\(query.perPage)|safe=\(query.safe ? 1 : 0)"
    }
}

/// A page as stored, with when it was fetched (wall-clock time, since it outlives restarts).
public struct StoredSearchPage: Sendable, Hashable, Codable {
    public var page: ProviderSearchPage
    package var storedAt: Date

}

/// Where result pages are kept between searches: the coordinator answers from it while fresh
/// (`search_ttl`) and falls back to it, flagged stale, when the provider cannot be reached.
///
/// A protocol so the disk cache (Caching/) can back it and survive restarts;
/// `InMemorySearchPageStore` is the memory layer and the store of tests.
public protocol SearchPageStore: Sendable {
    /// The stored copy, however old; freshness is the caller's decision.
    func load(_ key: SearchPageKey) async -> StoredSearchPage?
    func save(_ page: StoredSearchPage, for key: SearchPageKey) async
    /// `cache.clear {what: "searches"}`.
    func removeAll() async
}

/// Result pages in memory, least recently used dropped beyond `capacity` pages.
public actor InMemorySearchPageStore: SearchPageStore {
    private var pages: [SearchPageKey: StoredSearchPage] = [:]
    private var order: [SearchPageKey] = []
    private let capacity: Int

    public init(capacity: Int = 512) { self.capacity = max(1, capacity) }

    public func load(_ key: SearchPageKey) async -> StoredSearchPage? {
        guard let page = pages[key] else { return nil }
        touch(key)
        return page
    }

    public func save(_ page: StoredSearchPage, for key: SearchPageKey) async {
        pages[key] = page
        touch(key)
        while order.count > capacity {
            pages[order.removeFirst()] = nil
        }
    }

    public func removeAll() async {
        pages.removeAll()
        order.removeAll()
    }

    /// How many pages are held.
    public var count: Int { pages.count }

    private func touch(_ key: SearchPageKey) {
        if let i = order.firstIndex(of: key) { order.remove(at: i) }
        order.append(key)
    }
}
