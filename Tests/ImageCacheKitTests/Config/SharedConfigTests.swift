@testable import ImageCacheConfig
import ImageCacheKit
import Testing

/// `[shared]`: the memcached tier's keys, their defaults and what they refuse.
@Suite("[shared] configuration", .timeLimit(.minutes(1)))
struct SharedConfigTests {
    private func parse(_ body: String) throws -> CacheConfiguration {
        try CacheConfiguration.parse(text: "[shared]\n" + body, path: "cache.conf", environment: [:])
    }

    @Test("defaults: no tier, 50ms, a 10 s claim wait, a prefix, Unsplash's images not shared")
    func defaults() {
        let shared = CacheConfiguration().shared
        #expect(shared.servers.isEmpty && !shared.isEnabled)
        #expect(shared.timeout == .milliseconds(50))
        #expect(shared.claimWait == .seconds(10))
        #expect(shared.prefix == "imagecached:")
        #expect(shared.shareImages == ["flickr", "pixabay", "url"])
        #expect(!shared.shareImages.contains("unsplash"))
    }

    @Test("servers, timeout, claim_wait, prefix and share_images read, render and read back alike")
    func roundTrip() throws {
        let c = try parse("""
            servers = 10.0.0.1:11211, mc-2.lan:11212, [::1]:11213
            timeout = 20ms
            claim_wait = 2m
            prefix = "fleet-a:"
            share_images = url, unsplash
            """)
        #expect(c.shared.servers.map(\.description) == ["10.0.0.1:11211", "mc-2.lan:11212", "[::1]:11213"])
        #expect(c.shared.timeout == .milliseconds(20))
        #expect(c.shared.claimWait == .seconds(120))
        #expect(c.shared.prefix == "fleet-a:")
        #expect(c.shared.shareImages == ["url", "unsplash"])
        let again = try CacheConfiguration.parse(text: c.description, path: "x.conf", environment: [:])
        #expect(again.shared == c.shared)
        #expect(try parse("share_images =\n").shared.shareImages.isEmpty)
    }

    @Test("bad values are refused with the key named", arguments: [
        "servers = 10.0.0.1", "servers = host:0", "servers = host:65536", "servers = :11211", "servers = a:1, a:1",
        "servers = host:99999999999999999999", "servers = [::1]11211",
        "timeout = 0ms", "timeout = 11s", "timeout = 50",
        "claim_wait = 0ms", "claim_wait = 301s", "claim_wait = 5",
        "prefix = \"has space\"", "prefix = \(String(repeating: "p", count: 65))",
        "share_images = imgur",
    ])
    func refused(_ line: String) {
        #expect(throws: ConfigurationError.self) { try parse(line + "\n") }
    }

    @Test("server addresses parse as host:port with IPv6 in brackets, nothing else")
    func addresses() {
        #expect(SharedTierSettings.Server.parse("10.0.0.1:11211") == .init(host: "10.0.0.1", port: 11211))
        #expect(SharedTierSettings.Server.parse(" mc-1.lan:11212 ") == .init(host: "mc-1.lan", port: 11212))
        #expect(SharedTierSettings.Server.parse("[::1]:11211") == .init(host: "::1", port: 11211))
        for bad in ["", "host", "host:", ":1", "host:+1", "host:-1", "a b:1", "[::1]", "::1:11211x"] {
            #expect(SharedTierSettings.Server.parse(bad) == nil, "\(bad)")
        }
    }
}
