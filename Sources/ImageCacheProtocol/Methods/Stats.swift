extension Methods {
    /// `stats`: the daemon's counters, for `imagecache stats`, the demo and benchmarks.
    public enum Stats: RPCMethod {
        public typealias Params = NoParams
        public typealias Result = StatsResult
        public static let name = MethodName.stats
    }
}

/// The answer to `stats`. Counters run from the daemon's start.
public struct StatsResult: Codable, Sendable, Hashable {
    /// One cache tier's use and effectiveness.
    public struct Cache: Codable, Sendable, Hashable {
        /// Items held now.
        public var entries: Int
        /// Their total size now.
        public var bytes: Int
        /// `memory_limit` or `disk_limit`.
        public var limit: Int
        /// Look-ups answered from this tier.
        public var hits: Int
        /// Look-ups this tier could not answer.
        public var misses: Int
        public init(entries: Int, bytes: Int, limit: Int, hits: Int, misses: Int) {
            self.entries = entries
            self.bytes = bytes
            self.limit = limit
            self.hits = hits
            self.misses = misses
        }
    }

    /// The transfer engine's load and totals.
    public struct Network: Codable, Sendable, Hashable {
        /// Transfers running now.
        public var inFlight: Int
        /// Transfers waiting for admission.
        public var queued: Int
        /// Upstream requests made.
        public var requests: Int
        /// Body bytes received from upstream.
        public var bytesReceived: Int
        /// Bytes received for transfers that were then cancelled.
        public var bytesDiscarded: Int
        public init(inFlight: Int, queued: Int, requests: Int, bytesReceived: Int, bytesDiscarded: Int) {
            self.inFlight = inFlight
            self.queued = queued
            self.requests = requests
            self.bytesReceived = bytesReceived
            self.bytesDiscarded = bytesDiscarded
        }
    }

    /// One provider's API use.
    public struct Provider: Codable, Sendable, Hashable {
        /// API requests made to this provider.
        public var requests: Int
        /// Of those, the ones that failed (any error kind).
        public var errors: Int
        /// From the provider's rate-limit headers; null until one has been seen.
        public var rateLimitRemaining: Int?
        public init(requests: Int, errors: Int, rateLimitRemaining: Int?) {
            self.requests = requests
            self.errors = errors
            self.rateLimitRemaining = rateLimitRemaining
        }

        enum CodingKeys: String, CodingKey { case requests, errors, rateLimitRemaining }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(requests, forKey: .requests)
            try c.encode(errors, forKey: .errors)
            try c.encode(rateLimitRemaining, forKey: .rateLimitRemaining)
        }
    }

    /// The in-memory tier (`memory_limit`).
    public var memory: Cache
    /// The on-disk tier (`disk_limit`).
    public var disk: Cache
    /// The transfer engine.
    public var network: Network
    /// By provider name.
    public var providers: [String: Provider]
    /// Connected sessions now.
    public var sessions: Int
    /// Whole seconds since the daemon started (an integer on the wire).
    public var uptimeSeconds: Int

    public init(memory: Cache, disk: Cache, network: Network, providers: [String: Provider], sessions: Int, uptimeSeconds: Int) {
        self.memory = memory
        self.disk = disk
        self.network = network
        self.providers = providers
        self.sessions = sessions
        self.uptimeSeconds = uptimeSeconds
    }
}
