import ImageCacheConfig
import ImageCacheKit
import Logging
import MemcachedMeta
import NIOPosix

/// The engine's `SharedStore` over the memcached meta client: what `[shared]` configures.
///
/// It always exists, so the pipeline and the search and budget code never check whether the
/// daemon has a tier: without servers (the default) every call answers at once as an
/// unavailable node would, and the engine does what it did before the tier. SIGHUP applies a
/// changed `[shared]` by making a new client (a changed server list, timeout or prefix moves
/// keys anyway) and closing the old one's connections.
///
/// The client runs on NIO's process-wide event loops (`MultiThreadedEventLoopGroup.singleton`):
/// it never blocks one, and it is made before the daemon's own group exists.
public final class MemcachedSharedStore: SharedStore {
    private let client: LockedState<MemcachedClient?>
    private let logger: Logger

    /// A store for `settings` (no connection is made until the first use).
    public init(settings: SharedTierSettings, logger: Logger) {
        self.logger = logger
        client = LockedState(Self.client(for: settings))
        if settings.isEnabled {
            logger.notice("shared tier: memcached", metadata: ["servers": "\(settings.servers.map(\.description).joined(separator: ", "))",
                                                              "timeout_ms": "\(settings.timeout.wholeMilliseconds)"])
        }
    }

    private static func client(for settings: SharedTierSettings) -> MemcachedClient? {
        guard settings.isEnabled else { return nil }
        var configuration = MemcachedClient.Configuration()
        configuration.timeout = settings.timeout
        configuration.prefix = settings.prefix
        return MemcachedClient(servers: settings.servers.map { MemcachedServerAddress(host: $0.host, port: $0.port) },
                               configuration: configuration, group: MultiThreadedEventLoopGroup.singleton)
    }

    /// Applies a reloaded `[shared]`: a new client when servers, timeout or prefix changed.
    public func apply(_ settings: SharedTierSettings) {
        let servers = settings.servers.map(\.description)
        let replaced: MemcachedClient?? = client.withLock { current in
            if let current, current.servers == servers, current.configuration.timeout == settings.timeout,
               current.configuration.prefix == settings.prefix { return .none }
            if current == nil, !settings.isEnabled { return .none }
            let old = current
            current = Self.client(for: settings)
            return .some(old)
        }
        guard case .some(let old) = replaced else { return }
        logger.notice("shared tier reconfigured", metadata: ["servers": "\(servers.joined(separator: ", "))"])
        if let old { Task { await old.shutdown() } }
    }

    /// Closes every connection (the daemon is stopping).
    public func shutdown() async {
        let current = client.withLock { current -> MemcachedClient? in
            defer { current = nil }
            return current
        }
        await current?.shutdown()
    }

    /// Every node's figures now; empty without a tier.
    public var statistics: [MemcachedClient.NodeStatistics] {
        client.withLock { $0 }?.statistics ?? []
    }

    private var current: MemcachedClient? { client.withLock { $0 } }

    public func lookup(_ key: String, claim: Duration?) async -> SharedLookup {
        guard let client = current else { return .unavailable }
        switch await client.get(key, claim: claim) {
        case .hit(let value): return .hit(value)
        case .miss: return .miss
        case .won: return .claimed
        case .fetchingElsewhere: return .fetchingElsewhere
        case .unavailable: return .unavailable
        }
    }

    @discardableResult
    public func store(_ key: String, _ value: [UInt8], ttl: Duration) async -> Bool {
        guard let client = current else { return false }
        return await client.set(key, value, ttl: ttl) == .stored
    }

    public func remove(_ key: String) async {
        guard let client = current else { return }
        await client.delete(key)
    }

    public func increment(_ key: String, window: Duration) async -> UInt64? {
        guard let client = current else { return nil }
        return await client.increment(key, window: window)
    }
}
