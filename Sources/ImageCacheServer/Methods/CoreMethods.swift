import ImageCacheKit

/// The methods every daemon has whatever features are built in: `hello`, `stats`, `cancel`.
public enum CoreMethods {
    /// `hello`'s answer (CONTRACT §5): who is serving, which protocol, which providers have a key.
    public struct Hello: Encodable, Sendable {
        public struct Provider: Encodable, Sendable {
            public var name: String
            /// Whether an API key is configured; the key itself is never sent.
            public var configured: Bool
        }

        public var name = "imagecached"
        public var version = ImageCacheVersion.current
        public var `protocol` = 1
        public var providers: [Provider]
    }

    /// `cancel`'s params: the id of a pending request on the same connection.
    public struct CancelParams: Decodable, Sendable {
        public var id: RequestID
    }

    /// `cancel`'s answer: whether a pending request was found (it then answers 1007 itself).
    public struct CancelResult: Encodable, Sendable {
        public var cancelled: Bool
    }

    /// What `hello` reports for a configuration: each provider, configured when its key is
    /// set and not empty.
    public static func hello(for configuration: CacheConfiguration) -> Hello {
        func configured(_ provider: CacheConfiguration.Provider) -> Bool {
            !(provider.apiKey ?? "").isEmpty
        }
        return Hello(providers: [
            .init(name: "unsplash", configured: configured(configuration.unsplash)),
            .init(name: "flickr", configured: configured(configuration.flickr)),
            .init(name: "pixabay", configured: configured(configuration.pixabay)),
        ])
    }

    /// Registers the three methods. `configuration` is read per call, so `hello` reflects a
    /// SIGHUP reload at once.
    public static func register(in router: inout RPCRouter, configuration: @escaping @Sendable () -> CacheConfiguration, stats: StatsRegistry) {
        router.register("hello") { _ in
            hello(for: configuration())
        }
        router.register("stats") { _ in
            await stats.snapshot()
        }
        router.register("cancel", options: RouteOptions(countsTowardPendingCap: false)) { (params: CancelParams, context) in
            CancelResult(cancelled: context.session.cancel(id: params.id))
        }
    }
}
