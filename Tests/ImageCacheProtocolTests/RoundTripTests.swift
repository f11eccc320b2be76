import Foundation
import ImageCacheProtocol
import Testing

/// What the client encodes, the server's strict decoder reads back unchanged: the two ends
/// of the socket agree on every params type.
@Suite("Params round trips", .timeLimit(.minutes(1)))
struct RoundTripTests {
    func roundTrip<T: RPCParams & Equatable>(_ value: T) throws -> T {
        try StrictParamsDecoder.decodeAndValidate(T.self, from: JSONValue(encoding: value))
    }

    @Test("every params type survives client encoding and strict server decoding")
    func everyParams() throws {
        #expect(try roundTrip(NoParams()) == NoParams())
        let search = SearchParams(query: "café & #1 + x", provider: "pixabay", page: 3, perPage: 20, debounceMs: 100, channel: "c", safe: false)
        #expect(try roundTrip(search) == search)
        #expect(try roundTrip(SearchParams(feed: .recent)) == SearchParams(feed: .recent))
        #expect(try roundTrip(PhotoGetParams(photo: "flickr:43213681030")) == PhotoGetParams(photo: "flickr:43213681030"))
        let show = ThumbnailShowParams(slot: 9, image: .photo("pixabay:195893"), size: 512, inline: true, view: "side")
        #expect(try roundTrip(show) == show)
        #expect(try roundTrip(ThumbnailRecycleParams(slot: 9, view: "side")) == ThumbnailRecycleParams(slot: 9, view: "side"))
        let prefetch = PrefetchParams(photos: ["unsplash:a"], urls: ["https://x.test/b.png"], size: 128)
        #expect(try roundTrip(prefetch) == prefetch)
        #expect(try roundTrip(PrefetchCancelParams(urls: ["https://x.test/b.png"])) == PrefetchCancelParams(urls: ["https://x.test/b.png"]))
        let download = DownloadParams(image: .url("https://x.test/b.png"), variant: .regular, directory: "/tmp/d", filename: "b.png", overwrite: true)
        #expect(try roundTrip(download) == download)
        #expect(try roundTrip(DownloadJobParams(job: "j")) == DownloadJobParams(job: "j"))
        let layout = LayoutParams(photos: ["unsplash:a"], columns: 2, width: 801.5, spacing: 1.5, columnHeights: [0, 12.25])
        #expect(try roundTrip(layout) == layout)
        #expect(try roundTrip(CacheEvictParams(image: .photo("unsplash:a"))) == CacheEvictParams(image: .photo("unsplash:a")))
        #expect(try roundTrip(CacheClearParams(what: .searches)) == CacheClearParams(what: .searches))
        #expect(try roundTrip(CancelParams(id: .string("x"))) == CancelParams(id: .string("x")))
    }

    @Test("a typed notification becomes an RPCNotification and back")
    func notifications() throws {
        let payloads: [ServerNotification] = [
            .thumbnailProgress(ThumbnailProgress(slot: 1, photo: nil, received: 5, total: 10)),
            .thumbnailDimensions(ThumbnailDimensions(slot: 1, photo: "a:b", width: 2, height: 3)),
            .prefetchFinished(PrefetchFinished(image: .photo("a:b"), ok: true)),
            .downloadProgress(DownloadProgress(job: "j", received: 1, total: nil, bytesPerSecond: 0)),
            .downloadFinished(DownloadFinished(job: "j", path: "/p", bytes: 1, width: 1, height: 1)),
            .downloadFailed(DownloadFailed(job: "j", error: RPCError(.timeout, "stalled"))),
        ]
        for payload in payloads {
            let notification: RPCNotification
            switch payload {
            case .thumbnailProgress(let p): notification = try RPCNotification(p)
            case .thumbnailDimensions(let p): notification = try RPCNotification(p)
            case .prefetchFinished(let p): notification = try RPCNotification(p)
            case .downloadProgress(let p): notification = try RPCNotification(p)
            case .downloadFinished(let p): notification = try RPCNotification(p)
            case .downloadFailed(let p): notification = try RPCNotification(p)
            case .other(let n): notification = n
            }
            let line = try JSONEncoder().encode(notification)
            let back = try JSONDecoder().decode(RPCNotification.self, from: line)
            #expect(try ServerNotification(back) == payload)
        }
    }

    @Test("a notification with a name this build does not know is kept as it came")
    func unknownNotification() throws {
        let n = RPCNotification(method: "search.progress", params: .object(["x": .int(1)]))
        #expect(try ServerNotification(n) == .other(n))
    }

    @Test("a known notification with the wrong shape is an error, not a silent drop")
    func malformedNotification() {
        #expect(throws: (any Error).self) {
            try ServerNotification(RPCNotification(method: "download.finished", params: .object(["job": .int(1)])))
        }
    }

    @Test("a typed result fills a response and reads back")
    func responses() throws {
        let response = try RPCResponse(id: .int(1), encoding: CancelledResult(cancelled: true))
        let back = try JSONDecoder().decode(RPCResponse.self, from: JSONEncoder().encode(response))
        #expect(try back.result?.decode(as: CancelledResult.self) == CancelledResult(cancelled: true))
    }
}
