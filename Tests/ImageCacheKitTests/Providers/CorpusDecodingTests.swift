import Foundation
import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Providers decode every recorded corpus answer", .timeLimit(.minutes(2)))
struct CorpusDecodingTests {
    let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash))
    let flickr = FlickrProvider(settings: CorpusAPI.settings(.flickr))
    let pixabay = PixabayProvider(settings: CorpusAPI.settings(.pixabay))

    func search(_ text: String, perPage: Int, page: Int = 1) -> SearchQuery {
        SearchQuery(term: .query(text), page: page, perPage: perPage)
    }

    // MARK: Unsplash

    @Test("Unsplash search envelopes give their totals, pages and photo ids", arguments: [
        ("unsplash/unsplash-php_search_photos_paris", 3364, 337, "ZzbBpjNBJD4"),
        ("unsplash/pyunsplash_search_photos_query_blue", 30888, 3089, "48arRKRV2Eo"),
        ("unsplash/unsplash_client_search_photos_test", 509, 51, "s9CC2SKySJM"),
    ])
    func unsplashSearch(file: String, total: Int, totalPages: Int, firstID: String) throws {
        let page = try unsplash.decodeSearch(CorpusAPI.response(file), for: search("paris", perPage: 10))
        #expect(page.photos.count == 10)
        #expect(page.skipped == 0)
        #expect(page.total == total)
        #expect(page.totalPages == totalPages)
        #expect(page.hasMore)
        #expect(page.photos[0].id == "unsplash:\(firstID)")
        for p in page.photos {
            #expect(p.photo.provider == "unsplash")
            #expect(p.photo.width != nil && p.photo.height != nil)
            #expect(p.photo.thumbURL.contains("images.unsplash.com"))
            #expect(p.resizableURL != nil)
            #expect(p.photo.author.profileURL?.contains("utm_source=imagecached&utm_medium=referral") == true)
            #expect(p.photo.pageURL?.contains("utm_medium=referral") == true)
        }
    }

    @Test("Unsplash list and random answers are bare arrays", arguments: [
        ("unsplash/unsplash-php_photos_list_latest", 10, 146_831),
        ("unsplash/unsplash_client_photos_list_per_page_2", 2, 220_922),
        ("unsplash/pyunsplash_photos_list_page_2", 10, nil),
        ("unsplash/pyunsplash_photos_random_count_2", 2, nil),
        ("unsplash/unsplash_client_photos_random_count_2", 2, nil),
    ] as [(String, Int, Int?)])
    func unsplashLists(file: String, count: Int, xTotal: Int?) throws {
        let query = SearchQuery(term: .recent, page: 1, perPage: count)
        let page = try unsplash.decodeSearch(CorpusAPI.response(file), for: query)
        #expect(page.photos.count == count)
        if let xTotal {
            #expect(page.total == xTotal)
            #expect(page.totalPages == (xTotal + count - 1) / count)
        } else {
            // Without X-Total a full page implies at least one more.
            #expect(page.hasMore)
        }
    }

    @Test("Unsplash photo details carry EXIF, tags, views, downloads and alt text")
    func unsplashDetails() throws {
        let p = try unsplash.decodePhoto(CorpusAPI.response("unsplash/unsplash_client_photo_vUGBY_MnSsg"), id: "vUGBY_MnSsg")
        #expect(p.id == "unsplash:vUGBY_MnSsg")
        #expect(p.photo.width == 5000 && p.photo.height == 6438)
        #expect(p.photo.description == "black and white checkered textile")
        #expect(p.photo.author.name == "Hao Wen")
        #expect(p.photo.author.profileURL == "https://unsplash.com/@oweni?utm_source=imagecached&utm_medium=referral")
        #expect(p.photo.likes == 37)
        #expect(p.photo.views == 134_287)
        #expect(p.photo.downloads == 1012)
        #expect(p.photo.uploadedAt == "2021-02-02T08:10:25Z")
        #expect(p.photo.exif == Photo.EXIF(make: "Leica", model: "Leica M6", exposureTime: "1/1000", aperture: "4",
                                           focalLength: "50.0", iso: 400))
        #expect(p.photo.tags?.contains("rug") == true)
        #expect(p.photo.location == nil) // every location field is null in this answer
        #expect(p.downloadLocation?.hasPrefix("https://api.unsplash.com/photos/vUGBY_MnSsg/download") == true)
    }

    @Test("Other Unsplash single-photo answers decode", arguments: [
        ("unsplash/unsplash-php_photo_ZUaqqMxtxYk", "ZUaqqMxtxYk", 4608, 3072),
        ("unsplash/unsplash-php_photo_random", nil, nil, nil),
    ] as [(String, String?, Int?, Int?)])
    func unsplashSingle(file: String, id: String?, width: Int?, height: Int?) throws {
        let p = try unsplash.decodePhoto(CorpusAPI.response(file), id: id ?? "x")
        if let id { #expect(p.id == "unsplash:\(id)") }
        if let width { #expect(p.photo.width == width && p.photo.height == height) }
        #expect(p.photo.fullURL?.isEmpty == false)
    }

    @Test("Unsplash download-tracking answers give the image URL", arguments: [
        "unsplash/unsplash-php_photo_download", "unsplash/unsplash_client_photo_download",
    ])
    func unsplashDownload(file: String) throws {
        let url = try #require(try unsplash.decodeDownloadTracking(CorpusAPI.response(file)))
        #expect(url.hasPrefix("https://images.unsplash.com/photo-"))
        #expect(url.contains("&q=85"))
    }

    @Test("Unsplash description falls back to alt text and stays null when both are null")
    func unsplashDescriptionFallback() throws {
        let page = try unsplash.decodeSearch(CorpusAPI.response("unsplash/unsplash-php_photos_list_latest"),
                                             for: SearchQuery(term: .recent, perPage: 10))
        let noText = page.photos.first { $0.id == "unsplash:NtyU2piHwgY" }
        #expect(noText != nil && noText?.photo.description == nil)
        #expect(page.photos.contains { $0.photo.description != nil })
    }

    // MARK: Flickr

    @Test("Flickr search with every url_* extra uses the listed sizes, mixed strings and numbers")
    func flickrAllSizes() throws {
        let page = try flickr.decodeSearch(CorpusAPI.response("flickr/flickrie_photos_search_all_url_extras"),
                                           for: search("x y z", perPage: 100))
        #expect(page.total == 98)
        #expect(page.totalPages == 1)
        #expect(!page.hasMore)
        #expect(page.photos.count == 97) // one record is a video
        #expect(page.skipped == 1)
        let p = try #require(page.photos.first { $0.id == "flickr:7093101501" })
        #expect(p.photo.thumbURL == "http://farm8.staticflickr.com/7090/7093101501_9337f28800_m.jpg")
        #expect(p.photo.author.name == "Janko Marohnić")
        #expect(p.photo.author.profileURL == "https://www.flickr.com/people/67131352@N04/")
        #expect(p.photo.pageURL == "https://www.flickr.com/photos/67131352@N04/7093101501")
        // No url_o and no o_dims: the largest listed size stands for the original.
        #expect(p.photo.width == 2048 && p.photo.height == 1536)
        #expect(p.photo.fullURL == "http://farm8.staticflickr.com/7090/7093101501_2e55ed8fbf_k.jpg")
        #expect(p.variant(forWidth: 240).url.hasSuffix("_9337f28800_m.jpg"))
        #expect(p.variant(forWidth: 500).url.hasSuffix("7093101501_9337f28800.jpg"))
        #expect(p.variant(forWidth: 501).url.hasSuffix("_z.jpg"))
        #expect(p.variant(forWidth: 1500).url.hasSuffix("_94c7b7c5f7_h.jpg"))
        #expect(p.variant(forWidth: 9000).url.hasSuffix("_2e55ed8fbf_k.jpg"))
        #expect(p.photo.description == "IMG_0917") // empty description → title
    }

    @Test("Flickr search without url extras builds live.staticflickr.com URLs from server and secret")
    func flickrBuiltURLs() throws {
        let page = try flickr.decodeSearch(CorpusAPI.response("flickr/flickrie_photos_search_user_extras_media"),
                                           for: search("abc", perPage: 100))
        #expect(page.total == 98) // "total" is a string here
        #expect(page.photos.count == 97)
        let p = try #require(page.photos.first { $0.id == "flickr:7093101501" })
        #expect(p.photo.thumbURL == "https://live.staticflickr.com/7090/7093101501_9337f28800_m.jpg")
        #expect(p.photo.fullURL == "https://live.staticflickr.com/7090/7093101501_9337f28800_b.jpg")
        #expect(p.variant(forWidth: 400).url == "https://live.staticflickr.com/7090/7093101501_9337f28800.jpg")
        #expect(p.photo.width == nil && p.photo.author.name == "67131352@N04")
    }

    @Test("Flickr getRecent reports a numeric total")
    func flickrRecent() throws {
        let page = try flickr.decodeSearch(CorpusAPI.response("flickr/flickrie_photos_getRecent_extras_media"),
                                           for: SearchQuery(term: .recent, perPage: 100))
        #expect(page.total == 1000)
        #expect(page.totalPages == 10)
        #expect(page.hasMore)
        #expect(page.photos.count == 100)
        #expect(page.photos[0].id == "flickr:7309334238")
    }

    @Test("A Flickr video is not a photo")
    func flickrVideoSkipped() throws {
        let page = try flickr.decodeSearch(CorpusAPI.response("flickr/flickrie_photos_search_videos_only"),
                                           for: search("abc", perPage: 100))
        #expect(page.photos.isEmpty)
        #expect(page.skipped == 1)
        #expect(page.total == 1)
    }

    // MARK: Pixabay

    @Test("Pixabay search pages count totalHits, not total", arguments: [
        ("pixabay/sembamax_search_images_60hits", 60, 500, 2277),
        ("pixabay/msddev_search_images_5hits", 5, 500, 2_305_192),
        ("pixabay/aliazaz_search_images_3hits_favorites_field", 3, 500, 2_416_718),
        ("pixabay/webeweb_docs_example_search_images", 1, 500, 195_893),
    ])
    func pixabaySearch(file: String, count: Int, total: Int, firstID: Int) throws {
        let page = try pixabay.decodeSearch(CorpusAPI.response(file), for: search("fruit", perPage: 20))
        #expect(page.photos.count == count)
        #expect(page.total == total)
        #expect(page.totalPages == 25)
        #expect(page.photos[0].id == "pixabay:\(firstID)")
        for p in page.photos {
            #expect(p.photo.thumbURL.contains("_150."))
            #expect(p.photo.width != nil && p.photo.height != nil)
            #expect(p.photo.author.profileURL?.hasPrefix("https://pixabay.com/users/") == true)
            #expect(p.variants.contains { $0.name == "webformat" && $0.width != nil })
        }
    }

    @Test("Pixabay hit fields: author, likes, tags, sizes of large renditions")
    func pixabayFields() throws {
        let page = try pixabay.decodeSearch(CorpusAPI.response("pixabay/webeweb_docs_example_search_images"),
                                            for: search("flower", perPage: 20))
        let p = try #require(page.photos.first)
        #expect(p.photo.author == Photo.Author(name: "Josch13", profileURL: "https://pixabay.com/users/Josch13-48777/"))
        #expect(p.photo.likes == 5)
        #expect(p.photo.tags == ["blossom", "bloom", "flower"])
        #expect(p.photo.width == 4000 && p.photo.height == 2250)
        #expect(p.photo.fullURL == "https://pixabay.com/get/ed6a9364a9fd0a76647.jpg")
        #expect(p.variant(forWidth: 700).name == "large")
        #expect(p.variant(forWidth: 700).width == 1280 && p.variant(forWidth: 700).height == 720)
        #expect(p.variant(forWidth: 1500).name == "fullHD")
        #expect(p.variant(forWidth: 600).name == "webformat")
    }

    @Test("A Pixabay video answer holds no photos")
    func pixabayVideos() throws {
        let page = try pixabay.decodeSearch(CorpusAPI.response("pixabay/webeweb_docs_example_search_videos"),
                                            for: search("flower", perPage: 20))
        #expect(page.photos.isEmpty)
        #expect(page.skipped == 1)
        #expect(page.total == 42)
    }

    @Test("Flickr's recorded getInfo of a video is a video: no full image, its still frame as thumbnail, dates named")
    func flickrVideoInfo() throws {
        let p = try flickr.decodePhoto(CorpusAPI.response("flickr/flickrie_photos_getInfo_video"), id: "7093038981")
        #expect(p.id == "flickr:7093038981" && p.photo.media == .video && p.photo.fullURL == nil)
        #expect(p.photo.thumbURL == "https://live.staticflickr.com/5457/7093038981_9a616b9f6e_m.jpg")
        #expect(p.photo.takenAt == "2012-04-19T03:44:55Z" && p.photo.uploadedAt == "2012-04-19T10:44:55Z")
        #expect(p.photo.tags == ["Tag"] && p.photo.location == Photo.Location(city: "Zagreb", country: "Croatia"))
        #expect(p.photo.author.name == "Janko Marohnić")
        #expect(p.photo.pageURL == "http://www.flickr.com/photos/67131352@N04/7093038981/")
    }

    @Test("Every body in the corpus is read by some test above")
    func corpusCoverage() throws {
        let covered: Set<String> = [
            "unsplash-php_search_photos_paris", "pyunsplash_search_photos_query_blue", "unsplash_client_search_photos_test",
            "unsplash-php_photos_list_latest", "unsplash_client_photos_list_per_page_2", "pyunsplash_photos_list_page_2",
            "pyunsplash_photos_random_count_2", "unsplash_client_photos_random_count_2", "unsplash_client_photo_vUGBY_MnSsg",
            "unsplash-php_photo_ZUaqqMxtxYk", "unsplash-php_photo_random", "unsplash-php_photo_download",
            "unsplash_client_photo_download", "unsplash-php_error_401_invalid_token", "unsplash-php_error_404_user_not_found",
            "flickrie_photos_search_all_url_extras", "flickrie_photos_search_user_extras_media",
            "flickrie_photos_getRecent_extras_media", "flickrie_photos_search_videos_only", "flickrie_photos_getInfo_video",
            "flickrie_error_100_invalid_api_key", "flickrie_error_1_photoset_not_found",
            "sembamax_search_images_60hits", "msddev_search_images_5hits", "aliazaz_search_images_3hits_favorites_field",
            "webeweb_docs_example_search_images", "webeweb_docs_example_search_videos",
        ]
        var bodies: Set<String> = []
        for folder in ["api/unsplash", "api/flickr", "api/pixabay"] {
            for path in try Corpus.files(in: folder, withExtension: "json") where !path.hasSuffix(".http.json") {
                bodies.insert(String(path.split(separator: "/").last!.dropLast(5)))
            }
        }
        #expect(bodies == covered)
    }
}
