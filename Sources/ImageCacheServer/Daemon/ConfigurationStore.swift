import ImageCacheKit

/// The running configuration, replaced as a whole on a successful SIGHUP reload.
///
/// Readers take a snapshot per use (per connection, per request), so a reload never tears a
/// request in half, and a failed reload changes nothing.
public final class ConfigurationStore: Sendable {
    private let value: LockedState<CacheConfiguration>

    /// Starts with the configuration the daemon was started with.
    public init(_ configuration: CacheConfiguration) {
        value = LockedState(configuration)
    }

    /// The configuration now.
    public var current: CacheConfiguration { value.withLock { $0 } }

    /// Replaces the configuration; returns the previous one so the caller can report what
    /// could not change without a restart.
    @discardableResult
    public func replace(with configuration: CacheConfiguration) -> CacheConfiguration {
        value.withLock { current in
            defer { current = configuration }
            return current
        }
    }

    /// The server limits the configuration implies.
    public var limits: ServerLimits {
        let daemon = current.daemon
        return ServerLimits(maxRequestBytes: daemon.maxRequestBytes, maxPendingPerSession: daemon.maxPendingPerSession)
    }
}
