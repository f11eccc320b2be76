import Foundation
@testable import ImageCacheServer
import ImageCacheConfig
import ImageCacheKit
import Logging
import ProviderSimulator
import TestSupport

/// A real daemon on a real socket for the thumbnail methods: its providers at the simulator
/// (whose photos' images it serves itself, `/img/WxH/SEED.jpg`), an `ImageServer` for URL
/// requests with faults and counts, and every log event of the daemon captured so a test can
/// wait for what the daemon did (a request held during a fling) instead of sleeping.
final class ThumbnailFixture: Sendable {
    let sim: SimulatedProviders
    let images: ImageServer
    let folder: String
    let daemon: ImageCacheDaemon
    let listener: ListeningSocket
    let logs: LogCapture

    private init(sim: SimulatedProviders, images: ImageServer, folder: String, daemon: ImageCacheDaemon,
                 listener: ListeningSocket, logs: LogCapture) {
        self.sim = sim
        self.images = images
        self.folder = folder
        self.daemon = daemon
        self.listener = listener
        self.logs = logs
    }

    /// Starts the simulator, an image server and a daemon; `configure` adjusts the daemon's
    /// configuration (loopback is allowed, as in every daemon test).
    static func start(_ configure: (inout CacheConfiguration) -> Void = { _ in }) async throws -> ThumbnailFixture {
        let sim = try await SimulatedProviders.start(fallback: SimulatedImageRoute.handler)
        let images = try await ImageServer.start()
        let folder = TestServer.makeFolder()
        var configuration = SearchDaemon.configuration(sim: sim, folder: folder)
        configure(&configuration)
        let logs = LogCapture()
        var logger = Logger(label: "imagecached-thumbnail-test") { _ in logs }
        logger.logLevel = .debug
        let daemon = try ImageCacheDaemon(configuration: configuration, logger: logger,
                                          options: ImageCacheDaemon.Options(shutdownGracePeriod: .seconds(5)))
        let listener = try await daemon.start()
        return ThumbnailFixture(sim: sim, images: images, folder: folder, daemon: daemon, listener: listener, logs: logs)
    }

    /// `start(configure)`, `body` with the fixture, then `finish()`, also when `body` throws.
    static func with<Result>(configure: (inout CacheConfiguration) -> Void = { _ in },
                             _ body: (ThumbnailFixture) async throws -> Result) async throws -> Result {
        try await finishing(try await start(configure), with: { await $0.finish() }, body)
    }

    /// A client of the daemon; with `reading: false` it reads nothing until its channel's
    /// `autoRead` is turned on.
    func connect(reading: Bool = true) async throws -> RawClient {
        try await RawClient.connect(daemon.socketPath, reading: reading)
    }

    /// Serves a JPEG at `path` on the image server and returns its URL.
    @discardableResult
    func serve(_ path: String, width: Int = 600, height: Int = 400, seed: UInt64 = 1, faults: [Fault] = []) -> String {
        images.serve(path, body: SyntheticImages.jpeg(width: width, height: height, seed: seed), faults: faults)
        return images.url(path)
    }

    /// Waits (bounded) until the image server's counters satisfy `condition`.
    func waitForServer(timeout: Double = 60, _ condition: @escaping @Sendable (ImageServer.Counters) -> Bool) async throws {
        let images = self.images
        try await withTimeout(seconds: timeout) { try await images.waitUntil(condition) }
    }

    /// Waits (bounded) until the pipeline holds `count` demands: the point where a second
    /// party has joined a fetch (woken by the pipeline as demands come and go).
    func waitForDemands(_ count: Int, timeout: Double = 60) async throws {
        let pipeline = daemon.services.pipeline
        try await withTimeout(seconds: timeout) { try await pipeline.waitForActiveDemands(atLeast: count) }
    }

    /// Photo ids from a simulator search (their images are served by the simulator).
    func photoIDs(client: RawClient, id: Int, count: Int = 30) async throws -> [String] {
        let answer = try await client.request(id, "search", ["query": "slot hammer", "provider": "unsplash", "perPage": count])
        let photos = answer.resultObject?["photos"] as? [[String: Any]] ?? []
        return photos.compactMap { $0["id"] as? String }
    }

    func finish() async {
        await daemon.stop(listener: listener)
        await images.shutdown()
        await sim.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Every log event of a daemon, kept in order, with a way to wait for one.
final class LogCapture: LogHandler, Sendable {
    /// One event: its message and its metadata rendered as strings.
    struct Event: Sendable {
        var message: String
        var metadata: [String: String]
    }

    private struct Waiter {
        var id: UUID
        var condition: @Sendable (Event) -> Bool
        var continuation: CheckedContinuation<Event, any Error>
    }

    private struct State {
        var events: [Event] = []
        var waiters: [Waiter] = []
    }

    private let state = LockedState(State())

    var logLevel: Logger.Level {
        get { .debug }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event logged: LogEvent) {
        let event = Event(message: logged.message.description, metadata: (logged.metadata ?? [:]).mapValues { "\($0)" })
        let ready = state.withLock { state -> [Waiter] in
            state.events.append(event)
            let done = state.waiters.filter { $0.condition(event) }
            state.waiters.removeAll { $0.condition(event) }
            return done
        }
        for waiter in ready { waiter.continuation.resume(returning: event) }
    }

    /// The events so far whose message starts with `prefix`.
    func events(_ prefix: String) -> [Event] {
        state.withLock { $0.events.filter { $0.message.hasPrefix(prefix) } }
    }

    /// Waits (bounded) for an event whose message starts with one of `messages` and, when
    /// given, has the slot `"view#slot"` in its metadata; events logged before the call count
    /// too. Returns the message prefix that matched.
    @discardableResult
    func wait(for messages: String..., slot: String? = nil, timeout: Double = 60) async throws -> String {
        let condition: @Sendable (Event) -> Bool = { event in
            messages.contains { event.message.hasPrefix($0) } && (slot == nil || event.metadata["slot"] == slot)
        }
        let id = UUID()
        let event = try await withTimeout(seconds: timeout) { [self] in
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Event, any Error>) in
                    let seen = state.withLock { state -> Event? in
                        if let seen = state.events.first(where: condition) { return seen }
                        if Task.isCancelled {
                            continuation.resume(throwing: CancellationError())
                            return nil
                        }
                        state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                        return nil
                    }
                    if let seen { continuation.resume(returning: seen) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                waiter?.continuation.resume(throwing: CancellationError())
            }
        }
        return messages.first { event.message.hasPrefix($0) } ?? event.message
    }
}

/// Reading a client's messages (answers and notifications interleaved) in wire order.
extension RawClient {
    /// Reads messages until the answer for `id` arrives; returns it with every message read
    /// before it (notifications, other answers), in order.
    func answer(_ id: Int, timeout: Double = 60) async throws -> (answer: [String: Any], before: [[String: Any]]) {
        var before: [[String: Any]] = []
        while true {
            let message = try await readMessage(timeout: timeout)
            if message["id"] as? Int == id { return (message, before) }
            before.append(message)
        }
    }

    /// Sends one request and returns its answer, skipping the notifications before it.
    func ask(_ id: Int, _ method: String, _ params: [String: Any] = [:], timeout: Double = 60) async throws -> [String: Any] {
        try await send(rpcLine(id, method, params))
        return try await answer(id, timeout: timeout).answer
    }

    /// Reads messages until `done` says the collection is complete; returns them in order.
    func collect(timeout: Double = 60, until done: ([[String: Any]]) -> Bool) async throws -> [[String: Any]] {
        var messages: [[String: Any]] = []
        while !done(messages) {
            messages.append(try await readMessage(timeout: timeout))
        }
        return messages
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The `method` of a notification, or nil for an answer.
    var notificationMethod: String? { self["id"] == nil ? self["method"] as? String : nil }
    /// The `params` of a notification.
    var params: [String: Any] { self["params"] as? [String: Any] ?? [:] }
    /// `error.data.reason` of a response.
    var errorReason: String? { errorData["reason"] as? String }
}
