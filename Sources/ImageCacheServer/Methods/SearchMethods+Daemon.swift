import ImageCacheKit
import Logging

extension SearchMethods {
    /// The search half of the daemon over its shared parts: provider calls through the
    /// daemon's libcurl engine (whose URL policy admits the providers' `api_url` hosts and, for
    /// loopback, only what `allowed_hosts` lists), result pages in the daemon's `ImageCache`
    /// (memory over disk, under `disk_limit`) and the shared photo registry (persisted in the
    /// same cache), so both survive a restart and `cache.clear` reaches them; with `[shared]`
    /// servers, pages, photos and provider budgets shared with the fleet through the tier.
    public static func forDaemon(services: DaemonServices) -> SearchMethods {
        SearchMethods(configuration: services.configuration, fetcher: services.transfers, store: services.searchPages,
                      registry: services.registry, logger: services.logger, shared: services.shared,
                      placeholders: services.dimensions)
    }
}
