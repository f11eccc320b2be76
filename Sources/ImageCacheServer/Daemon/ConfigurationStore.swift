import ImageCacheKit

/// The running configuration, replaced as a whole on a successful SIGHUP reload.
///
/// Readers take a snapshot per use (per connection, per request), so a reload never tears a
/// request in half, and a failed reload changes nothing.
public final class ConfigurationStore: Sendable {
    private let value: LockedState<(configuration: CacheConfiguration, generation: Int)>

    /// Starts with the configuration the daemon was started with.
    public init(_ configuration: CacheConfiguration) {
        value = LockedState((configuration, 0))
    }

    /// The configuration now.
    public var current: CacheConfiguration { value.withLock { $0.configuration } }

    /// Counts replacements: whatever is derived from the configuration (the encoded `hello`)
    /// is computed again only when this changes.
    public var generation: Int { value.withLock { $0.generation } }

    /// The configuration with its generation, read together.
    public var snapshot: (configuration: CacheConfiguration, generation: Int) { value.withLock { $0 } }

    /// Replaces the configuration; returns the previous one so the caller can report what
    /// could not change without a restart.
    @discardableResult
    public func replace(with configuration: CacheConfiguration) -> CacheConfiguration {
        value.withLock { current in
            defer { current = (configuration, current.generation + 1) }
            return current.configuration
        }
    }

    /// The server limits the configuration implies.
    public var limits: ServerLimits {
        let daemon = current.daemon
        return ServerLimits(maxRequestBytes: daemon.maxRequestBytes, maxPendingPerSession: daemon.maxPendingPerSession)
    }
}
