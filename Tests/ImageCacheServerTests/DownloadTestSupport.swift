import Foundation
@testable import ImageCacheServer
import ImageCacheConfig
import ImageCacheKit
import ProviderSimulator
import TestSupport

/// A client of the download methods over a real socket that keeps the notifications it reads
/// while waiting for answers, so a test can ask for a job's state and later wait for the
/// job's `download.finished` without losing it in between.
final class DownloadClient: Sendable {
    let raw: RawClient
    private let stash = LockedState<[[String: Any]]>([])
    private let nextID = LockedState(1)

    init(_ raw: RawClient) { self.raw = raw }

    static func connect(_ socketPath: String) async throws -> DownloadClient {
        DownloadClient(try await RawClient.connect(socketPath))
    }

    /// Sends a request and returns its answer; notifications read meanwhile are kept.
    func ask(_ method: String, _ params: [String: Any] = [:]) async throws -> [String: Any] {
        let id = nextID.withLock { n in defer { n += 1 }; return n }
        try await raw.send(rpcLine(id, method, params))
        while true {
            let message = try await raw.readMessage(timeout: 60)
            if message["id"] as? Int == id { return message }
            if message["method"] != nil { stash.withLock { $0.append(message) } }
        }
    }

    /// `ask`, expecting a result object.
    func result(_ method: String, _ params: [String: Any] = [:]) async throws -> [String: Any] {
        let answer = try await ask(method, params)
        guard let result = answer["result"] as? [String: Any] else {
            throw DownloadTestError.unexpected("\(method) answered \(answer)")
        }
        return result
    }

    /// Submits a download and returns its job id.
    func download(_ params: [String: Any]) async throws -> String {
        let result = try await result("download", params)
        guard let job = result["job"] as? String else { throw DownloadTestError.unexpected("no job in \(result)") }
        return job
    }

    /// The next notification `method` about `job` (one already read counts).
    func notification(_ method: String, job: String, timeout: Double = 90) async throws -> [String: Any] {
        let kept = stash.withLock { kept -> [String: Any]? in
            guard let index = kept.firstIndex(where: { Self.matches($0, method, job) }) else { return nil }
            return kept.remove(at: index)
        }
        if let kept { return kept["params"] as! [String: Any] }
        while true {
            let message = try await raw.readMessage(timeout: timeout)
            if Self.matches(message, method, job) { return message["params"] as! [String: Any] }
            if message["method"] != nil { stash.withLock { $0.append(message) } }
        }
    }

    /// The job's final notification: (`download.finished` or `download.failed`, its params).
    func outcome(job: String, timeout: Double = 90) async throws -> (method: String, params: [String: Any]) {
        let final = ["download.finished", "download.failed"]
        let kept = stash.withLock { kept -> [String: Any]? in
            guard let index = kept.firstIndex(where: { m in final.contains { Self.matches(m, $0, job) } }) else { return nil }
            return kept.remove(at: index)
        }
        if let kept { return (kept["method"] as! String, kept["params"] as! [String: Any]) }
        while true {
            let message = try await raw.readMessage(timeout: timeout)
            if let method = message["method"] as? String, final.contains(method), Self.matches(message, method, job) {
                return (method, message["params"] as! [String: Any])
            }
            if message["method"] != nil { stash.withLock { $0.append(message) } }
        }
    }

    /// Every notification read so far and not consumed.
    var kept: [[String: Any]] { stash.withLock { $0 } }

    func close() async { await raw.close() }

    private static func matches(_ message: [String: Any], _ method: String, _ job: String) -> Bool {
        message["method"] as? String == method && (message["params"] as? [String: Any])?["job"] as? String == job
    }
}

enum DownloadTestError: Error {
    case unexpected(String)
}

/// A provider simulator that also serves its image URLs, an image server with faults for URL
/// downloads, a temporary folder with a download root, and daemon configurations over them.
final class DownloadFixture: Sendable {
    let sim: SimulatedProviders
    let images: ImageServer
    let folder: String

    private init(sim: SimulatedProviders, images: ImageServer, folder: String) {
        self.sim = sim
        self.images = images
        self.folder = folder
    }

    static func make() async throws -> DownloadFixture {
        let sim = try await SimulatedProviders.start(fallback: SimulatedImageRoute.handler)
        let images = try await ImageServer.start()
        let folder = TestServer.makeFolder()
        try FileManager.default.createDirectory(atPath: folder + "/Downloads", withIntermediateDirectories: true)
        return DownloadFixture(sim: sim, images: images, folder: folder)
    }

    /// `make()`, `body` with the fixture, then `finish()`, also when `body` throws.
    static func with<Result>(_ body: (DownloadFixture) async throws -> Result) async throws -> Result {
        try await finishing(try await make(), with: { await $0.finish() }, body)
    }

    /// The download root (resolved: /tmp may itself be a symlink on some systems).
    var root: String { URL(fileURLWithPath: folder + "/Downloads").resolvingSymlinksInPath().path }

    func configuration(stallTimeout: Duration? = nil) -> CacheConfiguration {
        var configuration = SearchDaemon.configuration(sim: sim, folder: folder)
        configuration.downloads.downloadDir = [folder + "/Downloads"]
        if let stallTimeout { configuration.network.stallTimeout = stallTimeout }
        return configuration
    }

    func start(stallTimeout: Duration? = nil) async throws -> SearchDaemon {
        try await SearchDaemon.start(configuration(stallTimeout: stallTimeout))
    }

    /// The files in a folder, sorted.
    func files(in directory: String? = nil) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory ?? root)) ?? []).sorted()
    }

    func contents(_ path: String) -> [UInt8] {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) } ?? []
    }

    func finish() async {
        await sim.shutdown()
        await images.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// The first photo of an Unsplash search through the daemon, as the client sees it.
func firstPhoto(_ client: DownloadClient, provider: String = "unsplash") async throws -> [String: Any] {
    let result = try await client.result("search", ["query": "mountain lake", "provider": provider, "perPage": 3])
    guard let photos = result["photos"] as? [[String: Any]], let first = photos.first else {
        throw DownloadTestError.unexpected("no photos in \(result)")
    }
    return first
}

extension DownloadFixture {
    /// A fixture, its daemon and a connected client for `body`, all torn down afterwards (on a
    /// failure too): the frame of every download test that goes through the socket.
    static func withDaemon(stallTimeout: Duration? = nil,
                           _ body: (DownloadFixture, SearchDaemon, DownloadClient) async throws -> Void) async throws {
        try await DownloadFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration(stallTimeout: stallTimeout)) { daemon in
                try await finishing(try await DownloadClient.connect(daemon.socketPath), with: { await $0.close() }) { client in
                    try await body(fixture, daemon, client)
                }
            }
        }
    }
}
