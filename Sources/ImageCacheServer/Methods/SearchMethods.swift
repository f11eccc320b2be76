import ImageCacheConfig
import ImageCacheKit
import Logging

/// `search` and `photo.get` (docs/protocol.md, `search`) on the socket, over one `SearchCoordinator` whose
/// provider calls go through the daemon's libcurl engine (`HTTPFetching`, so the URL policy,
/// limits and retries apply to them as to images, at `visible` priority).
///
/// What this layer adds to the coordinator is only what belongs to sockets:
/// - the session: its id scopes `channel` supersession, and a closing session has its pending
///   searches cancelled and its channel state dropped (`closeSession`);
/// - the configuration's generation: after a SIGHUP that changes keys, `api_url`,
///   `default_provider` or `search_ttl`, new searches go to a coordinator built from the new
///   settings, sharing the page store and the photo registry (cached pages and remembered
///   photos survive a reload; searches already running finish on the old one);
/// - `stats.providers`: `stats` is answered inline and must not wait for the coordinator
///   actor, so the figures are copied here after every search and `photo.get`.
///
/// Keys never leave the providers: errors are scrubbed there, and the figures copied into
/// `stats` hold counts only.
public final class SearchMethods: MethodFamily {
    /// The coordinator of the running configuration, with what it was built from.
    private struct Current: Sendable {
        var generation: Int
        var settings: SearchSettings
        var coordinator: SearchCoordinator
    }

    /// The parts of the configuration a coordinator is built from.
    private struct SearchSettings: Equatable, Sendable {
        var providers: [ProviderSettings]
        var defaultProvider: String
        var searchTTL: Duration
        var budgets: [FleetBudget.Settings?]
        var sharedTier: Bool

        init(_ configuration: CacheConfiguration) {
            sharedTier = configuration.shared.isEnabled
            providers = ProviderID.allCases.map { ProviderSettings(configuration, for: $0) }
            defaultProvider = configuration.search.defaultProvider
            searchTTL = configuration.cache.searchTTL
            budgets = ProviderID.allCases.map { configuration.provider(named: $0.rawValue)?.fleetBudget }
        }
    }

    private let configuration: ConfigurationStore
    private let fetcher: any HTTPFetching
    private let store: any SearchPageStore
    /// Every photo returned, resolvable by id (persisted when the store is on disk).
    public let registry: PhotoRegistry
    private let current: LockedState<Current>
    private let watchedSessions = LockedState<Set<UInt64>>([])
    private let figures: LockedState<[String: ProviderStats]>
    /// The fleet budgets' figures, copied like `figures`; empty without a shared tier.
    private let budgetFigures = LockedState<[String: StatsResult.Shared.Budget]>([:])
    /// The fleet's shared tier, nil without one: pages, photos and provider budgets go
    /// through it.
    private let shared: (any SharedStore)?
    /// Where decoded images' placeholders are remembered: photos without their provider's get
    /// those (docs/protocol.md, "Placeholders"); nil: none added.
    private let placeholders: ImageDimensionsStore?
    private let logger: Logger

    /// - Parameters:
    ///   - configuration: read at every call, so a reload's keys apply to the next search.
    ///   - fetcher: the transfer engine (or any `HTTPFetching`).
    ///   - store: where result pages are kept (the cache's two tiers in the daemon, `CacheSearchPageStore`).
    ///   - registry: remembered photos (persisted in the daemon).
    ///   - shared: the fleet's shared tier; used while `[shared] servers` names one (a reload
    ///     that adds or removes the servers builds a coordinator with or without it).
    ///   - placeholders: the daemon's dimensions store, whose remembered placeholders the
    ///     photos answered get where their provider sent none.
    public init(configuration: ConfigurationStore, fetcher: any HTTPFetching, store: any SearchPageStore,
                registry: PhotoRegistry, logger: Logger, shared: (any SharedStore)? = nil,
                placeholders: ImageDimensionsStore? = nil) {
        self.placeholders = placeholders
        self.configuration = configuration
        self.fetcher = fetcher
        self.store = store
        self.registry = registry
        self.logger = logger
        self.shared = shared
        let (config, generation) = configuration.snapshot
        let coordinator = SearchCoordinator.make(configuration: config, fetcher: fetcher, store: store, registry: registry,
                                                 shared: config.shared.isEnabled ? shared : nil)
        current = LockedState(Current(generation: generation, settings: SearchSettings(config), coordinator: coordinator))
        budgetFigures.withLock { $0 = Self.configuredBudgets(config) }
        figures = LockedState(Dictionary(uniqueKeysWithValues: ProviderID.allCases.map { ($0.rawValue, ProviderStats()) }))
    }

    /// The coordinator for the configuration as it is now.
    public var coordinator: SearchCoordinator {
        let (config, generation) = configuration.snapshot
        return current.withLock { current in
            guard current.generation != generation else { return current.coordinator }
            current.generation = generation
            let settings = SearchSettings(config)
            if settings != current.settings {
                current.settings = settings
                budgetFigures.withLock { $0 = Self.configuredBudgets(config) }
                current.coordinator = SearchCoordinator.make(configuration: config, fetcher: fetcher, store: store,
                                                             registry: registry, shared: config.shared.isEnabled ? shared : nil)
            }
            return current.coordinator
        }
    }

    /// Adds the `providers` section of `stats`.
    public func registerStats(_ stats: StatsRegistry) {
        let figures = self.figures
        stats.register("providers") { result in
            let snapshot = figures.withLock { $0 }
            result.providers = snapshot.mapValues { stats in
                .init(requests: stats.requests, errors: stats.errors, rateLimitRemaining: stats.rateLimitRemaining)
            }
        }
    }

    /// Adds `shared.budgets` to `stats`: each provider's fleet budget. Registered after the
    /// shared tier's own part (`SharedTierStats`), whose `shared` object it completes; nothing
    /// while `[shared]` names no server.
    public func registerFleetStats(_ stats: StatsRegistry) {
        let budgets = budgetFigures
        stats.register("shared.budgets") { result in
            guard result.shared != nil else { return }
            result.shared?.budgets = budgets.withLock { $0 }
        }
    }

    /// Adds `search` and `photo.get`.
    public func register(in router: inout RPCRouter) {
        router.register(Methods.Search.self, .task { [self] params, context in
            let coordinator = watch(context.session)
            var result = try await refreshingFigures(of: coordinator) {
                try await coordinator.search(params, arrival: context.arrivalSerial, session: String(context.session.id))
            }
            result.photos = await withPlaceholders(result.photos)
            // Every search an operator may ask about: what, where it came from, how long.
            context.logger.info("search", metadata: [
                "provider": "\(result.provider)", "query": "\(result.query ?? result.feed?.rawValue ?? "")",
                "page": "\(result.page)", "photos": "\(result.photos.count)", "total": "\(result.total)",
                "source": "\(result.stale ? "stale cache" : result.fromCache ? "cache" : "provider")",
                "duration_ms": "\(context.elapsedMilliseconds)",
            ])
            return result
        })
        router.register(Methods.PhotoGet.self, .task { [self] params, _ in
            let coordinator = self.coordinator
            let photo = try await refreshingFigures(of: coordinator) {
                try await coordinator.photo(id: params.photo).photo
            }
            return await withPlaceholders([photo])[0]
        })
    }

    /// The photos with the placeholders remembered for them (a read of the dimensions
    /// database for memory misses: off the cooperative pool).
    private func withPlaceholders(_ photos: [Photo]) async -> [Photo] {
        guard let placeholders, photos.contains(where: { $0.blurHash == nil || $0.color == nil }) else { return photos }
        return await BlockingIO.read { placeholders.withPlaceholders(photos) }
    }

    /// Each provider's figures as `stats.providers` shows them (copied after every search and
    /// `photo.get`), for the metrics endpoint; read from memory, never waiting for the actor.
    public var providerFigures: [String: ProviderStats] { figures.withLock { $0 } }

    /// Which providers have a usable key, as the running coordinator sees them (`hello`).
    public func configuredProviders() -> [(name: String, configured: Bool)] {
        coordinator.configuredProviders()
    }

    /// Runs `body`, then copies the coordinator's per-provider figures for `stats` (which is
    /// answered inline and cannot wait for the actor), so a `stats` sent after an answer
    /// counts that answer's requests.
    private func refreshingFigures<T: Sendable>(of coordinator: SearchCoordinator,
                                                _ body: @Sendable () async throws -> T) async throws -> T {
        do {
            let value = try await body()
            await refreshFigures(coordinator)
            return value
        } catch {
            await refreshFigures(coordinator)
            throw error
        }
    }

    private func refreshFigures(_ coordinator: SearchCoordinator) async {
        let fresh = await coordinator.providerStatistics()
        figures.withLock { $0.merge(fresh) { _, new in new } }
        let budgets = await coordinator.fleetBudgetFigures()
        budgetFigures.withLock { $0 = budgets }
    }

    /// The fleet budgets as configured, none of it used: what `stats` shows until a request of
    /// the running coordinator counts (empty without `[shared]` servers).
    private static func configuredBudgets(_ config: CacheConfiguration) -> [String: StatsResult.Shared.Budget] {
        guard config.shared.isEnabled else { return [:] }
        var figures: [String: StatsResult.Shared.Budget] = [:]
        for id in ProviderID.allCases {
            guard let budget = config.provider(named: id.rawValue)?.fleetBudget else { continue }
            figures[id.rawValue] = StatsResult.Shared.Budget(budget)
        }
        return figures
    }

    /// The current coordinator, after making sure the session's close reaches it once.
    private func watch(_ session: Session) -> SearchCoordinator {
        let coordinator = self.coordinator
        let first = watchedSessions.withLock { $0.insert(session.id).inserted }
        if first {
            let id = session.id
            session.onClose { [self] in
                watchedSessions.withLock { _ = $0.remove(id) }
                // Pending searches are also cancelled with their request tasks; this drops the
                // session's channels and debounce waits in every coordinator it used.
                Task { await self.coordinator.closeSession(String(id)) }
                Task { await coordinator.closeSession(String(id)) }
            }
        }
        return coordinator
    }
}
