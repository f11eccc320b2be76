import Foundation
import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// `thumbnail.dimensions` through a real daemon: the photo's own size where its provider states
/// it and the decoded copy agrees, the copy's where they disagree, and each placeholder field
/// whenever any source has it. The copy's own pixel size stays in the `thumbnail.show` answer.
@Suite("Photo dimensions and placeholders on the socket", .timeLimit(.minutes(5)))
struct PhotoDimensionsDaemonTests {
    private func show(_ client: RawClient, _ id: Int, _ params: [String: Any]) async throws
        -> (result: [String: Any], dimensions: [String: Any]?) {
        try await client.send(rpcLine(id, "thumbnail.show", params))
        let (answer, before) = try await client.answer(id)
        let result = try #require(answer.resultObject, "thumbnail.show: \(answer)")
        let dimensions = before.last { $0.notificationMethod == "thumbnail.dimensions" }
        return (result, dimensions?.params)
    }

    private func remembered(_ id: String, width: Int?, height: Int?, url: String, color: String?) -> ProviderPhoto {
        var photo = Photo(id: id, provider: "pixabay", width: width, height: height, thumbURL: url, fullURL: url,
                          author: .init(name: "Ann", profileURL: nil), likes: nil, description: nil, pageURL: nil)
        photo.color = color
        return ProviderPhoto(photo: photo, variants: [])
    }

    @Test("a searched photo's thumbnail.dimensions is the photo's own size, the answer the copy's")
    func providerSizeReported() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                for (n, provider) in ["unsplash", "flickr", "pixabay"].enumerated() {
                    let photos = try await daemon.searchPhotos(client, id: 10 + n, provider: provider, perPage: 3)
                    let id = try #require(photos[0]["id"] as? String)
                    let shown = try await show(client, 20 + n, ["slot": n, "photo": id, "size": 256])
                    let dimensions = try #require(shown.dimensions, "\(provider): no thumbnail.dimensions")
                    let own = try photos[0].decoded(as: Photo.self), header = try dimensions.decoded(as: ThumbnailDimensions.self)
                    let width = try #require(own.width, "\(provider)"), height = try #require(own.height, "\(provider)")
                    #expect(header.width == width && header.height == height, "\(provider)")
                    let copyWidth = try #require(shown.result["width"] as? Int)
                    #expect(copyWidth < (photos[0]["width"] as? Int ?? 0), "\(provider): the answer is the copy's size")
                }
                await client.close()
            }
        }
    }

    @Test("a provider size the copy contradicts gives way to the copy's; a colour without a BlurHash is sent at once")
    func copyWinsAndColourAlone() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                // The image is 300×200; the record claims a portrait 2000×3000 (a rotated original).
                let url = fixture.sim.baseURL + "/img/300x200/7.jpg"
                await daemon.services.registry.remember([remembered("pixabay:7", width: 2000, height: 3000, url: url, color: "#336699")])
                let shown = try await show(client, 1, ["slot": 0, "photo": "pixabay:7", "size": 300])
                let dimensions = try #require(shown.dimensions, "no thumbnail.dimensions")
                #expect(dimensions["width"] as? Int == 300 && dimensions["height"] as? Int == 200)
                #expect(dimensions["color"] as? String == "#336699")
                let answer = try await client.request(2, "layout", ["photos": ["pixabay:7"], "columns": 1, "width": 300])
                let frame = try #require((answer.resultObject?["frames"] as? [[String: Any]])?.first)
                #expect(frame["dims"] as? String == "decoded" && frame.number("height") == 200)
                await client.close()
            }
        }
    }
}
