import ImageCacheKit

/// `cache.evict`, `cache.clear`, `layout` and the `memory`, `disk` and `network` sections of
/// `stats` (CONTRACT §5): the methods that read or trim what the daemon holds rather than
/// fetch anything. One `register` call in the daemon adds them all.
///
/// Removal never breaks a path already handed out: the disk cache defers the unlink of a file
/// whose `path_grace` has not ended, so a client drawing from a delivered path keeps reading
/// it for that long after an evict or a clear.
///
/// `removed` and `bytes` in the answers are what the tiers shrank by while the removal ran
/// (entries of memory and disk together; bytes of disk, content plus sidecars): exact when
/// nothing is stored meanwhile, lower (never negative) when a fetch lands during it.
public enum CacheMethods {
    /// Adds `cache.evict`, `cache.clear`, `layout` and the three `stats` sections.
    /// - Parameter search: its coordinator forgets learnt page totals on `cache.clear searches`.
    public static func register(in router: inout RPCRouter, services: DaemonServices, stats: StatsRegistry,
                                search: SearchMethods) {
        let cache = services.cache
        router.register("cache.evict") { (params: CacheEvictParams, _) in
            try params.validate()
            let before = cache.statistics
            try await services.pipeline.evict(params.image)
            services.inlineData.removeAll()  // remade from memory at the next inline hit
            return removal(from: before, to: cache.statistics)
        }
        router.register("cache.clear") { (params: CacheClearParams, _) in
            let before = cache.statistics
            // Unlinking a full cache's files can take seconds: not on the cooperative pool,
            // whose few threads serve every session.
            if params.what != .searches {
                _ = await BlockingIO.run { cache.clear(.thumbnails) }
                services.inlineData.removeAll()
            }
            if params.what != .thumbnails { await search.coordinator.clearSearches() }
            return removal(from: before, to: cache.statistics)
        }
        LayoutMethods.register(in: &router, services: services)
        registerStats(stats, services: services)
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
        stats.register("memory") {
            let counts = lookups.counts
            return tier(cache.statistics.memory, hits: counts.memoryHits, misses: counts.memoryMisses)
        }
        stats.register("disk") {
            let counts = lookups.counts
            return tier(cache.statistics.disk, hits: counts.diskHits, misses: counts.diskMisses)
        }
        stats.register("network") {
            let figures = transfers.stats
            return .object([
                "inFlight": .int(figures.inFlight), "queued": .int(figures.queued), "requests": .int(figures.requests),
                "bytesReceived": .int(figures.bytesReceived), "bytesDiscarded": .int(figures.bytesDiscarded),
            ])
        }
    }

    private static func tier(_ figures: CacheTierStatistics, hits: Int, misses: Int) -> JSONValue {
        .object([
            "entries": .int(figures.entries), "bytes": .int(figures.bytes), "limit": .int(figures.limit),
            "hits": .int(hits), "misses": .int(misses),
        ])
    }

    /// How much the tiers shrank between two snapshots.
    static func removal(from before: ImageCache.Statistics, to after: ImageCache.Statistics) -> CacheRemovalResult {
        let entries = max(0, before.memory.entries - after.memory.entries) + max(0, before.disk.entries - after.disk.entries)
        return CacheRemovalResult(removed: entries, bytes: max(0, before.disk.bytes - after.disk.bytes))
    }
}
