import Foundation
import ImageCacheProtocol
import Testing

/// The examples of docs/protocol.md ("Objects", "Methods"), decoded into the types and
/// encoded back with the same field names, nulls where the contract shows null.
@Suite("Contract examples", .timeLimit(.minutes(1)))
struct ContractExamplesTests {
    static let photoJSON = #"""
    { "id": "unsplash:abc123", "provider": "unsplash",
      "width": 4000, "height": 3000,
      "thumbURL": "https://images.unsplash.com/t", "fullURL": "https://images.unsplash.com/f",
      "author": {"name": "John Doe", "profileURL": "https://unsplash.com/@johndoe"},
      "likes": 250, "description": "A beautiful beach at sunset.", "pageURL": "https://unsplash.com/photos/abc123" }
    """#

    @Test("a Photo decodes from the protocol's example and encodes the same fields")
    func photo() throws {
        let photo = try decode(Photo.self, Self.photoJSON)
        #expect(photo.id == "unsplash:abc123" && photo.width == 4000 && photo.author.name == "John Doe")
        let object = try jsonObject(photo)
        #expect(Set(object.keys) == ["id", "provider", "width", "height", "thumbURL", "fullURL", "author", "likes", "description", "pageURL"])
    }

    @Test("a Photo's unknown values encode as null, not as missing keys")
    func photoNulls() throws {
        let photo = Photo(id: "flickr:1", provider: "flickr", width: nil, height: nil, thumbURL: "https://a.test/t",
                          fullURL: "https://a.test/f", author: .init(name: "A", profileURL: nil), likes: nil,
                          description: nil, pageURL: nil)
        let object = try jsonObject(photo)
        for key in ["width", "height", "likes", "description", "pageURL"] { #expect(isNull(object, key), "\(key)") }
    }

    @Test("hello's result encodes the protocol revision as 'protocol'")
    func hello() throws {
        let text = #"{ "name": "imagecached", "version": "0.1.0", "protocol": 1, "providers": [{"name": "unsplash", "configured": true}] }"#
        let result = try decode(HelloResult.self, text)
        #expect(result.protocolVersion == 1 && result.providers == [.init(name: "unsplash", configured: true)])
        let object = try jsonObject(result)
        #expect(object["protocol"] as? Int == 1)
        #expect(Set(object.keys) == ["name", "version", "protocol", "providers"])
    }

    @Test("search params as the protocol shows them decode; a feed search too")
    func searchParams() throws {
        let p = try decodeParams(SearchParams.self, #"{"query": "beach sunset", "provider": "unsplash", "page": 2, "perPage": 30, "debounceMs": 150, "channel": "typeahead", "safe": false}"#)
        #expect(p == SearchParams(query: "beach sunset", provider: "unsplash", page: 2, perPage: 30, debounceMs: 150, channel: "typeahead", safe: false))
        #expect(try decodeParams(SearchParams.self, #"{"feed": "recent", "provider": "flickr"}"#).feed == .recent)
    }

    @Test("a search result encodes every field the protocol names")
    func searchResult() throws {
        let photo = try decode(Photo.self, Self.photoJSON)
        let result = SearchResult(query: "beach", provider: "unsplash", page: 2, perPage: 30, total: 500, totalPages: 17,
                                  hasMore: true, photos: [photo], fromCache: false, stale: false)
        let object = try jsonObject(result)
        #expect(Set(object.keys) == ["query", "provider", "page", "perPage", "total", "totalPages", "hasMore", "photos", "fromCache", "stale"])
        #expect(object["totalPages"] as? Int == 17)
        let feed = try jsonObject(SearchResult(query: nil, feed: .recent, provider: "flickr", page: 1, perPage: 10, total: 0,
                                               totalPages: 0, hasMore: false, photos: [], fromCache: true, stale: true))
        #expect(isNull(feed, "query") && feed["feed"] as? String == "recent")
    }

    @Test("thumbnail.show's result: photo null for a url request, data only when inline")
    func thumbnailResult() throws {
        let byURL = ThumbnailShowResult(slot: 4, photo: nil, path: "/var/cache/imagecached/t/ab/abcd.jpg", width: 256,
                                        height: 171, bytes: 14_210, mime: "image/jpeg", source: .network)
        let object = try jsonObject(byURL)
        #expect(isNull(object, "photo"))
        #expect(object["data"] == nil)
        #expect(object["source"] as? String == "network")
        #expect(Set(object.keys) == ["slot", "view", "photo", "path", "width", "height", "bytes", "mime", "source"])
        let inline = try jsonObject(ThumbnailShowResult(slot: 4, photo: "unsplash:a", path: "/p", width: 1, height: 1,
                                                        bytes: 3, mime: "image/png", source: .memory, data: "AAEC"))
        #expect(inline["data"] as? String == "AAEC")
    }

    @Test("thumbnail.show params as the protocol shows them decode, with a url")
    func thumbnailParams() throws {
        let p = try decodeParams(ThumbnailShowParams.self, #"{"slot": 7, "url": "https://images.test/a.jpg", "size": 256, "inline": true, "view": "sidebar"}"#)
        #expect(p == ThumbnailShowParams(slot: 7, image: .url("https://images.test/a.jpg"), size: 256, inline: true, view: "sidebar"))
    }

    @Test("thumbnail notifications carry slot, photo and their figures; unknown total is null")
    func thumbnailNotifications() throws {
        let progress = try jsonObject(ThumbnailProgress(slot: 1, photo: "unsplash:a", received: 4096, total: nil))
        #expect(Set(progress.keys) == ["slot", "view", "photo", "received", "total"])
        #expect(isNull(progress, "total"))
        let dims = try decode(ThumbnailDimensions.self, #"{"slot": 1, "photo": "unsplash:a", "width": 400, "height": 300}"#)
        #expect(dims == ThumbnailDimensions(slot: 1, photo: "unsplash:a", width: 400, height: 300))
    }

    @Test("prefetch.finished names the item as photo or url, with error null when ok")
    func prefetchFinished() throws {
        let ok = try jsonObject(PrefetchFinished(image: .photo("unsplash:a"), ok: true))
        #expect(ok["photo"] as? String == "unsplash:a" && ok["url"] == nil && isNull(ok, "error"))
        let failed = PrefetchFinished(image: .url("https://x.test/a.jpg"), ok: false, error: RPCError(.notFound, "404"))
        let back = try decode(PrefetchFinished.self, String(decoding: try JSONEncoder().encode(failed), as: UTF8.self))
        #expect(back == failed)
    }

    @Test("download answers {job} and its notifications have the protocol's fields")
    func downloadShapes() throws {
        #expect(try decode(DownloadResult.self, #"{"job": "j-1"}"#).job == "j-1")
        let progress = try jsonObject(DownloadProgress(job: "j-1", received: 10, total: 100, bytesPerSecond: 2.5))
        #expect(Set(progress.keys) == ["job", "received", "total", "bytesPerSecond"])
        let finished = try jsonObject(DownloadFinished(job: "j-1", path: "/home/u/Downloads/a.jpg", bytes: 100, width: 4000, height: 3000))
        #expect(Set(finished.keys) == ["job", "path", "bytes", "width", "height"])
        let failed = try jsonObject(DownloadFailed(job: "j-1", error: RPCError(.forbidden, "outside download roots")))
        let error = try #require(failed["error"] as? [String: Any])
        #expect(error["code"] as? Int == 1010)
        #expect((error["data"] as? [String: Any])?["kind"] as? String == "forbidden")
    }

    @Test("a download job's status writes every field, null where unknown")
    func downloadJob() throws {
        let job = DownloadJob(job: "j-1", photo: "unsplash:a", url: nil, variant: .regular, state: .queued, path: nil,
                              received: 0, total: nil, createdAt: "2026-11-21T14:00:00Z")
        let object = try jsonObject(job)
        #expect(object.count == 13)
        for key in ["url", "path", "total", "width", "height", "error", "endedAt"] { #expect(isNull(object, key), "\(key)") }
        #expect(object["state"] as? String == "queued")
        let list = DownloadListResult(jobs: [job])
        #expect(try decode(DownloadListResult.self, String(decoding: try JSONEncoder().encode(list), as: UTF8.self)) == list)
    }

    @Test("layout frames say where their dimensions came from")
    func layoutResult() throws {
        let text = #"{"frames": [{"photo": "unsplash:a", "column": 0, "x": 0, "y": 0, "width": 300, "height": 225, "dims": "decoded"}, {"photo": "flickr:1", "column": 1, "x": 310, "y": 0, "width": 300, "height": 300, "dims": "unknown"}], "columnHeights": [225, 300]}"#
        let result = try decode(LayoutResult.self, text)
        #expect(result.frames.map(\.dims) == [.decoded, .unknown])
        #expect(result.columnHeights == [225, 300])
        let frame = try #require((try jsonObject(result)["frames"] as? [[String: Any]])?.first)
        #expect(Set(frame.keys) == ["photo", "column", "x", "y", "width", "height", "dims"])
    }

    @Test("layout params as the protocol shows them decode, taking back columnHeights")
    func layoutParams() throws {
        let p = try decodeParams(LayoutParams.self, #"{"photos": ["unsplash:a", "flickr:1"], "columns": 2, "width": 610, "spacing": 10, "columnHeights": [225, 300]}"#)
        #expect(p == LayoutParams(photos: ["unsplash:a", "flickr:1"], columns: 2, width: 610, spacing: 10, columnHeights: [225, 300]))
        #expect(p.columnWidth == 300)
    }

    @Test("stats carries every figure the protocol names")
    func stats() throws {
        let text = #"""
        { "memory": {"entries": 10, "bytes": 2048, "limit": 67108864, "hits": 5, "misses": 2},
          "disk": {"entries": 20, "bytes": 4096, "limit": 1073741824, "hits": 1, "misses": 2},
          "network": {"inFlight": 1, "queued": 0, "requests": 9, "bytesReceived": 123456, "bytesDiscarded": 789},
          "providers": {"unsplash": {"requests": 3, "errors": 0, "rateLimitRemaining": 47}, "flickr": {"requests": 0, "errors": 0, "rateLimitRemaining": null}},
          "sessions": 2, "uptimeSeconds": 61 }
        """#
        let stats = try decode(StatsResult.self, text)
        #expect(stats.network.bytesDiscarded == 789)
        #expect(try #require(stats.providers["flickr"]).rateLimitRemaining == nil)
        let object = try jsonObject(stats)
        #expect(Set(object.keys) == ["memory", "disk", "network", "providers", "sessions", "uptimeSeconds"])
        let flickr = try #require((object["providers"] as? [String: Any])?["flickr"] as? [String: Any])
        #expect(isNull(flickr, "rateLimitRemaining"))
        #expect(Set((object["network"] as? [String: Any])?.keys ?? [:].keys) == ["inFlight", "queued", "requests", "bytesReceived", "bytesDiscarded"])
        #expect(Set((object["memory"] as? [String: Any])?.keys ?? [:].keys) == ["entries", "bytes", "limit", "hits", "misses"])
    }

    @Test("cache.evict and cache.clear params as the protocol shows them decode")
    func cacheParams() throws {
        #expect(try decodeParams(CacheEvictParams.self, #"{"photo": "unsplash:a"}"#).image == .photo("unsplash:a"))
        #expect(try decodeParams(CacheEvictParams.self, #"{"url": "https://x.test/a.jpg"}"#).image == .url("https://x.test/a.jpg"))
        for what in CacheClearTarget.allCases {
            #expect(try decodeParams(CacheClearParams.self, #"{"what": "\#(what.rawValue)"}"#).what == what)
        }
        #expect(paramsError(CacheClearParams.self, "{}")?.data.field == "what")
    }

    @Test("cancel, recycle and download.cancel answer {cancelled: Bool}")
    func cancelled() throws {
        #expect(try jsonObject(CancelledResult(cancelled: false))["cancelled"] as? Bool == false)
        #expect(try decodeParams(ThumbnailRecycleParams.self, #"{"slot": 2, "view": "main"}"#) == ThumbnailRecycleParams(slot: 2))
    }

    @Test("every method and notification name is the contract's spelling")
    func names() {
        #expect(MethodName.allCases.map(\.rawValue) == [
            "hello", "search", "photo.get", "thumbnail.show", "thumbnail.recycle", "prefetch", "prefetch.cancel",
            "download", "download.status", "download.list", "download.cancel", "download.watch", "layout", "stats",
            "cache.evict", "cache.clear", "cancel",
        ])
        #expect(NotificationName.allCases.map(\.rawValue) == [
            "thumbnail.progress", "thumbnail.dimensions", "prefetch.finished", "download.progress", "download.finished", "download.failed",
        ])
        #expect(Methods.PhotoGet.name == .photoGet && Methods.DownloadWatch.name == .downloadWatch)
    }
}
