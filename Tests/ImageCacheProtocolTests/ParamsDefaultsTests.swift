import Foundation
import ImageCacheProtocol
import Testing

@Suite("Params defaults from the contract", .timeLimit(.minutes(1)))
struct ParamsDefaultsTests {
    @Test("search: page 1, debounceMs 0, safe true, the rest unset")
    func search() throws {
        let p = try decodeParams(SearchParams.self, #"{"query": "cats"}"#)
        #expect(p == SearchParams(query: "cats"))
        #expect(p.page == 1 && p.debounceMs == 0 && p.safe == true)
        #expect(p.feed == nil && p.provider == nil && p.perPage == nil && p.channel == nil)
    }

    @Test("thumbnail.show: size from config, inline false, view main")
    func thumbnailShow() throws {
        let p = try decodeParams(ThumbnailShowParams.self, #"{"slot": 3, "photo": "unsplash:a"}"#)
        #expect(p == ThumbnailShowParams(slot: 3, image: .photo("unsplash:a")))
        #expect(p.size == nil && p.inline == false && p.view == "main")
    }

    @Test("thumbnail.recycle: view main")
    func thumbnailRecycle() throws {
        #expect(try decodeParams(ThumbnailRecycleParams.self, #"{"slot": 3}"#).view == "main")
    }

    @Test("download: variant full, overwrite false, no directory or filename")
    func download() throws {
        let p = try decodeParams(DownloadParams.self, #"{"url": "https://images.test/a.jpg"}"#)
        #expect(p == DownloadParams(image: .url("https://images.test/a.jpg")))
        #expect(p.variant == .full && p.overwrite == false && p.directory == nil && p.filename == nil)
    }

    @Test("layout: spacing 0, no column heights")
    func layout() throws {
        let p = try decodeParams(LayoutParams.self, #"{"photos": ["unsplash:a"], "columns": 3, "width": 900}"#)
        #expect(p.spacing == 0 && p.columnHeights == nil)
        #expect(p.columnWidth == 300)
    }

    @Test("prefetch: size from config")
    func prefetch() throws {
        let p = try decodeParams(PrefetchParams.self, #"{"photos": ["unsplash:a"]}"#)
        #expect(p.size == nil && p.urls == nil)
    }

    @Test("prefetch.cancel with no items cancels all of the session's prefetches")
    func prefetchCancel() throws {
        #expect(try decodeParams(PrefetchCancelParams.self, nil).cancelsAll)
        #expect(try !decodeParams(PrefetchCancelParams.self, #"{"photos": []}"#).cancelsAll)
    }

    @Test("the Swift initialisers carry the same defaults as the wire")
    func swiftDefaults() throws {
        let swift = SearchParams(query: "cats")
        let wire = try decodeParams(SearchParams.self, #"{"query": "cats"}"#)
        #expect(swift == wire)
        #expect(LayoutParams(photos: [], columns: 2, width: 10).spacing == 0)
        #expect(DownloadParams(image: .photo("a:b")).variant == .full)
    }
}
