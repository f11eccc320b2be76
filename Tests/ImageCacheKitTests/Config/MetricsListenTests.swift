@testable import ImageCacheConfig
@testable import ImageCacheKit
import Testing

/// `[daemon] metrics_listen`: off when empty, `host:port` or an absolute socket path, every
/// other value refused at parse time (so the daemon exits 78 before serving), none trapping.
@Suite("metrics_listen", .timeLimit(.minutes(1)))
struct MetricsListenTests {
    @Test("empty or absent: off")
    func off() throws {
        #expect(try parseConfig("").daemon.metricsListen == nil)
        #expect(try parseConfig("[daemon]\nmetrics_listen =\n").daemon.metricsListen == nil)
    }

    @Test("host:port, an IPv6 literal in brackets, a socket path, ~/ expanded", arguments: [
        ("127.0.0.1:9464", MetricsListenAddress.tcp(host: "127.0.0.1", port: 9464)),
        ("0.0.0.0:9464", .tcp(host: "0.0.0.0", port: 9464)),
        ("localhost:0", .tcp(host: "localhost", port: 0)),
        ("[::1]:9464", .tcp(host: "::1", port: 9464)),
        ("/run/imagecached/metrics.sock", .unix(path: "/run/imagecached/metrics.sock")),
        ("~/metrics.sock", .unix(path: "/home/tester/metrics.sock")),
    ])
    func accepted(text: String, address: MetricsListenAddress) throws {
        let parsed = try parseConfig("[daemon]\nmetrics_listen = \(text)\n").daemon.metricsListen
        #expect(parsed == address)
        // Rendered back as the file writes it, and parsed again to the same address.
        let again = try parseConfig("[daemon]\nmetrics_listen = \(address.description)\n").daemon.metricsListen
        #expect(again == address)
    }

    @Test("anything else is refused, naming the key", arguments: [
        "9464", "127.0.0.1", "127.0.0.1:", ":9464", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:99999999999999999999999",
        "host name:80", "::1:9464", "[]:80", "[::1", "relative/metrics.sock", "http://127.0.0.1:9464",
        "/" + String(repeating: "a", count: 200),
    ])
    func refused(text: String) throws {
        let message = parseError("[daemon]\nmetrics_listen = \"\(text)\"\n")
        #expect(message?.contains("metrics_listen") == true, "\(message ?? "parsed")")
    }

}
