import Foundation
@testable import ImageCacheConfig
@testable import ImageCacheKit
import Testing

/// The repository's cache.conf is the documentation of every key and its default; these
/// tests keep it and `CacheConfiguration()` from drifting apart.
@Suite("repository cache.conf", .timeLimit(.minutes(1)))
struct RepositoryCacheConfTests {
    let path = repositoryRoot.appendingPathComponent("cache.conf").path

    @Test("parsing the repository's cache.conf gives exactly the defaults")
    func repositoryFileIsTheDefaults() throws {
        let config = try CacheConfiguration.load(explicitPath: path, environment: testEnvironment)
        var expected = CacheConfiguration(environment: testEnvironment)
        expected.sourcePath = path
        #expect(config == expected)
    }

    @Test("the repository's cache.conf sets every key the parser knows")
    func repositoryFileNamesEveryKey() throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var section = ""
        var named: Set<String> = []
        for line in ConfigLexer.lines(of: text) {
            switch try ConfigLexer.lex(line) {
            case .section(let name): section = name
            case .entry(let key, _): named.insert(section + "." + key)
            case .blank: break
            }
        }
        let known = Set(ConfigKey.all.map(\.qualifiedName))
        #expect(named == known)
    }

    @Test("every key the parser knows has a one-line explanation in cache.conf")
    func everyKeyIsExplained() throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for line in ConfigLexer.lines(of: text) {
            guard case .entry(let key, _) = try ConfigLexer.lex(line) else { continue }
            #expect(line.contains("# "), "key '\(key)' has no explanation")
        }
    }

    @Test("the contract's table of keys is all there")
    func contractKeysKnown() {
        let contract: [String: [String]] = [
            "daemon": ["socket", "socket_group", "log_level", "max_request_bytes", "max_pending_per_session"],
            "cache": ["cache_dir", "memory_limit", "disk_limit", "thumbnail_size", "thumbnail_quality", "search_ttl", "path_grace"],
            "network": ["max_connections", "max_connections_per_host", "connect_timeout", "stall_timeout", "max_image_bytes",
                        "max_image_pixels", "allowed_hosts", "allow_http", "fling_dwell", "transfer_timeout", "proxy",
                        "ca_bundle", "user_agent"],
            "search": ["default_provider"],
            "downloads": ["download_dir"],
            "providers.unsplash": ["access_key", "api_url"],
            "providers.flickr": ["api_key", "api_url"],
            "providers.pixabay": ["api_key", "api_url"],
        ]
        let known = Set(ConfigKey.all.map(\.qualifiedName))
        for (section, keys) in contract {
            for key in keys { #expect(known.contains(section + "." + key), "missing \(section).\(key)") }
        }
    }
}

@Suite("configuration description", .timeLimit(.minutes(1)))
struct ConfigDescriptionTests {
    private func configWithSecrets() throws -> CacheConfiguration {
        try parseConfig("[providers.flickr]\napi_key = flickr-secret-1\n", environment: [
            "HOME": "/h", "UNSPLASH_ACCESS_KEY": "unsplash-secret-2", "PIXABAY_API_KEY": "pixabay-secret-3",
        ])
    }

    @Test("description, debugDescription and dump never show an API key")
    func secretsRedacted() throws {
        let config = try configWithSecrets()
        var dumped = ""
        dump(config, to: &dumped)
        let renderings = [config.description, config.debugDescription, String(describing: config.unsplash),
                          String(reflecting: config.flickr), "\(config)", dumped]
        for text in renderings {
            #expect(!text.contains("secret"), "leaked in: \(text)")
        }
        #expect(config.description.contains("access_key = \"<redacted>\""))
        #expect(String(describing: config.unsplash).contains("<redacted> from environment variable UNSPLASH_ACCESS_KEY"))
    }

    @Test("a provider without a key says so")
    func providerWithoutKeyDescription() {
        let provider = CacheConfiguration().pixabay
        #expect(provider.description == "Provider(apiURL: https://pixabay.com/api, apiKey: nil)")
        #expect(provider.debugDescription == provider.description)
        #expect(!provider.isConfigured)
    }

    @Test("debugDescription names the file the configuration came from")
    func debugDescriptionNamesSource() throws {
        #expect(try parseConfig("").debugDescription.hasPrefix("# CacheConfiguration from cache.conf\n[daemon]\n"))
        #expect(CacheConfiguration().debugDescription.hasPrefix("# CacheConfiguration from defaults\n"))
    }

    @Test("the description is cache.conf text that parses back to the same configuration")
    func descriptionRoundTrips() throws {
        var config = CacheConfiguration(environment: testEnvironment)
        config.daemon.socket = "/tmp/a b.sock"
        config.daemon.logLevel = .trace
        config.cache.memoryLimit = 1500
        config.cache.diskLimit = 3 << 30
        config.cache.pathGrace = .milliseconds(1500)
        config.network.allowedHosts = ["127.0.0.1", "::1"]
        config.network.userAgent = "agent, with \"quotes\" # and hash"
        config.network.flingDwell = .zero
        config.downloads.downloadDir = ["/srv/a,b", "/srv/c"]
        config.flickr.apiURL = "http://127.0.0.1:9/rest"
        let reparsed = try parseConfig(config.description)
        config.sourcePath = "cache.conf"
        #expect(reparsed == config)
    }

    @Test("the default configuration renders with units")
    func defaultsRenderWithUnits() {
        let text = CacheConfiguration().description
        #expect(text.contains("memory_limit = 128MiB"))
        #expect(text.contains("search_ttl = 24h"))
        #expect(text.contains("fling_dwell = 120ms"))
        #expect(text.contains("max_image_pixels = 50000000"))
    }
}
