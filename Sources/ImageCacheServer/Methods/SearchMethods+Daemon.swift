import ImageCacheKit
import Logging

extension SearchMethods {
    /// The search half of the daemon over its shared parts: provider calls through the
    /// daemon's libcurl engine (whose URL policy admits the providers' `api_url` hosts and, for
    /// loopback, only what `allowed_hosts` lists), result pages in memory layered over
    /// `<cache_dir>/searches/`, and the shared photo registry, so both survive a restart.
    ///
    /// When the folder cannot be used (read-only, permissions) searches are served from memory
    /// (`DaemonServices` has logged why) rather than refusing to start over a cache.
    public static func forDaemon(services: DaemonServices) -> SearchMethods {
        let memory = InMemorySearchPageStore()
        let store: any SearchPageStore = services.searchFiles.map {
            LayeredSearchPageStore(memory: memory, backing: $0.pageStore)
        } ?? memory
        return SearchMethods(configuration: services.configuration, fetcher: services.transfers, store: store,
                             registry: services.registry, logger: services.logger)
    }
}
