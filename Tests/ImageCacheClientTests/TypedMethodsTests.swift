import Foundation
import ImageCacheClient
import Testing
import TestSupport

/// Each convenience method sends its contract method name with the params the contract
/// names, and reads the contract's result shape.
@Suite("Typed methods of ImageCacheConnection", .timeLimit(.minutes(2)))
struct TypedMethodsTests {
    /// Runs `call`, checks the request the peer saw, answers `result`, and returns the call's value.
    func exchange<T: Sendable>(
        _ peer: ScriptedPeer, _ events: inout AsyncStream<ScriptedPeer.Event>.Iterator,
        method: String, params: [String: JSONValue], result: String,
        _ call: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let task = Task { try await call() }
        let request = try await events.nextMessage()
        #expect(request["method"] == .string(method))
        #expect(request["params"] == .object(params), "\(method)")
        peer.answer(request["id"]!, result: result)
        return try await task.value
    }

    @Test("search, photo.get, thumbnail.show and thumbnail.recycle")
    func browsing() async throws {
        try await withPeer { peer, c, events in
            let page = try await exchange(peer, &events, method: "search",
                                          params: ["query": .string("cats"), "page": .int(2), "debounceMs": .int(0), "safe": .bool(true), "provider": .string("flickr")],
                                          result: Canned.search) { try await c.search("cats", provider: "flickr", page: 2) }
            #expect(page.photos.count == 1)
            let photo = try await exchange(peer, &events, method: "photo.get", params: ["photo": .string("unsplash:a")],
                                           result: Canned.photo) { try await c.photo("unsplash:a") }
            #expect(photo.width == 400)
            let shown = try await exchange(peer, &events, method: "thumbnail.show",
                                           params: ["slot": .int(3), "url": .string("https://x.test/a.jpg"), "inline": .bool(false), "view": .string("main")],
                                           result: Canned.thumbnail) { try await c.showThumbnail(ThumbnailShowParams(slot: 3, image: .url("https://x.test/a.jpg"))) }
            #expect(shown.bytes == 900)
            let recycled = try await exchange(peer, &events, method: "thumbnail.recycle", params: ["slot": .int(3), "view": .string("side")],
                                              result: #"{"cancelled":false}"#) { try await c.recycleThumbnail(slot: 3, view: "side") }
            #expect(recycled.cancelled == false)
        }
    }

    @Test("prefetch and prefetch.cancel")
    func prefetching() async throws {
        try await withPeer { peer, c, events in
            let queued = try await exchange(peer, &events, method: "prefetch", params: ["photos": .array([.string("unsplash:a")]), "size": .int(128)],
                                            result: #"{"queued":1}"#) { try await c.prefetch(PrefetchParams(photos: ["unsplash:a"], size: 128)) }
            #expect(queued.queued == 1)
            let cancelled = try await exchange(peer, &events, method: "prefetch.cancel", params: [:],
                                               result: #"{"cancelled":4}"#) { try await c.cancelPrefetch() }
            #expect(cancelled.cancelled == 4)
        }
    }

    @Test("download and its job methods")
    func downloading() async throws {
        try await withPeer { peer, c, events in
            let started = try await exchange(peer, &events, method: "download",
                                             params: ["photo": .string("unsplash:a"), "variant": .string("regular"), "directory": .string("/d"), "overwrite": .bool(false)],
                                             result: #"{"job":"j1"}"#) { try await c.download(DownloadParams(image: .photo("unsplash:a"), variant: .regular, directory: "/d")) }
            #expect(started.job == "j1")
            let status = try await exchange(peer, &events, method: "download.status", params: ["job": .string("j1")],
                                            result: Canned.job) { try await c.downloadStatus(job: "j1") }
            #expect(status.state == .running)
            let list = try await exchange(peer, &events, method: "download.list", params: [:],
                                          result: #"{"jobs":[\#(Canned.job)]}"#) { try await c.downloads() }
            #expect(list.jobs.map(\.job) == ["j1"])
            let watched = try await exchange(peer, &events, method: "download.watch", params: ["job": .string("j1")],
                                             result: Canned.job) { try await c.watchDownload(job: "j1") }
            #expect(watched.received == 5)
            let cancelled = try await exchange(peer, &events, method: "download.cancel", params: ["job": .string("j1")],
                                               result: #"{"cancelled":true}"#) { try await c.cancelDownload(job: "j1") }
            #expect(cancelled.cancelled)
        }
    }

    @Test("layout, stats, cache.evict, cache.clear and cancel")
    func housekeeping() async throws {
        try await withPeer { peer, c, events in
            let layout = try await exchange(peer, &events, method: "layout",
                                            params: ["photos": .array([.string("unsplash:a")]), "columns": .int(2), "width": .int(610), "spacing": .int(10)],
                                            result: #"{"frames":[{"photo":"unsplash:a","column":0,"x":0,"y":0,"width":300,"height":225,"dims":"provider"}],"columnHeights":[225,0]}"#) {
                try await c.layout(LayoutParams(photos: ["unsplash:a"], columns: 2, width: 610, spacing: 10))
            }
            #expect(layout.frames.first?.dims == .provider)
            let stats = try await exchange(peer, &events, method: "stats", params: [:], result: Canned.stats) { try await c.stats() }
            #expect(stats.uptimeSeconds == 2)
            let evicted = try await exchange(peer, &events, method: "cache.evict", params: ["photo": .string("unsplash:a")],
                                             result: #"{"removed":2,"bytes":900}"#) { try await c.evict(.photo("unsplash:a")) }
            #expect(evicted.removed == 2)
            let cleared = try await exchange(peer, &events, method: "cache.clear", params: ["what": .string("all")],
                                             result: #"{"removed":9,"bytes":9000}"#) { try await c.clearCache(.all) }
            #expect(cleared.bytes == 9000)
            let cancel = try await exchange(peer, &events, method: "cancel", params: ["id": .int(42)],
                                            result: #"{"cancelled":false}"#) { try await c.cancel(requestID: .int(42)) }
            #expect(cancel.cancelled == false)
        }
    }
}
