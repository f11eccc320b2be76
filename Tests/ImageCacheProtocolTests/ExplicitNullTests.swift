import Foundation
import ImageCacheProtocol
import Testing

/// The fields the protocol shows as null when unknown keep their key, and read back from null,
/// a missing key or a value alike, through types whose coding is synthesised.
@Suite("ExplicitNull: unknown values written as null", .timeLimit(.minutes(1)))
struct ExplicitNullTests {
    @Test("a nil field is written as null, not left out; a set one as its value")
    func written() throws {
        let unknown = try jsonObject(DownloadProgress(job: "dl-1", received: 5, total: nil, bytesPerSecond: 2))
        #expect(Set(unknown.keys) == ["job", "received", "total", "bytesPerSecond"])
        #expect(unknown["total"] is NSNull)
        let known = try jsonObject(DownloadProgress(job: "dl-1", received: 5, total: 9, bytesPerSecond: 2))
        #expect(known["total"] as? Int == 9)
        let stats = try jsonObject(StatsResult.Provider(requests: 3, errors: 1, rateLimitRemaining: nil))
        #expect(stats["rateLimitRemaining"] is NSNull)
        let budget = try jsonObject(StatsResult.Shared.Budget(used: 1, limit: 2, windowSeconds: 60, stoppedUntil: nil))
        #expect(budget["stoppedUntil"] is NSNull)
    }

    @Test("every unknown field of a job keeps its key; `query` of a feed page too, while `feed` is left out of a query's")
    func everyField() throws {
        let job = DownloadJob(job: "dl-1", photo: nil, url: nil, variant: .regular, state: .queued, path: nil,
                              received: 0, total: nil, createdAt: "2026-11-29T00:00:00Z")
        let object = try jsonObject(job)
        for key in ["photo", "url", "path", "total", "width", "height", "error", "endedAt"] {
            #expect(object[key] is NSNull, "\(key)")
        }
        let page = try jsonObject(SearchResult(query: nil, feed: .recent, provider: "unsplash", page: 1, perPage: 10,
                                               total: 0, totalPages: 0, hasMore: false, photos: [], fromCache: false, stale: false))
        #expect(page["query"] is NSNull)
        let queried = try jsonObject(SearchResult(query: "red", provider: "unsplash", page: 1, perPage: 10,
                                                  total: 0, totalPages: 0, hasMore: false, photos: [], fromCache: false, stale: false))
        #expect(queried["query"] as? String == "red")
        #expect(queried["feed"] == nil)
    }

    @Test("null, a missing key and a value all read back")
    func read() throws {
        let decoder = JSONDecoder()
        let null = try decoder.decode(DownloadProgress.self, from: Data(#"{"job":"a","received":1,"total":null,"bytesPerSecond":0}"#.utf8))
        #expect(null.total == nil)
        let missing = try decoder.decode(DownloadProgress.self, from: Data(#"{"job":"a","received":1,"bytesPerSecond":0}"#.utf8))
        #expect(missing.total == nil)
        let value = try decoder.decode(DownloadProgress.self, from: Data(#"{"job":"a","received":1,"total":7,"bytesPerSecond":0}"#.utf8))
        #expect(value.total == 7)
        #expect(throws: DecodingError.self) {
            try decoder.decode(DownloadProgress.self, from: Data(#"{"job":"a","received":1,"total":"seven","bytesPerSecond":0}"#.utf8))
        }
        let job = DownloadJob(job: "dl-1", photo: "unsplash:a", url: nil, variant: .full, state: .failed, path: "/d/a.jpg",
                              received: 3, total: 10, width: 4, height: 5, error: RPCError(.notFound, "gone"),
                              createdAt: "2026-11-29T00:00:00Z", endedAt: "2026-11-29T00:00:01Z")
        #expect(try decoder.decode(DownloadJob.self, from: JSONEncoder().encode(job)) == job)
    }
}
