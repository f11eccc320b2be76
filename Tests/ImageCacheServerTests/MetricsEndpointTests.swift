import Foundation
@testable import ImageCacheServer
import ImageCacheConfig
import ImageCacheKit
import Logging
import Testing
import TestSupport

/// The metrics endpoint (`[daemon] metrics_listen`) of a real daemon, scraped over real TCP on
/// 127.0.0.1 and over a Unix socket, the exposition parsed: per-request cache outcomes, request
/// outcomes by kind, 404/405, off by default; and the `stats` figures it shares with them.
@Suite("metrics endpoint", .timeLimit(.minutes(5)))
struct MetricsEndpointTests {
    private static let loopback = MetricsListenAddress.tcp(host: "127.0.0.1", port: 0)

    private func address(_ f: ThumbnailFixture) throws -> MetricsListenAddress {
        try #require(f.daemon.metricsAddress, "the daemon serves no metrics")
    }

    private func tier(_ stats: [String: Any], _ name: String) throws -> (hits: Int, misses: Int) {
        let section = try #require(stats[name] as? [String: Any])
        return (try #require(section["hits"] as? Int), try #require(section["misses"] as? Int))
    }

    @Test("a thumbnail miss, then a hit, move the per-request counters by exactly one each (TCP)")
    func missThenHit() async throws {
        try await ThumbnailFixture.with(configure: { $0.daemon.metricsListen = Self.loopback }) { f in
            let client = try await f.connect()
            let metrics = try address(f)
            guard case .tcp(_, let port) = metrics else { Issue.record("not TCP: \(metrics)"); return }
            #expect(port > 0)
            let url = f.serve("/metrics-a.jpg", width: 900, height: 600)

            let before = try await scrape(metrics)
            let statsBefore = try #require(try await client.ask(1, "stats").resultObject)
            let first = try #require(try await client.ask(2, "thumbnail.show", ["slot": 0, "url": url, "size": 300]).resultObject)
            #expect(first["source"] as? String == "network")
            // A request is counted when its answer is claimed, before the answer is written
            // (RequestCountingTests), so a scrape after an answer always includes it.
            let statsAfterMiss = try #require(try await client.ask(3, "stats").resultObject)
            let afterMiss = try await scrape(metrics)
            let second = try #require(try await client.ask(4, "thumbnail.show", ["slot": 1, "url": url, "size": 300]).resultObject)
            #expect(second["source"] as? String == "memory")
            let statsAfterHit = try #require(try await client.ask(5, "stats").resultObject)
            let afterHit = try await scrape(metrics)

            func delta(_ a: Exposition, _ b: Exposition, _ name: String, _ labels: [String: String]) -> Double {
                b.value(name, labels) - a.value(name, labels)
            }
            let cache = "imagecached_cache_requests_total"
            // The miss: one memory miss, one disk miss, one network fetch; nothing else.
            #expect(delta(before, afterMiss, cache, ["tier": "memory", "result": "miss"]) == 1)
            #expect(delta(before, afterMiss, cache, ["tier": "disk", "result": "miss"]) == 1)
            #expect(delta(before, afterMiss, cache, ["tier": "memory", "result": "hit"]) == 0)
            #expect(delta(before, afterMiss, cache, ["tier": "disk", "result": "hit"]) == 0)
            #expect(delta(before, afterMiss, "imagecached_thumbnail_requests_total", ["source": "network"]) == 1)
            // The hit: one memory hit; the misses stay.
            #expect(delta(afterMiss, afterHit, cache, ["tier": "memory", "result": "hit"]) == 1)
            #expect(delta(afterMiss, afterHit, cache, ["tier": "memory", "result": "miss"]) == 0)
            #expect(delta(afterMiss, afterHit, cache, ["tier": "disk", "result": "miss"]) == 0)
            #expect(delta(afterMiss, afterHit, "imagecached_thumbnail_requests_total", ["source": "memory"]) == 1)
            #expect(afterHit.types[cache] == "counter")

            // Requests by method and outcome, with a latency histogram: two ok shows so far.
            let show = ["method": "thumbnail.show", "outcome": "ok"]
            #expect(delta(before, afterHit, "imagecached_requests_total", show) == 2)
            #expect(afterHit.types["imagecached_request_duration_seconds"] == "histogram")
            #expect(delta(before, afterHit, "imagecached_request_duration_seconds_count", show) == 2)
            #expect(afterHit.value("imagecached_request_duration_seconds_bucket", show.merging(["le": "+Inf"]) { a, _ in a }) >= 2)
            // The network and decode figures moved with the one fetch.
            #expect(delta(before, afterMiss, "imagecached_network_received_bytes_total", [:]) > 0)
            #expect(afterHit.value("imagecached_decode_duration_seconds_count", ["outcome": "ok"]) == 1)
            #expect(afterHit.has("imagecached_transfers_in_flight"))
            #expect(afterHit.has("imagecached_transfers_queued"))
            #expect(afterHit.has("imagecached_transfers_bodies_waiting"))
            #expect(afterHit.value("imagecached_sessions") == 1)
            for state in ["queued", "running", "finished", "failed", "cancelled"] {
                #expect(afterHit.has("imagecached_downloads", ["state": state]))
            }
            // The process, read from /proc at scrape time.
            #expect(afterHit.value("process_resident_memory_bytes") > Double(1 << 20))
            #expect(afterHit.value("process_open_fds") >= 3)

            // `stats` says the same, per request.
            let s0 = (try tier(statsBefore, "memory"), try tier(statsBefore, "disk"))
            let s1 = (try tier(statsAfterMiss, "memory"), try tier(statsAfterMiss, "disk"))
            let s2 = (try tier(statsAfterHit, "memory"), try tier(statsAfterHit, "disk"))
            #expect(s1.0.misses - s0.0.misses == 1 && s1.0.hits == s0.0.hits)
            #expect(s1.1.misses - s0.1.misses == 1 && s1.1.hits == s0.1.hits)
            #expect(s2.0.hits - s1.0.hits == 1 && s2.0.misses == s1.0.misses)
            #expect(s2.1.hits == s1.1.hits && s2.1.misses == s1.1.misses)

            await client.close()
        }
    }

    @Test("with memory_limit 0 a second request is one disk hit (memory miss), in stats and metrics (Unix socket)")
    func diskHitOverUnixSocket() async throws {
        let socket = TestServer.makeFolder() + "/metrics.sock"
        try await ThumbnailFixture.with(configure: {
            $0.cache.memoryLimit = 0
            $0.daemon.metricsListen = .unix(path: socket)
        }) { f in
            let client = try await f.connect()
            let metrics = try address(f)
            #expect(metrics == .unix(path: socket))
            let url = f.serve("/metrics-b.jpg", width: 900, height: 600)
            _ = try #require(try await client.ask(1, "thumbnail.show", ["slot": 0, "url": url, "size": 300]).resultObject)
            let before = try await scrape(metrics)
            let statsBefore = try #require(try await client.ask(2, "stats").resultObject)
            let again = try #require(try await client.ask(3, "thumbnail.show", ["slot": 1, "url": url, "size": 300]).resultObject)
            #expect(again["source"] as? String == "disk")
            let after = try await scrape(metrics)
            let statsAfter = try #require(try await client.ask(4, "stats").resultObject)

            let cache = "imagecached_cache_requests_total"
            #expect(after.value(cache, ["tier": "memory", "result": "miss"]) - before.value(cache, ["tier": "memory", "result": "miss"]) == 1)
            #expect(after.value(cache, ["tier": "disk", "result": "hit"]) - before.value(cache, ["tier": "disk", "result": "hit"]) == 1)
            #expect(after.value(cache, ["tier": "disk", "result": "miss"]) == before.value(cache, ["tier": "disk", "result": "miss"]))
            let memory = (try tier(statsBefore, "memory"), try tier(statsAfter, "memory"))
            let disk = (try tier(statsBefore, "disk"), try tier(statsAfter, "disk"))
            #expect(memory.1.misses - memory.0.misses == 1 && memory.1.hits == memory.0.hits)
            #expect(disk.1.hits - disk.0.hits == 1 && disk.1.misses == disk.0.misses)

            await client.close()
        }
        #expect(!FileManager.default.fileExists(atPath: socket), "the metrics socket is removed on stop")
    }

    @Test("a failed request is counted under its error kind; an unknown method under method=\"unknown\"")
    func errorsByKind() async throws {
        try await ThumbnailFixture.with(configure: { $0.daemon.metricsListen = Self.loopback }) { f in
            let client = try await f.connect()
            let metrics = try address(f)
            let before = try await scrape(metrics)
            let missing = try await client.ask(1, "thumbnail.show", ["slot": 0, "photo": "unsplash:never-returned"])
            #expect(missing.errorKind == "not_found")
            let unknown = try await client.ask(2, "no.such.method")
            #expect(unknown.errorKind == "method_not_found")
            let after = try await scrape(metrics)

            let notFound = ["method": "thumbnail.show", "outcome": "not_found"]
            #expect(after.value("imagecached_requests_total", notFound) - before.value("imagecached_requests_total", notFound) == 1)
            #expect(after.value("imagecached_requests_total", ["method": "thumbnail.show", "outcome": "ok"]) == 0)
            let unrouted = ["method": "unknown", "outcome": "method_not_found"]
            #expect(after.value("imagecached_requests_total", unrouted) - before.value("imagecached_requests_total", unrouted) == 1)
            #expect(!after.samples.keys.contains { $0.labels["method"] == "no.such.method" })
            #expect(after.value("imagecached_request_duration_seconds_count", notFound) == 1)

            await client.close()
        }
    }

    @Test("only GET and HEAD /metrics: 404 elsewhere, 405 for another method, 413 for a body; the text format's content type")
    func pathsAndMethods() async throws {
        try await ThumbnailFixture.with(configure: { $0.daemon.metricsListen = Self.loopback }) { f in
            let metrics = try address(f)
            let ok = try await HTTPExchange.send("GET", "/metrics", to: metrics,
                                                 extraHeaders: ["Accept: application/openmetrics-text; version=1.0.0, text/plain;q=0.5"])
            #expect(ok.status == 200)
            #expect(ok.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            #expect(try Exposition(ok.body).has("process_open_fds"))
            #expect(try await HTTPExchange.send("GET", "/metrics?x=1", to: metrics).status == 200)
            let head = try await HTTPExchange.send("HEAD", "/metrics", to: metrics)
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(try await HTTPExchange.send("GET", "/", to: metrics).status == 404)
            #expect(try await HTTPExchange.send("GET", "/metrics/x", to: metrics).status == 404)
            #expect(try await HTTPExchange.send("GET", "/favicon.ico", to: metrics).status == 404)
            let post = try await HTTPExchange.send("POST", "/metrics", to: metrics, extraHeaders: ["Content-Length: 0"])
            #expect(post.status == 405)
            #expect(post.headers["allow"] == "GET, HEAD")
            // No scrape sends a body: one is refused from its declared length, before it is read.
            #expect(try await HTTPExchange.send("POST", "/metrics", to: metrics, extraHeaders: ["Content-Length: 5"]).status == 413)
        }
    }

    @Test("off by default: the configuration has no metrics_listen and the daemon serves no endpoint")
    func offByDefault() async throws {
        #expect(CacheConfiguration().daemon.metricsListen == nil)
        try await ThumbnailFixture.with { f in
            #expect(f.daemon.configuration.current.daemon.metricsListen == nil)
            #expect(f.daemon.metricsAddress == nil)
        }
    }

    @Test("an address that cannot be bound stops the start with a configuration error, and frees the socket")
    func unbindable() async throws {
        try await ThumbnailFixture.with(configure: { $0.daemon.metricsListen = Self.loopback }) { first in
            guard case .tcp(_, let port)? = first.daemon.metricsAddress else { Issue.record("no port"); return }
            var configuration = first.daemon.configuration.current
            let folder = TestServer.makeFolder()
            configuration.cache.cacheDir = folder
            configuration.daemon.stateDir = folder + "/state"
            configuration.daemon.socket = folder + "/second.sock"
            configuration.daemon.metricsListen = .tcp(host: "127.0.0.1", port: port)
            let second = try ImageCacheDaemon(configuration: configuration, logger: Logger(label: "metrics-unbindable"))
            await #expect(throws: DaemonStartError.self) { _ = try await second.start() }
            #expect(!FileManager.default.fileExists(atPath: folder + "/second.sock"))
            second.services.shutdown()
            #expect(DaemonStartError.metricsUnavailable(address: "127.0.0.1:1", reason: "x").isConfigurationError)
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    @Test("the resident size from /proc/self/statm's text, and nothing (no trap) from garbage")
    func statm() {
        #expect(ProcessFigures.residentBytes(statm: "1000 250 30 1 0 200 0\n", pageSize: 4096) == 250 * 4096)
        #expect(ProcessFigures.residentBytes(statm: "", pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: nil, pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: "1 x", pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: "1 \(Int.max)", pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: "1 -5", pageSize: 4096) == nil)
        #expect(ProcessFigures.residentBytes(statm: "1 5", pageSize: 0) == nil)
        #expect((ProcessFigures.read().residentBytes ?? 0) > 0)
    }
}
