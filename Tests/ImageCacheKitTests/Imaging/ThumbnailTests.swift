@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: thumbnails", .timeLimit(.minutes(3)))
struct ThumbnailTests {
    @Test("a thumbnail is exactly the requested width, with the aspect ratio kept and reported exactly")
    func exactWidth() throws {
        let bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg") // 227×149
        for width in [1, 13, 64, 100, 113, 200] {
            let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: width)
            #expect(thumbnail.width == width)
            #expect(thumbnail.height == max(1, Int((149.0 * Double(width) / 227).rounded())))
            let pixels = try decodePixels(thumbnail.bytes)
            #expect((pixels.width, pixels.height) == (thumbnail.width, thumbnail.height))
            #expect(thumbnail.mimeType == "image/jpeg")
        }
    }

    @Test("a source narrower than the requested width is not upscaled")
    func neverUpscales() throws {
        let thumbnail = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg"), width: 1000)
        #expect((thumbnail.width, thumbnail.height) == (227, 149))
    }

    @Test("thumbnails of orientations 0–8 are upright and show the same picture as orientation 1")
    func uprightThumbnails() throws {
        for name in ["Landscape", "Portrait"] {
            let reference = try orientedThumbnail("\(name)_1", width: 120)
            // A wrongly oriented picture must measurably differ, or this test could not fail.
            let flipped = reference.oriented(.down)
            let flippedDifference = meanAbsoluteDifference(reference, flipped)
            #expect(flippedDifference > 20)
            for orientation in 0...8 {
                let pixels = try orientedThumbnail("\(name)_\(orientation)", width: 120)
                #expect((pixels.width, pixels.height) == (reference.width, reference.height), "\(name)_\(orientation)")
                guard pixels.width == reference.width, pixels.height == reference.height else { continue }
                let difference = meanAbsoluteDifference(reference, pixels)
                #expect(difference < 6, "\(name)_\(orientation): \(difference) (flipped: \(flippedDifference))")
            }
        }
    }

    @Test("Pillow's orientation samples come out upright, 1×2 for the 2×1 stored rectangle")
    func pillowRectangle() throws {
        let thumbnail = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("jpeg/pillow/orientation_rectangle.jpg"), width: 1)
        #expect((thumbnail.width, thumbnail.height) == (1, 2))
        let reference = try decodePixels(try Thumbnailer.makeThumbnail(from: try Corpus.bytes("jpeg/pillow/hopper.jpg"), width: 64).bytes)
        for orientation in 2...8 {
            let path = "jpeg/pillow/hopper_orientation_\(orientation).jpg"
            let pixels = try decodePixels(try Thumbnailer.makeThumbnail(from: try Corpus.bytes(path), width: 64).bytes)
            #expect(meanAbsoluteDifference(reference, pixels) < 8, "\(path)")
        }
    }

    // A profile is converted through, not copied into thumbnails (an earlier version copied a
    // small one), so no thumbnail carries one (ColourManagementTests compares the converted
    // pixels).
    @Test("thumbnails of profiled sources carry no ICC profile, and their bytes stay bounded")
    func noICCProfileInThumbnails() throws {
        for path in ["jpeg/jpeg-decoder/mozilla/jpg-srgb-icc.jpg", "jpeg/jpeg-decoder/reftest/ycck.jpg"] {
            let bytes = try Corpus.bytes(path)
            let source = bytes.withUnsafeBytes { JPEGMetadata(ByteReader($0)).iccProfile }
            #expect(source != nil, "\(path)")
            let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: 16)
            let width = min(16, try Thumbnailer.validate(bytes).width)
            let copied = thumbnail.bytes.withUnsafeBytes { JPEGMetadata(ByteReader($0)).iccProfile }
            #expect(copied == nil, "\(path)")
            #expect(thumbnail.bytes.count <= DeliveredFileRules.maxBytes(width: thumbnail.width, height: thumbnail.height))
            let reread = try Thumbnailer.validate(thumbnail.bytes)
            #expect((reread.width, thumbnail.width) == (width, width), "\(path)")
        }
        // The split-profile samples: inconsistent chunks are dropped, the picture still decodes.
        for path in try Corpus.files(in: "jpeg/jpeg-decoder/icc", withExtension: "jpg") {
            let thumbnail = try Thumbnailer.makeThumbnail(from: try Corpus.bytes(path), width: 1)
            #expect(thumbnail.width == 1, "\(path)")
        }
    }

    @Test("a source with alpha gives a PNG thumbnail that keeps the transparency")
    func alphaGivesPNG() throws {
        let thumbnail = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("pngsuite/basn6a08.png"), width: 16)
        #expect(thumbnail.format == .png)
        #expect(thumbnail.mimeType == "image/png")
        let pixels = try decodePixels(thumbnail.bytes)
        #expect((pixels.width, pixels.height, pixels.channels) == (16, 16, 4))
        #expect(pixels.hasTranslucentPixels)
        let opaque = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("pngsuite/basn2c08.png"), width: 16)
        #expect(opaque.format == .jpeg)
    }

    @Test("transparent pixels do not bleed their undefined colour into visible ones when shrinking")
    func noAlphaBleeding() {
        // Left half opaque white, right half transparent "black": the visible edge must stay white.
        var pixels = [UInt8](repeating: 0, count: 8 * 2 * 4)
        for y in 0..<2 { for x in 0..<4 { for c in 0..<4 { pixels[(y * 8 + x) * 4 + c] = 255 } } }
        let image = PixelBuffer(width: 8, height: 2, channels: 4, pixels: pixels)
        let small = Resampler.resize(image, width: 3, height: 1)
        let edge = Array(small.pixels[4..<8]) // the middle pixel, half covered
        #expect(edge[3] > 60 && edge[3] < 200)
        #expect(edge[0] >= 250 && edge[1] >= 250 && edge[2] >= 250, "\(edge)")
    }

    @Test("grey sources give grey JPEG thumbnails")
    func greyStaysGrey() throws {
        let thumbnail = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("jpeg/libjpeg-turbo/testimggray.jpg"), width: 50)
        #expect(try decodePixels(thumbnail.bytes).channels == 1)
    }

    @Test("a lower quality gives a smaller file")
    func qualityIsApplied() throws {
        let bytes = try Corpus.bytes("jpeg/exif-orientation-examples/Landscape_1.jpg")
        let high = try Thumbnailer.makeThumbnail(from: bytes, width: 256, quality: 95)
        let low = try Thumbnailer.makeThumbnail(from: bytes, width: 256, quality: 30)
        #expect(low.bytes.count < high.bytes.count)
    }

    @Test("a thumbnail decodes at the smallest DCT scale at least twice its width, where the image allows")
    func thumbnailScaleKeepsAMargin() {
        #expect(JPEGDecoder.thumbnailScale(width: 2400, height: 1600, targetWidth: 256) == (600, 400))
        #expect(JPEGDecoder.thumbnailScale(width: 2400, height: 1600, targetWidth: 300) == (600, 400))
        #expect(JPEGDecoder.thumbnailScale(width: 2400, height: 1600, targetWidth: 301) == (900, 600))
        #expect(JPEGDecoder.thumbnailScale(width: 2400, height: 1600, targetWidth: 512) == (1200, 800))
        #expect(JPEGDecoder.thumbnailScale(width: 800, height: 600, targetWidth: 512) == (800, 600))
        #expect(JPEGDecoder.thumbnailScale(width: 2400, height: 1600, targetWidth: Int.max) == (2400, 1600))
    }

    @Test("the DCT scale chosen is the smallest that still covers the width asked for")
    func smallestCoveringScale() {
        #expect(JPEGDecoder.scaledSize(width: 2400, height: 1600, covering: 256) == (300, 200))
        #expect(JPEGDecoder.scaledSize(width: 2400, height: 1600, covering: 301) == (600, 400))
        #expect(JPEGDecoder.scaledSize(width: 2400, height: 1600, covering: 1) == (300, 200))
        #expect(JPEGDecoder.scaledSize(width: 227, height: 149, covering: 500) == (227, 149))
    }

    @Test("the resampler averages: a fine checkerboard shrinks to even grey, not to aliasing")
    func resamplerAntialiases() {
        var pixels = [UInt8](repeating: 0, count: 64 * 64)
        for y in 0..<64 { for x in 0..<64 where (x + y) % 2 == 0 { pixels[y * 64 + x] = 255 } }
        let board = PixelBuffer(width: 64, height: 64, channels: 1, pixels: pixels)
        for (width, height) in [(27, 27), (32, 32), (50, 41)] {
            let small = Resampler.resize(board, width: width, height: height)
            #expect((small.width, small.height) == (width, height))
            #expect(small.pixels.allSatisfy { (100...155).contains($0) }, "\(width)×\(height)")
        }
    }

    @Test("a thumbnail width under 1 is refused as invalid_params")
    func zeroWidth() throws {
        let error = expectRPCError(.invalidParams) {
            _ = try Thumbnailer.makeThumbnail(from: try Corpus.bytes("pngsuite/basn2c08.png"), width: 0)
        }
        #expect(error?.data.field == "size")
    }

    private func orientedThumbnail(_ name: String, width: Int) throws -> PixelBuffer {
        let bytes = try Corpus.bytes("jpeg/exif-orientation-examples/\(name).jpg")
        return try decodePixels(try Thumbnailer.makeThumbnail(from: bytes, width: width).bytes)
    }
}
