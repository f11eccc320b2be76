import Foundation
import ImageCacheConfig
import Logging

/// What every transfer of one engine shares: the configuration, the URL policy, the tuning
/// and the counters. The network settings and the policy change on a configuration reload
/// (`apply`); each transfer takes them once, when it is queued (`settings`), and keeps them to
/// its end. The rest is fixed; `stats` is guarded by its own lock.
final class TransferEnvironment: Sendable {
    /// The `[network]` settings and the URL policy made from them, as one transfer uses them.
    struct Settings: Sendable {
        var network: CacheConfiguration.Network
        var policy: URLPolicy

        /// The `CURLOPT_PROXY` value: the configured proxy, or "" — an explicit empty proxy
        /// makes libcurl ignore `http_proxy`/`https_proxy`/`all_proxy` from the environment,
        /// so whoever sets the daemon's environment cannot route its traffic (`proxy` in cache.conf).
        var proxyOption: String { network.proxy ?? "" }
    }

    private let current: LockedState<Settings>
    /// A policy given by the engine's creator (tests) is kept across reloads.
    private let fixedPolicy: URLPolicy?
    let retry: RetryPolicy
    let memoryBodyLimit: Int
    /// The files bodies past `memoryBodyLimit` spill to, reused across transfers.
    let spillFiles: SpillFiles
    let progressInterval: Duration
    let maxRedirects: Int
    let receiveBufferSize: Int
    let logger: Logger
    let stats = Observed(NetworkStats())

    /// The settings a transfer queued now takes.
    var settings: Settings { current.withLock { $0 } }

    init(configuration: CacheConfiguration, policy: URLPolicy?, options: TransferEngine.Options) {
        fixedPolicy = policy
        current = LockedState(Settings(network: configuration.network, policy: policy ?? URLPolicy(configuration: configuration)))
        retry = options.retry
        memoryBodyLimit = options.memoryBodyLimit
        spillFiles = SpillFiles(directory: options.temporaryDirectory)
        progressInterval = options.progressInterval
        maxRedirects = options.maxRedirects
        receiveBufferSize = options.receiveBufferSize
        logger = options.logger
    }

    /// A reloaded configuration's `[network]` and URL policy (allowed hosts, providers'
    /// `api_url` hosts, limits and timeouts), for transfers queued from now on.
    func apply(_ configuration: CacheConfiguration) {
        let fresh = Settings(network: configuration.network, policy: fixedPolicy ?? URLPolicy(configuration: configuration))
        current.withLock { $0 = fresh }
    }

    /// Whole seconds (at least 1) for libcurl options that only count seconds.
    static func wholeSeconds(_ duration: Duration) -> Int {
        max(1, Int((Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18).rounded(.up)))
    }

    /// Milliseconds (at least 1) for libcurl's `_MS` options.
    static func milliseconds(_ duration: Duration) -> Int {
        max(1, Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000))
    }

    /// Seconds as a Double, for messages.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
