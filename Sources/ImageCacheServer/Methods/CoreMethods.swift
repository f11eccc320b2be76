import ImageCacheKit

/// The methods every daemon has whatever features are built in: `hello`, `stats`, `cancel`.
public enum CoreMethods {
    /// What `hello` reports for a configuration: each provider, configured when its key is
    /// set and not empty.
    public static func hello(for configuration: CacheConfiguration) -> HelloResult {
        func configured(_ provider: CacheConfiguration.Provider) -> Bool {
            // The providers' own rule (a key that is blank after trimming is no key).
            ProviderSettings(apiKey: provider.apiKey, apiURL: provider.apiURL).usableKey != nil
        }
        return HelloResult(version: ImageCacheVersion.current, providers: [
            .init(name: "unsplash", configured: configured(configuration.unsplash)),
            .init(name: "flickr", configured: configured(configuration.flickr)),
            .init(name: "pixabay", configured: configured(configuration.pixabay)),
        ])
    }

    /// Registers the three methods, all answered immediately (inline, from memory: they never
    /// wait, and `cancel` must work even when a session is at its pending cap).
    /// `configuration` is read per call, so `hello` reflects a SIGHUP reload at once.
    ///
    /// `hello` is encoded once per configuration generation and reused.
    public static func register(in router: inout RPCRouter, configuration: ConfigurationStore, stats: StatsRegistry) {
        let cached = LockedState<(generation: Int, answer: EncodedJSON)?>(nil)
        router.registerImmediate("hello") { _ in
            if let hit = cached.withLock({ $0 }), hit.generation == configuration.generation {
                return hit.answer
            }
            let (current, generation) = configuration.snapshot
            let answer = try EncodedJSON(encoding: hello(for: current))
            cached.withLock { $0 = (generation, answer) }
            return answer
        }
        router.registerImmediate("stats") { _ in
            stats.snapshot()
        }
        router.registerImmediate("cancel") { (params: CancelParams, context) in
            CancelledResult(cancelled: context.session.cancel(id: params.id))
        }
    }
}
