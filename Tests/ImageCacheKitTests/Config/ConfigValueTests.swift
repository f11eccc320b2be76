@testable import ImageCacheConfig
@testable import ImageCacheKit
import Logging
import Testing

@Suite("cache.conf values", .timeLimit(.minutes(1)))
struct ConfigValueTests {
    @Test("sizes take binary units, and a plain number is bytes", arguments: [
        ("1048576", 1_048_576), ("512KiB", 512 * 1024), ("64MiB", 64 << 20), ("2GiB", 2 << 30),
        ("1TiB", 1 << 40), ("100B", 100), ("0", 0), ("64 MiB", 64 << 20), ("1_000_000", 1_000_000),
    ])
    func sizes(text: String, bytes: Int) throws {
        #expect(try parseConfig("[cache]\nmemory_limit = \(text)\n").cache.memoryLimit == bytes)
    }

    @Test("durations take ms, s, m and h", arguments: [
        ("250ms", Duration.milliseconds(250)), ("30s", .seconds(30)), ("5m", .seconds(300)),
        ("24h", .seconds(86_400)), ("0s", .zero),
    ])
    func durations(text: String, duration: Duration) throws {
        #expect(try parseConfig("[cache]\nsearch_ttl = \(text)\n").cache.searchTTL == duration)
    }

    @Test("integers are plain, '_' may separate digits")
    func integers() throws {
        #expect(try parseConfig("[network]\nmax_image_pixels = 50_000_000\n").network.maxImagePixels == 50_000_000)
        #expect(try parseConfig("[network]\nmax_image_pixels = 1234\n").network.maxImagePixels == 1234)
    }

    @Test("booleans are true and false")
    func booleans() throws {
        #expect(try parseConfig("[network]\nallow_http = true\n").network.allowHTTP == true)
        #expect(try parseConfig("[network]\nallow_http = false\n").network.allowHTTP == false)
    }

    @Test("log_level takes every swift-log level name", arguments: Logger.Level.allCases)
    func logLevels(level: Logger.Level) throws {
        #expect(try parseConfig("[daemon]\nlog_level = \(level.rawValue)\n").daemon.logLevel == level)
    }

    @Test("lists are comma-separated, items trimmed or quoted")
    func lists() throws {
        let config = try parseConfig(#"""
            [network]
            allowed_hosts = 127.0.0.1, images.example.com ,::1,"localhost"
            """#)
        #expect(config.network.allowedHosts == ["127.0.0.1", "images.example.com", "::1", "localhost"])
    }

    @Test("a quoted list item may contain a comma")
    func quotedListItemKeepsComma() throws {
        let config = try parseConfig(#"[downloads]"# + "\n" + #"download_dir = "/srv/a,b", /srv/c"#)
        #expect(config.downloads.downloadDir == ["/srv/a,b", "/srv/c"])
    }

    @Test("paths starting with ~ expand to HOME")
    func tildeExpands() throws {
        let config = try parseConfig("[cache]\ncache_dir = ~/pics/cache\n[downloads]\ndownload_dir = ~, ~/Pictures\n")
        #expect(config.cache.cacheDir == "/home/tester/pics/cache")
        #expect(config.downloads.downloadDir == ["/home/tester", "/home/tester/Pictures"])
    }

    @Test("every key of the contract's table is read into its field")
    func everyKeyIsRead() throws {
        let config = try parseConfig("""
            [daemon]
            socket = /tmp/ic.sock
            socket_group = imagecache
            admin_group = imagecache-admin
            log_level = debug
            max_request_bytes = 2MiB
            max_pending_per_session = 10
            [cache]
            cache_dir = /var/cache/ic
            memory_limit = 64MiB
            disk_limit = 2GiB
            thumbnail_size = 200
            thumbnail_quality = 90
            search_ttl = 1h
            path_grace = 30s
            [network]
            max_connections = 8
            max_connections_per_host = 2
            connect_timeout = 5s
            stall_timeout = 7s
            max_image_bytes = 10MiB
            max_image_pixels = 1000000
            allowed_hosts = 127.0.0.1
            allow_http = true
            fling_dwell = 200ms
            transfer_timeout = 1m
            proxy = socks5h://127.0.0.1:1080
            ca_bundle = /etc/ssl/certs/ca-certificates.crt
            user_agent = test-agent
            [search]
            default_provider = pixabay
            [downloads]
            download_dir = /srv/dl, /srv/dl2
            [providers.unsplash]
            access_key = uk
            api_url = http://127.0.0.1:1/unsplash
            [providers.flickr]
            api_key = fk
            api_url = http://127.0.0.1:1/flickr
            [providers.pixabay]
            api_key = pk
            api_url = http://127.0.0.1:1/pixabay
            """)
        #expect(config.daemon.socket == "/tmp/ic.sock")
        #expect(config.daemon.socketGroup == "imagecache")
        #expect(config.daemon.adminGroup == "imagecache-admin")
        #expect(config.daemon.logLevel == .debug)
        #expect(config.daemon.maxRequestBytes == 2 << 20)
        #expect(config.daemon.maxPendingPerSession == 10)
        #expect(config.cache.cacheDir == "/var/cache/ic")
        #expect(config.cache.memoryLimit == 64 << 20)
        #expect(config.cache.diskLimit == 2 << 30)
        #expect(config.cache.thumbnailSize == 200)
        #expect(config.cache.thumbnailQuality == 90)
        #expect(config.cache.searchTTL == .seconds(3600))
        #expect(config.cache.pathGrace == .seconds(30))
        #expect(config.network.maxConnections == 8)
        #expect(config.network.maxConnectionsPerHost == 2)
        #expect(config.network.connectTimeout == .seconds(5))
        #expect(config.network.stallTimeout == .seconds(7))
        #expect(config.network.maxImageBytes == 10 << 20)
        #expect(config.network.maxImagePixels == 1_000_000)
        #expect(config.network.allowedHosts == ["127.0.0.1"])
        #expect(config.network.allowHTTP)
        #expect(config.network.flingDwell == .milliseconds(200))
        #expect(config.network.transferTimeout == .seconds(60))
        #expect(config.network.proxy == "socks5h://127.0.0.1:1080")
        #expect(config.network.caBundle == "/etc/ssl/certs/ca-certificates.crt")
        #expect(config.network.userAgent == "test-agent")
        #expect(config.search.defaultProvider == "pixabay")
        #expect(config.downloads.downloadDir == ["/srv/dl", "/srv/dl2"])
        #expect(config.unsplash.apiKey == "uk")
        #expect(config.unsplash.apiKeySource == .file(path: "cache.conf", line: 35))
        #expect(config.unsplash.apiURL == "http://127.0.0.1:1/unsplash")
        #expect(config.flickr.apiKey == "fk")
        #expect(config.flickr.apiURL == "http://127.0.0.1:1/flickr")
        #expect(config.pixabay.apiKey == "pk")
        #expect(config.pixabay.apiURL == "http://127.0.0.1:1/pixabay")
        #expect(config.resolvedSocketPath == "/tmp/ic.sock")
        #expect(config.resolvedCacheDirectory == "/var/cache/ic")
        #expect(config.resolvedDownloadRoots == ["/srv/dl", "/srv/dl2"])
    }

    @Test("providers are found by name")
    func providerByName() throws {
        let config = try parseConfig("", environment: ["FLICKR_API_KEY": "f"])
        #expect(config.provider(named: "flickr")?.apiKey == "f")
        #expect(config.provider(named: "unsplash")?.apiURL == "https://api.unsplash.com")
        #expect(config.provider(named: "pixabay")?.apiURL == "https://pixabay.com/api")
        #expect(config.provider(named: "google") == nil)
        #expect(CacheConfiguration.providerNames == ["unsplash", "flickr", "pixabay"])
    }

    @Test("a secret's source says where it came from without the secret")
    func secretSourceDescriptions() {
        typealias Source = CacheConfiguration.SecretSource
        #expect("\(Source.environment(variable: "FLICKR_API_KEY"))" == "environment variable FLICKR_API_KEY")
        #expect("\(Source.credential(path: "/run/credentials/x/FLICKR_API_KEY"))" == "credential /run/credentials/x/FLICKR_API_KEY")
        #expect("\(Source.file(path: "/etc/imagecached/cache.conf", line: 7))" == "/etc/imagecached/cache.conf:7")
    }
}
