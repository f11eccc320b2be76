import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Providers against the simulated APIs over real HTTP", .timeLimit(.minutes(3)))
struct SimulatorTests {
    @Test("Each provider's search decodes with the simulator's totals and images served by it", arguments: ProviderID.allCases)
    func searchDecodes(provider: ProviderID) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setTotal(57, for: provider.rawValue, query: "harbour lights")
        let r = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "harbour lights", provider: provider.rawValue, perPage: 20))
        }
        #expect(r.total == 57 && r.totalPages == 3 && r.hasMore)
        #expect(r.photos.count == 20)
        #expect(!r.fromCache && !r.stale)
        #expect(h.api.requestCount(provider.rawValue) == 1)
        for photo in r.photos {
            #expect(photo.id.hasPrefix("\(provider.rawValue):"))
            #expect(photo.thumbURL.hasPrefix(h.sim.baseURL + "/img/"))
            let remembered = try #require(await h.coordinator.rememberedPhoto(id: photo.id))
            // The size each variant claims is the size its URL serves.
            for v in remembered.variants where v.width != nil && v.height != nil && !v.url.contains("?") {
                #expect(v.url.contains("/img/\(v.width!)x\(v.height!)/"))
            }
        }
    }

    @Test("A coordinator made from the configuration uses its api_url, keys and default provider")
    func fromConfiguration() async throws {
        let sim = try await SimulatedProviders.start()
        defer { Task { await sim.shutdown() } }
        var configuration = CacheConfiguration()
        configuration.search.defaultProvider = "pixabay"
        configuration.pixabay.apiURL = sim.apiURL(for: "pixabay")
        configuration.pixabay.apiKey = ProviderAPISimulator.defaultKeys["pixabay"]
        configuration.flickr.apiKey = nil
        let coordinator = SearchCoordinator.make(configuration: configuration, fetcher: URLSessionFetcher())
        let r = try await withTimeout(seconds: 60) { try await coordinator.search(SearchParams(query: "meadow")) }
        #expect(r.provider == "pixabay" && sim.api.requestCount("pixabay") == 1)
        #expect(coordinator.configuredProviders().map(\.configured) == [false, false, true])
    }

    @Test("The same query gives the same photos every time")
    func deterministic() async throws {
        let a = try await SimulatorHarness.start()
        let b = try await SimulatorHarness.start()
        defer { Task { await a.shutdown(); await b.shutdown() } }
        let params = SearchParams(query: "mountain lake", provider: "flickr", perPage: 10)
        let ra = try await withTimeout(seconds: 60) { try await a.coordinator.search(params) }
        let rb = try await withTimeout(seconds: 60) { try await b.coordinator.search(params) }
        #expect(ra.photos.map(\.id) == rb.photos.map(\.id))
        #expect(ra.total == rb.total)
    }

    @Test("A tricky query reaches each simulated provider intact", arguments: ProviderID.allCases)
    func trickyQueryOverHTTP(provider: ProviderID) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let query = "c++ & c# 100% café 🐈‍⬛"
        _ = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: query, provider: provider.rawValue))
        }
        let name = ["unsplash": "query", "flickr": "text", "pixabay": "q"][provider.rawValue]!
        let received = h.api.requests(provider.rawValue).first.map { FormQuery.value(name, in: $0.uri) }
        #expect(received == query)
    }

    @Test("A wrong key is provider_unavailable, and the key appears in no error text or stats", arguments: ProviderID.allCases)
    func wrongKey(provider: ProviderID) async throws {
        let key = "WRONG-KEY-\(provider.rawValue)-123456"
        let h = try await SimulatorHarness.start(keys: [provider: key])
        defer { Task { await h.shutdown() } }
        let e = await rpcError {
            _ = try await withTimeout(seconds: 60) {
                try await h.coordinator.search(SearchParams(query: "forest", provider: provider.rawValue))
            }
        }
        #expect(e?.kind == .providerUnavailable)
        let encoded = String(decoding: try JSONEncoder().encode(e), as: UTF8.self)
        #expect(!encoded.contains(key))
        let stats = String(describing: await h.coordinator.providerStatistics())
        #expect(!stats.contains(key))
        #expect(await h.coordinator.providerStatistics()[provider.rawValue]?.errors == 1)
    }

    @Test("No key configured: provider_unavailable and no request", arguments: ProviderID.allCases)
    func noKey(provider: ProviderID) async throws {
        let h = try await SimulatorHarness.start(keys: [provider: String?.none])
        defer { Task { await h.shutdown() } }
        let e = await rpcError { _ = try await h.coordinator.search(SearchParams(query: "forest", provider: provider.rawValue)) }
        #expect(e?.kind == .providerUnavailable)
        #expect(e?.message.contains(provider.environmentVariable) == true)
        #expect(h.api.totalRequests == 0)
        #expect(h.coordinator.configuredProviders().first { $0.name == provider.rawValue }?.configured == false)
    }

    @Test("Unsplash quota: remaining is read into stats, the 403 quota answer is rate_limited")
    func unsplashQuota() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setQuota(.init(limit: 50, remaining: 1), for: "unsplash")
        _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "first one")) }
        #expect(await h.coordinator.providerStatistics()["unsplash"]?.rateLimitRemaining == 0)
        let e = await rpcError {
            _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "second one")) }
        }
        #expect(e?.kind == .rateLimited)
        #expect(h.api.requestCount("unsplash") == 2)
        // Unsplash gives no reset time; the limiter's pause is reported instead.
        #expect((e?.data.retryAfter ?? 0) > 0)
    }

    @Test("Pixabay 429 gives retryAfter from the reset header, and later searches wait without a request")
    func pixabayQuota() async throws {
        // A hand-driven clock: the seconds left are exact however slow the machine is.
        let h = try await SimulatorHarness.start(clock: ManualClock())
        defer { Task { await h.shutdown() } }
        h.api.setQuota(.init(limit: 100, remaining: 0, resetAfter: 45), for: "pixabay")
        let e = await rpcError {
            _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "tulips", provider: "pixabay")) }
        }
        #expect(e?.kind == .rateLimited)
        #expect(e?.data.retryAfter == 45)
        let again = await rpcError {
            _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "roses", provider: "pixabay")) }
        }
        #expect(again?.kind == .rateLimited)
        #expect(again?.data.retryAfter == 45)
        #expect(h.api.requestCount("pixabay") == 1)
    }

    @Test("photo.get returns the detail fields for each provider", arguments: ProviderID.allCases)
    func photoDetails(provider: ProviderID) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let r = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "old town", provider: provider.rawValue, perPage: 5))
        }
        let listed = try #require(r.photos.first)
        let detail = try await withTimeout(seconds: 60) { try await h.coordinator.photo(id: listed.id) }
        #expect(detail.id == listed.id)
        #expect(detail.photo.tags?.isEmpty == false)
        #expect(detail.photo.views != nil)
        switch provider {
        case .unsplash:
            #expect(detail.photo.exif?.make == "Leica")
            #expect(detail.photo.location == Photo.Location(city: "Lyon", country: "France"))
            #expect(detail.photo.downloads != nil && detail.photo.uploadedAt != nil)
        case .flickr:
            #expect(detail.photo.location?.country == "France")
            #expect(detail.photo.uploadedAt != nil)
            // getInfo has no sizes: the sized URLs of the search are kept.
            #expect(detail.photo.thumbURL == listed.thumbURL)
            #expect(detail.photo.width == listed.width)
        case .pixabay:
            #expect(detail.photo.downloads != nil)
        }
    }

    @Test("photo.get of an unknown id is not_found", arguments: [
        "unsplash:abcdefghij", "flickr:123", "pixabay:42", "nothing-here",
    ])
    func photoNotFound(id: String) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await h.coordinator.photo(id: id) } }
        #expect(e?.kind == .notFound)
    }

    @Test("photo.get answers the remembered photo when the provider cannot be reached")
    func photoWhenUnreachable() async throws {
        // The simulator stops after the search: the photo must come from what was remembered.
        let (h, r) = try await SimulatorHarness.with { h in
            let r = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "glacier", perPage: 3)) }
            return (h, r)
        }
        let id = try #require(r.photos.first?.id)
        let p = try await withTimeout(seconds: 60) { try await h.coordinator.photo(id: id) }
        #expect(p.photo == r.photos.first)
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await h.coordinator.photo(id: "unsplash:AAAAAAAAAAA") } }
        #expect(e?.kind == .networkUnavailable)
    }

    @Test("Download tracking of a photo never returned is not_found without a request")
    func trackUnknown() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        #expect(await rpcError { try await h.coordinator.trackDownload(photoID: "unsplash:AAAAAAAAAAA") }?.kind == .notFound)
        #expect(h.api.totalRequests == 0)
    }

    @Test("The simulated Pixabay refuses a page past totalHits as the real one does; that is an empty page, not an error")
    func pixabayPageRefused() async throws {
        let sim = try await SimulatedProviders.start()
        defer { Task { await sim.shutdown() } }
        let client = ProviderClient(
            provider: PixabayProvider(settings: ProviderSettings(apiKey: ProviderAPISimulator.defaultKeys["pixabay"],
                                                                 apiURL: sim.apiURL(for: "pixabay"))),
            fetcher: URLSessionFetcher())
        let page = try await withTimeout(seconds: 60) { try await client.search(SearchQuery(term: .query("roses"), page: 30, perPage: 20)) }
        #expect(page.photos.isEmpty && page.needsTotals && !page.hasMore)
        let stats = await client.statistics()
        #expect(stats.requests == 1 && stats.errors == 0)
    }

    @Test("The simulator answers the new fields: a sponsored first Unsplash result, tags, dates, a Flickr video")
    func newFields() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let unsplash = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "harbour", provider: "unsplash", perPage: 5))
        }
        #expect(unsplash.photos[0].sponsored == true && unsplash.photos[0].sponsor == SimulatedCatalog.unsplashSponsor)
        #expect(unsplash.photos.dropFirst().allSatisfy { $0.sponsored == nil && $0.uploadedAt?.hasSuffix("Z") == true })
        for provider in ["flickr", "pixabay"] {
            let page = try await withTimeout(seconds: 60) {
                try await h.coordinator.search(SearchParams(query: "harbour", provider: provider, perPage: 5))
            }
            #expect(page.photos.allSatisfy { ($0.tags?.count ?? 0) == 3 }, "\(provider)")
        }
        let flickr = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "harbour", provider: "flickr", perPage: 5))
        }
        for p in flickr.photos {
            let taken = try #require(p.takenAt), uploaded = try #require(p.uploadedAt)
            #expect(taken < uploaded)
        }
        let video = try await withTimeout(seconds: 60) { try await h.coordinator.photo(id: "flickr:\(SimulatedCatalog.flickrVideoID)") }
        #expect(video.photo.media == .video && video.photo.fullURL == nil)
    }

    @Test("A page past the end is an empty page with the totals for every provider")
    func pastTheEndEverywhere() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        for provider in ["unsplash", "flickr", "pixabay"] {
            let first = try await withTimeout(seconds: 60) {
                try await h.coordinator.search(SearchParams(query: "roses", provider: provider, perPage: 20))
            }
            // A fresh coordinator knows no totals yet: the provider itself is asked past the end.
            let fresh = try await SimulatorHarness.start()
            defer { Task { await fresh.shutdown() } }
            let past = try await withTimeout(seconds: 60) {
                try await fresh.coordinator.search(SearchParams(query: "roses", provider: provider, page: first.totalPages + 1,
                                                                    perPage: 20))
            }
            #expect(past.photos.isEmpty && !past.hasMore, "\(provider)")
            #expect(past.total == first.total && past.totalPages == first.totalPages, "\(provider)")
        }
    }

    @Test("photo.get of an unknown provider is provider_unavailable")
    func photoUnknownProvider() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        #expect(await rpcError { _ = try await h.coordinator.photo(id: "instagram:1") }?.kind == .providerUnavailable)
        #expect(h.api.totalRequests == 0)
    }

    @Test("Unsplash download tracking calls the photo's download endpoint")
    func downloadTracking() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let r = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "bicycle", perPage: 3)) }
        let id = try #require(r.photos.first?.id)
        try await withTimeout(seconds: 60) { try await h.coordinator.trackDownload(photoID: id) }
        let last = try #require(h.api.requests("unsplash").last)
        #expect(last.path == "/unsplash/photos/\(id.dropFirst("unsplash:".count))/download")
        #expect(last.header("Authorization") == "Client-ID \(ProviderAPISimulator.defaultKeys["unsplash"]!)")
    }

    @Test("The recent feed works for each provider", arguments: ProviderID.allCases)
    func recentFeed(provider: ProviderID) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let r = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(feed: .recent, provider: provider.rawValue, perPage: 10))
        }
        #expect(r.photos.count == 10 && r.query == nil && r.feed == .recent)
        #expect(r.total > 10 && r.hasMore)
    }

    @Test("A provider answering HTML with HTTP 200 is upstream_error")
    func malformedBody() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setFault(.malformedBody, for: "flickr")
        let e = await rpcError {
            _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "abc", provider: "flickr")) }
        }
        #expect(e?.kind == .upstreamError)
        #expect(e?.data.body?.contains("Service Unavailable") == true)
    }
}
