import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// The fixtures `FormatFixtures/make-fixtures.py` wrote with Pillow: one 96×64 scene (left
/// half red, right half blue, a green bar along the bottom 16 rows; the alpha variants have a
/// transparent 32×32 square at the top left).
enum FormatFixture {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FormatFixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static let opaque = ["lossy.webp", "lossless.webp", "animated.webp", "rgb.avif", "plain.gif", "interlaced.gif", "animated.gif"]
    static let transparent = ["alpha-lossless.webp", "alpha-lossy.webp", "alpha.avif", "transparent.gif"]
}

@Suite("Imaging: WebP, AVIF and GIF in", .timeLimit(.minutes(2)))
struct FormatDecodingTests {
    /// The sample at (x, y) of a decoded picture.
    private func pixel(_ image: PixelBuffer, _ x: Int, _ y: Int) -> [Int] {
        let offset = (y * image.width + x) * image.channels
        return image.pixels[offset..<offset + image.channels].map(Int.init)
    }

    private func near(_ sample: [Int], _ expected: [Int], tolerance: Int = 40) -> Bool {
        zip(sample, expected).allSatisfy { abs($0 - $1) <= tolerance }
    }

    private func format(of name: String) -> ImageFormat {
        name.hasSuffix(".webp") ? .webp : name.hasSuffix(".avif") ? .avif : .gif
    }

    @Test("each fixture is sniffed by content, its header read, validated and thumbnailed as JPEG with its colours",
          arguments: FormatFixture.opaque)
    func opaqueFixtures(name: String) throws {
        let bytes = try FormatFixture.bytes(name)
        #expect(ImageFormat.sniff(bytes) == format(of: name))
        guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { Issue.record("no header"); return }
        #expect((header.width, header.height) == (96, 64))
        #expect(try Thumbnailer.validate(bytes) == header)
        let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: 48)
        #expect(thumbnail.format == .jpeg)
        #expect((thumbnail.width, thumbnail.height) == (48, 32))
        let pixels = try decodePixels(thumbnail.bytes)
        // The first frame's scene (an animation's second frame is near-white).
        #expect(near(pixel(pixels, 6, 6), [220, 30, 30]), "\(name): \(pixel(pixels, 6, 6))")
        #expect(near(pixel(pixels, 42, 6), [30, 60, 220]), "\(name): \(pixel(pixels, 42, 6))")
        #expect(near(pixel(pixels, 24, 29), [40, 180, 60]), "\(name): \(pixel(pixels, 24, 29))")
    }

    @Test("alpha and GIF transparency are kept: the thumbnail is a PNG with the square transparent",
          arguments: FormatFixture.transparent)
    func transparentFixtures(name: String) throws {
        let bytes = try FormatFixture.bytes(name)
        let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: 96)
        #expect(thumbnail.format == .png)
        let pixels = try decodePixels(thumbnail.bytes)
        #expect(pixels.channels == 4)
        // AV1 codes alpha lossily: within a few levels of 0 and 255.
        #expect(pixel(pixels, 8, 8)[3] <= 4, "\(name): \(pixel(pixels, 8, 8))")
        #expect(pixel(pixels, 70, 8)[3] >= 251)
        #expect(near(Array(pixel(pixels, 70, 8).prefix(3)), [30, 60, 220]), "\(name): \(pixel(pixels, 70, 8))")
    }

    @Test("files written by others (CPython's test data): a lossless WebP with alpha and a GIF with a transparent index")
    func filesByOthers() throws {
        for name in ["cpython-python.webp", "cpython-python.gif"] {
            let bytes = try FormatFixture.bytes(name)
            let header = try Thumbnailer.validate(bytes)
            #expect((header.width, header.height) == (16, 16))
            let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: 16)
            #expect(thumbnail.format == .png, "\(name)")
            let pixels = try decodePixels(thumbnail.bytes)
            // The logo's corners are transparent, its middle opaque.
            #expect(pixel(pixels, 0, 0)[3] == 0, "\(name): \(pixel(pixels, 0, 0))")
            #expect(pixels.pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element == 255 }, "\(name)")
        }
    }

    @Test("a GIF is read up to its first frame: cut after it, an animation still validates")
    func gifCutAfterFirstFrame() throws {
        let bytes = try FormatFixture.bytes("animated.gif")
        let whole = try Thumbnailer.validate(bytes)
        // The second frame's descriptor is the second 0x2C after the first frame's data.
        let cut = Array(bytes.prefix(bytes.count - 8))
        #expect(try Thumbnailer.validate(cut) == whole)
    }

    @Test("an interlaced GIF decodes to the same pixels as the plain one")
    func interlacedGIF() throws {
        try FormatFixture.bytes("interlaced.gif").withUnsafeBytes { interlaced in
            try FormatFixture.bytes("plain.gif").withUnsafeBytes { plain in
                let a = try GIFDecoder.decode(interlaced, header: try ImageHeaderProbe.header(ofComplete: interlaced), maxPixels: 0)
                let b = try GIFDecoder.decode(plain, header: try ImageHeaderProbe.header(ofComplete: plain), maxPixels: 0)
                #expect(a.pixels == b.pixels)
                #expect(a.channels == 3)
            }
        }
    }

    @Test("an AVIF's irot is its orientation: upright dimensions before the decode, and a turned thumbnail")
    func rotatedAVIF() throws {
        let bytes = try FormatFixture.bytes("rotated.avif")
        guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { Issue.record("no header"); return }
        #expect(header.orientation == .right)
        #expect((header.storedWidth, header.storedHeight, header.width, header.height) == (96, 64, 64, 96))
        let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: 32)
        #expect((thumbnail.width, thumbnail.height) == (32, 48))
        // Turned 90° clockwise: the stored left (red) half is now the top, the green bar the left.
        let pixels = try decodePixels(thumbnail.bytes)
        #expect(near(pixel(pixels, 20, 6), [220, 30, 30]), "\(pixel(pixels, 20, 6))")
        #expect(near(pixel(pixels, 20, 42), [30, 60, 220]), "\(pixel(pixels, 20, 42))")
        #expect(near(pixel(pixels, 2, 24), [40, 180, 60]), "\(pixel(pixels, 2, 24))")
    }

    @Test("10- and 12-bit AVIFs decode to 8 bits, as the 8-bit one does", arguments: [10, 12])
    func highBitDepthAVIF(depth: Int) throws {
        let eight = SyntheticImages.avif(width: 64, height: 48, seed: 7, quality: 90, depth: 8)
        let deep = SyntheticImages.avif(width: 64, height: 48, seed: 7, quality: 90, depth: depth)
        #expect(!deep.isEmpty)
        let a = try decodePixels(try Thumbnailer.makeThumbnail(from: eight, width: 64, quality: 100).bytes)
        let b = try decodePixels(try Thumbnailer.makeThumbnail(from: deep, width: 64, quality: 100).bytes)
        #expect((b.width, b.height, b.channels) == (64, 48, 3))
        // Two lossy encodes of noise differ by a few levels; a misread depth by a hundred.
        #expect(meanAbsoluteDifference(a, b) < 16, "\(meanAbsoluteDifference(a, b))")
    }

    @Test("every fixture cut short is decode_failed naming its format, whole or streamed",
          arguments: (FormatFixture.opaque + FormatFixture.transparent).filter { $0 != "animated.gif" })
    func truncated(name: String) throws {
        let bytes = try FormatFixture.bytes(name)
        for cut in [bytes.count / 2, bytes.count * 3 / 4] {
            let prefix = Array(bytes.prefix(cut))
            let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.makeThumbnail(from: prefix, width: 32) }
            #expect(error?.data.format == format(of: name).rawValue, "\(name) cut at \(cut)")
            var sizes = ChunkSizes(seed: UInt64(cut))
            #expect(streamedVerdict(prefix, nextSize: { sizes.next() }).verdict == wholeFileVerdict(prefix), "\(name) cut at \(cut)")
        }
    }

    @Test("the streaming verifier accepts each fixture fed in chunks, as validate does",
          arguments: FormatFixture.opaque + FormatFixture.transparent)
    func streamed(name: String) throws {
        let bytes = try FormatFixture.bytes(name)
        var sizes = ChunkSizes(seed: 24)
        let run = streamedVerdict(bytes, nextSize: { sizes.next() })
        #expect(run.verdict == wholeFileVerdict(bytes))
        #expect(run.verdict.isImage)
    }

    @Test("decode costs are decided from the header, before any pixel", arguments: FormatFixture.opaque + FormatFixture.transparent)
    func costs(name: String) throws {
        let bytes = try FormatFixture.bytes(name)
        let cost = try Thumbnailer.thumbnailCost(of: bytes, width: 48)
        #expect(cost.bytes > 96 * 64 * 4)
        #expect(cost.work > 0)
    }
}

@Suite("Imaging: hostile WebP, AVIF and GIF", .timeLimit(.minutes(1)))
struct HostileFormatTests {
    @Test("a GIF with a giant logical screen is too_large before any decode")
    func giantGIFScreen() {
        let gif: [UInt8] = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0, 0] + [0x3B]
        expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(gif) }
        expectRPCError(.tooLarge) { _ = try Thumbnailer.thumbnailCost(of: gif, width: 100) }
    }

    @Test("a GIF whose first frame claims more pixels than the limit is too_large")
    func giantGIFFrame() throws {
        var gif: [UInt8] = Array("GIF89a".utf8) + [0x10, 0x00, 0x10, 0x00, 0x80, 0, 0] + [UInt8](repeating: 0, count: 6)
        // Image descriptor: 65535×65535 at (0, 0), then an LZW minimum code size and nothing.
        gif += [0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x02, 0x00, 0x3B]
        expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(gif) }
    }

    @Test("a GIF with no frame, or too many extension blocks before it, is decode_failed")
    func gifWithoutFrame() {
        let empty: [UInt8] = Array("GIF89a".utf8) + [0x10, 0x00, 0x10, 0x00, 0x00, 0, 0] + [0x3B]
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(empty) }
        #expect(error?.message.contains("first frame") == true, "\(String(describing: error))")
        var comments: [UInt8] = Array("GIF89a".utf8) + [0x10, 0x00, 0x10, 0x00, 0x00, 0, 0]
        for _ in 0...GIFDecoder.extensionLimit { comments += [0x21, 0xFE, 0x01, 0x41, 0x00] }
        comments += [0x3B]
        let many = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(comments) }
        #expect(many?.message.contains("extension blocks") == true, "\(String(describing: many))")
    }

    @Test("a WebP declaring 16384×16384 is too_large, and an animation with no frame decode_failed")
    func hostileWebP() {
        let giant = riff("VP8X", [0, 0, 0, 0, 0xFF, 0x3F, 0x00, 0xFF, 0x3F, 0x00])
        expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(giant) }
        // VP8X with the animation flag (0x02), an ANIM chunk, and no frame.
        var animated = riff("VP8X", [0x02, 0, 0, 0, 15, 0, 0, 15, 0, 0])
        animated += Array("ANIM".utf8) + [6, 0, 0, 0] + [0, 0, 0, 0, 0, 0]
        let size = animated.count - 8
        animated[4] = UInt8(size & 0xFF); animated[5] = UInt8(size >> 8 & 0xFF)
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(animated) }
        #expect(error?.data.format == "webp")
    }

    @Test("an AVIF over the pixel limit is too_large: by its ispe, and by libavif's own limit")
    func hostileAVIF() throws {
        let bytes = try FormatFixture.bytes("rgb.avif")
        expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(bytes, maxPixels: 96 * 64 - 1) }
        // ispe rewritten to 40000×40000: refused from the header, before libavif runs.
        var giant = bytes
        let ispe = try #require(findIndex(of: Array("ispe".utf8), in: giant))
        for (offset, value) in [(ispe + 8, 40_000), (ispe + 12, 40_000)] {
            giant[offset] = UInt8(value >> 24 & 0xFF); giant[offset + 1] = UInt8(value >> 16 & 0xFF)
            giant[offset + 2] = UInt8(value >> 8 & 0xFF); giant[offset + 3] = UInt8(value & 0xFF)
        }
        expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(giant) }
        // libavif's own limit, should a header understate the frame: it refuses it too.
        try bytes.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            #expect(throws: ImagingError.self) { _ = try AVIFDecoder.decode(raw, header: header, maxPixels: 100) }
        }
    }

    @Test("an AVIF without a primary item is refused as decode_failed, saying why")
    func avifWithoutPrimaryItem() throws {
        var bytes = try FormatFixture.bytes("rgb.avif")
        let pitm = try #require(findIndex(of: Array("pitm".utf8), in: bytes))
        bytes.replaceSubrange(pitm..<pitm + 4, with: Array("free".utf8))
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bytes) }
        #expect(error?.data.format == "avif")
        #expect(error?.message.contains("primary item") == true)
    }

    @Test("short bodies that are not ISO-BMFF stay unrecognised; an ftyp prefix asks for more")
    func avifSniffing() throws {
        #expect(try ImageHeaderProbe.probe([0, 0, 0, 0x20, 0x66, 0x74]) == .needMore)
        expectRPCError(.decodeFailed) { _ = try ImageHeaderProbe.probe([0x41, 0x42, 0x43]) }
        // An ftyp box of another brand (an MP4) is not AVIF.
        let mp4: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        expectRPCError(.decodeFailed) { _ = try ImageHeaderProbe.probe(mp4) }
    }

    private func findIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle }
    }
}
