@testable import ImageCacheKit
import ProviderSimulator
import Testing

/// A WebP wider than twice the thumbnail is decoded by libwebp straight to twice its width
/// (`WebPDecoder.decode(thumbnailWidth:)`), then made a thumbnail with Lanczos-3: the same
/// picture, within a level or two, as from the whole decode.
@Suite("Imaging: WebP scaled while it decodes", .timeLimit(.minutes(2)))
struct WebPScaledDecodeTests {
    static func decode(_ bytes: [UInt8], thumbnailWidth: Int?) throws -> PixelBuffer {
        try withRawBytes(bytes) { (raw) throws(ImagingError) -> PixelBuffer in
            try WebPDecoder.decode(raw, header: try ImageHeaderProbe.header(ofComplete: raw), thumbnailWidth: thumbnailWidth)
        }
    }

    @Test("the decode stops at twice the thumbnail's width; the thumbnail matches the whole decode's")
    func scaledMatchesWhole() throws {
        let webp = SyntheticImages.webp(width: 1600, height: 1000, seed: 7, quality: 90)
        let scaled = try Self.decode(webp, thumbnailWidth: 256)
        #expect(scaled.width == 512 && scaled.height == 320)
        let whole = try Self.decode(webp, thumbnailWidth: nil)
        #expect(whole.width == 1600 && whole.height == 1000)

        let fromScaled = Resampler.resize(scaled, width: 256, height: 160)
        let fromWhole = Resampler.resize(whole, width: 256, height: 160)
        var total = 0, worst = 0
        for (a, b) in zip(fromScaled.pixels, fromWhole.pixels) {
            let difference = abs(Int(a) - Int(b))
            total += difference
            worst = max(worst, difference)
        }
        let mean = Double(total) / Double(fromWhole.pixels.count)
        #expect(mean < 2.0, "mean difference \(mean), worst \(worst)")

        // And through the thumbnailer, the same size as before.
        let thumbnail = try Thumbnailer.makeThumbnail(from: webp, width: 256)
        #expect(thumbnail.width == 256 && thumbnail.height == 160)
    }

    @Test("a picture at most twice the thumbnail's width is decoded whole; odd shapes keep at least a pixel")
    func smallAndThin() throws {
        let webp = SyntheticImages.webp(width: 500, height: 300, seed: 3)
        let decoded = try Self.decode(webp, thumbnailWidth: 256)
        #expect(decoded.width == 500 && decoded.height == 300)
        #expect(WebPDecoder.decodedSize(width: 4000, height: 1, thumbnailWidth: 100) == (200, 1))
        #expect(WebPDecoder.decodedSize(width: 4000, height: 3000, thumbnailWidth: 0) == (4000, 3000))
        #expect(WebPDecoder.decodedSize(width: 513, height: 300, thumbnailWidth: 256) == (512, 299))
    }
}
