import Foundation
import ImageCacheConfig
import ImageCacheProtocol

/// The rules of `search` (docs/protocol.md), independent of sockets, so the daemon, the demo and
/// tests drive them the same way:
///
/// - a trimmed query shorter than 3 grapheme clusters → `query_too_short` before any request;
/// - a page beyond a known `totalPages` (or beyond a provider's cap) → empty, no request;
/// - a fresh cached page (`search_ttl`) is answered from the store (`fromCache`);
/// - a search on a session's `channel` supersedes the older one there, which answers
///   `cancelled` (`reason: "superseded"`) at once; its debounce wait is cut short, so a
///   superseded typeahead keystroke never reaches the provider. Searches without a channel
///   never supersede each other;
/// - identical searches in flight, from any sessions, share one upstream request;
/// - when the provider cannot be reached (network, timeout, 5xx) and any copy is stored, that
///   copy answers with `stale: true`;
/// - every photo returned is remembered in the registry, resolvable by id.
///
/// With the fleet's shared tier (`shared`), a page missing or expired locally is looked up
/// there before the provider is asked (memory → disk → tier → provider) and every page,
/// photo record and `photo.get` answer fetched here is written there for `search_ttl`, so the
/// other hosts answer them without a provider request; with fleet budgets, a search the fleet
/// may not send now is answered from a stored copy (stale if need be) when there is one.
public actor SearchCoordinator {
    /// Who asked: the daemon's session id; channels are per session.
    public typealias SessionID = String

    private let clients: [ProviderID: ProviderClient]
    private let defaultProvider: ProviderID
    private let store: any SearchPageStore
    /// The photos returned so far, for `photo.get`, `thumbnail.show {photo}` and `layout`.
    public nonisolated let registry: PhotoRegistry
    private let clock: any SchedulingClock
    private let searchTTL: TimeInterval
    private let wallClock: @Sendable () -> Date
    /// Pages and photos in the fleet's shared tier; nil without one.
    private let tier: SharedSearchRecords?

    private struct ChannelKey: Hashable {
        let session: SessionID?
        let channel: String
    }

    /// A search waiting for its answer: the outcome its caller awaits (settled once, by its
    /// work, a newer search on its channel, its session's close or its caller's cancellation),
    /// and the work that looks for it.
    private struct Pending {
        let answer: SharedOutcome<SearchResult, any Error>
        var work: Task<Void, Never>?
        let channel: ChannelKey?
        let session: SessionID?
    }

    private var pending: [UInt64: Pending] = [:]
    private var channels: [ChannelKey: UInt64] = [:]
    /// The newest arrival serial seen per channel (`search`'s `arrival`).
    private var newestArrival: [ChannelKey: UInt64] = [:]
    private var nextToken: UInt64 = 0
    private var inFlight: [SearchPageKey: Task<ProviderSearchPage, any Error>] = [:]
    /// `total` and `totalPages` learnt per query (the key with page 0).
    private var knownTotals: [SearchPageKey: (total: Int, totalPages: Int)] = [:]

    public init(clients: [ProviderClient], defaultProvider: ProviderID = .unsplash,
                store: any SearchPageStore = InMemorySearchPageStore(), registry: PhotoRegistry = PhotoRegistry(),
                searchTTL: Duration = .seconds(24 * 3600), clock: any SchedulingClock = ContinuousSchedulingClock(),
                wallClock: @escaping @Sendable () -> Date = { Date() }, shared: SharedSearchRecords? = nil) {
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.defaultProvider = defaultProvider
        self.store = store
        self.registry = registry
        self.searchTTL = RateLimiter.seconds(searchTTL)
        self.clock = clock
        self.wallClock = wallClock
        self.tier = shared
    }

    /// A coordinator for the three providers as the configuration sets them up, fetching through
    /// `fetcher`. Unknown `default_provider` values fall back to Unsplash. With a shared tier,
    /// pages and photos are shared through it and each provider with a `budget` counts its
    /// requests in the fleet's budget there.
    public static func make(configuration: CacheConfiguration, fetcher: any HTTPFetching,
                            store: any SearchPageStore = InMemorySearchPageStore(),
                            registry: PhotoRegistry = PhotoRegistry(),
                            clock: any SchedulingClock = ContinuousSchedulingClock(),
                            shared: (any SharedStore)? = nil) -> SearchCoordinator {
        let clients = ProviderID.allCases.map { id in
            let fleet = shared.flatMap { store in
                configuration.provider(named: id.rawValue)?.fleetBudget.map { FleetBudget(provider: id, settings: $0, store: store) }
            }
            return ProviderClient(provider: makePhotoProvider(id, settings: ProviderSettings(configuration, for: id)),
                                  fetcher: fetcher, limiter: RateLimiter(provider: id, clock: clock, fleet: fleet))
        }
        return SearchCoordinator(clients: clients,
                                 defaultProvider: ProviderID(rawValue: configuration.search.defaultProvider) ?? .unsplash,
                                 store: store, registry: registry, searchTTL: configuration.cache.searchTTL, clock: clock,
                                 shared: shared.map(SharedSearchRecords.init))
    }

    // MARK: search

    /// Answers one `search`. Throws the contract's errors: `query_too_short`, `invalid_params`,
    /// `provider_unavailable`, `cancelled` (`superseded`, `cancelled`, `session_closed`), and
    /// the provider's own (`upstream_error`, `rate_limited`, `network_unavailable`…).
    ///
    /// `arrival` is where the request stands in its session's arrival order (the server's
    /// admission serial), nil when unknown. Requests run as separate tasks and may reach the
    /// coordinator in another order than they arrived; on a channel, a search older than one
    /// already seen there is superseded at once, so a late older keystroke never supersedes
    /// the newest.
    public func search(_ params: SearchParams, arrival: UInt64? = nil, session: SessionID? = nil) async throws -> SearchResult {
        // A newer keystroke supersedes the pending one even when it is itself refused (too
        // short after a backspace): the older answer would describe text no longer typed.
        let channel = params.channel.map { ChannelKey(session: session, channel: $0) }
        if let channel, let arrival {
            // A newer keystroke got here first (each request is its own task): this one is old.
            if let newest = newestArrival[channel], newest > arrival {
                throw Cancellation(.superseded(channel: channel.channel), reason: "superseded")
            }
            newestArrival[channel] = arrival
        }
        if let channel, let older = channels[channel] {
            finish(older, .failure(Cancellation(.superseded(channel: channel.channel), reason: "superseded")))
        }
        let (client, query) = try validate(params)
        let key = SearchPageKey(provider: client.id, query: query)
        let token = nextToken
        nextToken += 1
        if let channel { channels[channel] = token }
        let debounce = Duration.milliseconds(max(0, params.debounceMs))

        // A caller cancelled while waiting leaves at once with `Cancellation(.search)`; the
        // search is then finished the same way (its work cancelled) when this actor runs next.
        let answer = SharedOutcome<SearchResult, any Error>(cancellation: { Cancellation(.search) })
        pending[token] = Pending(answer: answer, work: nil, channel: channel, session: session)
        pendingSearches.publish(pending.count)
        if Task.isCancelled {
            finish(token, .failure(Cancellation(.search)))
        } else {
            pending[token]?.work = Task { await self.run(token, client: client, key: key, debounce: debounce) }
        }
        do {
            return try await answer.value()
        } catch {
            // Nothing when the search was finished already (this is its own failure).
            finish(token, .failure(error))
            throw error
        }
    }

    /// Cancels every pending search of a closing session (`reason: "session_closed"`).
    package func closeSession(_ session: SessionID) {
        newestArrival = newestArrival.filter { $0.key.session != session }
        for (token, p) in pending where p.session == session {
            finish(token, .failure(Cancellation(.session, reason: "session_closed")))
        }
    }

    /// How many searches are waiting for an answer, published as it changes: a caller can
    /// read it or await a number (a typeahead test before its superseding keystroke) without
    /// going through the actor.
    package nonisolated let pendingSearches = Observed(0)

    /// How many searches were answered by joining an identical request already in flight
    /// instead of sending their own; awaitable like `pendingSearches`.
    package nonisolated let coalescedSearches = Observed(0)

    // MARK: photos

    /// `photo.get`: the provider's details for a photo id (`provider:id`), merged with what a
    /// search already said about it, and remembered. When the provider cannot be reached, the
    /// remembered record answers.
    ///
    /// With a shared tier, details another host (or this one) fetched within `search_ttl` answer
    /// without a provider request, and details fetched here are written there.
    public func photo(id: String) async throws -> ProviderPhoto {
        let (client, rawID) = try resolve(photoID: id)
        if let tier, let known = await tier.details(id: id) {
            await registry.remember([known])
            return known
        }
        do {
            let fresh = try await client.photo(id: rawID)
            let merged = await registry.photo(id: fresh.id).map { PhotoRegistry.merged($0, with: fresh) } ?? fresh
            await registry.remember([merged])
            await tier?.storeDetails(merged, ttl: searchTTLDuration)
            return merged
        } catch {
            guard await Self.mayAnswerStored(error, client) else { throw error }
            if let known = await registry.photo(id: id) { return known }
            throw error
        }
    }

    /// A photo returned earlier, without asking anyone (thumbnails, layout, downloads).
    package func rememberedPhoto(id: String) async -> ProviderPhoto? {
        await registry.photo(id: id)
    }

    /// Calls Unsplash's download-tracking endpoint for a remembered photo, as its guidelines
    /// require when a photo is downloaded; nothing for other providers.
    package func trackDownload(photoID: String) async throws {
        let (client, _) = try resolve(photoID: photoID)
        guard let photo = await registry.photo(id: photoID) else {
            throw SearchError.unknownPhoto(id: photoID)
        }
        _ = try await client.trackDownload(photo)
    }

    /// `stats.providers`.
    package func providerStatistics() async -> [String: ProviderStats] {
        var result: [String: ProviderStats] = [:]
        for (id, client) in clients { result[id.rawValue] = await client.statistics() }
        return result
    }

    /// The fleet budget of each provider that has one (with a shared tier), for `stats`.
    package func fleetBudgetFigures() async -> [String: StatsResult.Shared.Budget] {
        var result: [String: StatsResult.Shared.Budget] = [:]
        for (id, client) in clients {
            if let fleet = client.limiter.fleet { result[id.rawValue] = await fleet.figures() }
        }
        return result
    }

    /// `hello.providers`: which providers have a key.
    package nonisolated func configuredProviders() -> [(name: String, configured: Bool)] {
        ProviderID.allCases.compactMap { id in
            clients[id].map { (id.rawValue, !$0.provider.secrets.isEmpty) }
        }
    }

    /// `cache.clear {what: "searches"}`: forgets stored pages and learnt totals.
    package func clearSearches() async {
        knownTotals.removeAll()
        await store.removeAll()
    }

    // MARK: internals

    private func validate(_ params: SearchParams) throws -> (ProviderClient, SearchQuery) {
        let providerName = params.provider ?? defaultProvider.rawValue
        guard let providerID = ProviderID(rawValue: providerName), let client = clients[providerID] else {
            throw SearchError.unknownProvider(providerName, listKnown: true)
        }
        let term: SearchTerm
        switch (params.query, params.feed) {
        case (let q?, nil):
            let trimmed = q.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.count >= 3 else {
                throw SearchError.queryTooShort
            }
            term = .query(trimmed)
        case (nil, .recent?):
            term = .recent
        case (nil, nil):
            throw SearchError.noQueryOrFeed
        case (_?, _?):
            throw SearchError.queryAndFeed
        }
        guard params.page >= 1 else { throw SearchError.pageBelowOne }
        guard params.debounceMs >= 0 else { throw SearchError.negativeDebounce }
        if client.provider.secrets.isEmpty { throw ProviderErrors.missingKey(providerID) }
        let perPage = client.provider.clampPerPage(params.perPage)
        return (client, SearchQuery(term: term, page: params.page, perPage: perPage, safe: params.safe))
    }

    private func run(_ token: UInt64, client: ProviderClient, key: SearchPageKey, debounce: Duration) async {
        do {
            if let answer = await answerWithoutProvider(client: client, key: key) {
                finish(token, .success(answer))
                return
            }
            if debounce > .zero {
                try await clock.sleep(for: debounce)
                // Superseded or cancelled while waiting: never reach the provider.
                guard !Task.isCancelled, pending[token] != nil else { return }
                // An identical search may have completed during the wait.
                if let answer = await answerWithoutProvider(client: client, key: key) {
                    finish(token, .success(answer))
                    return
                }
            }
            guard !Task.isCancelled, pending[token] != nil else { return }
            do {
                let page = try await shared(client: client, key: key)
                finish(token, .success(result(key, page, fromCache: false, stale: false)))
            } catch {
                guard await Self.mayAnswerStored(error, client) else { throw error }
                if let stored = await store.load(key) {
                    await registry.remember(stored.page.photos)
                    finish(token, .success(result(key, stored.page, fromCache: true, stale: true)))
                } else {
                    finish(token, .failure(error))
                }
            }
        } catch {
            finish(token, .failure(error))
        }
    }

    /// A page known to be empty (beyond the end) or fresh in the store, else nil.
    private func answerWithoutProvider(client: ProviderClient, key: SearchPageKey) async -> SearchResult? {
        let q = key.query
        let cap = client.provider.reachableResultsCap
        var totalsKey = key
        totalsKey.query.page = 0
        if let known = knownTotals[totalsKey], q.page > known.totalPages {
            return emptyPage(key, total: known.total, totalPages: known.totalPages)
        }
        if let cap, Pagination.isBeyondCap(page: q.page, perPage: q.perPage, cap: cap) {
            // The total is not known yet; the cap is the most any page could reach.
            return emptyPage(key, total: cap, totalPages: Pagination.totalPages(total: cap, perPage: q.perPage))
        }
        if let stored = await store.load(key), isFresh(stored) {
            learn(key, stored.page)
            await registry.remember(stored.page.photos)
            return result(key, stored.page, fromCache: true, stale: false)
        }
        // Another host's copy: kept locally (memory and disk) once found, like a fetched one.
        if let tier, let found = await tier.page(key), isFresh(found) {
            learn(key, found.page)
            await registry.remember(found.page.photos)
            await store.save(found, for: key)
            return result(key, found.page, fromCache: true, stale: false)
        }
        return nil
    }

    /// Whether a stored page is within `search_ttl` (and not dated more than a minute ahead,
    /// which only a wrong clock or a forged value can do).
    private func isFresh(_ stored: StoredSearchPage) -> Bool {
        let now = wallClock()
        return now.timeIntervalSince(stored.storedAt) < searchTTL && stored.storedAt <= now.addingTimeInterval(60)
    }

    /// `search_ttl` as the tier's lifetime of what is written there.
    private var searchTTLDuration: Duration {
        searchTTL.isFinite && searchTTL < Double(Int64.max) ? .seconds(Int64(searchTTL)) : .zero
    }

    private func emptyPage(_ key: SearchPageKey, total: Int, totalPages: Int) -> SearchResult {
        let q = key.query
        return SearchResult(query: q.term.text, feed: q.term.text == nil ? .recent : nil, provider: key.provider.rawValue,
                            page: q.page, perPage: q.perPage, total: total, totalPages: totalPages,
                            hasMore: false, photos: [], fromCache: false, stale: false)
    }

    /// One upstream request per identical page in flight; the first asker starts it, later
    /// ones join it. The request runs to the end even if its askers go away, so its page
    /// still lands in the store.
    private func shared(client: ProviderClient, key: SearchPageKey) async throws -> ProviderSearchPage {
        if let running = inFlight[key] {
            coalescedSearches.update { $0 += 1 }
            return try await running.value
        }
        let task = Task<ProviderSearchPage, any Error> {
            do {
                var page = try await client.search(key.query)
                if page.needsTotals { page = try await self.pastTheEnd(client: client, key: key) }
                await self.completed(key, page)
                return page
            } catch {
                await self.completed(key, nil)
                throw error
            }
        }
        inFlight[key] = task
        return try await task.value
    }

    /// The empty page past the end of a provider that answered it without totals (Pixabay):
    /// the totals come from page 1, asked like any page (shared, cached), so a client still
    /// learns `total` and `totalPages` there.
    private func pastTheEnd(client: ProviderClient, key: SearchPageKey) async throws -> ProviderSearchPage {
        let q = key.query
        guard q.page > 1 else { return ProviderSearchPage(photos: [], page: q.page, perPage: q.perPage, total: 0) }
        var first = key
        first.query.page = 1
        let known = try await shared(client: client, key: first)
        return ProviderSearchPage(photos: [], page: q.page, perPage: known.perPage, total: known.total)
    }

    /// The in-flight entry is dropped only once the page is in the store: a search arriving
    /// meanwhile (the actor is re-entered at each `await`) joins the finished request instead
    /// of finding neither a request in flight nor a stored page and sending a second one.
    private func completed(_ key: SearchPageKey, _ page: ProviderSearchPage?) async {
        guard let page else {
            inFlight[key] = nil
            return
        }
        learn(key, page)
        await registry.remember(page.photos)
        let stored = StoredSearchPage(page: page, storedAt: wallClock())
        await store.save(stored, for: key)
        if let tier {
            // Written before the answer, so a host asked next finds them (each write is
            // bounded by the tier's timeout, all of them pipelined together).
            let ttl = searchTTLDuration
            async let photos: Void = tier.storePhotos(page.photos, ttl: ttl)
            await tier.storePage(stored, for: key, ttl: ttl)
            await photos
        }
        inFlight[key] = nil
    }

    private func learn(_ key: SearchPageKey, _ page: ProviderSearchPage) {
        var totalsKey = key
        totalsKey.query.page = 0
        // Bounded: forgetting a total only costs one request later.
        if knownTotals.count >= Self.knownTotalsLimit { knownTotals.removeAll(keepingCapacity: true) }
        knownTotals[totalsKey] = (page.total, page.totalPages)
    }

    /// How many queries' `totalPages` are remembered before the table is reset.
    static let knownTotalsLimit = 10_000

    private func result(_ key: SearchPageKey, _ page: ProviderSearchPage, fromCache: Bool, stale: Bool) -> SearchResult {
        let q = key.query
        return SearchResult(query: q.term.text, feed: q.term.text == nil ? .recent : nil, provider: key.provider.rawValue,
                            page: q.page, perPage: q.perPage, total: page.total, totalPages: page.totalPages,
                            hasMore: page.hasMore, photos: page.photos.map(\.photo), fromCache: fromCache, stale: stale)
    }

    private func finish(_ token: UInt64, _ outcome: Result<SearchResult, any Error>) {
        guard let p = pending.removeValue(forKey: token) else { return }
        pendingSearches.publish(pending.count)
        if let channel = p.channel, channels[channel] == token { channels[channel] = nil }
        if case .failure = outcome { p.work?.cancel() }
        p.answer.settle(outcome)
    }

    private func resolve(photoID: String) throws -> (ProviderClient, String) {
        guard let colon = photoID.firstIndex(of: ":") else {
            throw SearchError.notAPhotoID(photoID)
        }
        let name = String(photoID[..<colon])
        let raw = String(photoID[photoID.index(after: colon)...])
        guard let id = ProviderID(rawValue: name), let client = clients[id] else {
            throw SearchError.unknownProvider(name, listKnown: false)
        }
        guard !raw.isEmpty else { throw SearchError.noProviderID(photoID) }
        return (client, raw)
    }

    /// Whether a stored copy (stale if need be) may answer instead of `error`: the provider
    /// could not be reached (`isUnreachable`), or the fleet holds requests back (its budget is
    /// spent or a host saw a quota answer). A `rate_limited` of this host's own limits is
    /// answered as it is, as without a tier.
    static func mayAnswerStored(_ error: any Error, _ client: ProviderClient) async -> Bool {
        if isUnreachable(error) { return true }
        guard engineKind(of: error) == .rateLimited else { return false }
        return await client.limiter.isHeldByFleet()
    }

    /// The failures a stale copy may stand in for: the provider could not be reached, timed
    /// out, or failed on its side (5xx, or an answer that is not well-formed HTTP).
    static func isUnreachable(_ error: any Error) -> Bool {
        switch engineKind(of: error) {
        case .networkUnavailable, .timeout: return true
        case .upstreamError:
            if (error as? TransferError)?.isMalformedAnswer == true { return true }
            let status = (error as? ProviderError)?.status ?? (error as? TransferError)?.status
            return status.map { $0 >= 500 } ?? false
        default: return false
        }
    }
}
