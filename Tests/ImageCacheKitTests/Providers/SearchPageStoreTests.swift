import Foundation
@testable import ImageCacheKit
import Testing

@Suite("Search page stores", .timeLimit(.minutes(1)))
struct SearchPageStoreTests {
    func key(_ text: String, page: Int = 1) -> SearchPageKey {
        SearchPageKey(provider: .flickr, query: SearchQuery(term: .query(text), page: page, perPage: 20))
    }

    func stored(total: Int) -> StoredSearchPage {
        StoredSearchPage(page: ProviderSearchPage(photos: [], page: 1, perPage: 20, total: total), storedAt: Date())
    }

    @Test("The memory store drops the least recently used page beyond its capacity")
    func lru() async {
        let store = InMemorySearchPageStore(capacity: 2)
        await store.save(stored(total: 1), for: key("one"))
        await store.save(stored(total: 2), for: key("two"))
        _ = await store.load(key("one"))
        await store.save(stored(total: 3), for: key("three"))
        #expect(await store.load(key("one"))?.page.total == 1)
        #expect(await store.load(key("two")) == nil)
        #expect(await store.count == 2)
    }

    @Test("Page keys differ by every part of the query and contain no secret")
    func keys() {
        let base = key("red car")
        var other = base
        other.query.safe = false
        #expect(base.stableKey != other.stableKey)
        #expect(base.stableKey == "flickr|q=red car|p=1|n=20|safe=1")
        #expect(key("red car", page: 2).stableKey != base.stableKey)
    }
}
