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
        @ExplicitNull public var rateLimitRemaining: Int?
        public init(requests: Int, errors: Int, rateLimitRemaining: Int?) {
            self.requests = requests
            self.errors = errors
            self.rateLimitRemaining = rateLimitRemaining
        }
    }

    /// The fleet's shared tier (`[shared]`, memcached): its nodes and what it did for this
    /// host's thumbnails. Present when `[shared]` names servers; other fleet-wide figures
    /// (provider budgets) join this section.
    public struct Shared: Codable, Sendable, Hashable {
        /// One memcached node, as this host sees it.
        public struct Node: Codable, Sendable, Hashable {
            /// `host:port`.
            public var server: String
            /// `up`, or `ejected` (skipped after consecutive failures, retried later).
            public var state: String
            /// Reads that found a value / found none (a claim included).
            public var hits: Int
            public var misses: Int
            /// Operations that failed (time-out, refused, closed, protocol error).
            public var errors: Int
            /// Times the node was ejected.
            public var ejections: Int
            /// Bytes sent to it and received from it.
            public var bytesSent: Int
            public var bytesReceived: Int

            public init(server: String, state: String, hits: Int, misses: Int, errors: Int, ejections: Int,
                        bytesSent: Int, bytesReceived: Int) {
                self.server = server
                self.state = state
                self.hits = hits
                self.misses = misses
                self.errors = errors
                self.ejections = ejections
                self.bytesSent = bytesSent
                self.bytesReceived = bytesReceived
            }
        }

        /// Every configured node.
        public var nodes: [Node]
        /// Thumbnail requests answered from the tier (verified, then stored locally).
        public var thumbnailHits: Int
        /// Values that failed verification (deleted and fetched again).
        public var rejected: Int
        /// Fetches that waited for another host's claim, and of those the ones that gave up
        /// waiting and fetched here.
        public var waits: Int
        public var waitsExpired: Int
        /// Thumbnails written to the tier, and writes that did not happen (too large, node down).
        public var writes: Int
        public var writesFailed: Int
        /// Each provider's fleet-wide request budget (`[providers.NAME] budget`), by provider
        /// name; absent until the search part has filled it.
        public var budgets: [String: Budget]?

        /// One provider's fleet budget as this host last saw it.
        public struct Budget: Codable, Sendable, Hashable {
            /// Requests the whole fleet made in the current window, as counted at this host's
            /// last request (0 when it made none in this window).
            public var used: Int
            /// `budget`: requests allowed per window.
            public var limit: Int
            /// `budget_window` in seconds.
            public var windowSeconds: Int
            /// When the fleet may ask again after a quota answer (seconds since 1970), null
            /// when not stopped.
            @ExplicitNull public var stoppedUntil: Double?

            public init(used: Int, limit: Int, windowSeconds: Int, stoppedUntil: Double?) {
                self.used = used
                self.limit = limit
                self.windowSeconds = windowSeconds
                self.stoppedUntil = stoppedUntil
            }
        }

        public init(nodes: [Node], thumbnailHits: Int, rejected: Int, waits: Int, waitsExpired: Int, writes: Int, writesFailed: Int) {
            self.nodes = nodes
            self.thumbnailHits = thumbnailHits
            self.rejected = rejected
            self.waits = waits
            self.waitsExpired = waitsExpired
            self.writes = writes
            self.writesFailed = writesFailed
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
    /// The fleet's shared tier; absent without `[shared]` servers.
    public var shared: Shared?

    public init(memory: Cache, disk: Cache, network: Network, providers: [String: Provider], sessions: Int, uptimeSeconds: Int) {
        self.memory = memory
        self.disk = disk
        self.network = network
        self.providers = providers
        self.sessions = sessions
        self.uptimeSeconds = uptimeSeconds
    }
}
