import Foundation
import ImageCacheProtocol
import Logging

/// The daemon's whole configuration, typed: every key of `cache.conf` (the annotated
/// file at the repository root).
///
/// Values are already in the units the code uses (bytes, `Duration`), so no consumer ever
/// parses a string. `CacheConfiguration()` is the documented default of every key; the
/// repository's `cache.conf` lists the same values, and a test keeps the two in step.
/// Build one from a file with `load(explicitPath:environment:)` (look-up, secrets, defaults)
/// or `parse(text:path:environment:)`; tests may also build one in code and change fields.
///
/// Optional paths (`socket`, `cache_dir`, `download_dir`) stay nil/empty when not configured;
/// read them through `resolvedSocketPath`, `resolvedCacheDirectory` and
/// `resolvedDownloadRoots`, which fall back to the defaults of the environment the
/// configuration was built for (`environmentDefaults`).
///
/// `description` renders the configuration in cache.conf syntax with every API key shown as
/// `"<redacted>"`, so logging a configuration never leaks a secret.
public struct CacheConfiguration: Sendable, Equatable {
    /// `[daemon]`: the socket and per-session limits.
    public struct Daemon: Sendable, Equatable {
        /// Socket path; nil means the environment's default (see `resolvedSocketPath`).
        public var socket: String?
        /// State folder (the download job table); nil means the environment's default (see
        /// `resolvedStateDirectory`). State, not cache: emptying the cache must not lose jobs.
        public var stateDir: String?
        /// Group that may connect; the socket is 0660 when set, 0600 otherwise.
        package var socketGroup: String?
        /// Group whose members may empty the whole cache (`cache.clear`) besides root and the
        /// daemon's own uid; nil (the default): nobody else. Checked like `socket_group`.
        package var adminGroup: String?
        /// Lowest level logged to stderr; `--log-level` overrides it, SIGHUP re-reads it.
        public var logLevel: Logger.Level = .info
        /// Longest request line accepted; a longer one gets -32600 and the connection closes.
        package var maxRequestBytes: Int = 1 << 20
        /// Pending requests, slots and queued prefetches per session before 1012 `busy`.
        package var maxPendingPerSession: Int = 256
        /// Where `GET /metrics` (Prometheus text format) is served; nil (the default): nowhere.
        package var metricsListen: MetricsListenAddress?
        /// The documented defaults.
        public init() {}
    }

    /// `[cache]`: where and how much is kept.
    public struct Cache: Sendable, Equatable {
        /// Cache folder; nil means the environment's default (see `resolvedCacheDirectory`).
        public var cacheDir: String?
        /// Bytes of decoded/encoded images kept in memory before least-recently-used eviction.
        public var memoryLimit: Int = 128 << 20
        /// Bytes of files in `cache_dir` before least-recently-used eviction.
        package var diskLimit: Int = 1 << 30
        /// Default pixel width of `thumbnail.show` when the client gives no `size`.
        package var thumbnailSize: Int = 256
        /// JPEG quality (1–100) of thumbnails the daemon re-encodes.
        package var thumbnailQuality: Int = 82
        /// How long a search page stays fresh (Pixabay requires caching for 24 h).
        package var searchTTL: Duration = .seconds(24 * 3600)
        /// How long a delivered path stays valid whatever eviction happens.
        public var pathGrace: Duration = .seconds(60)
        /// The documented defaults.
        public init() {}
    }

    /// `[network]`: transfers, limits and the URL policy.
    public struct Network: Sendable, Equatable {
        /// The `User-Agent` sent when cache.conf leaves `user_agent` empty.
        package static let defaultUserAgent = "imagecached/\(ImageCacheVersion.current)"

        /// Transfers running at once, all hosts together; more wait in the priority queue.
        public var maxConnections: Int = 16
        /// Transfers running at once to one host (providers throttle busy clients); the
        /// smaller of this and `maxConnections` applies.
        public var maxConnectionsPerHost: Int = 6
        /// Time to establish a connection (DNS, TCP, TLS) before `network_unavailable`.
        package var connectTimeout: Duration = .seconds(10)
        /// A transfer with no byte for this long fails with `timeout`.
        package var stallTimeout: Duration = .seconds(15)
        /// A total deadline per transfer, which catches a 1 byte/s drip.
        package var transferTimeout: Duration = .seconds(120)
        /// Largest image body accepted; a larger one is aborted with `too_large`.
        public var maxImageBytes: Int = 50 << 20
        /// Largest width × height decoded, checked from the header before any pixel buffer.
        package var maxImagePixels: Int = 50_000_000
        /// Bytes all decodes together may hold (`DecodeBudget`): sized so the memory
        /// formula fits the units' `MemoryMax=512M` with room. A decode that could never fit
        /// answers `too_large`; others wait their turn.
        public var decodeMemory: Int = 192 << 20
        /// Extra hosts (names or IP addresses) images may come from; also lifts the
        /// private-address ban for the addresses listed.
        public var allowedHosts: [String] = []
        /// Whether plain `http` URLs may be fetched (tests and the offline demo need it).
        public var allowHTTP: Bool = false
        /// How long a new network request is held while its session flings.
        package var flingDwell: Duration = .milliseconds(120)
        /// Proxy URL; nil means none (the environment's proxy variables are ignored).
        public var proxy: String?
        /// CA certificates file for TLS; nil means libcurl's built-in default.
        package var caBundle: String?
        /// `User-Agent` header of every request.
        package var userAgent: String = Network.defaultUserAgent
        /// The documented defaults.
        public init() {}
    }

    /// `[search]`
    public struct Search: Sendable, Equatable {
        /// Provider of a `search` that names none: one of `providerNames`.
        package var defaultProvider: String = "unsplash"
        /// The documented defaults.
        public init() {}
    }

    /// `[downloads]`
    public struct Downloads: Sendable, Equatable {
        /// Roots that `download` may write under; the first is the default. Empty means the
        /// environment's default (see `resolvedDownloadRoots`).
        public var downloadDir: [String] = []
        /// The documented defaults.
        public init() {}
    }

    /// Where an API key came from, so the daemon can log *where* without logging *what*.
    package enum SecretSource: Sendable, Equatable, CustomStringConvertible {
        /// An environment variable such as `UNSPLASH_ACCESS_KEY`.
        case environment(variable: String)
        /// A systemd credential file, `$CREDENTIALS_DIRECTORY/<variable name>`.
        case credential(path: String)
        /// The configuration file itself.
        case file(path: String, line: Int)

        /// `environment variable X`, `credential PATH`, `PATH:LINE`.
        public var description: String {
            switch self {
            case .environment(let variable): "environment variable \(variable)"
            case .credential(let path): "credential \(path)"
            case .file(let path, let line): "\(path):\(line)"
            }
        }
    }

    /// One `[providers.NAME]` section. The key is a secret: it is never logged or returned,
    /// and this type's description and reflection show it as `<redacted>`.
    public struct Provider: Sendable, Equatable {
        /// The API key (Unsplash: access key); nil means the provider is not configured
        /// and its searches answer `provider_unavailable`.
        public var apiKey: String?
        /// Where `apiKey` came from; nil when it is nil or was set in code.
        package var apiKeySource: SecretSource?
        /// Base URL of the provider's API; tests point it at a loopback server.
        package var apiURL: String
        /// `budget`: requests the whole fleet may send per `budgetWindow`, counted in the
        /// shared tier (`[shared] servers`); 0 means no fleet budget (local limits only).
        /// Without a shared tier it has no effect.
        package var budget: Int
        /// `budget_window`: the window of `budget`.
        package var budgetWindow: Duration
        /// `image_format` (Unsplash only): the `fm` asked of its imgix CDN for thumbnails.
        package var imageFormat: ProviderImageFormat = .auto
        /// A provider without a key, at `apiURL`, with the fleet budget its documented limit.
        public init(apiURL: String, budget: Int = 0, budgetWindow: Duration = .seconds(3600)) {
            self.apiURL = apiURL
            self.budget = budget
            self.budgetWindow = budgetWindow
        }
        /// Whether searches can go to this provider (a key is set).
        package var isConfigured: Bool { apiKey != nil }
    }

    /// The providers the daemon knows, in the order `hello` lists them.
    package static let providerNames = ["unsplash", "flickr", "pixabay"]

    /// `[daemon]`
    public var daemon = Daemon()
    /// `[cache]`
    public var cache = Cache()
    /// `[network]`
    public var network = Network()
    /// `[search]`
    public var search = Search()
    /// `[downloads]`
    public var downloads = Downloads()
    /// `[shared]`: the fleet's memcached tier; off by default.
    package var shared = SharedTierSettings()
    /// `[providers.unsplash]`; the key also comes from `UNSPLASH_ACCESS_KEY`.
    /// Fleet budget: a production key's 5 000 requests per hour (a demo key has 50).
    public var unsplash = Provider(apiURL: "https://api.unsplash.com", budget: 5_000, budgetWindow: .seconds(3600))
    /// `[providers.flickr]`; the key also comes from `FLICKR_API_KEY`. Fleet budget: 3 600
    /// requests per hour per key.
    package var flickr = Provider(apiURL: "https://api.flickr.com/services/rest", budget: 3_600, budgetWindow: .seconds(3600))
    /// `[providers.pixabay]`; the key also comes from `PIXABAY_API_KEY`. Fleet budget: 100
    /// requests per 60 seconds.
    package var pixabay = Provider(apiURL: "https://pixabay.com/api", budget: 100, budgetWindow: .seconds(60))

    /// The file this configuration was read from, if any (for messages and SIGHUP).
    package var sourcePath: String?

    /// The defaults of unset paths, worked out from the environment given when this
    /// configuration was built.
    package var environmentDefaults: EnvironmentDefaults

    /// The documented defaults, with paths defaulted as for an empty environment (home from
    /// the user database). Daemon code should use `load(explicitPath:environment:)` instead.
    public init() {
        self.init(environment: [:])
    }

    /// The documented defaults, with unset paths defaulted from `environment`.
    public init(environment: [String: String]) {
        environmentDefaults = EnvironmentDefaults(environment: environment)
    }

    /// A provider's section by its name in `providerNames`; nil for an unknown name.
    public func provider(named name: String) -> Provider? {
        switch name {
        case "unsplash": unsplash
        case "flickr": flickr
        case "pixabay": pixabay
        default: nil
        }
    }
}
