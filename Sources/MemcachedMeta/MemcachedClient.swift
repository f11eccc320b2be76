import NIOCore

/// A memcached client for the meta protocol (memcached ≥ 1.6), on SwiftNIO: what the fleet's
/// shared tier speaks.
///
/// Why not libmemcached: Debian's (1.1.4) has no meta commands, so the fleet's one-fetcher
/// claim (`mg … N` answering `W`/`Z`) would have to be rebuilt from `add` with a second key
/// and polling, and its blocking calls would need threads of their own; docs/benchmarks.md
/// has the measurement that this client's round trip is close to the bare one.
///
/// - Keys spread over the servers by ketama (`KetamaRing`); keys are made safe by `MetaKey`.
/// - Each node has `connectionsPerNode` connections, made lazily; requests are pipelined.
/// - Every operation is bounded by `timeout` (a scheduled task on an event loop: nothing ever
///   blocks a loop) and never throws: a node that fails answers `.unavailable`/`nil`/`false`.
/// - After `ejectAfter` consecutive failures a node is ejected for `retryAfter`: its keys are
///   misses, without any network attempt (they are not moved to another node, which would
///   only thrash the other nodes while it flaps).
/// - Values over `maxValueBytes` (memcached's default item size, 1 MiB, less room for the
///   item's header and key) are not sent.
public final class MemcachedClient: Sendable {
    /// How the client behaves; the fleet's `[shared]` section sets `timeout` and `prefix`.
    public struct Configuration: Sendable, Equatable {
        /// Per operation, connect included.
        public var timeout: Duration = .milliseconds(50)
        /// Prepended to every key, so two fleets can share one memcached.
        public var prefix: String = ""
        /// Pipelined connections per node.
        public var connectionsPerNode = 2
        /// Consecutive failures that eject a node (K).
        public var ejectAfter = 3
        /// How long an ejected node is skipped before one probe operation is tried (T).
        public var retryAfter: Duration = .seconds(2)
        /// The largest value sent (memcached's `-I`, 1 MiB by default, holds the value plus
        /// the key and about 50 bytes of item header).
        public var maxValueBytes = 1_048_576 - 512

        public init() {}

        var timeAmount: TimeAmount { Self.amount(timeout) }
        var retryAmount: TimeAmount { Self.amount(retryAfter) }

        private static func amount(_ duration: Duration) -> TimeAmount {
            let (seconds, attoseconds) = duration.components
            guard seconds >= 0 else { return .nanoseconds(0) }
            guard seconds < 1_000_000 else { return .seconds(1_000_000) }
            return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// What a read found.
    public enum Lookup: Sendable, Equatable {
        /// The value.
        case hit([UInt8])
        /// Nothing there.
        case miss
        /// Nothing there, and this caller now holds the claim to fill it (`W`).
        case won
        /// Nothing usable there; another caller holds the claim (`Z`).
        case fetchingElsewhere
        /// The key's node is down, slow or ejected.
        case unavailable
    }

    /// What a store did.
    public enum Store: Sendable, Equatable {
        case stored
        /// The server refused it (`NS`, or a server error such as being out of memory).
        case notStored
        /// Larger than the item size: not sent, or refused by the server as too large.
        case tooLarge
        case unavailable
    }

    /// One node's figures and state, for `stats`.
    public struct NodeStatistics: Sendable, Equatable {
        /// `host:port`.
        public var server: String
        /// `up` or `ejected`.
        public var state: String
        /// Reads that found a value.
        public var hits: Int
        /// Reads that found none (claims included).
        public var misses: Int
        /// Operations that failed (time-out, refused, closed, protocol error).
        public var errors: Int
        /// Times the node was ejected.
        public var ejections: Int
        /// Bytes of requests sent and of answers received (values plus about a line each).
        public var bytesSent: Int
        public var bytesReceived: Int
        /// Values not stored for their size.
        public var tooLarge: Int
    }

    /// The configuration it was made with.
    public let configuration: Configuration
    /// The servers, as given (`host:port`).
    public let servers: [String]
    private let nodes: [MemcachedNode]
    private let ring: KetamaRing

    /// A client of `servers` (`host:port` each; a bad entry is the caller's to refuse, see
    /// `MemcachedServerAddress.parse`). Nothing is connected until the first operation.
    public init(servers: [MemcachedServerAddress], configuration: Configuration, group: any EventLoopGroup) {
        self.configuration = configuration
        self.servers = servers.map(\.description)
        nodes = servers.map { MemcachedNode(host: $0.host, port: $0.port, group: group, settings: configuration) }
        ring = KetamaRing(nodes: servers.map(\.description))
    }

    /// The node a caller's key lives on, and its wire key.
    private func route(_ key: String) -> (MemcachedNode, String)? {
        let wire = MetaKey.wire(key, prefix: configuration.prefix)
        guard let index = ring.node(for: Array(wire.utf8)) else { return nil }
        return (nodes[index], wire)
    }

    /// Index of the node `key` lives on (for tests and the benchmark).
    public func nodeIndex(for key: String) -> Int? {
        ring.node(for: Array(MetaKey.wire(key, prefix: configuration.prefix).utf8))
    }

    /// Reads `key`; with `claim`, a miss claims the fetch for that long (`N` vivify).
    public func get(_ key: String, claim: Duration? = nil) async -> Lookup {
        guard let (node, wire) = route(key) else { return .unavailable }
        let result = await node.execute(.get(key: wire, vivify: claim.map(MetaCommand.seconds)))
        guard case .success(let response) = result else { return .unavailable }
        switch response.status {
        case .value:
            if response.has("W") {
                node.counters.misses.add(1, ordering: .relaxed)
                return .won
            }
            if response.has("Z") || response.has("X") {
                node.counters.misses.add(1, ordering: .relaxed)
                return .fetchingElsewhere
            }
            node.counters.hits.add(1, ordering: .relaxed)
            return .hit(response.value ?? [])
        case .notFound:
            node.counters.misses.add(1, ordering: .relaxed)
            return .miss
        default:
            return .unavailable
        }
    }

    /// Stores `value` under `key` for `ttl` (which also ends a claim on it).
    public func set(_ key: String, _ value: [UInt8], ttl: Duration) async -> Store {
        guard let (node, wire) = route(key) else { return .unavailable }
        guard value.count <= configuration.maxValueBytes else {
            node.counters.tooLarge.add(1, ordering: .relaxed)
            return .tooLarge
        }
        switch await node.execute(.set(key: wire, value: value, ttl: MetaCommand.seconds(ttl))) {
        case .success(let response):
            switch response.status {
            case .done: return .stored
            case .serverError(let message) where message.contains("too large"):
                node.counters.tooLarge.add(1, ordering: .relaxed)
                return .tooLarge
            default: return .notStored
            }
        case .failure:
            return .unavailable
        }
    }

    /// Deletes `key`; true when something was deleted.
    @discardableResult
    public func delete(_ key: String) async -> Bool {
        guard let (node, wire) = route(key) else { return false }
        if case .success(let response) = await node.execute(.delete(key: wire)), response.status == .done { return true }
        return false
    }

    /// Adds one to the counter `key`, creating it at `initial` for `window` when it does not
    /// exist (a fixed window: the counter disappears with its TTL); the value after this use,
    /// nil when unavailable.
    public func increment(_ key: String, initial: UInt64 = 1, window: Duration) async -> UInt64? {
        guard let (node, wire) = route(key) else { return nil }
        guard case .success(let response) = await node.execute(.increment(key: wire, initial: initial,
                                                                            ttl: MetaCommand.seconds(window))),
              response.status == .value, let value = response.value, value.count <= 20 else { return nil }
        return UInt64(String(decoding: value, as: UTF8.self))
    }

    /// One `mn` round trip to node `index`: the protocol's cheapest exchange (the benchmark's
    /// floor for this client). False when the node did not answer.
    public func noop(node index: Int) async -> Bool {
        guard nodes.indices.contains(index) else { return false }
        if case .success(let response) = await nodes[index].execute(.noop), response.status == .noop { return true }
        return false
    }

    /// Every node's figures now.
    public var statistics: [NodeStatistics] {
        nodes.map { node in
            let c = node.counters
            return NodeStatistics(server: node.name, state: node.isEjected ? "ejected" : "up",
                                  hits: c.hits.load(ordering: .relaxed), misses: c.misses.load(ordering: .relaxed),
                                  errors: c.errors.load(ordering: .relaxed), ejections: c.ejections.load(ordering: .relaxed),
                                  bytesSent: c.bytesSent.load(ordering: .relaxed),
                                  bytesReceived: c.bytesReceived.load(ordering: .relaxed),
                                  tooLarge: c.tooLarge.load(ordering: .relaxed))
        }
    }

    /// Closes every connection; operations afterwards answer unavailable.
    public func shutdown() async {
        for node in nodes { await node.shutdown() }
    }
}
