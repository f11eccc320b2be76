import ImageCacheKit

extension ImagePipeline {
    /// Whether a thumbnail is cached, by the tiers a journey reads before any fetch (memory,
    /// then disk): what a test asks to prove an entry exists or was left behind.
    package func cachedOnly(_ request: ThumbnailRequest) async -> ThumbnailDelivery? {
        var journey = journey(request)
        return try? await journey.cached()
    }
}
