import ImageCacheProtocol

/// Protocol values shaped like the daemon's answers, for renderer tests.
enum Fixtures {
    static func photo(_ id: String, width: Int? = 4000, height: Int? = 3000, author: String = "Jane Doe",
                      likes: Int? = 250, description: String? = "A beautiful beach at sunset.") -> Photo {
        Photo(id: id, provider: String(id.split(separator: ":").first ?? "unsplash"), width: width, height: height,
              thumbURL: "https://images.example/\(id)-t.jpg", fullURL: "https://images.example/\(id).jpg",
              author: Photo.Author(name: author, profileURL: nil), likes: likes, description: description, pageURL: nil)
    }

    static func page(_ photos: [Photo], page: Int = 2, totalPages: Int = 17, fromCache: Bool = false, stale: Bool = false) -> SearchResult {
        SearchResult(query: "beach", provider: "unsplash", page: page, perPage: 20, total: totalPages * 20,
                     totalPages: totalPages, hasMore: page < totalPages, photos: photos, fromCache: fromCache, stale: stale)
    }

    static let stats = StatsResult(
        memory: .init(entries: 12, bytes: 3 * 1024 * 1024, limit: 128 * 1024 * 1024, hits: 30, misses: 10),
        disk: .init(entries: 40, bytes: 20 * 1024 * 1024, limit: 1024 * 1024 * 1024, hits: 8, misses: 2),
        network: .init(inFlight: 2, queued: 5, requests: 77, bytesReceived: 9_000_000, bytesDiscarded: 450_000),
        providers: ["unsplash": .init(requests: 10, errors: 1, rateLimitRemaining: 49), "pixabay": .init(requests: 3, errors: 0, rateLimitRemaining: nil)],
        sessions: 3, uptimeSeconds: 3725)
}
