import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Placeholders computed by the real pipeline from the pixels it decodes for a thumbnail
/// (scaled, or only validated and delivered as it is), remembered in the dimensions store;
/// a provider's own values are never replaced.
@Suite("Placeholders: computed from the first decoded thumbnail, remembered", .timeLimit(.minutes(5)))
struct ComputedPlaceholderTests {
    /// An image of one colour, `width` × `height`, as PNG (exact pixels) or JPEG.
    static func solid(_ colour: [UInt8], width: Int, height: Int, jpeg: Bool = false) throws -> [UInt8] {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for _ in 0..<(width * height) { pixels += colour }
        let buffer = PixelBuffer(width: width, height: height, channels: 3, pixels: pixels)
        return jpeg ? try JPEGEncoder.encode(buffer, quality: 95) : try PNGEncoder.encode(buffer)
    }

    /// The mean of RGB bytes per channel, taken in linear light (as BlurHash's average is)
    /// and written back as an sRGB level.
    static func mean(_ rgb: [UInt8]) -> [Double] {
        func linear(_ byte: UInt8) -> Double {
            let v = Double(byte) / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        func level(_ v: Double) -> Double {
            255 * (v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055)
        }
        var sums = [0.0, 0.0, 0.0]
        for (index, byte) in rgb.enumerated() { sums[index % 3] += linear(byte) }
        return sums.map { level($0 / Double(rgb.count / 3)) }
    }

    /// Whether `color` is `expected` within `tolerance` per channel.
    static func close(_ color: String, _ expected: [UInt8], tolerance: Int = 1) -> Bool {
        guard let rgb = PlaceholderColor.rgb(color) else { return false }
        return zip([rgb.red, rgb.green, rgb.blue], expected).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    @Test("a solid-colour image's colour is that colour, scaled (JPEG, PNG) or delivered as it is (PNG)")
    func solidColour() async throws {
        try await PipelineFixture.with { f in
            let colour: [UInt8] = [200, 100, 50]
            // 900 px wide at size 200: scaled; 300 px at 200: delivered as it is, only validated.
            let cases: [(String, [UInt8], Int)] = [
                ("/wide.png", try Self.solid(colour, width: 900, height: 600), 1),
                ("/narrow.png", try Self.solid(colour, width: 300, height: 200), 1),
                ("/wide.jpg", try Self.solid(colour, width: 900, height: 600, jpeg: true), 2),
                ("/narrow.jpg", try Self.solid(colour, width: 300, height: 200, jpeg: true), 2),
            ]
            for (path, body, tolerance) in cases {
                let image = f.serve(path, body)
                #expect(f.dimensions.placeholder(url: f.server.url(path)) == nil, "nothing before the decode")
                _ = try await withTimeout(seconds: 30) { try await f.pipeline.load(ThumbnailRequest(image: image, size: 200)) }
                let placeholder = try #require(f.dimensions.placeholder(url: f.server.url(path)), "\(path)")
                // JPEG's own rounding of a flat colour is a level or so.
                #expect(Self.close(placeholder.color, colour, tolerance: tolerance), "\(path): \(placeholder.color)")
                let parsed = try BlurHash.parse(placeholder.blurHash)
                #expect(parsed.xComponents == 4 && parsed.yComponents == 3, "\(path): landscape is 4×3")
                #expect(parsed.averageHex == placeholder.color)
            }
        }
    }

    @Test("the hash paints an image whose mean is close to the source's; a portrait image gets 3×4")
    func hashMean() async throws {
        try await PipelineFixture.with { f in
            let body = SyntheticImages.jpeg(width: 600, height: 900, seed: 7)
            let image = f.serve("/portrait.jpg", body)
            _ = try await withTimeout(seconds: 30) { try await f.pipeline.load(ThumbnailRequest(image: image, size: 150)) }
            let placeholder = try #require(f.dimensions.placeholder(url: f.server.url("/portrait.jpg")))
            let parsed = try BlurHash.parse(placeholder.blurHash)
            #expect(parsed.xComponents == 3 && parsed.yComponents == 4)
            // The source's mean, from its decode at 1/8 (the DCT's scaling keeps the mean).
            let decoded = try body.withUnsafeBytes { raw in
                try JPEGDecoder.decode(raw, header: try ImageHeaderProbe.header(ofComplete: raw), thumbnailWidth: nil).pixels.pixels
            }
            let painted = try BlurHash.decode(placeholder.blurHash, width: 32, height: 48)
            // Within a few levels: `encodeThumbnail` leaves out the last columns and rows that
            // do not fill a box of its small copy (here 6 of 150 columns, the reddest of this
            // gradient: measured 103.1 → 97.7 in red), and painting clips.
            for (a, b) in zip(Self.mean(decoded), Self.mean(painted)) {
                #expect(abs(a - b) <= 7, "source mean \(Self.mean(decoded)) vs painted \(Self.mean(painted))")
            }
        }
    }

    @Test("a photo's provider values win: its placeholder is remembered as sent, never computed over")
    func providerValuesWin() async throws {
        try await PipelineFixture.with { f in
            f.server.serve("/u/photo.jpg", body: try Self.solid([10, 200, 30], width: 800, height: 600, jpeg: true))
            f.server.serve("/f/photo.jpg", body: try Self.solid([10, 200, 30], width: 800, height: 600, jpeg: true))
            func photo(_ id: String, _ path: String, blurHash: String?, color: String?) -> ProviderPhoto {
                var photo = Photo(id: id, provider: String(id.prefix { $0 != ":" }), width: 800, height: 600,
                                  thumbURL: f.server.url(path), fullURL: f.server.url(path),
                                  author: .init(name: "A", profileURL: nil), likes: nil, description: nil, pageURL: nil)
                photo.blurHash = blurHash
                photo.color = color
                return ProviderPhoto(photo: photo, variants: [ImageVariant(name: "full", url: f.server.url(path), width: 800, height: 600)])
            }
            let own = "LEHV6nWB2yk8pyo0adR*.7kCMdnj"
            await f.registry.remember([photo("unsplash:own", "/u/photo.jpg", blurHash: own, color: "#c0a080"),
                                       photo("flickr:half", "/f/photo.jpg", blurHash: nil, color: "#123456")])
            let logs = ["unsplash:own": ThumbnailEventLog(), "flickr:half": ThumbnailEventLog()]
            for id in ["unsplash:own", "flickr:half"] {
                let image = try await f.pipeline.image(for: .photo(id))
                let log = logs[id]
                _ = try await withTimeout(seconds: 30) {
                    try await f.pipeline.load(ThumbnailRequest(image: image, size: 200), events: log?.handler)
                }
            }
            // The fetch told its demand the provider's values with the header.
            #expect(logs["unsplash:own"]?.all.contains(.dimensions(width: 800, height: 600, blurHash: own, color: "#c0a080")) == true)
            #expect(f.dimensions.placeholder(photo: "unsplash:own") == ImagePlaceholder(blurHash: own, color: "#c0a080"))
            // Only the missing field is computed.
            let half = try #require(f.dimensions.placeholder(photo: "flickr:half"))
            #expect(half.color == "#123456")
            #expect(try BlurHash.parse(half.blurHash).averageHex != "#123456", "the hash is the image's own")
            // A cache hit answers with no events (docs/protocol.md, "thumbnail.show").
            let log = ThumbnailEventLog()
            let image = try await f.pipeline.image(for: .photo("unsplash:own"))
            #expect(try await f.pipeline.load(ThumbnailRequest(image: image, size: 200), events: log.handler).source == .memory)
            #expect(log.all.isEmpty)
        }
    }
}
