import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// What a thumbnail request delivers: the contract's scaling rule, upright pixels, the tiers.
@Suite("Pipeline: what a thumbnail request delivers", .timeLimit(.minutes(3)))
struct PipelineDeliveryTests {
    private func decodedSize(_ path: String) throws -> (Int, Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = try Thumbnailer.validate(bytes)
        return (header.width, header.height)
    }

    @Test("a body spooled to a file is handed back once processed, whether it made a thumbnail or not: emptied, and the next body's file")
    func spooledBodiesAreHandedBack() async throws {
        // Every body here is past the limit, so each one goes through a spill file.
        try await PipelineFixture.with(options: { $0.memoryBodyLimit = 1024 }) { f in
            let spooled = { () -> [String: Int] in
                let names = (try? FileManager.default.contentsOfDirectory(atPath: f.folder + "/cache")) ?? []
                var sizes: [String: Int] = [:]
                for name in names where name.hasPrefix("imagecached-body-") {
                    sizes[name] = (try? FileManager.default.attributesOfItem(atPath: f.folder + "/cache/" + name)[.size] as? Int) ?? -1
                }
                return sizes
            }
            let image = f.serve("/spooled.jpg", SyntheticImages.jpeg(width: 1000, height: 750))
            let delivered = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect(delivered.source == .network)
            let afterFirst = spooled()
            #expect(afterFirst.count == 1 && afterFirst.values.allSatisfy { $0 == 0 }, "\(afterFirst)")
            // A header that reads, a body cut short: it fails in the decode, after the spool.
            let whole = SyntheticImages.jpeg(width: 1000, height: 750, seed: 4)
            let truncated = f.serve("/truncated.jpg", Array(whole.prefix(whole.count * 2 / 3)))
            await #expect(throws: ImagingError.self) { try await f.pipeline.load(ThumbnailRequest(image: truncated, size: 256)) }
            #expect(spooled() == afterFirst)
        }
    }

    @Test("a spooled body whose file is gone before its decode fails the request with storage_unavailable, and the next body goes through")
    func spooledBodyGone() async throws {
        try await PipelineFixture.with(options: { $0.memoryBodyLimit = 1024 }) { f in
            let image = f.serve("/gone.jpg", SyntheticImages.jpeg(width: 400, height: 300, seed: 8))
            // Both decode slots held: the body waits, spooled, for one.
            let cheap = DecodeCost(bytes: 1, work: 1)
            let held = [try await f.decodes.acquire(cheap), try await f.decodes.acquire(cheap)]
            let pipeline = f.pipeline
            let load = Task { try await pipeline.load(ThumbnailRequest(image: image, size: 256)) }
            // Its cost read (the file mapped once), it waits for a decode slot: the decode maps
            // it again, and finds it gone.
            let decodes = f.decodes
            try await withTimeout(seconds: 30) { try await decodes.queueChanges.wait { _ in decodes.waiting == 1 } }
            let folder = f.folder + "/cache"
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasPrefix("imagecached-body-") {
                try FileManager.default.removeItem(atPath: folder + "/" + name)
            }
            for permit in held { f.decodes.release(permit) }
            do {
                _ = try await withTimeout(seconds: 30) { try await load.value }
                Issue.record("a body whose file was removed made a thumbnail")
            } catch let error as StorageError {
                #expect(error.code == ENOENT && error.kind == .storageUnavailable, "\(error)")
            }
            try await withTimeout(seconds: 30) { try await f.engine.observedStats.wait { $0.unreleasedBodies == 0 } }
            let next = f.serve("/next.jpg", SyntheticImages.jpeg(width: 400, height: 300, seed: 9))
            #expect(try await f.pipeline.load(ThumbnailRequest(image: next, size: 256)).source == .network)
        }
    }

    @Test("a prefetch of many images fetches ahead of its decodes only by the look-ahead, and hands every body back, decoded or not",
          arguments: [true, false])
    func prefetchLookAheadBoundsBodies(spilled: Bool) async throws {
        try await PipelineFixture.with(network: { $0.maxConnections = 2; $0.maxConnectionsPerHost = 2 },
                                       options: { $0.memoryBodyLimit = spilled ? 1024 : 1 << 20; $0.visibleReserve = 0; $0.prefetchLookAhead = 2 }) { f in
            // Two bodies under sixteen names (each name its own fetch); every fourth cut short,
            // so it fails in the decode, after its body was fetched. Small pictures: the test
            // counts bodies, and under ThreadSanitizer making large ones took minutes.
            let whole = SyntheticImages.jpeg(width: 400, height: 300, seed: 5)
            let cut = Array(whole.prefix(whole.count / 2))
            let images = (0..<16).map { index in f.serve("/\(index).jpg", index % 4 == 3 ? cut : whole) }
            f.server.serve("/probe", body: [UInt8](repeating: 7, count: 100))  // under any spill limit here
            // Both decode slots held: no body is processed, so the fetches get as far ahead as
            // the look-ahead lets them: 2 bodies in hand close it, and a transfer running
            // then still arrives, so 3 at most (with 2 connections).
            let cheap = DecodeCost(bytes: 1, work: 1)
            let held = [try await f.decodes.acquire(cheap), try await f.decodes.acquire(cheap)]
            let pipeline = f.pipeline
            let loads = Task {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for image in images {
                        group.addTask {
                            do {
                                _ = try await pipeline.load(ThumbnailRequest(image: image, size: 256, priority: .prefetch))
                                return true
                            } catch is ImagingError {
                                return false
                            }
                        }
                    }
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
            }
            try await withTimeout(seconds: 30) {
                try await f.engine.observedStats.wait { $0.inFlight == 0 && $0.unreleasedBodies >= 2 && $0.queued + $0.unreleasedBodies == 16 }
            }
            // A visible transfer after that: the engine has admitted since, and still holds the rest.
            _ = try await withTimeout(seconds: 30) { try await f.engine.start(TransferRequest(url: f.server.url("/probe"))).result() }
            let stats = f.engine.stats
            #expect(stats.unreleasedBodies + stats.inFlight <= 3 && stats.queued >= 13, "\(stats)")
            let files = { try FileManager.default.contentsOfDirectory(atPath: f.folder + "/cache").filter { $0.hasPrefix("imagecached-body-") } }
            #expect(try files().count == (spilled ? stats.unreleasedBodies : 0))
            for permit in held { f.decodes.release(permit) }
            let outcomes = try await withTimeout(seconds: 60) { try await loads.value }
            #expect(outcomes.filter { $0 }.count == 12)
            try await withTimeout(seconds: 30) { try await f.engine.observedStats.wait { $0.unreleasedBodies == 0 } }
            // Every file made is kept, emptied, for the next bodies: never more than were held at once.
            #expect(try files().count <= (spilled ? 3 : 0))
        }
    }

    @Test("an image at least twice as wide as asked is scaled to exactly the size, then served from memory")
    func scalesWideImages() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/wide.jpg", SyntheticImages.jpeg(width: 1000, height: 750))
            let first = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect((first.width, first.height) == (256, 192))
            #expect(first.source == .network)
            #expect(first.mime == "image/jpeg")
            #expect(first.path.hasPrefix(f.folder + "/cache/"))
            #expect(try decodedSize(first.path) == (256, 192))
            #expect(first.bytes == (try FileManager.default.attributesOfItem(atPath: first.path)[.size] as? Int))
            let second = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect(second.source == .memory)
            #expect(second.path == first.path)
            #expect(f.server.counters.requests("/wide.jpg") == 1)
        }
    }

    @Test("an image less than twice as wide is delivered byte for byte, and found again by its width note")
    func deliversNarrowImagesAsTheyAre() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 400, height: 300)
            let image = f.serve("/narrow.jpg", body)
            let first = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect((first.width, first.height) == (400, 300))
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: first.path))) == body)
            let again = try #require(await f.pipeline.cachedOnly(ThumbnailRequest(image: image, size: 256)))
            #expect(again.path == first.path && again.source == .memory)
            #expect(f.server.counters.requests("/narrow.jpg") == 1)
        }
    }

    @Test("an original narrower than the size is delivered at its own width, never upscaled")
    func neverUpscales() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/small.jpg", try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg"))
            let delivery = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect((delivery.width, delivery.height) == (227, 149))
        }
    }

    @Test("an EXIF-rotated photo is delivered upright, scaled or at its own width")
    func deliversUpright() async throws {
        try await PipelineFixture.with { f in
            // Stored 1200×1800 with orientation 6: upright it is 1800×1200.
            let image = f.serve("/rotated.jpg", try Corpus.bytes("jpeg/exif-orientation-examples/Landscape_6.jpg"))
            let scaled = try await f.pipeline.load(ThumbnailRequest(image: image, size: 256))
            #expect((scaled.width, scaled.height) == (256, 171))
            #expect(try decodedSize(scaled.path) == (256, 171))
            let large = try await f.pipeline.load(ThumbnailRequest(image: image, size: 1000))
            #expect((large.width, large.height) == (1800, 1200))
            let header = try Thumbnailer.validate([UInt8](try Data(contentsOf: URL(fileURLWithPath: large.path))))
            #expect(header.orientation == .up && header.storedWidth == 1800)
        }
    }

    @Test("a PNG with alpha stays a PNG; inline data is the delivered file")
    func pngAndInlineData() async throws {
        try await PipelineFixture.with { f in
            let image = f.serve("/alpha.png", try Corpus.bytes("pngsuite/basn6a08.png"))
            let delivery = try await f.pipeline.load(ThumbnailRequest(image: image, size: 16, wantsBytes: true))
            #expect(delivery.mime == "image/png")
            #expect(delivery.data == (try Data(contentsOf: URL(fileURLWithPath: delivery.path))))
            let noBytes = try await f.pipeline.load(ThumbnailRequest(image: image, size: 16))
            #expect(noBytes.data == nil)
        }
    }

    @Test("after a restart the thumbnail comes from disk without the network")
    func survivesRestart() async throws {
        try await NetworkFixture.withServer { server in
            let first = try PipelineFixture(server: server)
            defer { first.remove() }
            let image = first.serve("/p.jpg", SyntheticImages.jpeg(width: 900, height: 600))
            let fetched = try await first.pipeline.load(ThumbnailRequest(image: image, size: 300))
            first.close()
            let second = try PipelineFixture(server: server, folder: first.folder)
            defer { second.close() }
            let again = try await second.pipeline.load(ThumbnailRequest(image: image, size: 300))
            #expect(again.source == .disk)
            #expect((again.width, again.height) == (fetched.width, fetched.height))
            #expect(server.counters.requests("/p.jpg") == 1)
        }
    }

    @Test("a photo fetches the smallest variant at least as wide as asked and records its dimensions by id")
    func photoVariants() async throws {
        try await PipelineFixture.with { f in
            f.server.serve("/v/small.jpg", body: SyntheticImages.jpeg(width: 200, height: 150))
            f.server.serve("/v/medium.jpg", body: SyntheticImages.jpeg(width: 640, height: 480))
            let photo = Photo(id: "pixabay:1", provider: "pixabay", width: 4000, height: 3000,
                              thumbURL: f.server.url("/v/small.jpg"), fullURL: f.server.url("/v/full.jpg"),
                              author: .init(name: "A", profileURL: nil), likes: nil, description: nil, pageURL: nil)
            let provider = ProviderPhoto(photo: photo, variants: [
                ImageVariant(name: "small", url: f.server.url("/v/small.jpg"), width: 200, height: 150),
                ImageVariant(name: "medium", url: f.server.url("/v/medium.jpg"), width: 640, height: 480),
            ])
            await f.registry.remember([provider])
            let image = try await f.pipeline.image(for: .photo("pixabay:1"))
            // 640 is the smallest variant ≥ 400 and less than twice as wide: delivered as it is.
            let delivery = try await f.pipeline.load(ThumbnailRequest(image: image, size: 400))
            #expect((delivery.width, delivery.height) == (640, 480))
            #expect(f.server.counters.requests("/v/small.jpg") == 0)
            #expect(f.dimensions.decoded(photo: "pixabay:1") == .init(width: 640, height: 480))
            let error = await rpcError { _ = try await f.pipeline.image(for: .photo("pixabay:404")) }
            #expect(error?.kind == .notFound)
        }
    }
}
