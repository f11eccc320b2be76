import Foundation
@testable import ImageCacheServer
import ImageCacheConfig
import ImageCacheKit
import ProviderSimulator
import TestSupport

/// A simulator that serves the provider APIs *and* their images (`/img/WxH/SEED.jpg`), a
/// temporary folder, and the helpers the layout, cache and stats tests share: a real daemon
/// (`SearchDaemon`) on a real socket, thumbnails fetched through the daemon's own pipeline.
final class CacheFixture: Sendable {
    let sim: SimulatedProviders
    let folder: String

    private init(sim: SimulatedProviders, folder: String) {
        self.sim = sim
        self.folder = folder
    }

    static func make() async throws -> CacheFixture {
        let sim = try await SimulatedProviders.start(fallback: SimulatedImageRoute.handler)
        return CacheFixture(sim: sim, folder: TestServer.makeFolder())
    }

    /// `make()`, `body` with the fixture, then `finish()`, also when `body` throws.
    static func with<Result>(_ body: (CacheFixture) async throws -> Result) async throws -> Result {
        try await finishing(try await make(), with: { await $0.finish() }, body)
    }

    /// The search harness's configuration with the cache knobs these tests turn.
    func configuration(pathGrace: Duration = .seconds(60)) -> CacheConfiguration {
        var configuration = SearchDaemon.configuration(sim: sim, folder: folder)
        configuration.cache.pathGrace = pathGrace
        return configuration
    }

    func start(pathGrace: Duration = .seconds(60)) async throws -> SearchDaemon {
        try await SearchDaemon.start(configuration(pathGrace: pathGrace))
    }

    func finish() async {
        await sim.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

extension SearchDaemon {
    var services: DaemonServices { daemon.services }

    /// A search's photos (objects as the socket answered them).
    func searchPhotos(_ client: RawClient, id: Int = 900, query: String = "harbour lights",
                      provider: String = "unsplash", perPage: Int = 10) async throws -> [[String: Any]] {
        let answer = try await client.request(id, "search", ["query": query, "provider": provider, "perPage": perPage])
        guard let photos = answer.resultObject?["photos"] as? [[String: Any]], !photos.isEmpty else {
            throw CacheTestError.unexpected("search answered \(answer)")
        }
        return photos
    }

    /// Fetches a thumbnail of a photo through the daemon's pipeline (what `thumbnail.show`
    /// does), returning the delivered file.
    func thumbnail(_ photo: String, size: Int = 200) async throws -> ThumbnailDelivery {
        let pipeline = services.pipeline
        return try await withTimeout(seconds: 60) {
            let image = try await pipeline.image(for: .photo(photo))
            return try await pipeline.load(ThumbnailRequest(image: image, size: size))
        }
    }

    /// The cached thumbnail of a photo at `size`, never fetching; nil when not cached.
    func cachedThumbnail(_ photo: String, size: Int = 200) async throws -> ThumbnailDelivery? {
        let image = try await services.pipeline.image(for: .photo(photo))
        return await services.pipeline.cachedOnly(ThumbnailRequest(image: image, size: size))
    }
}

enum CacheTestError: Error {
    case unexpected(String)
}

extension Dictionary where Key == String, Value == Any {
    /// A numeric member as a Double (JSON integers and fractions alike).
    func number(_ key: String) -> Double? { (self[key] as? NSNumber)?.doubleValue }
}
