import Foundation
import ImageCacheProtocol
import Testing

@Suite("Strict params decoding", .timeLimit(.minutes(1)))
struct StrictParamsTests {
    @Test("positional params (an array) are refused with -32602")
    func positional() throws {
        let error = try #require(paramsError(SearchParams.self, #"["cats", 2]"#))
        #expect(error.code == -32602)
        #expect(error.kind == .invalidParams)
        #expect(error.message.contains("positional"))
    }

    @Test("scalar params are refused with -32602")
    func scalar() throws {
        let error = try #require(paramsError(SearchParams.self, #""cats""#))
        #expect(error.kind == .invalidParams)
    }

    @Test("an unknown param name is refused, naming it in data.field")
    func unknownName() throws {
        let error = try #require(paramsError(SearchParams.self, #"{"query": "cats", "pag": 2}"#))
        #expect(error.kind == .invalidParams)
        #expect(error.data.field == "pag")
        #expect(error.message.contains("pag"))
    }

    @Test("the first unknown name alphabetically is the one reported")
    func severalUnknown() throws {
        let error = try #require(paramsError(SearchParams.self, #"{"query": "cats", "zz": 1, "aa": 2}"#))
        #expect(error.data.field == "aa")
    }

    @Test("any param sent to a method that takes none is unknown")
    func paramsForNoParams() throws {
        let error = try #require(paramsError(NoParams.self, #"{"verbose": true}"#))
        #expect(error.data.field == "verbose")
        #expect(error.message.contains("takes no params"))
    }

    @Test("absent and null params are read as {}")
    func absentParams() throws {
        _ = try decodeParams(NoParams.self, nil)
        _ = try decodeParams(NoParams.self, "null")
        _ = try decodeParams(NoParams.self, "{}")
        let error = try #require(paramsError(PhotoGetParams.self, nil))
        #expect(error.data.field == "photo")
    }

    @Test("a missing required param is named")
    func missingRequired() throws {
        let error = try #require(paramsError(LayoutParams.self, #"{"photos": [], "width": 800}"#))
        #expect(error.kind == .invalidParams)
        #expect(error.data.field == "columns")
        #expect(error.message.contains("missing"))
    }

    @Test("an ill-typed param is named, with the type it must have")
    func illTyped() throws {
        let error = try #require(paramsError(SearchParams.self, #"{"query": "cats", "page": "2"}"#))
        #expect(error.data.field == "page")
        #expect(error.message.contains("integer"))
        let boolError = try #require(paramsError(SearchParams.self, #"{"query": "cats", "safe": "yes"}"#))
        #expect(boolError.data.field == "safe")
        #expect(boolError.message.contains("boolean"))
    }

    @Test("null for a required param is named")
    func nullRequired() throws {
        let error = try #require(paramsError(ThumbnailRecycleParams.self, #"{"slot": null}"#))
        #expect(error.data.field == "slot")
    }

    @Test("a wrong element inside a list is named with its index")
    func listElement() throws {
        let error = try #require(paramsError(LayoutParams.self, #"{"photos": ["unsplash:a", 7], "columns": 2, "width": 800}"#))
        #expect(error.data.field == "photos[1]")
    }

    @Test("an unknown enum value lists the accepted values")
    func enumValue() throws {
        let error = try #require(paramsError(DownloadParams.self, #"{"photo": "unsplash:a", "variant": "huge"}"#))
        #expect(error.data.field == "variant")
        #expect(error.message.contains("full, regular"))
        let clear = try #require(paramsError(CacheClearParams.self, #"{"what": "everything"}"#))
        #expect(clear.data.field == "what")
        #expect(clear.message.contains("thumbnails, searches, all"))
    }

    @Test("photo and url together are refused")
    func photoAndURL() throws {
        let error = try #require(paramsError(ThumbnailShowParams.self, #"{"slot": 1, "photo": "unsplash:a", "url": "https://x.test/a.jpg"}"#))
        #expect(error.kind == .invalidParams)
        #expect(error.data.field == "url")
        #expect(error.message.contains("mutually exclusive"))
    }

    @Test("neither photo nor url is refused")
    func neitherPhotoNorURL() throws {
        #expect(paramsError(DownloadParams.self, #"{}"#)?.data.field == "photo")
        #expect(paramsError(CacheEvictParams.self, #"{}"#)?.data.field == "photo")
        let error = try #require(paramsError(ThumbnailShowParams.self, #"{"slot": 0}"#))
        #expect(error.data.field == "photo")
    }

    @Test("a malformed photo id is refused")
    func malformedPhotoID() throws {
        for id in ["abc", ":abc", "unsplash:"] {
            let error = try #require(paramsError(PhotoGetParams.self, #"{"photo": "\#(id)"}"#))
            #expect(error.data.field == "photo")
        }
        let error = try #require(paramsError(PrefetchParams.self, #"{"photos": ["unsplash:a", "b"]}"#))
        #expect(error.data.field == "photos[1]")
    }

    @Test("a url that is not absolute http(s) is refused")
    func badURL() throws {
        let error = try #require(paramsError(ThumbnailShowParams.self, #"{"slot": 0, "url": "ftp://x.test/a.jpg"}"#))
        #expect(error.data.field == "url")
        let prefetch = try #require(paramsError(PrefetchParams.self, #"{"urls": ["/a.jpg"]}"#))
        #expect(prefetch.data.field == "urls[0]")
        // The scheme is matched ignoring ASCII case only; something must follow it.
        for url in [#"http\u001a//x.test/a"#, #"http:/\u000fx.test/a"#, #"https://\u0301x.test/a"#, "https://", "http://", "htt", "", "https:x.test/abc"] {
            #expect(paramsError(ThumbnailShowParams.self, #"{"slot": 0, "url": "\#(url)"}"#)?.data.field == "url", "\(url)")
        }
        for url in ["HTTPS://x.test/a", "Http://xy", "https://é"] {
            #expect(paramsError(ThumbnailShowParams.self, #"{"slot": 0, "url": "\#(url)"}"#) == nil, "\(url)")
        }
    }

    @Test("search needs exactly one of query and feed")
    func queryOrFeed() throws {
        #expect(paramsError(SearchParams.self, #"{}"#)?.data.field == "query")
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "feed": "recent"}"#)?.data.field == "feed")
        #expect(paramsError(SearchParams.self, #"{"feed": "oldest"}"#)?.data.field == "feed")
        #expect(paramsError(SearchParams.self, #"{"feed": "recent"}"#) == nil)
    }

    @Test("search numbers out of range are refused, naming the param")
    func searchRanges() {
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "page": 0}"#)?.data.field == "page")
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "page": 0}"#)?.message.contains("1 or more") == true)
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "page": 1}"#) == nil)
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "perPage": 0}"#)?.data.field == "perPage")
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "debounceMs": -1}"#)?.data.field == "debounceMs")
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "debounceMs": 10001}"#)?.data.field == "debounceMs")
        #expect(paramsError(SearchParams.self, #"{"query": "cats", "provider": ""}"#)?.data.field == "provider")
    }

    @Test("a short query is not a params error: the engine answers 1001")
    func shortQueryPasses() throws {
        let params = try decodeParams(SearchParams.self, #"{"query": "ab"}"#)
        #expect(params.query == "ab")
    }

    @Test("thumbnail params out of range are refused, naming the param")
    func thumbnailRanges() {
        #expect(paramsError(ThumbnailShowParams.self, #"{"slot": -1, "photo": "unsplash:a"}"#)?.data.field == "slot")
        #expect(paramsError(ThumbnailShowParams.self, #"{"slot": 0, "photo": "unsplash:a", "size": 0}"#)?.data.field == "size")
        #expect(paramsError(ThumbnailShowParams.self, #"{"slot": 0, "photo": "unsplash:a", "size": 8193}"#)?.data.field == "size")
        #expect(paramsError(ThumbnailShowParams.self, #"{"slot": 0, "photo": "unsplash:a", "view": ""}"#)?.data.field == "view")
        #expect(paramsError(ThumbnailRecycleParams.self, #"{"slot": -2}"#)?.data.field == "slot")
        #expect(paramsError(PrefetchParams.self, #"{"photos": [], "size": 0}"#)?.data.field == "size")
    }

    @Test("prefetch needs photos or urls")
    func prefetchNeedsItems() {
        #expect(paramsError(PrefetchParams.self, #"{"size": 256}"#)?.data.field == "photos")
        #expect(paramsError(PrefetchParams.self, #"{"urls": []}"#) == nil)
    }

    @Test("layout geometry is checked, naming the param")
    func layoutRanges() {
        let base = #""photos": ["unsplash:a"]"#
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 0, \"width\": 800}")?.data.field == "columns")
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 1001, \"width\": 800}")?.data.field == "columns")
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 2, \"width\": 0}")?.data.field == "width")
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 2, \"width\": 800, \"spacing\": -1}")?.data.field == "spacing")
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 3, \"width\": 20, \"spacing\": 10}")?.data.field == "spacing")
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 2, \"width\": 800, \"columnHeights\": [0]}")?.data.field == "columnHeights")
        #expect(paramsError(LayoutParams.self, "{\(base), \"columns\": 2, \"width\": 800, \"columnHeights\": [0, -5]}")?.data.field == "columnHeights[1]")
    }

    @Test("download directory must be absolute and filename non-empty")
    func downloadChecks() {
        #expect(paramsError(DownloadParams.self, #"{"photo": "unsplash:a", "directory": "pics"}"#)?.data.field == "directory")
        #expect(paramsError(DownloadParams.self, #"{"photo": "unsplash:a", "filename": ""}"#)?.data.field == "filename")
        #expect(paramsError(DownloadJobParams.self, #"{"job": ""}"#)?.data.field == "job")
        #expect(paramsError(DownloadJobParams.self, #"{}"#)?.data.field == "job")
    }

    @Test("cancel takes a string or integer id, nothing else")
    func cancelID() throws {
        #expect(try decodeParams(CancelParams.self, #"{"id": 7}"#).id == .int(7))
        #expect(try decodeParams(CancelParams.self, #"{"id": "a"}"#).id == .string("a"))
        #expect(paramsError(CancelParams.self, #"{"id": [7]}"#)?.data.field == "id")
        #expect(paramsError(CancelParams.self, #"{}"#)?.data.field == "id")
    }

    @Test("an explicit null for an optional param means its default")
    func nullOptional() throws {
        let params = try decodeParams(SearchParams.self, #"{"query": "cats", "page": null, "safe": null}"#)
        #expect(params.page == 1)
        #expect(params.safe == true)
    }
}
