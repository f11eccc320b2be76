import Foundation
import Logging

/// The daemon's whole configuration, typed: every key of `cache.conf` (CONTRACT §6).
///
/// Values are already in the units the code uses (bytes, seconds), so no consumer ever
/// parses a string. `CacheConfiguration()` is the documented default of every key; the
/// repository's `cache.conf` lists the same values, and a test keeps the two in step.
public struct CacheConfiguration: Sendable, Equatable {
    /// `[daemon]`: the socket and per-session limits.
    public struct Daemon: Sendable, Equatable {
        /// Socket path; nil means the contract's default (see `defaultSocketPath`).
        public var socket: String?
        /// Group that may connect; the socket is 0660 when set, 0600 otherwise.
        public var socketGroup: String?
        public var logLevel: Logger.Level = .info
        /// Longest request line accepted; a longer one gets -32600 and the connection closes.
        public var maxRequestBytes: Int = 1 << 20
        /// Pending requests, slots and queued prefetches per session before 1012 `busy`.
        public var maxPendingPerSession: Int = 256
        public init() {}
    }

    /// `[cache]`: where and how much is kept.
    public struct Cache: Sendable, Equatable {
        /// Cache folder; nil means the contract's default (see `defaultCacheDirectory`).
        public var cacheDir: String?
        public var memoryLimit: Int = 128 << 20
        public var diskLimit: Int = 1 << 30
        /// Default pixel width of `thumbnail.show` when the client gives no `size`.
        public var thumbnailSize: Int = 256
        /// JPEG quality (1–100) of thumbnails the daemon re-encodes.
        public var thumbnailQuality: Int = 82
        /// How long a search page stays fresh (Pixabay requires caching for 24 h).
        public var searchTTL: Duration = .seconds(24 * 3600)
        /// How long a delivered path stays valid whatever eviction happens.
        public var pathGrace: Duration = .seconds(60)
        public init() {}
    }

    /// `[network]`: transfers, limits and the URL policy.
    public struct Network: Sendable, Equatable {
        public var maxConnections: Int = 16
        public var maxConnectionsPerHost: Int = 6
        public var connectTimeout: Duration = .seconds(10)
        /// A transfer with no byte for this long fails with `timeout`.
        public var stallTimeout: Duration = .seconds(15)
        /// A total deadline per transfer, which catches a 1 byte/s drip.
        public var transferTimeout: Duration = .seconds(120)
        public var maxImageBytes: Int = 50 << 20
        public var maxImagePixels: Int = 50_000_000
        /// Extra hosts (names or IP addresses) images may come from; also lifts the
        /// private-address ban for the addresses listed.
        public var allowedHosts: [String] = []
        public var allowHTTP: Bool = false
        /// How long a new network request is held while its session flings.
        public var flingDwell: Duration = .milliseconds(120)
        /// Proxy URL; nil means none (the environment's proxy variables are ignored).
        public var proxy: String?
        public var caBundle: String?
        public var userAgent: String = "imagecached/\(ImageCacheVersion.current)"
        public init() {}
    }

    /// `[search]`
    public struct Search: Sendable, Equatable {
        public var defaultProvider: String = "unsplash"
        public init() {}
    }

    /// `[downloads]`
    public struct Downloads: Sendable, Equatable {
        /// Roots that `download` may write under; the first is the default. Empty means the
        /// contract's default (`$XDG_DOWNLOAD_DIR` or `~/Downloads`).
        public var downloadDir: [String] = []
        public init() {}
    }

    /// One `[providers.NAME]` section. The key is a secret: it is never logged or returned.
    public struct Provider: Sendable, Equatable {
        public var apiKey: String?
        public var apiURL: String
        public init(apiURL: String) { self.apiURL = apiURL }
    }

    public var daemon = Daemon()
    public var cache = Cache()
    public var network = Network()
    public var search = Search()
    public var downloads = Downloads()
    public var unsplash = Provider(apiURL: "https://api.unsplash.com")
    public var flickr = Provider(apiURL: "https://api.flickr.com/services/rest")
    public var pixabay = Provider(apiURL: "https://pixabay.com/api")

    /// The file this configuration was read from, if any (for messages and SIGHUP).
    public var sourcePath: String?

    public init() {}
}

/// The version the daemon reports in `hello` and the CLI in `--version`.
public enum ImageCacheVersion {
    public static let current = "0.1.0"
}
