import Foundation
import ImageCacheConfig
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// A fetched thumbnail's original size goes to the dimensions store once: the header probe
/// records it as the body arrives, and storing the thumbnail adds only what is new (the
/// placeholder computed from its pixels).
@Suite("Pipeline: the original's size recorded once per thumbnail", .timeLimit(.minutes(2)))
struct PipelineDimensionsOnceTests {
    @Test("the probe records the size; the store adds the computed placeholder, and nothing when it has none")
    func recordsOnlyWhatIsNew() async throws {
        try await NetworkFixture.withServer { server in
            let folder = TemporaryFolder("dimensions-once")
            defer { folder.remove() }
            let configuration = NetworkFixture.configuration()
            let cache = try ImageCache(configuration: configuration.cache, directory: folder.path + "/cache")
            let engine = TransferEngine(configuration: configuration, options: NetworkFixture.options())
            let dimensions = try ImageDimensionsStore(directory: folder.path)
            defer {
                engine.shutdown()
                dimensions.close()
                cache.close()
            }
            let pipeline = ImagePipeline(cache: cache, transfers: engine, registry: PhotoRegistry(), dimensions: dimensions,
                                         decodes: DecodeBudget(memory: configuration.network.decodeMemory, slots: 2),
                                         settings: { ImagePipeline.Settings(configuration) })
            server.serve("/once.jpg", body: SyntheticImages.jpeg(width: 1000, height: 750))
            let image = ThumbnailRequest.Image.url(server.url("/once.jpg"))

            // First fetch: the size from the header, then the placeholder decoded with it.
            #expect(try await pipeline.load(ThumbnailRequest(image: image, size: 256)).source == .network)
            dimensions.flush()
            #expect(dimensions.writtenRecords.value == 2)
            #expect(dimensions.decoded(url: server.url("/once.jpg")) == .init(width: 1000, height: 750))
            #expect(dimensions.placeholder(url: server.url("/once.jpg")) != nil)

            // Another width of the same image: its placeholder is remembered, not computed again,
            // so only the probe records (the size, once).
            #expect(try await pipeline.load(ThumbnailRequest(image: image, size: 128)).source == .network)
            dimensions.flush()
            #expect(dimensions.writtenRecords.value == 3)
            #expect(server.counters.requests("/once.jpg") == 2)
        }
    }
}
