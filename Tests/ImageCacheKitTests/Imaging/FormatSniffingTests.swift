@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: format sniffing", .timeLimit(.minutes(1)))
struct FormatSniffingTests {
    @Test("JPEG and PNG are recognised by their magic numbers")
    func recognisesJPEGAndPNG() throws {
        #expect(ImageFormat.sniff(try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")) == .jpeg)
        #expect(ImageFormat.sniff(try Corpus.bytes("pngsuite/basn2c08.png")) == .png)
    }

    @Test("a .jpg file that holds a PNG is sniffed as PNG")
    func contentBeatsExtension() throws {
        let bytes = try Corpus.bytes("jpeg/jpeg-decoder/mozilla/jpg-size-6x6.jpg")
        #expect(ImageFormat.sniff(bytes) == .png)
        #expect(try Thumbnailer.validate(bytes).width == 6)
    }

    @Test("GIF and WebP are recognised and their dimensions read")
    func gifAndWebPDimensions() throws {
        let gif: [UInt8] = Array("GIF89a".utf8) + [0x40, 0x01, 0xF0, 0x00] + [0x80, 0, 0]
        #expect(try ImageHeaderProbe.probe(gif) == .header(ImageHeader(format: .gif, storedWidth: 320, storedHeight: 240)))
        // Lossy VP8: frame tag, start code, 14-bit width/height.
        let vp8 = riff("VP8 ", [0x9D, 0x01, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01])
        guard case .header(let lossy) = try ImageHeaderProbe.probe(vp8) else { Issue.record("VP8 not read"); return }
        #expect((lossy.format, lossy.width, lossy.height) == (.webp, 640, 480))
        // Lossless VP8L: signature 0x2F, then (width-1) and (height-1) in 14 bits each, alpha bit.
        let bits = (100 - 1) | (50 - 1) << 14 | 1 << 28
        let vp8l = riff("VP8L", [0x2F, UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)])
        guard case .header(let lossless) = try ImageHeaderProbe.probe(vp8l) else { Issue.record("VP8L not read"); return }
        #expect((lossless.width, lossless.height, lossless.hasAlpha) == (100, 50, true))
        // Extended VP8X: flags (alpha 0x10), 3 reserved, 24-bit (width-1), 24-bit (height-1).
        let vp8x = riff("VP8X", [0x10, 0, 0, 0, 0xFF, 0x0F, 0x00, 0x7F, 0x07, 0x00])
        guard case .header(let extended) = try ImageHeaderProbe.probe(vp8x) else { Issue.record("VP8X not read"); return }
        #expect((extended.width, extended.height, extended.hasAlpha) == (4096, 1920, true))
    }

    @Test("a GIF or WebP of a header alone is decode_failed naming the format (their decoding: FormatDecodingTests)")
    func gifAndWebPHeadersAloneFail() {
        let gif: [UInt8] = Array("GIF87a".utf8) + [0x10, 0x00, 0x10, 0x00] + [0, 0, 0]
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(gif) }
        #expect(error?.data.format == "gif")
        let webp = riff("VP8X", [0, 0, 0, 0, 9, 0, 0, 9, 0, 0])
        let webpError = expectRPCError(.decodeFailed) { _ = try Thumbnailer.makeThumbnail(from: webp, width: 4) }
        #expect(webpError?.data.format == "webp")
    }

    @Test("unknown bytes fail with decode_failed quoting what was seen")
    func unknownBytes() {
        let error = expectRPCError(.decodeFailed) { _ = try ImageHeaderProbe.probe(Array("<!DOCTYPE html>".utf8)) }
        #expect(error?.message.contains("3C 21 44 4F") == true)
        #expect(error?.data.format == nil)
        expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate([]) }
    }

    @Test("a prefix of a magic number asks for more bytes")
    func partialMagicNeedsMore() throws {
        #expect(try ImageHeaderProbe.probe([]) == .needMore)
        #expect(try ImageHeaderProbe.probe([0xFF]) == .needMore)
        #expect(try ImageHeaderProbe.probe([0x89, 0x50, 0x4E]) == .needMore)
        #expect(try ImageHeaderProbe.probe(Array("RIFF".utf8) + [1, 2, 3, 4, 0x57]) == .needMore)
        expectRPCError(.decodeFailed) { _ = try ImageHeaderProbe.probe([0x89, 0x51]) }
    }

}

/// A RIFF/WEBP container holding one chunk.
func riff(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
    let size = UInt32(4 + 8 + payload.count)
    return Array("RIFF".utf8) + withUnsafeBytes(of: size.littleEndian, Array.init) + Array("WEBP".utf8)
        + Array(chunk.utf8) + withUnsafeBytes(of: UInt32(payload.count).littleEndian, Array.init) + payload
}
