import Foundation
@testable import ImageCacheKit
import Testing

@Suite("Caching: memory cache (LRU by cost)", .timeLimit(.minutes(1)))
struct MemoryCacheTests {
    @Test("a stored value is returned and counted as a hit; an absent one as a miss")
    func hitsAndMisses() {
        let cache = MemoryCache<String, Int>(costLimit: 100)
        cache.insert(1, forKey: "a", cost: 10)
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache.value(forKey: "b") == nil)
        let stats = cache.statistics
        #expect(stats.hits == 1 && stats.misses == 1 && stats.entries == 1 && stats.bytes == 10 && stats.limit == 100)
    }

    @Test("inserting past the cost limit evicts the least recently used entries first")
    func evictsLeastRecentlyUsedByCost() {
        let cache = MemoryCache<String, Int>(costLimit: 30)
        cache.insert(1, forKey: "a", cost: 10)
        cache.insert(2, forKey: "b", cost: 10)
        cache.insert(3, forKey: "c", cost: 10)
        _ = cache.value(forKey: "a")            // a is now the most recent; b the least
        cache.insert(4, forKey: "d", cost: 15)  // needs 15: evicts b, then c
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.value(forKey: "c") == nil)
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache.value(forKey: "d") == 4)
        #expect(cache.statistics.bytes == 25)
        #expect(cache.statistics.evictions == 2)
    }

    @Test("the optional count limit bounds the number of entries")
    func countLimit() {
        let cache = MemoryCache<Int, Int>(costLimit: 1_000_000, countLimit: 3)
        for i in 0..<5 { cache.insert(i, forKey: i, cost: 1) }
        #expect(cache.statistics.entries == 3)
        #expect(cache.value(forKey: 0) == nil && cache.value(forKey: 1) == nil)
        #expect(cache.value(forKey: 4) == 4)
    }

    @Test("a value costlier than the whole limit is not stored and drops an older value")
    func oversizedValueIsRefused() {
        let cache = MemoryCache<String, Int>(costLimit: 50)
        cache.insert(1, forKey: "a", cost: 10)
        cache.insert(2, forKey: "a", cost: 51)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.statistics.bytes == 0)
    }

    @Test("replacing a value updates the accounted cost")
    func replaceUpdatesCost() {
        let cache = MemoryCache<String, Int>(costLimit: 100)
        cache.insert(1, forKey: "a", cost: 10)
        cache.insert(2, forKey: "a", cost: 40)
        #expect(cache.statistics.bytes == 40 && cache.statistics.entries == 1)
        #expect(cache.value(forKey: "a") == 2)
    }

    @Test("lowering the limit evicts at once; removal by predicate and key work")
    func limitsAndRemoval() {
        let cache = MemoryCache<Int, Int>(costLimit: 100)
        for i in 0..<10 { cache.insert(i, forKey: i, cost: 10) }
        cache.setLimits(costLimit: 50, countLimit: nil)
        #expect(cache.statistics.entries == 5)
        #expect(cache.value(forKey: 9) == 9)
        #expect(cache.removeAll { $0 % 2 == 1 } == 3) // 5, 7, 9
        #expect(cache.removeValue(forKey: 6))
        #expect(!cache.removeValue(forKey: 6))
        #expect(cache.statistics.entries == 1)
    }

    @Test("concurrent readers and writers keep the bounds and the accounting exact")
    func concurrentUse() async {
        let cache = MemoryCache<Int, Int>(costLimit: 5_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<5_000 {
                        let key = (i * 7 + worker) % 1_000
                        if i % 3 == 0 { cache.insert(key, forKey: key, cost: 1 + key % 20) } else { _ = cache.value(forKey: key) }
                        if i % 97 == 0 { cache.removeValue(forKey: key) }
                    }
                }
            }
        }
        let stats = cache.statistics
        #expect(stats.bytes <= 5_000)
        #expect(stats.hits + stats.misses == 8 * 5_000 - 8 * 1_667)
        // Every surviving value is the one stored under its key.
        for key in 0..<1_000 { if let value = cache.value(forKey: key) { #expect(value == key) } }
    }
}

@Suite("Caching: cache keys", .timeLimit(.minutes(1)))
struct CacheKeyTests {
    @Test("credentials are removed from the URL before it becomes a key")
    func credentialsRemoved() {
        let key = CacheKey.thumbnail(url: "https://user:pw@img.test/a.jpg?api_key=SECRET&w=3&client_id=X", width: 256)
        #expect(!key.rawValue.contains("SECRET") && !key.rawValue.contains("pw") && !key.rawValue.contains("client_id"))
        #expect(key.url == "https://img.test/a.jpg?w=3")
        #expect(key == CacheKey.thumbnail(url: "https://img.test/a.jpg?w=3&key=OTHER", width: 256))
    }

    @Test("the quick scan sends every URL that may hold a secret to the parser, and only those")
    func credentialScan() {
        for url in ["https://u:p@img.test/a.jpg", "https://img.test/a.jpg?w=1&KEY=s", "https://img.test/a?%6Bey=s",
                    "https://img.test/a?x=1&access_token=t#f"] {
            #expect(CacheKey.mayCarryCredentials(url), "\(url)")
        }
        for url in ["https://img.test/a.jpg", "https://images.unsplash.com/photo-1?ixid=abc&w=256&fm=jpg&q=80",
                    "https://img.test/a.jpg?monkey=1", "not a url"] {
            #expect(!CacheKey.mayCarryCredentials(url), "\(url)")
        }
        // Percent-encoded names are parsed, and the parser removes the decoded secret name.
        #expect(CacheKey.thumbnail(url: "https://img.test/a?%6Bey=s&w=2", width: 1).url == "https://img.test/a?w=2")
    }

    @Test("two widths of one image are two keys; the digest is a 64-hex file name")
    func widthsAndDigest() {
        let a = CacheKey.thumbnail(url: "https://img.test/a.jpg", width: 256)
        let b = CacheKey.thumbnail(url: "https://img.test/a.jpg", width: 512)
        #expect(a != b && a.digest != b.digest)
        #expect(a.digest.hex.count == 64)
        #expect(CacheDigest(hex: Substring(a.digest.hex)) == a.digest)
        #expect(a.digest.hex == SHA256Digest.hex(Array(a.rawValue.utf8)))
    }

    @Test("search keys differ by every parameter and round-trip through their stored text")
    func searchKeys() {
        let a = CacheKey.searchPage(provider: "unsplash", query: "cats", page: 1, perPage: 20, safe: true)
        let b = CacheKey.searchPage(provider: "unsplash", query: "cats", page: 2, perPage: 20, safe: true)
        let c = CacheKey.searchPage(provider: "unsplash", query: nil, feed: "recent", page: 1, perPage: 20, safe: true)
        #expect(Set([a, b, c]).count == 3)
        #expect(CacheKey(storedText: a.rawValue) == a)
        #expect(CacheKey(storedText: "nonsense") == nil)
    }

    @Test("an entry's description encodes and decodes, and a truncated one is refused")
    func descriptionRoundTrip() {
        let key = CacheKey.thumbnail(url: "https://img.test/x.png", width: 128)
        let description = EntryDescription(key: key, entry: StoredEntry(size: 42, checksum: CacheDigest(of: "x"),
                                                                        contentType: "image/png", width: 128, height: nil,
                                                                        created: 12.5, expires: 99))
        let data = description.encoded()
        #expect(EntryDescription(decoding: data) == description)
        #expect(EntryDescription(decoding: data.dropLast()) == nil)
        #expect(EntryDescription(decoding: Data("ICE1 garbage".utf8)) == nil)
    }
}
