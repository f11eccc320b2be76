import ImageCacheConfig
import ImageCacheKit

/// The methods every daemon has whatever features are built in: `hello`, `stats`, `cancel`.
public struct CoreMethods: MethodFamily {
    /// Read per call, so `hello` reflects a SIGHUP reload at once.
    let configuration: ConfigurationStore
    /// The figures `stats` reports.
    let stats: StatsRegistry

    /// The family over the daemon's configuration and stats.
    public init(configuration: ConfigurationStore, stats: StatsRegistry) {
        self.configuration = configuration
        self.stats = stats
    }

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

    /// Registers the three methods, all answered inline (from memory: they never wait, and
    /// `cancel` must work even when a session is at its pending cap).
    ///
    /// `hello` is encoded once per configuration generation and reused.
    public func register(in router: inout RPCRouter) {
        let configuration = self.configuration
        let stats = self.stats
        let cached = LockedState<(generation: Int, answer: EncodedResult<HelloResult>)?>(nil)
        router.register(Methods.Hello.self, .inline { _, _ in
            if let hit = cached.withLock({ $0 }), hit.generation == configuration.generation {
                return .encoded(hit.answer)
            }
            let (current, generation) = configuration.snapshot
            let answer = try EncodedResult(Self.hello(for: current))
            cached.withLock { $0 = (generation, answer) }
            return .encoded(answer)
        })
        router.register(Methods.Stats.self, .inline { _, _ in
            .result(stats.snapshot())
        })
        router.register(Methods.Cancel.self, .inline { params, context in
            .result(CancelledResult(cancelled: context.session.cancel(id: params.id)))
        })
    }
}
