import ImageCacheKit

/// The methods every daemon has whatever features are built in: `hello`, `stats`, `cancel`.
public enum CoreMethods {
    /// `hello`'s answer (CONTRACT §5): who is serving, which protocol, which providers have a key.
    public struct Hello: Encodable, Sendable {
        /// One provider's entry: its name and whether it can be used.
        public struct Provider: Encodable, Sendable {
            /// `unsplash`, `flickr` or `pixabay`: the prefix of its photo ids.
            public var name: String
            /// Whether an API key is configured; the key itself is never sent.
            public var configured: Bool
        }

        /// Always `imagecached`, so a client knows what answers on the socket.
        public var name = "imagecached"
        /// The daemon's version (`x.y.z`), for bug reports.
        public var version = ImageCacheVersion.current
        /// The protocol revision; it changes only when an existing method changes meaning.
        public var `protocol` = 1
        /// Every provider the daemon knows, configured or not.
        public var providers: [Provider]
    }

    /// `cancel`'s params: the id of a pending request on the same connection.
    public struct CancelParams: Decodable, Sendable {
        /// The `id` the pending request was sent with (string or integer, as sent).
        public var id: RequestID
    }

    /// `cancel`'s answer: whether a pending request was found (it then answers 1007 itself).
    public struct CancelResult: Encodable, Sendable {
        /// True when the request was pending and has now been answered 1007.
        public var cancelled: Bool
    }

    /// What `hello` reports for a configuration: each provider, configured when its key is
    /// set and not empty.
    public static func hello(for configuration: CacheConfiguration) -> Hello {
        func configured(_ provider: CacheConfiguration.Provider) -> Bool {
            // The providers' own rule (a key that is blank after trimming is no key).
            ProviderSettings(apiKey: provider.apiKey, apiURL: provider.apiURL).usableKey != nil
        }
        return Hello(providers: [
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
            CancelResult(cancelled: context.session.cancel(id: params.id))
        }
    }
}
