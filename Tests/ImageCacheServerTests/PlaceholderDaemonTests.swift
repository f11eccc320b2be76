import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Placeholders (`blurHash`, `color`) through a real daemon on a real socket, photos from real
/// searches against the simulator: computed from the first decoded thumbnail of a Flickr,
/// Pixabay or `url` image and carried afterwards by `photo.get`, `search`, `layout` and
/// `thumbnail.dimensions`, across a restart; Unsplash's own kept.
@Suite("Placeholders on the socket", .timeLimit(.minutes(5)))
struct PlaceholderDaemonTests {
    /// A photo's or notification's placeholder, checked to be a BlurHash and its average.
    private func placeholder(_ object: [String: Any], _ what: String) throws -> (blurHash: String, color: String) {
        let hash = try #require(object["blurHash"] as? String, "\(what): no blurHash in \(object)")
        let color = try #require(object["color"] as? String, "\(what): no color in \(object)")
        #expect(try BlurHash.parse(hash).averageHex == color, "\(what)")
        return (hash, color)
    }

    private func photoGet(_ client: RawClient, _ id: Int, _ photo: String) async throws -> [String: Any] {
        try #require(try await client.request(id, "photo.get", ["photo": photo]).resultObject, "photo.get \(photo)")
    }

    private func layoutFrame(_ client: RawClient, _ id: Int, _ photo: String) async throws -> [String: Any] {
        let answer = try await client.request(id, "layout", ["photos": [photo], "columns": 1, "width": 200])
        return try #require((answer.resultObject?["frames"] as? [[String: Any]])?.first, "layout: \(answer)")
    }

    /// Shows `params` in a slot and returns the answer's result and the `thumbnail.dimensions`
    /// params sent for it.
    private func show(_ client: RawClient, _ id: Int, _ params: [String: Any]) async throws
        -> (result: [String: Any], dimensions: [String: Any]?) {
        try await client.send(rpcLine(id, "thumbnail.show", params))
        let (answer, before) = try await client.answer(id)
        let result = try #require(answer.resultObject, "thumbnail.show: \(answer)")
        let dimensions = before.last { $0.notificationMethod == "thumbnail.dimensions" && $0.params["slot"] as? Int == params["slot"] as? Int }
        return (result, dimensions?.params)
    }

    @Test("a Flickr and a Pixabay photo: nothing before the first thumbnail; after it, everywhere, and after a restart")
    func computedAndRemembered() async throws {
        try await CacheFixture.with { fixture in
            let remembered = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await first.connect()
                var remembered: [String: (blurHash: String, color: String)] = [:]
                for (n, provider) in ["flickr", "pixabay"].enumerated() {
                    let photos = try await first.searchPhotos(client, id: 100 + n, provider: provider, perPage: 5)
                    let id = try #require(photos[0]["id"] as? String)
                    #expect(photos[0]["blurHash"] == nil && photos[0]["color"] == nil, "\(id): absent until a thumbnail is decoded")
                    let before = try await photoGet(client, 110 + n, id)
                    #expect(before["blurHash"] == nil && before["color"] == nil)
                    #expect(try await layoutFrame(client, 120 + n, id)["color"] == nil)

                    let shown = try await show(client, 130 + n, ["slot": n, "photo": id, "size": 200])
                    #expect(shown.result["source"] as? String == "network")
                    let computed = try placeholder(try await photoGet(client, 140 + n, id), "photo.get \(id)")
                    remembered[id] = computed
                    let again = try await first.searchPhotos(client, id: 150 + n, provider: provider, perPage: 5)
                    let searched = try #require(again.first { $0["id"] as? String == id })
                    #expect(try placeholder(searched, "search \(id)") == computed)
                    #expect(try await layoutFrame(client, 160 + n, id)["color"] as? String == computed.color)
                    // A cache hit answers without notifications; a fetch at another size sends
                    // thumbnail.dimensions at its header, and that carries them.
                    let other = try await show(client, 170 + n, ["slot": 10 + n, "photo": id, "size": 90])
                    #expect(other.result["source"] as? String == "network")
                    #expect(try placeholder(try #require(other.dimensions, "no thumbnail.dimensions"), "thumbnail.dimensions") == computed)
                }
                await client.close()
                return remembered
            }

            try await SearchDaemon.with(fixture.configuration()) { second in
                let client = try await second.connect()
                for (n, (id, computed)) in remembered.sorted(by: { $0.key < $1.key }).enumerated() {
                    #expect(try placeholder(try await photoGet(client, 200 + n, id), "photo.get after restart") == computed)
                    #expect(try await layoutFrame(client, 210 + n, id)["color"] as? String == computed.color)
                }
                await client.close()
            }
        }
    }

    @Test("a url thumbnail: its later thumbnail.dimensions carries the computed placeholder")
    func urlThumbnail() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let url = fixture.sim.baseURL + "/img/640x480/2a.jpg"
                let firstShow = try await show(client, 1, ["slot": 0, "url": url, "size": 200])
                #expect(firstShow.result["source"] as? String == "network")
                // At the first header nothing had been decoded yet.
                let firstHeader = try #require(firstShow.dimensions, "no thumbnail.dimensions")
                #expect(firstHeader["blurHash"] == nil)
                // Another size of the same image is fetched again; its header's notification has them.
                let other = try await show(client, 2, ["slot": 1, "url": url, "size": 100])
                #expect(other.result["source"] as? String == "network")
                let dimensions = try #require(other.dimensions, "no thumbnail.dimensions")
                #expect(dimensions["width"] as? Int == 640 && dimensions["photo"] is NSNull)
                let computed = try placeholder(dimensions, "thumbnail.dimensions of a url")
                // The simulator's image is a gradient: its colour is its own, not a constant.
                let expected = try #require(SyntheticImages.placeholders(width: 640, height: 480, seed: 0x2a))
                let rgb = try #require(PlaceholderColor.rgb(computed.color)), want = try #require(PlaceholderColor.rgb(expected.color))
                #expect(abs(Int(rgb.red) - Int(want.red)) <= 6 && abs(Int(rgb.green) - Int(want.green)) <= 6
                            && abs(Int(rgb.blue) - Int(want.blue)) <= 6, "\(computed.color) vs \(expected.color)")
                await client.close()
            }
        }
    }

    @Test("Unsplash's own blur_hash and color are what every answer carries after a thumbnail is decoded")
    func unsplashKept() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let photos = try await daemon.searchPhotos(client)
                let id = try #require(photos[0]["id"] as? String)
                let own = try placeholder(photos[0], "Unsplash's")
                #expect(try await layoutFrame(client, 1, id)["color"] as? String == own.color, "known before any thumbnail")
                // Known from the search on: the first fetch's thumbnail.dimensions has them already.
                let shown = try await show(client, 2, ["slot": 0, "photo": id, "size": 200])
                #expect(try placeholder(try #require(shown.dimensions, "no thumbnail.dimensions"), "thumbnail.dimensions") == own)
                let other = try await show(client, 3, ["slot": 1, "photo": id, "size": 90])
                #expect(try placeholder(try #require(other.dimensions, "no thumbnail.dimensions"), "thumbnail.dimensions") == own)
                #expect(try placeholder(try await photoGet(client, 4, id), "photo.get") == own)
                #expect(try await layoutFrame(client, 5, id)["color"] as? String == own.color)
                #expect(daemon.services.dimensions.placeholder(photo: id) == ImagePlaceholder(blurHash: own.blurHash, color: own.color))
                await client.close()
            }
        }
    }
}
