import Foundation
import Logging

/// What every transfer of one engine shares: the configuration, the URL policy, the tuning
/// and the counters. Immutable apart from `stats`, which its lock guards (the curl thread
/// writes, `stats` readers on any thread read).
final class TransferEnvironment: Sendable {
    let network: CacheConfiguration.Network
    let policy: URLPolicy
    let retry: RetryPolicy
    let memoryBodyLimit: Int
    let temporaryDirectory: String
    let progressInterval: Duration
    let maxRedirects: Int
    let receiveBufferSize: Int
    let logger: Logger
    let stats = Observed(NetworkStats())

    /// The `CURLOPT_PROXY` value: the configured proxy, or "" — an explicit empty proxy makes
    /// libcurl ignore `http_proxy`/`https_proxy`/`all_proxy` from the environment, so whoever
    /// sets the daemon's environment cannot route its traffic (CONTRACT §6 `proxy`).
    var proxyOption: String { network.proxy ?? "" }

    init(network: CacheConfiguration.Network, policy: URLPolicy, options: TransferEngine.Options) {
        self.network = network
        self.policy = policy
        retry = options.retry
        memoryBodyLimit = options.memoryBodyLimit
        temporaryDirectory = options.temporaryDirectory
        progressInterval = options.progressInterval
        maxRedirects = options.maxRedirects
        receiveBufferSize = options.receiveBufferSize
        logger = options.logger
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
