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
    /// A pipeline over a real cache folder whose dimensions store persists, so its writes count.
    private func withPipeline(_ body: (ImageServer, ImagePipeline, ImageDimensionsStore, PhotoRegistry) async throws -> Void) async throws {
        try await NetworkFixture.withServer { server in
            let folder = TemporaryFolder("dimensions-once")
            defer { folder.remove() }
            let configuration = NetworkFixture.configuration()
            let cache = try ImageCache(configuration: configuration.cache, directory: folder.path + "/cache")
            let engine = TransferEngine(configuration: configuration, options: NetworkFixture.options())
            let dimensions = try ImageDimensionsStore(directory: folder.path)
            let registry = PhotoRegistry()
            defer {
                engine.shutdown()
                dimensions.close()
                cache.close()
            }
            let pipeline = ImagePipeline(cache: cache, transfers: engine, registry: registry, dimensions: dimensions,
                                         decodes: DecodeBudget(memory: configuration.network.decodeMemory, slots: 2),
                                         settings: { ImagePipeline.Settings(configuration) })
            try await body(server, pipeline, dimensions, registry)
        }
    }

    @Test("a photo whose provider sent its placeholder: the probe's one record per key holds the size and that placeholder")
    func providerPlaceholderWithTheSize() async throws {
        try await withPipeline { server, pipeline, dimensions, registry in
            server.serve("/own.jpg", body: SyntheticImages.jpeg(width: 900, height: 600))
            var photo = Photo(id: "unsplash:once", provider: "unsplash", width: 900, height: 600, thumbURL: server.url("/own.jpg"),
                              fullURL: server.url("/own.jpg"), author: .init(name: "A", profileURL: nil), likes: nil,
                              description: nil, pageURL: nil)
            photo.blurHash = "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
            photo.color = "#c0a080"
            await registry.remember([ProviderPhoto(photo: photo, variants: [
                ImageVariant(name: "full", url: server.url("/own.jpg"), width: 900, height: 600),
            ])])
            let image = try await pipeline.image(for: .photo("unsplash:once"))
            #expect(try await pipeline.load(ThumbnailRequest(image: image, size: 256)).source == .network)
            dimensions.flush()
            // One record for the photo id, one for its URL: none again when the thumbnail is stored.
            #expect(dimensions.writtenRecords.value == 2)
            #expect(dimensions.decoded(photo: "unsplash:once") == .init(width: 900, height: 600))
            #expect(dimensions.placeholder(photo: "unsplash:once") == ImagePlaceholder(blurHash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", color: "#c0a080"))
        }
    }

    @Test("the probe records the size; the store adds the computed placeholder, and nothing when it has none")
    func recordsOnlyWhatIsNew() async throws {
        try await withPipeline { server, pipeline, dimensions, _ in
            server.serve("/once.jpg", body: SyntheticImages.jpeg(width: 1000, height: 750))
            let image = ThumbnailRequest.Image.url(server.url("/once.jpg"))

            // First fetch: the size from the header, then the placeholder decoded with it.
            let first = try await pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect(first.source == .network)
            dimensions.flush()
            #expect(dimensions.writtenRecords.value == 2)
            #expect(dimensions.decoded(url: server.url("/once.jpg")) == .init(width: 1000, height: 750))
            #expect(dimensions.placeholder(url: server.url("/once.jpg")) != nil)

            // Another width of the same image: its placeholder is remembered, not computed again,
            // so only the probe records (the size, once).
            let second = try await pipeline.load(ThumbnailRequest(image: image, size: 128))
            #expect(second.source == .network)
            dimensions.flush()
            #expect(dimensions.writtenRecords.value == 3)
            #expect(server.counters.requests("/once.jpg") == 2)
        }
    }
}
