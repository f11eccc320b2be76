import Foundation
@testable import ImageCacheServer
import ImageCacheConfig
import ImageCacheKit
import Logging
import ProviderSimulator
import TestSupport

/// A real daemon (`ImageCacheDaemon`, the same assembly `imagecached` runs) on a real Unix
/// socket, its providers pointed at the loopback simulator over real HTTP through the libcurl
/// engine. Stopping it and starting another on the same `cache_dir` is a restart.
final class SearchDaemon: Sendable {
    let daemon: ImageCacheDaemon
    let listener: ListeningSocket
    let socketPath: String

    static let logger: Logger = {
        var logger = Logger(label: "imagecached-search-test")
        logger.logLevel = .critical
        return logger
    }()

    /// The configuration a test daemon runs with: every provider at the simulator with the
    /// keys it accepts (`keys` overrides: nil removes a key), loopback allowed as the
    /// contract's tests do, the cache in `folder`.
    ///
    /// The stall and transfer deadlines are far beyond any test's time limit, as in the network
    /// suites (`NetworkFixture`): a test that holds a response open (`.held`, `.stall`) owns
    /// that window and ends it itself (a release, a recycle, a close). With the default 15 s
    /// `stall_timeout`, a loaded run (every test at once on 2 cores) let the daemon time such a
    /// response out before the test released it: the held transfer failed with `timeout` and
    /// counted as aborted, which read as a recycle stopping a shared transfer. The tests of
    /// those deadlines set short ones explicitly.
    static func configuration(sim: SimulatedProviders, folder: String, keys: [String: String?] = [:],
                              searchTTL: Duration = .seconds(24 * 3600)) -> CacheConfiguration {
        var configuration = CacheConfiguration()
        configuration.daemon.socket = folder + "/d.sock"
        configuration.cache.cacheDir = folder + "/cache"
        // The job table's state folder too: no test daemon may touch the runner's own.
        configuration.daemon.stateDir = folder + "/state"
        configuration.cache.searchTTL = searchTTL
        configuration.network.allowedHosts = ["127.0.0.1"]
        configuration.network.allowHTTP = true
        configuration.network.stallTimeout = .seconds(600)
        configuration.network.transferTimeout = .seconds(900)
        func key(_ name: String) -> String? {
            if let override = keys[name] { return override }
            return ProviderAPISimulator.defaultKeys[name]
        }
        configuration.unsplash.apiURL = sim.apiURL(for: "unsplash")
        configuration.unsplash.apiKey = key("unsplash")
        configuration.flickr.apiURL = sim.apiURL(for: "flickr")
        configuration.flickr.apiKey = key("flickr")
        configuration.pixabay.apiURL = sim.apiURL(for: "pixabay")
        configuration.pixabay.apiKey = key("pixabay")
        return configuration
    }

    static func start(_ configuration: CacheConfiguration) async throws -> SearchDaemon {
        let daemon = try ImageCacheDaemon(configuration: configuration, logger: logger,
                                      options: ImageCacheDaemon.Options(shutdownGracePeriod: .seconds(5)))
        let listener = try await daemon.start()
        return SearchDaemon(daemon: daemon, listener: listener, socketPath: daemon.socketPath)
    }

    /// `start(configuration)`, `body` with the daemon, then `stop()`, also when `body` throws.
    static func with<Result>(_ configuration: CacheConfiguration,
                             _ body: (SearchDaemon) async throws -> Result) async throws -> Result {
        try await finishing(try await start(configuration), with: { await $0.stop() }, body)
    }

    private init(daemon: ImageCacheDaemon, listener: ListeningSocket, socketPath: String) {
        self.daemon = daemon
        self.listener = listener
        self.socketPath = socketPath
    }

    func connect() async throws -> RawClient {
        try await RawClient.connect(socketPath)
    }

    /// Stops as on SIGTERM: in-flight requests finish, the engine stops, the socket goes.
    func stop() async {
        await daemon.stop(listener: listener)
    }

    /// Waits (bounded) until the daemon's search coordinator holds `count` pending searches:
    /// the event a typeahead test needs before it sends the superseding keystroke.
    func waitForPendingSearches(_ count: Int, timeout: Double = 30) async throws {
        let pending = daemon.search.coordinator.pendingSearches
        try await withTimeout(seconds: timeout) { try await pending.wait { $0 == count } }
    }
}

/// A simulator, a temporary folder and helpers for one test; `finish()` cleans up (`with`
/// does, whatever the test's body does).
final class SearchFixture: Sendable {
    let sim: SimulatedProviders
    let folder: String
    /// Whether the simulator was stopped already (NIO must not be shut down twice).
    private let stopped = LockedState(false)
    /// Where the providers' API URLs point once the simulator is stopped: a port held bound
    /// and refusing. The stopped simulator's own port is free for any other test's server to
    /// take the next moment (a parallel test's simulator then answered "the provider is down"
    /// with a fresh page).
    private let refusing: RefusingPort

    private init(sim: SimulatedProviders, folder: String, refusing: RefusingPort) {
        self.sim = sim
        self.folder = folder
        self.refusing = refusing
    }

    static func make() async throws -> SearchFixture {
        SearchFixture(sim: try await SimulatedProviders.start(), folder: TestServer.makeFolder(), refusing: try RefusingPort())
    }

    /// `make()`, `body` with the fixture, then `finish()`, also when `body` throws.
    static func with<Result>(_ body: (SearchFixture) async throws -> Result) async throws -> Result {
        try await finishing(try await make(), with: { await $0.finish() }, body)
    }

    var api: ProviderAPISimulator { sim.api }

    /// The daemon's configuration; once `stopSimulator()` ran, the providers are at the
    /// refusing port.
    func configuration(keys: [String: String?] = [:], searchTTL: Duration = .seconds(24 * 3600)) -> CacheConfiguration {
        var configuration = SearchDaemon.configuration(sim: sim, folder: folder, keys: keys, searchTTL: searchTTL)
        if stopped.withLock({ $0 }) {
            let down = refusing.url("")
            configuration.unsplash.apiURL = ProviderAPISimulator.apiURL(for: "unsplash", baseURL: down)
            configuration.flickr.apiURL = ProviderAPISimulator.apiURL(for: "flickr", baseURL: down)
            configuration.pixabay.apiURL = ProviderAPISimulator.apiURL(for: "pixabay", baseURL: down)
        }
        return configuration
    }

    /// Stops the simulator: the providers can no longer be reached.
    func stopSimulator() async {
        let first = stopped.withLock { was in
            defer { was = true }
            return !was
        }
        if first { await sim.shutdown() }
    }

    func finish() async {
        await stopSimulator()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Builds one JSON-RPC request line.
func rpcLine(_ id: Int, _ method: String, _ params: [String: Any]) -> String {
    let object: [String: Any] = ["jsonrpc": "2.0", "id": id, "method": method, "params": params]
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
}

extension RawClient {
    /// Sends one request and returns its answer (only one request in flight on this client).
    func request(_ id: Int, _ method: String, _ params: [String: Any] = [:]) async throws -> [String: Any] {
        try await call(rpcLine(id, method, params))
    }

    /// Sends one request and returns its answer as the raw line, for tests that look for
    /// text that must never appear (keys).
    func requestRaw(_ id: Int, _ method: String, _ params: [String: Any] = [:]) async throws -> String {
        try await send(rpcLine(id, method, params))
        guard let line = try await readLine() else { throw ClientError.closed }
        return String(decoding: line, as: UTF8.self)
    }

    /// Reads answers until one for each of `ids` arrived (any order), keyed by id.
    func answers(for ids: Set<Int>) async throws -> [Int: [String: Any]] {
        var found: [Int: [String: Any]] = [:]
        while found.count < ids.count {
            let message = try await readMessage()
            if let id = message["id"] as? Int, ids.contains(id) { found[id] = message }
        }
        return found
    }
}
