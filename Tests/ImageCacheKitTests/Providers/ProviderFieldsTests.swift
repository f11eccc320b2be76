import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// The protocol's rules for what providers send that is not a plain photo: videos, paging past
/// the end, retry hints, dimensions of copies, and bodies with fields of the wrong shape.
@Suite("Provider fields: media, paging, retry hints, dimensions, bad records", .timeLimit(.minutes(2)))
struct ProviderFieldsTests {
    let unsplash = UnsplashProvider(settings: CorpusAPI.settings(.unsplash))
    let flickr = FlickrProvider(settings: CorpusAPI.settings(.flickr))
    let pixabay = PixabayProvider(settings: CorpusAPI.settings(.pixabay))

    private func body(_ object: Any) throws -> HTTPResponse {
        HTTPResponse(status: 200, headers: [], body: [UInt8](try JSONSerialization.data(withJSONObject: object)))
    }

    @Test("a Flickr getInfo of a video has media video and no full-image URL; its dates keep their names")
    func flickrVideoInfo() throws {
        let info: [String: Any] = [
            "stat": "ok",
            "photo": ["id": "24379963431", "secret": "abc", "server": "1", "media": "video",
                      "owner": ["nsid": "1@N00"], "title": ["_content": "clip"],
                      "dates": ["posted": "1453135407", "taken": "2015-12-16 10:20:30", "takenunknown": "0"]],
        ]
        let p = try flickr.decodePhoto(try body(info), id: "24379963431")
        #expect(p.photo.media == .video && p.photo.isVideo)
        #expect(p.photo.fullURL == nil)
        #expect(p.photo.uploadedAt == "2016-01-18T16:43:27Z")
        #expect(p.photo.takenAt == "2015-12-16T10:20:30Z")
        let wire = try JSONSerialization.jsonObject(with: JSONEncoder().encode(p.photo)) as? [String: Any]
        #expect(wire?["media"] as? String == "video")
        #expect(wire?["fullURL"] is NSNull)
    }

    @Test("Flickr's 'taken unknown' leaves takenAt out rather than repeating the upload time")
    func flickrTakenUnknown() throws {
        let info: [String: Any] = [
            "stat": "ok",
            "photo": ["id": "1", "secret": "abc", "server": "1", "owner": ["nsid": "1@N00"],
                      "dates": ["posted": "1453135407", "taken": "2016-01-18 16:43:27", "takenunknown": "1"]],
        ]
        let p = try flickr.decodePhoto(try body(info), id: "1")
        #expect(p.photo.takenAt == nil && p.photo.uploadedAt == "2016-01-18T16:43:27Z")
        #expect(p.photo.media == nil && p.photo.fullURL != nil)
    }

    @Test("Flickr dates that are not a time are left out, never guessed", arguments: [
        ("0000-00-00 00:00:00", "0"), ("2015-13-16 10:20:30", "0"), ("2015-12-16 10:20:30x", "0"),
        ("2015-12-16", "0"), ("1969-12-31 23:59:59", "0"), ("2015-12-16\u{202E}10:20:30", "0"),
        ("", "0"), ("1e400", "0"), ("-1", "0"),
    ])
    func flickrHostileDates(taken: String, posted: String) throws {
        let info: [String: Any] = [
            "stat": "ok",
            "photo": ["id": "1", "secret": "abc", "server": "1", "owner": ["nsid": "1@N00"],
                      "dates": ["posted": posted, "taken": taken, "takenunknown": "0"]],
        ]
        let p = try flickr.decodePhoto(try body(info), id: "1")
        #expect(p.photo.takenAt == nil, "\(taken) → \(p.photo.takenAt ?? "nil")")
        #expect(p.photo.uploadedAt == nil)
    }

    @Test("a Flickr posted time past year 9999 or negative is left out; a huge one does not trap", arguments: [
        "253402300800", "-5", "99999999999999999999999", "1e300", "nan",
    ])
    func flickrHostilePosted(posted: String) throws {
        let info: [String: Any] = [
            "stat": "ok",
            "photo": ["id": "1", "secret": "abc", "server": "1", "owner": ["nsid": "1@N00"],
                      "dates": ["posted": posted, "taken": "2015-12-16 10:20:30", "takenunknown": "0"]],
        ]
        let p = try flickr.decodePhoto(try body(info), id: "1")
        #expect(p.photo.uploadedAt == nil)
        #expect(p.photo.takenAt == "2015-12-16T10:20:30Z")
    }

    @Test("a Flickr page past the last one is empty with the totals (Flickr repeats its last page there)")
    func flickrPastTheEnd() throws {
        let page = try flickr.decodeSearch(CorpusAPI.response("flickr/flickrie_photos_search_all_url_extras"),
                                           for: SearchQuery(term: .query("x y z"), page: 2, perPage: 100))
        #expect(page.photos.isEmpty && page.total == 98 && page.totalPages == 1 && !page.hasMore)
    }

    @Test("Pixabay's '\"page\" is out of valid range' is an empty page whose totals come from page 1")
    func pixabayPastTheEnd() throws {
        let response = HTTPResponse(status: 400, headers: [], body: Array("[ERROR 400] \"page\" is out of valid range.".utf8))
        let page = try pixabay.decodeSearch(response, for: SearchQuery(term: .query("cats"), page: 9, perPage: 60))
        #expect(page.photos.isEmpty && page.needsTotals)
        // Any other 400 stays an upstream error.
        let other = HTTPResponse(status: 400, headers: [], body: Array("[ERROR 400] \"q\" is too long.".utf8))
        #expect(throws: ProviderError.self) { try pixabay.decodeSearch(other, for: SearchQuery(term: .query("cats"), perPage: 60)) }
    }

    @Test("retryAfter is whole seconds, rounded up", arguments: [
        (59.999992106, 60.0), (0.2, 1.0), (3.0, 3.0), (1e300, OutsideSeconds.cap),
    ])
    func retryAfterRounded(sent: Double, expected: Double) throws {
        let error = RPCError(.rateLimited, "quota", retryAfter: sent)
        #expect(error.data.retryAfter == expected)
        let wire = String(decoding: try JSONEncoder().encode(error), as: UTF8.self)
        #expect(!wire.contains("."), "\(wire)")
    }

    @Test("dimensions: the photo's own where a copy agrees within rounding, else the copy's", arguments: [
        // Unsplash raw?w=256 of 5472×3648; Flickr url_n 320×240 of 4000×3000; Pixabay webformat of 2200×1280.
        (5472, 3648, 256, 171, true), (4000, 3000, 320, 240, true), (2200, 1280, 640, 372, true),
        (300, 200, 300, 200, true), (3648, 5472, 171, 256, true),
        // A rotated original, a crop: the copy's aspect wins.
        (4000, 3000, 240, 320, false), (4000, 3000, 320, 320, false),
    ])
    func dimensionsRule(w: Int, h: Int, cw: Int, ch: Int, agrees: Bool) {
        let resolved = PhotoDimensions.resolve(providerWidth: w, providerHeight: h, decoded: .init(width: cw, height: ch))
        if agrees {
            #expect(resolved == .init(width: w, height: h, source: .provider))
        } else {
            #expect(resolved == .init(width: cw, height: ch, source: .decoded))
        }
        #expect(PhotoDimensions.resolve(providerWidth: nil, providerHeight: nil, decoded: .init(width: cw, height: ch))?.source == .decoded)
        #expect(PhotoDimensions.resolve(providerWidth: w, providerHeight: h, decoded: nil)?.source == .provider)
        #expect(PhotoDimensions.resolve(providerWidth: nil, providerHeight: h, decoded: nil) == nil)
    }

    @Test("a one-column 300 px layout of a photo whose copy agrees is exact: 200.0")
    func exactLayout() {
        var masonry = Masonry(columns: 1, width: 300, spacing: 0, columnHeights: nil)
        let resolved = PhotoDimensions.resolve(providerWidth: 5472, providerHeight: 3648, decoded: .init(width: 256, height: 171))
        #expect(masonry.place(resolved.map { Masonry.Size(width: Double($0.width), height: Double($0.height)) }).height == 200.0)
    }

    @Test("bad records: a missing urls, a null user, 10 000 tags, a 1 MB description; the rest of the page is served")
    func badRecords() throws {
        var base = try #require(try JSONSerialization.jsonObject(
            with: Data(CorpusAPI.response("unsplash/unsplash_client_search_photos_test").body)) as? [String: Any])
        var results = try #require(base["results"] as? [[String: Any]])
        results[0]["urls"] = nil
        results[1]["user"] = NSNull()
        results[2]["tags"] = (0..<10_000).map { ["title": "t\($0)"] }
        results[3]["description"] = String(repeating: "x", count: 1 << 20)
        results[4]["width"] = "5000"
        results[5]["sponsorship"] = "yes"
        base["results"] = results
        let page = try unsplash.decodeSearch(try body(base), for: SearchQuery(term: .query("test"), perPage: 10))
        #expect(page.photos.count == 9 && page.skipped == 1)
        #expect(page.notes.count == 3, "\(page.notes.reasons)")
        let byID = Dictionary(uniqueKeysWithValues: page.photos.map { ($0.id, $0.photo) })
        let id = { (i: Int) in "unsplash:\(results[i]["id"] as? String ?? "")" }
        #expect(byID[id(0)] == nil)
        #expect(byID[id(1)]?.author.name == "Unknown")
        #expect(try #require(byID[id(2)]).tags == nil)
        #expect(try #require(byID[id(3)]).description == nil)
        #expect(byID[id(4)]?.width == 5000)
        #expect(try #require(byID[id(5)]).sponsored == nil)
    }

    @Test("a video inside a Flickr photo search page is left out and noted; the rest is served")
    func videoInSearchPage() throws {
        let page = try flickr.decodeSearch(CorpusAPI.response("flickr/flickrie_photos_search_all_url_extras"),
                                           for: SearchQuery(term: .query("x y z"), perPage: 100))
        #expect(page.skipped == 1 && page.notes.count == 1 && page.photos.count == 97)
        #expect(page.notes.reasons.first?.contains("video") == true)
    }
}
