import ImageCacheConfig
import ImageCacheKit

/// The running configuration, replaced as a whole on a successful SIGHUP reload.
///
/// Readers take a snapshot per use (per connection, per request), so a reload never tears a
/// request in half, and a failed reload changes nothing.
public final class ConfigurationStore: Sendable {
    private struct Value {
        var configuration: CacheConfiguration
        var generation: Int
        /// Derived once per configuration: every request reads them, and copying the whole
        /// configuration out of the lock to read two numbers cost each request more than
        /// the rest of its admission.
        var limits: ServerLimits
        /// `thumbnail_size`, which a memory hit without `size` reads on the event loop.
        var thumbnailSize: Int
        /// What the thumbnail pipeline reads at each request, memory hits included: made per
        /// request, it copied the configuration and built a set (a few percent of a memory
        /// hit's CPU in show.sh).
        var pipelineSettings: ImagePipeline.Settings

        init(_ configuration: CacheConfiguration, generation: Int) {
            self.configuration = configuration
            self.generation = generation
            thumbnailSize = configuration.cache.thumbnailSize
            pipelineSettings = ImagePipeline.Settings(configuration)
            let daemon = configuration.daemon
            limits = ServerLimits(maxRequestBytes: daemon.maxRequestBytes, maxPendingPerSession: daemon.maxPendingPerSession)
        }
    }

    private let value: LockedState<Value>

    /// Starts with the configuration the daemon was started with.
    public init(_ configuration: CacheConfiguration) {
        value = LockedState(Value(configuration, generation: 0))
    }

    /// The configuration now.
    public var current: CacheConfiguration { value.withLock { $0.configuration } }

    /// Counts replacements: whatever is derived from the configuration (the encoded `hello`)
    /// is computed again only when this changes.
    public var generation: Int { value.withLock { $0.generation } }

    /// The configuration with its generation, read together.
    public var snapshot: (configuration: CacheConfiguration, generation: Int) {
        value.withLock { ($0.configuration, $0.generation) }
    }

    /// Replaces the configuration; returns the previous one so the caller can report what
    /// could not change without a restart.
    @discardableResult
    public func replace(with configuration: CacheConfiguration) -> CacheConfiguration {
        value.withLock { current in
            defer { current = Value(configuration, generation: current.generation + 1) }
            return current.configuration
        }
    }

    /// The server limits the configuration implies.
    public var limits: ServerLimits { value.withLock { $0.limits } }

    /// `[cache] thumbnail_size` now, without copying the configuration.
    public var thumbnailSize: Int { value.withLock { $0.thumbnailSize } }

    /// The thumbnail pipeline's settings now, without copying the configuration.
    public var pipelineSettings: ImagePipeline.Settings { value.withLock { $0.pipelineSettings } }
}
