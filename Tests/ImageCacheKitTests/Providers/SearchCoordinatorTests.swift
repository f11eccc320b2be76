import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Search rules of the contract, against the simulator", .timeLimit(.minutes(3)))
struct SearchCoordinatorTests {
    @Test("Queries under 3 grapheme clusters after trimming fail before any request", arguments: [
        "", "  ab  ", "\n\tx", "👍🏽👍🏽", "é́a", "🇫🇷🇩🇪",
    ])
    func queryTooShort(query: String) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let e = await rpcError { _ = try await h.coordinator.search(SearchParams(query: query)) }
        #expect(e?.kind == .queryTooShort)
        #expect(e?.code == 1001)
        #expect(h.api.totalRequests == 0)
    }

    @Test("Three grapheme clusters are enough, however many scalars")
    func threeGraphemes() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let r = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: " 🐈‍⬛🐈‍⬛🐈‍⬛ ")) }
        #expect(r.query == "🐈‍⬛🐈‍⬛🐈‍⬛")
        #expect(h.api.totalRequests == 1)
    }

    @Test("Bad params are invalid_params naming the field", arguments: [
        (SearchParams(), "query"),
        (SearchParams(query: "abc", feed: .recent), "feed"), (SearchParams(query: "abc", page: 0), "page"),
        (SearchParams(query: "abc", debounceMs: -1), "debounceMs"),
    ])
    func invalidParams(params: SearchParams, field: String) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let e = await rpcError { _ = try await h.coordinator.search(params) }
        #expect(e?.kind == .invalidParams && e?.data.field == field)
        #expect(h.api.totalRequests == 0)
    }

    @Test("An unknown provider is provider_unavailable")
    func unknownProvider() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        #expect(await rpcError { _ = try await h.coordinator.search(SearchParams(query: "abc", provider: "bing")) }?
            .kind == .providerUnavailable)
    }

    @Test("A page beyond the known totalPages is empty, hasMore false, with no request", arguments: ProviderID.allCases)
    func pageBeyondEnd(provider: ProviderID) async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setTotal(25, for: provider.rawValue, query: "small set")
        let first = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "small set", provider: provider.rawValue, perPage: 10))
        }
        #expect(first.totalPages == 3)
        let beyond = try await h.coordinator.search(SearchParams(query: "small set", provider: provider.rawValue,
                                                                     page: 4, perPage: 10))
        #expect(beyond.photos.isEmpty && !beyond.hasMore && beyond.totalPages == 3 && beyond.page == 4)
        #expect(beyond.total == 25)
        #expect(h.api.requestCount(provider.rawValue) == 1)
        let last = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "small set", provider: provider.rawValue, page: 3, perPage: 10))
        }
        #expect(last.photos.count == 5 && !last.hasMore)
    }

    @Test("Flickr pages past its 4 000-result cap are empty without asking")
    func flickrCapWithoutRequest() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let r = try await h.coordinator.search(SearchParams(query: "anything", provider: "flickr", page: 41, perPage: 100))
        #expect(r.photos.isEmpty && !r.hasMore && r.totalPages == 40)
        #expect(h.api.totalRequests == 0)
    }

    @Test("Flickr's reported total over 4 000 is capped")
    func flickrTotalCapped() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setTotal(250_000, for: "flickr", query: "sunset")
        let r = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "sunset", provider: "flickr", perPage: 250))
        }
        #expect(r.total == 4000 && r.totalPages == 16)
    }

    @Test("Pixabay counts totalHits, so page 26 of 20 is never asked for")
    func pixabayTotalHits() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setTotal(90_000, for: "pixabay", query: "flowers")
        let r = try await withTimeout(seconds: 60) {
            try await h.coordinator.search(SearchParams(query: "flowers", provider: "pixabay", perPage: 20))
        }
        #expect(r.total == 500 && r.totalPages == 25)
        let beyond = try await h.coordinator.search(SearchParams(query: "flowers", provider: "pixabay", page: 26, perPage: 20))
        #expect(beyond.photos.isEmpty && !beyond.hasMore)
        #expect(h.api.requestCount("pixabay") == 1)
    }

    @Test("A repeated search is answered from the page cache without a request")
    func cachedPage() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let a = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        let b = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "  lighthouse ")) }
        #expect(!a.fromCache && b.fromCache && !b.stale)
        #expect(a.photos == b.photos)
        #expect(h.api.totalRequests == 1)
    }

    @Test("An expired page is fetched again")
    func expiredPage() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        h.wallClock.advance(seconds: 3601)
        let b = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        #expect(!b.fromCache)
        #expect(h.api.totalRequests == 2)
    }

    @Test("When the provider fails with 5xx, an expired cached page answers, flagged stale")
    func staleOn5xx() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        let fresh = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        h.wallClock.advance(seconds: 7200)
        h.api.setFault(.status(503, body: "down"), for: "unsplash")
        let stale = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        #expect(stale.stale && stale.fromCache)
        #expect(stale.photos == fresh.photos)
        #expect(h.api.totalRequests == 2)
    }

    @Test("When the provider cannot be reached at all, the cached page answers stale")
    func staleWhenUnreachable() async throws {
        let store = InMemorySearchPageStore()
        // The simulator stops after the first search: the provider cannot be reached after it.
        let h = try await SimulatorHarness.with(store: store) { h in
            _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
            return h
        }
        h.wallClock.advance(seconds: 7200)
        let stale = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        #expect(stale.stale)
    }

    @Test("Without a cached copy the 5xx is the answer")
    func noStaleCopy() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        h.api.setFault(.status(502, body: "bad gateway"), for: "unsplash")
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "abc")) } }
        #expect(e?.kind == .upstreamError && e?.data.status == 502)
    }

    @Test("A quota answer is never replaced by a stale copy")
    func rateLimitNotStale() async throws {
        let h = try await SimulatorHarness.start()
        defer { Task { await h.shutdown() } }
        _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) }
        h.wallClock.advance(seconds: 7200)
        h.api.setQuota(.init(limit: 50, remaining: 0), for: "unsplash")
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "lighthouse")) } }
        #expect(e?.kind == .rateLimited)
    }

    @Test("Identical searches in flight from several sessions share one upstream request")
    func coalescing() async throws {
        let h = try await SimulatorHarness.start(gateOpen: false)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let results = try await withTimeout(seconds: 60) {
            try await withThrowingTaskGroup(of: SearchResult.self) { group in
                for session in ["s1", "s2", "s3"] {
                    group.addTask { try await coordinator.search(SearchParams(query: "same thing"), session: session) }
                }
                await h.fetcher.waitForArrivals(1)
                try await coordinator.coalescedSearches.wait { $0 == 2 }
                h.fetcher.openGate()
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(results.count == 3)
        #expect(results.allSatisfy { !$0.fromCache && $0.photos == results[0].photos })
        #expect(h.api.totalRequests == 1)
        #expect(h.fetcher.arrived == 1)
    }

    @Test("Debounced typeahead: a superseded search answers 'superseded' and never reaches the provider")
    func debounceSupersede() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let first = Task { try await coordinator.search(SearchParams(query: "moun", debounceMs: 300, channel: "typeahead"), session: "s1") }
        await clock.waitForSleepers(1)
        let second = Task { try await coordinator.search(SearchParams(query: "mountain", debounceMs: 300, channel: "typeahead"), session: "s1") }
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await first.value } }
        #expect(e?.kind == .cancelled && e?.data.reason == "superseded")
        await withTimeoutOrFail { await clock.waitForSleepers(1) }
        #expect(h.api.totalRequests == 0)
        clock.advance(by: .milliseconds(300))
        let r = try await withTimeout(seconds: 60) { try await second.value }
        #expect(r.query == "mountain")
        #expect(h.api.totalRequests == 1)
        #expect(FormQuery.value("query", in: h.api.requests("unsplash")[0].uri) == "mountain")
    }

    @Test("Keystrokes that reach the coordinator out of arrival order: the older one is superseded, never the newest")
    func outOfOrderArrival() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        // Arrived second (serial 8) but ran first, as tasks may.
        let newest = Task {
            try await coordinator.search(SearchParams(query: "zebra crossing", debounceMs: 300, channel: "t"), arrival: 8, session: "s1")
        }
        await clock.waitForSleepers(1)
        // Arrived first (serial 7), reaches the coordinator late: superseded at once.
        let late = await rpcError {
            _ = try await coordinator.search(SearchParams(query: "zebra cross", debounceMs: 300, channel: "t"), arrival: 7, session: "s1")
        }
        #expect(late?.kind == .cancelled && late?.data.reason == "superseded")
        clock.advance(by: .milliseconds(300))
        let r = try await withTimeout(seconds: 60) { try await newest.value }
        #expect(r.query == "zebra crossing")
        #expect(h.api.totalRequests == 1)
        // Another session's channel of the same name is its own.
        let other = Task {
            try await coordinator.search(SearchParams(query: "zebra", debounceMs: 0, channel: "t"), arrival: 1, session: "s2")
        }
        #expect(try await withTimeout(seconds: 60) { try await other.value }.query == "zebra")
    }

    @Test("A refused query on a channel still supersedes the pending search there")
    func tooShortSupersedes() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let first = Task { try await coordinator.search(SearchParams(query: "mou", debounceMs: 300, channel: "c"), session: "s1") }
        await clock.waitForSleepers(1)
        let short = await rpcError { _ = try await coordinator.search(SearchParams(query: "mo", debounceMs: 300, channel: "c"), session: "s1") }
        #expect(short?.kind == .queryTooShort)
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await first.value } }
        #expect(e?.data.reason == "superseded")
        clock.advance(by: .seconds(1))
        #expect(h.api.totalRequests == 0)
    }

    @Test("The debounce holds the request until the clock passes it")
    func debounceWaits() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let search = Task { try await coordinator.search(SearchParams(query: "valley", debounceMs: 250, channel: "c")) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(249))
        #expect(clock.sleeperCount == 1)
        #expect(h.api.totalRequests == 0)
        clock.advance(by: .milliseconds(1))
        _ = try await withTimeout(seconds: 60) { try await search.value }
        #expect(h.api.totalRequests == 1)
    }

    @Test("A search in flight is superseded at once by a newer one on its channel")
    func supersedeInFlight() async throws {
        let h = try await SimulatorHarness.start(gateOpen: false)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let first = Task { try await coordinator.search(SearchParams(query: "oce", channel: "c"), session: "s1") }
        await h.fetcher.waitForArrivals(1)
        let second = Task { try await coordinator.search(SearchParams(query: "ocean", channel: "c"), session: "s1") }
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await first.value } }
        #expect(e?.data.reason == "superseded")
        h.fetcher.openGate()
        let r = try await withTimeout(seconds: 60) { try await second.value }
        #expect(r.query == "ocean")
    }

    @Test("Searches without a channel, or on other sessions' channels, run side by side")
    func noSupersedeWithoutChannel() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let tasks = [
            Task { try await coordinator.search(SearchParams(query: "page one", page: 1, debounceMs: 100)) },
            Task { try await coordinator.search(SearchParams(query: "page one", page: 2, debounceMs: 100)) },
            Task { try await coordinator.search(SearchParams(query: "other", debounceMs: 100, channel: "c"), session: "s1") },
            Task { try await coordinator.search(SearchParams(query: "another", debounceMs: 100, channel: "c"), session: "s2") },
        ]
        await clock.waitForSleepers(4)
        clock.advance(by: .milliseconds(100))
        for t in tasks { _ = try await withTimeout(seconds: 60) { try await t.value } }
        #expect(h.api.totalRequests == 4)
    }

    @Test("Cancelling the caller answers 'cancelled'")
    func callerCancelled() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let t = Task { try await coordinator.search(SearchParams(query: "desert", debounceMs: 1000)) }
        await clock.waitForSleepers(1)
        t.cancel()
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await t.value } }
        #expect(e?.kind == .cancelled && e?.data.reason == "cancelled")
        #expect(h.api.totalRequests == 0)
        #expect(coordinator.pendingSearches.value == 0)
    }

    @Test("Closing a session cancels its pending searches with 'session_closed'")
    func sessionClosed() async throws {
        let clock = ManualClock()
        let h = try await SimulatorHarness.start(clock: clock)
        defer { Task { await h.shutdown() } }
        let coordinator = h.coordinator
        let mine = Task { try await coordinator.search(SearchParams(query: "desert", debounceMs: 1000), session: "s1") }
        let theirs = Task { try await coordinator.search(SearchParams(query: "jungle", debounceMs: 1000), session: "s2") }
        await clock.waitForSleepers(2)
        await coordinator.closeSession("s1")
        let e = await rpcError { _ = try await withTimeout(seconds: 60) { try await mine.value } }
        #expect(e?.data.reason == "session_closed")
        clock.advance(by: .seconds(1))
        _ = try await withTimeout(seconds: 60) { try await theirs.value }
        #expect(h.api.totalRequests == 1)
    }

    @Test("Photos returned by a search resolve by id after a restart, through the persistence")
    func photosPersist() async throws {
        let files = try FilePhotoStore()
        defer { files.remove() }
        let h = try await SimulatorHarness.start(registry: PhotoRegistry(persistence: files))
        defer { Task { await h.shutdown() } }
        let r = try await withTimeout(seconds: 60) { try await h.coordinator.search(SearchParams(query: "canyon", perPage: 5)) }
        let restarted = PhotoRegistry(persistence: files)
        for photo in r.photos {
            let found = await restarted.photo(id: photo.id)
            #expect(found?.photo == photo)
            #expect(found?.resizableURL != nil)
        }
        #expect(await restarted.photo(id: "unsplash:neverseen") == nil)
    }
}

/// Runs an async wait bounded by a timeout, failing the test instead of hanging.
func withTimeoutOrFail(_ body: @escaping @Sendable () async -> Void) async {
    do { try await withTimeout(seconds: 60) { await body() } } catch { Issue.record("timed out") }
}
