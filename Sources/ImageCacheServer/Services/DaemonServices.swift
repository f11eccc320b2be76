import CoreMetrics
import Foundation
import ImageCacheConfig
import ImageCacheKit
import Logging

/// The engine pieces every method family of the daemon shares: one transfer engine (so
/// thumbnails, downloads and provider calls meet in one priority queue under one set of
/// connection limits), one cache (memory over disk, owning `cache_dir` under its lock), one
/// photo registry (ids resolve for every method), the decoded-dimensions store (filled by
/// thumbnail fetches, read by `layout`) and one decode budget (a bound on decode memory for
/// the whole process, not per feature).
///
/// Built once by `ImageCacheDaemon` and handed to each family's `register`; torn down by
/// `shutdown()` after the server has stopped.
public final class DaemonServices: Sendable {
    /// The running configuration (replaced by SIGHUP).
    public let configuration: ConfigurationStore
    /// The libcurl engine; its temporary files live inside `cache_dir` so a finished body can be
    /// renamed into the cache.
    public let transfers: TransferEngine
    /// The thumbnail and search-page cache.
    public let cache: ImageCache
    /// Every photo returned, by id; persisted in `cache`'s disk tier (namespace `metadata`) so
    /// ids resolve after a restart.
    public let registry: PhotoRegistry
    /// Decoded dimensions recorded by thumbnail fetches, for `layout`; persisted in
    /// `cache_dir/dimensions.sqlite` so they survive a restart.
    public let dimensions: ImageDimensionsStore
    /// The decode budget, process-wide: `decode_memory` bytes, one decode per active core,
    /// heavy decodes in their own lane.
    public let decodes: DecodeBudget
    /// The fleet's shared tier (`[shared]`, memcached): present even without servers, when
    /// every call answers "unavailable" at once.
    public let shared: MemcachedSharedStore
    /// The thumbnail pipeline (memory → disk → shared tier → one fetch per cache key) over the
    /// parts above; slots, prefetches and `cache.evict` go through it.
    public let pipeline: ImagePipeline
    /// The download job table of `cache_dir`, in `state_dir`, with its lock held until
    /// `shutdown()`; nil when the state folder cannot be used (the download manager then
    /// tries once more and says why).
    package let jobStore: DownloadJobStore?
    /// Where the parts log.
    public let logger: Logger
    /// Search-result pages, in `cache` (namespace `search`): they count against `disk_limit`
    /// and `cache.clear {what: "searches"}` empties them.
    public let searchPages: CacheSearchPageStore
    /// The base64 of hot inline thumbnails, derived from the memory tier's bytes and kept by
    /// the server for its answers (`InlineDataCache`): at most half of `memory_limit`.
    let inlineData: InlineDataCache

    /// Opens the cache (taking the lock on `cache_dir`) and its download job table (taking
    /// that table's lock in `state_dir`), and starts the engine.
    ///
    /// - Throws: `DaemonStartError.cacheUnavailable` when the cache folder is held by another
    ///   daemon or cannot be opened: the daemon must not run beside another on one folder;
    ///   `.jobTableInUse` when another process holds the cache folder's job table.
    /// - Parameter metrics: where the parts record their figures (the daemon's own registry);
    ///   by default the process-wide `MetricsSystem.factory`.
    public init(configuration: ConfigurationStore, logger: Logger,
                metrics: any MetricsFactory = MetricsSystem.factory) throws(DaemonStartError) {
        let config = configuration.current
        let folder = config.resolvedCacheDirectory
        let cache: ImageCache
        do {
            cache = try ImageCache(configuration: config.cache, directory: folder, logger: logger)
        } catch {
            throw .cacheUnavailable(error)
        }
        do {
            jobStore = try DownloadJobStore(stateDirectory: config.resolvedStateDirectory, cacheDirectory: folder)
        } catch let inUse as DownloadJobStore.InUse {
            cache.close()
            throw .jobTableInUse(inUse.description)
        } catch {
            jobStore = nil
        }
        var options = TransferEngine.Options()
        options.logger = logger
        options.temporaryDirectory = folder + "/tmp"
        try? FileManager.default.createDirectory(atPath: options.temporaryDirectory, withIntermediateDirectories: true)
        let dimensions: ImageDimensionsStore
        do {
            dimensions = try ImageDimensionsStore(directory: folder, logger: logger)
        } catch {
            logger.error("decoded image sizes will not survive a restart: cannot use the cache folder",
                         metadata: ["file": "\(folder)/dimensions.sqlite", "reason": "\(error)"])
            dimensions = ImageDimensionsStore()
        }
        let shared = MemcachedSharedStore(settings: config.shared, logger: logger)
        // Ids another host of the fleet returned resolve through the tier (at once a miss
        // without `[shared]` servers).
        let registry = PhotoRegistry(persistence: SharedPhotoPersistence(local: CachePhotoPersistence(cache: cache),
                                                                         shared: SharedSearchRecords(store: shared)))
        // Pages and photos lived in `searches/` before they moved into the cache; that folder
        // would otherwise sit outside `disk_limit` for ever.
        if FileManager.default.fileExists(atPath: folder + "/searches") {
            try? FileManager.default.removeItem(atPath: folder + "/searches")
            logger.notice("removed the old search folder (pages and photos now live in the cache)",
                          metadata: ["folder": "\(folder)/searches"])
        }
        searchPages = CacheSearchPageStore(cache: cache)
        inlineData = InlineDataCache(costLimit: InlineDataCache.costLimit(memoryLimit: config.cache.memoryLimit))
        self.configuration = configuration
        self.cache = cache
        self.transfers = TransferEngine(configuration: config, options: options)
        self.registry = registry
        self.dimensions = dimensions
        self.decodes = DecodeBudget(memory: config.network.decodeMemory, slots: ProcessInfo.processInfo.activeProcessorCount)
        self.shared = shared
        self.pipeline = ImagePipeline(cache: cache, transfers: transfers, registry: registry, dimensions: dimensions,
                                      decodes: decodes, settings: { configuration.pipelineSettings },
                                      logger: logger, metrics: metrics, shared: shared)
        self.logger = logger
    }

    /// Applies a reloaded configuration: the cache limits (`memory_limit`, `disk_limit`) at
    /// once, evicting down to them if they shrank, and `[network]` with its URL policy to the
    /// engine for transfers queued from now on, `decode_memory` to the decode budget, `[shared]`
    /// to the shared tier (a new client when its servers, timeout or prefix changed); the rest of the parts read the configuration
    /// store at each use. For SIGHUP: `ImageCacheDaemon.reloadConfiguration` calls it after a
    /// good reload.
    public func apply(_ configuration: CacheConfiguration) {
        cache.apply(configuration.cache)
        transfers.apply(configuration)
        decodes.apply(memory: configuration.network.decodeMemory)
        shared.apply(configuration.shared)
    }

    /// Stops every transfer and releases the cache folder and its job table (after the
    /// server has stopped).
    public func shutdown() {
        transfers.shutdown()
        dimensions.close()
        cache.close()
        jobStore?.release()
    }
}
