/// The demo daemon's cache.conf: everything inside one temporary folder, providers pointed
/// at the loopback simulator (`api_url` in cache.conf), plain http to 127.0.0.1 allowed.
public enum DemoConfig {
    /// The files and folders of one demo run.
    public struct Paths: Sendable, Equatable {
        /// The temporary folder; removing it removes everything below.
        public var workspace: String
        /// The daemon's cache.conf.
        public var config: String { workspace + "/cache.conf" }
        /// The daemon's socket (short enough for a Unix socket address under /tmp).
        public var socket: String { workspace + "/imagecached.sock" }
        /// The daemon's `state_dir` (its download job table).
        public var state: String { workspace + "/state" }
        /// The daemon's `cache_dir`.
        public var cache: String { workspace + "/cache" }
        /// The daemon's only download root.
        public var downloads: String { workspace + "/downloads" }
        /// The daemon's stdout and stderr, quoted when something fails.
        public var log: String { workspace + "/imagecached.log" }
        public init(workspace: String) { self.workspace = workspace }
    }

    /// The config text. Keys are placeholders the simulator accepts, never real secrets.
    public static func text(paths: Paths, simulatorURL: String) -> String {
        """
        # Written by `imagecache demo`; removed when it ends.
        [daemon]
        socket = "\(paths.socket)"
        state_dir = "\(paths.state)"
        log_level = notice

        [cache]
        cache_dir = "\(paths.cache)"
        memory_limit = 64MiB
        disk_limit = 256MiB

        [network]
        allow_http = true
        allowed_hosts = 127.0.0.1

        [search]
        default_provider = unsplash

        [downloads]
        download_dir = "\(paths.downloads)"

        [providers.unsplash]
        access_key = demo-unsplash-key
        api_url = "\(simulatorURL)/unsplash"

        [providers.flickr]
        api_key = demo-flickr-key
        api_url = "\(simulatorURL)/flickr/services/rest"

        [providers.pixabay]
        api_key = demo-pixabay-key
        api_url = "\(simulatorURL)/pixabay/api"

        """
    }
}
