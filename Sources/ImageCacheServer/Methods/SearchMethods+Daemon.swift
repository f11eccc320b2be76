import ImageCacheKit
import Logging

extension SearchMethods {
    /// The search half of the daemon as the configuration sets it up: the libcurl engine
    /// (whose URL policy admits the providers' `api_url` hosts and, for loopback, only what
    /// `allowed_hosts` lists), result pages in memory layered over `<cache_dir>/searches/`,
    /// and the photo registry persisted there, so both survive a restart.
    ///
    /// When the folder cannot be created (read-only, permissions) the daemon still serves
    /// searches from memory and says so in the log, rather than refusing to start over a cache.
    ///
    /// - Returns: the methods, and the engine the caller shuts down when the daemon stops.
    public static func forDaemon(configuration: ConfigurationStore, logger: Logger) -> (SearchMethods, TransferEngine) {
        let config = configuration.current
        var options = TransferEngine.Options()
        options.logger = logger
        let engine = TransferEngine(configuration: config, options: options)
        let memory = InMemorySearchPageStore()
        let store: any SearchPageStore
        let registry: PhotoRegistry
        do {
            let disk = try FileSearchStore(cacheDirectory: config.resolvedCacheDirectory)
            store = LayeredSearchPageStore(memory: memory, backing: disk.pageStore)
            registry = PhotoRegistry(persistence: disk.photoPersistence)
        } catch {
            logger.error("search pages and photo ids will not survive a restart: cannot use the cache folder",
                         metadata: ["folder": "\(config.resolvedCacheDirectory)/searches", "reason": "\(error)"])
            store = memory
            registry = PhotoRegistry()
        }
        let methods = SearchMethods(configuration: configuration, fetcher: engine, store: store, registry: registry,
                                    logger: logger)
        return (methods, engine)
    }
}
