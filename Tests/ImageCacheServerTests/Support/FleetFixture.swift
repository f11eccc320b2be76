import Foundation
@testable import ImageCacheServer
import ImageCacheConfig
import ImageCacheKit
import Logging
import MemcachedMeta
import ProviderSimulator
import TestSupport

/// A fleet on one machine: real memcached nodes (`MemcachedServer`), one simulator (provider
/// APIs and their images) and one `ImageServer` (URL images, counted per path), and daemons
/// with their own cache folders whose `[shared]` names every node.
final class FleetFixture: Sendable {
    struct Host: Sendable {
        let daemon: ImageCacheDaemon
        let listener: ListeningSocket
        let folder: String
        let logs: LogCapture

        var pipeline: ImagePipeline { daemon.services.pipeline }

        func connect() async throws -> RawClient { try await RawClient.connect(daemon.socketPath) }

        /// Waits (bounded) until `count` background writes to the tier have ended.
        func waitForTierWrites(_ count: Int, timeout: Double = 30) async throws {
            let activity = pipeline.tierActivity
            try await withTimeout(seconds: timeout) { try await activity.writeAttempts.wait { $0 >= count } }
        }
    }

    let nodes: [MemcachedServer]
    let sim: SimulatedProviders
    let images: ImageServer
    let hosts: [Host]
    let prefix: String

    private init(nodes: [MemcachedServer], sim: SimulatedProviders, images: ImageServer, hosts: [Host], prefix: String) {
        self.nodes = nodes
        self.sim = sim
        self.images = images
        self.hosts = hosts
        self.prefix = prefix
    }

    /// Starts `nodes` memcached and `hosts` daemons; `configure` adjusts each daemon's
    /// configuration (its index given), after `[shared]` is set.
    static func start(hosts hostCount: Int = 2, nodes nodeCount: Int = 3,
                      configure: (Int, inout CacheConfiguration) -> Void = { _, _ in }) async throws -> FleetFixture {
        var nodes: [MemcachedServer] = []
        for _ in 0..<nodeCount { nodes.append(try await MemcachedServer.start()) }
        let sim = try await SimulatedProviders.start(fallback: SimulatedImageRoute.handler)
        let images = try await ImageServer.start()
        let prefix = "fleet-\(UUID().uuidString.prefix(8)):"
        var hosts: [Host] = []
        for index in 0..<hostCount {
            let folder = TestServer.makeFolder()
            var configuration = SearchDaemon.configuration(sim: sim, folder: folder)
            configuration.shared.servers = nodes.map { SharedTierSettings.Server.parse($0.address)! }
            configuration.shared.prefix = prefix
            // Generous for debug builds on a loaded machine: a slow answer must not be a miss
            // here (the tests that are about time-outs set their own).
            configuration.shared.timeout = .seconds(2)
            configure(index, &configuration)
            let logs = LogCapture()
            var logger = Logger(label: "imagecached-fleet-\(index)") { _ in logs }
            logger.logLevel = .debug
            let daemon = try ImageCacheDaemon(configuration: configuration, logger: logger,
                                              options: ImageCacheDaemon.Options(shutdownGracePeriod: .seconds(5)))
            let listener = try await daemon.start()
            hosts.append(Host(daemon: daemon, listener: listener, folder: folder, logs: logs))
        }
        return FleetFixture(nodes: nodes, sim: sim, images: images, hosts: hosts, prefix: prefix)
    }

    /// `start(hosts:nodes:configure:)`, `body` with the fleet, then `finish()`, also when
    /// `body` throws.
    static func with<Result>(hosts: Int = 2, nodes: Int = 3, configure: (Int, inout CacheConfiguration) -> Void = { _, _ in },
                             _ body: (FleetFixture) async throws -> Result) async throws -> Result {
        try await finishing(try await start(hosts: hosts, nodes: nodes, configure: configure), with: { await $0.finish() }, body)
    }

    /// Serves `count` distinct JPEGs at `/<name>-N.jpg` and returns their URLs.
    func serveImages(_ count: Int, name: String, width: Int = 400, height: Int = 300) -> [String] {
        (0..<count).map { index in
            let path = "/\(name)-\(index).jpg"
            images.serve(path, body: SyntheticImages.jpeg(width: width, height: height, seed: UInt64(index + 1)))
            return images.url(path)
        }
    }

    /// The memcached key (as sent) of the thumbnail of `url` drawn `size` wide.
    func wireKey(url: String, size: Int) -> String {
        let clean = CacheKey.thumbnail(url: url, width: size).url ?? url
        return MetaKey.wire(SharedThumbnailValue.key(url: clean, size: size), prefix: prefix)
    }

    /// The node (index into `nodes`) holding a key, as every host's ketama ring places it.
    func node(ofWireKey key: String) -> Int {
        KetamaRing(nodes: nodes.map(\.address)).node(for: Array(key.utf8))!
    }

    /// Waits (bounded) until host `host`'s tier uses node `node` again after an ejection: asks
    /// the node for a key of its own until the ejection's span (2 s) is over and that ask, the
    /// probe, succeeds (while ejected, an ask answers at once without touching the node).
    func waitForNode(_ node: Int, upAt host: Int, timeout: Double = 30) async throws {
        let shared = hosts[host].daemon.services.shared
        let key = (0...).lazy.map { "probe-\($0)" }.first { self.node(ofWireKey: MetaKey.wire($0, prefix: self.prefix)) == node }!
        _ = try await poll(seconds: timeout) { () -> Bool? in
            _ = await shared.lookup(key, claim: nil)
            return shared.statistics[node].state == "up" ? true : nil
        }
    }

    /// Items stored on all nodes now (memcached's own `curr_items`; a claim's placeholder counts).
    func storedItems() throws -> Int {
        try nodes.filter(\.isRunning).reduce(0) { $0 + (try $1.statistic("curr_items") ?? 0) }
    }

    func finish() async {
        for host in hosts {
            await host.daemon.stop(listener: host.listener)
            try? FileManager.default.removeItem(atPath: host.folder)
        }
        await images.shutdown()
        await sim.shutdown()
        for node in nodes { await node.kill() }
    }
}

extension RawClient {
    /// Sends `prefetch` for `urls` and reads until every item finished and the answer came;
    /// returns the finished items' params.
    func prefetchAll(_ id: Int, urls: [String], size: Int, timeout: Double = 60) async throws -> [[String: Any]] {
        try await send(rpcLine(id, "prefetch", ["urls": urls, "size": size]))
        let messages = try await collect(timeout: timeout) { messages in
            messages.contains { $0["id"] as? Int == id }
                && messages.filter { $0.notificationMethod == "prefetch.finished" }.count >= urls.count
        }
        return messages.filter { $0.notificationMethod == "prefetch.finished" }.map(\.params)
    }
}
