import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// `layout` through a real daemon on a real socket, its photos from real searches against the
/// simulator: provider, decoded and unknown dimensions, paging, errors, and decoded sizes
/// surviving a restart.
@Suite("layout on the socket", .timeLimit(.minutes(5)))
struct LayoutDaemonTests {
    private func frames(_ answer: [String: Any]) throws -> [[String: Any]] {
        try #require(answer.resultObject?["frames"] as? [[String: Any]], "no frames in \(answer)")
    }

    /// The answer decoded with `JSONDecoder` (as `ImageCacheClient` does): Foundation's
    /// `JSONSerialization` on Linux parses some doubles off by an ulp, which would hide or fake
    /// a difference in the last digit.
    private func layout(_ client: RawClient, _ id: Int, _ params: [String: Any]) async throws -> LayoutResult {
        struct Answer: Decodable { var result: LayoutResult }
        let line = try await client.requestRaw(id, "layout", params)
        return try JSONDecoder().decode(Answer.self, from: Data(line.utf8)).result
    }

    @Test("searched photos are placed by the provider's dimensions, never fetching")
    func providerDimensions() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let photos = try await daemon.searchPhotos(client)
                let ids = photos.compactMap { $0["id"] as? String }
                let requests = daemon.services.transfers.stats.requests

                let placed = try await layout(client, 1, ["photos": ids, "columns": 2, "width": 610, "spacing": 10]).frames
                #expect(placed.count == ids.count)
                for (frame, photo) in zip(placed, photos) {
                    #expect(frame.photo == photo["id"] as? String)
                    #expect(frame.dims == .provider)
                    let width = try #require(photo["width"] as? Int), height = try #require(photo["height"] as? Int)
                    #expect(frame.width == 300)
                    #expect(frame.height == 300 * Double(height) / Double(width))
                }
                #expect(daemon.services.transfers.stats.requests == requests, "layout must never fetch")
                await client.close()
            }
        }
    }

    @Test("decoded dimensions win over the provider's (recorded as the pipeline records them)")
    func decodedWins() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                // A shape no provider answer has, so the frame can only come from the decoded size.
                daemon.services.dimensions.record(.init(width: 100, height: 250), photo: ids[0], url: nil)

                let placed = try frames(try await client.request(1, "layout", ["photos": ids, "columns": 1, "width": 200]))
                #expect(placed[0]["dims"] as? String == "decoded")
                #expect(placed[0].number("height") == 500)
                #expect(placed[1]["dims"] as? String == "provider")
                await client.close()
            }
        }
    }

    @Test("after a thumbnail fetch that agrees with the provider, layout gives the photo's own size, exactly")
    func decodedAfterFetch() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let photos = try await daemon.searchPhotos(client)
                let id = try #require(photos[0]["id"] as? String)
                let delivered = try await daemon.thumbnail(id, size: 200)

                let placed = try await layout(client, 1, ["photos": [id], "columns": 1, "width": 200]).frames
                // The copy decoded (its own pixel size recorded) agrees with the provider's size, so
                // the frame is the photo's own shape, not the rounded copy's.
                #expect(daemon.services.dimensions.decoded(photo: id) != nil)
                #expect(placed[0].dims == .provider)
                let width = try #require(photos[0]["width"] as? Int), height = try #require(photos[0]["height"] as? Int)
                #expect(placed[0].height == 200 * Double(height) / Double(width))
                // The simulator's image has the shape the API claimed, to the rounding of a scaled side.
                let ratio = try #require(photos[0].number("height")) / (try #require(photos[0].number("width")))
                #expect(abs(Double(delivered.height) / Double(delivered.width) - ratio) < 0.01)
                await client.close()
            }
        }
    }

    @Test("a remembered photo without provider dimensions is unknown, placed as a square")
    func unknownIsSquare() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let photo = ProviderPhoto(photo: Photo(id: "flickr:555", provider: "flickr", width: nil, height: nil,
                                                       thumbURL: fixture.sim.baseURL + "/img/300x200/5.jpg",
                                                       fullURL: fixture.sim.baseURL + "/img/300x200/5.jpg",
                                                       author: .init(name: "Ann", profileURL: nil), likes: nil, description: nil,
                                                       pageURL: nil), variants: [])
                await daemon.services.registry.remember([photo])

                let placed = try frames(try await client.request(1, "layout", ["photos": ["flickr:555"], "columns": 3, "width": 300]))
                #expect(placed[0]["dims"] as? String == "unknown")
                #expect(placed[0].number("height") == 100)
                #expect(placed[0].number("width") == 100)
                await client.close()
            }
        }
    }

    @Test("an id the daemon never returned answers 1006 naming it")
    func unknownIDIsNotFound() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client).compactMap { $0["id"] as? String }
                let answer = try await client.request(1, "layout", ["photos": [ids[0], "unsplash:never-seen"], "columns": 2, "width": 400])
                #expect(answer.errorCode == 1006)
                #expect(answer.errorKind == "not_found")
                #expect(answer.errorData["field"] as? String == "photos[1]")
                #expect(((answer["error"] as? [String: Any])?["message"] as? String)?.contains("unsplash:never-seen") == true)
                await client.close()
            }
        }
    }

    @Test("bad params answer -32602 naming the field")
    func badParams() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let cases: [([String: Any], String)] = [
                    (["photos": [], "columns": 0, "width": 400], "columns"),
                    (["photos": [], "columns": 2, "width": 0], "width"),
                    (["photos": [], "columns": 2, "width": 10, "spacing": 20], "spacing"),
                    (["photos": [], "columns": 2, "width": 400, "columnHeights": [1]], "columnHeights"),
                    (["photos": ["nocolon"], "columns": 2, "width": 400], "photos[0]"),
                ]
                for (n, (params, field)) in cases.enumerated() {
                    let answer = try await client.request(n + 1, "layout", params)
                    #expect(answer.errorCode == -32602, "\(params)")
                    #expect(answer.errorData["field"] as? String == field, "\(params)")
                }
                await client.close()
            }
        }
    }

    @Test("two pages with the returned columnHeights give exactly the frames of one call, through JSON")
    func pagingOverTheSocket() async throws {
        try await CacheFixture.with { fixture in
            try await SearchDaemon.with(fixture.configuration()) { daemon in
                let client = try await daemon.connect()
                let ids = try await daemon.searchPhotos(client, perPage: 20).compactMap { $0["id"] as? String }
                func params(_ photos: [String], _ heights: [Double]? = nil) -> [String: Any] {
                    var p: [String: Any] = ["columns": 3, "width": 1000, "spacing": 7, "photos": photos]
                    if let heights { p["columnHeights"] = heights }
                    return p
                }
                let whole = try await layout(client, 1, params(ids))
                let split = ids.count / 2
                let first = try await layout(client, 2, params(Array(ids[..<split])))
                // Sent back as JSON: Foundation writes the shortest form that reads back as the same double.
                let second = try await layout(client, 3, params(Array(ids[split...]), first.columnHeights))

                #expect(first.frames + second.frames == whole.frames)
                #expect(second.columnHeights == whole.columnHeights)
                // Coordinates are not rounded: the column width of 1000 - 14 over 3 keeps its fraction.
                let columnWidth: Double = 986.0 / 3.0
                #expect(whole.frames[0].width == columnWidth)
                #expect(whole.frames[1].x == columnWidth + 7)
                await client.close()
            }
        }
    }

    @Test("decoded dimensions survive a restart")
    func decodedSurvivesRestart() async throws {
        try await CacheFixture.with { fixture in
            let ids = try await SearchDaemon.with(fixture.configuration()) { first in
                let client = try await first.connect()
                let ids = try await first.searchPhotos(client).compactMap { $0["id"] as? String }
                _ = try await first.thumbnail(ids[0])
                first.services.dimensions.record(.init(width: 100, height: 250), photo: ids[1], url: nil)
                await client.close()
                return ids
            }

            try await SearchDaemon.with(fixture.configuration()) { second in
                let client = try await second.connect()
                let placed = try frames(try await client.request(1, "layout", ["photos": Array(ids[0..<3]), "columns": 1, "width": 200]))
                // ids[0]'s copy agrees with its provider size (so the frame says provider); ids[1]'s
                // recorded size contradicts it, and the contradiction survived the restart.
                #expect(placed.map { $0["dims"] as? String } == ["provider", "decoded", "provider"])
                #expect(second.services.dimensions.decoded(photo: ids[0]) != nil)
                #expect(placed[1].number("height") == 500)
                await client.close()
            }
        }
    }
}
