import Foundation
import ImageCacheConfig
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import TestSupport

/// A real pipeline over a real cache folder, a real engine and a loopback image server.
final class PipelineFixture: Sendable {
    let folder: String
    let server: ImageServer
    let cache: ImageCache
    let engine: TransferEngine
    let registry = PhotoRegistry()
    let dimensions = ImageDimensionsStore()
    /// The pipeline's decode budget: a test holds its slots to keep bodies waiting.
    let decodes: DecodeBudget
    let pipeline: ImagePipeline

    init(server: ImageServer, folder: String? = nil, network: (inout CacheConfiguration.Network) -> Void = { _ in },
         options: (inout TransferEngine.Options) -> Void = { _ in }) throws {
        self.server = server
        let folder = folder ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("pipeline-\(UUID().uuidString)").path
        self.folder = folder
        let configuration = NetworkFixture.configuration(network)
        cache = try ImageCache(configuration: configuration.cache, directory: folder + "/cache")
        engine = TransferEngine(configuration: configuration, options: NetworkFixture.options { o in
            o.temporaryDirectory = folder + "/cache"
            options(&o)
        })
        decodes = DecodeBudget(memory: configuration.network.decodeMemory, slots: 2)
        pipeline = ImagePipeline(cache: cache, transfers: engine, registry: registry, dimensions: dimensions,
                                 decodes: decodes, settings: { ImagePipeline.Settings(configuration) })
    }

    /// Stops the engine and releases the folder (kept, so a second fixture can reopen it).
    func close() {
        engine.shutdown()
        cache.close()
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Serves `body` at `path` and returns a URL request for it.
    func serve(_ path: String, _ body: [UInt8], faults: [Fault] = []) -> ThumbnailRequest.Image {
        server.serve(path, body: body, faults: faults)
        return .url(server.url(path))
    }

    /// Runs `body` with a fixture on a fresh server, cleaning both up afterwards.
    static func with<T: Sendable>(network: (inout CacheConfiguration.Network) -> Void = { _ in },
                                  options: (inout TransferEngine.Options) -> Void = { _ in },
                                  _ body: (PipelineFixture) async throws -> T) async throws -> T {
        try await NetworkFixture.withServer { server in
            let fixture = try PipelineFixture(server: server, network: network, options: options)
            defer { fixture.close(); fixture.remove() }
            return try await body(fixture)
        }
    }
}

/// Collects a demand's events so a test can wait for one without sleeping.
final class ThumbnailEventLog: Sendable {
    private let events = LockedState<[ThumbnailEvent]>([])
    private let stream: AsyncStream<ThumbnailEvent>
    private let continuation: AsyncStream<ThumbnailEvent>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: ThumbnailEvent.self)
    }

    var handler: @Sendable (ThumbnailEvent) -> Void {
        { [self] event in
            events.withLock { $0.append(event) }
            continuation.yield(event)
        }
    }

    var all: [ThumbnailEvent] { events.withLock { $0 } }

    /// Waits for the first event that matches (bound it with `withTimeout`).
    func waitFor(_ matches: @Sendable (ThumbnailEvent) -> Bool) async -> Bool {
        for await event in stream where matches(event) { return true }
        return false
    }
}
