import ImageCacheKit

/// `cache.evict`, `cache.clear`, `layout` and the `memory`, `disk` and `network` sections of
/// `stats` (docs/protocol.md, Methods): the methods that read or trim what the daemon holds rather than
/// fetch anything.
///
/// Removal never breaks a path already handed out: the disk cache defers the unlink of a file
/// whose `path_grace` has not ended, so a client drawing from a delivered path keeps reading
/// it for that long after an evict or a clear.
///
/// `removed` and `bytes` in the answers are what the tiers shrank by while the removal ran
/// (entries of memory and disk together; bytes of disk, content plus descriptions): exact when
/// nothing is stored meanwhile, lower (never negative) when a fetch lands during it.
///
/// On a shared daemon, emptying the whole cache is not every user's to decide: `cache.clear`
/// needs root, the daemon's uid or a member of `admin_group` (docs/protocol.md, "Shared
/// daemons"). `cache.evict` of an image a peer names stays open to all: it costs the others
/// one refetch at most.
public struct CacheMethods: MethodFamily {
    let services: DaemonServices
    /// Its coordinator forgets learnt page totals on `cache.clear searches`.
    let search: SearchMethods

    /// The family over the daemon's parts; registers the `memory`, `disk` and `network`
    /// sections of `stats` now.
    public init(services: DaemonServices, stats: StatsRegistry, search: SearchMethods) {
        self.services = services
        self.search = search
        Self.registerStats(stats, services: services)
    }

    /// Adds `cache.evict` and `cache.clear`.
    public func register(in router: inout RPCRouter) {
        let services = self.services
        let search = self.search
        let cache = services.cache
        router.register(Methods.CacheEvict.self, .task { params, _ in
            let before = cache.statistics
            try await services.pipeline.evict(params.image)
            services.inlineData.removeAll()  // remade from memory at the next inline hit
            return Self.removal(from: before, to: cache.statistics)
        })
        router.register(Methods.CacheClear.self, .task { params, context in
            try Self.checkMayClear(context.session.requester, adminGroup: services.configuration.current.daemon.adminGroup)
            let before = cache.statistics
            // Unlinking a full cache's files can take seconds: not on the cooperative pool,
            // whose few threads serve every session.
            if params.what != .searches {
                _ = await BlockingIO.run { cache.clear(.thumbnails) }
                services.inlineData.removeAll()
            }
            if params.what != .thumbnails { await search.coordinator.clearSearches() }
            return Self.removal(from: before, to: cache.statistics)
        })
    }

    /// Refuses (`forbidden`) a requester that is neither root, the daemon's uid nor a member of
    /// `adminGroup`, saying who may.
    static func checkMayClear(_ requester: Requester, adminGroup: String?) throws(ServerError) {
        let gid = adminGroup.flatMap(adminGroupID)
        guard !requester.mayClearCache(adminGroup: gid) else { return }
        throw ServerError(.cacheClearForbidden(uid: requester.uid, adminGroup: adminGroup))
    }

    /// The gid of `admin_group` (a name, or a number), nil when it names no group of this system.
    static func adminGroupID(_ name: String) -> UInt32? {
        SystemGroup.id(named: name)
    }

    /// `stats.memory`, `stats.disk` (sizes from the cache, hits and misses from the pipeline's
    /// per-request outcomes) and `stats.network` (from the transfer engine's counters). Each
    /// reads a snapshot under a lock or from atomics and never waits, as `stats` is answered
    /// inline.
    ///
    /// `hits`/`misses` count thumbnail requests, one outcome each (`ThumbnailLookups`): a memory
    /// hit; a memory miss answered from disk (a disk hit); a miss of both that went to the
    /// network. So `memory.hits / (memory.hits + memory.misses)` is the share of requests
    /// answered from memory, a hit rate, not a count of key probes.
    static func registerStats(_ stats: StatsRegistry, services: DaemonServices) {
        let cache = services.cache
        let transfers = services.transfers
        let lookups = services.pipeline.lookups
        stats.register("cache") { result in
            let counts = lookups.counts
            let statistics = cache.statistics
            result.memory = tier(statistics.memory, hits: counts.memoryHits, misses: counts.memoryMisses)
            result.disk = tier(statistics.disk, hits: counts.diskHits, misses: counts.diskMisses)
        }
        SharedTierStats.register(stats, services: services)
        stats.register("network") { result in
            let figures = transfers.stats
            result.network = .init(inFlight: figures.inFlight, queued: figures.queued, requests: figures.requests,
                                   bytesReceived: figures.bytesReceived, bytesDiscarded: figures.bytesDiscarded)
        }
    }

    private static func tier(_ figures: CacheTierStatistics, hits: Int, misses: Int) -> StatsResult.Cache {
        .init(entries: figures.entries, bytes: figures.bytes, limit: figures.limit, hits: hits, misses: misses)
    }

    /// How much the tiers shrank between two snapshots.
    static func removal(from before: ImageCache.Statistics, to after: ImageCache.Statistics) -> CacheRemovalResult {
        let entries = max(0, before.memory.entries - after.memory.entries) + max(0, before.disk.entries - after.disk.entries)
        return CacheRemovalResult(removed: entries, bytes: max(0, before.disk.bytes - after.disk.bytes))
    }
}
