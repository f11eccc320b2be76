@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Delivered files are clean and bounded: no ICC profile, EXIF, text or
/// private chunk beyond a small cap reaches a client; a thumbnail's bytes are bounded by its
/// pixels (`DeliveredFileRules.maxBytes`); clean originals are still passed through as they are.
@Suite("Imaging: delivered files are clean and bounded", .timeLimit(.minutes(3)))
struct DeliveredFileTests {
    private func process(_ body: [UInt8], size: Int) throws -> ThumbnailProcessing.Output {
        try ThumbnailProcessing.process(body, size: size, quality: Thumbnailer.defaultQuality,
                                        maxPixels: Thumbnailer.defaultMaxPixels)
    }

    private func expectBounded(_ output: ThumbnailProcessing.Output, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(output.bytes.count <= DeliveredFileRules.maxBytes(width: output.width, height: output.height),
                "\(output.bytes.count) bytes for \(output.width)×\(output.height)", sourceLocation: sourceLocation)
    }

    private func iccProfile(_ jpeg: [UInt8]) -> [UInt8]? {
        jpeg.withUnsafeBytes { JPEGMetadata(ByteReader($0)).iccProfile }
    }

    static let hugeProfile: [UInt8] = (0..<(10 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    @Test("a 10 MB ICC profile reaches neither a thumbnail nor a passed-through original")
    func hugeICCProfile() throws {
        let wide = ICCSegments.inserting(Self.hugeProfile, into: SyntheticImages.jpeg(width: 640, height: 480))
        #expect(iccProfile(wide)?.count == Self.hugeProfile.count)
        let thumbnail = try Thumbnailer.makeThumbnail(from: wide, width: 16)
        #expect(thumbnail.bytes.count < 20_000)
        #expect(iccProfile(thumbnail.bytes) == nil)

        let narrow = ICCSegments.inserting(Self.hugeProfile, into: SyntheticImages.jpeg(width: 300, height: 200))
        let delivered = try process(narrow, size: 200) // narrower than 2 × size: a pass-through candidate
        #expect((delivered.width, delivered.height) == (300, 200))
        #expect(iccProfile(delivered.bytes) == nil)
        expectBounded(delivered)
    }

    @Test("a 200 px PNG with a 40 MB private chunk is re-encoded without it")
    func hugePrivateChunk() throws {
        var chunks = try #require(PNGChunks(parsing: SyntheticImages.png(width: 200, height: 150)))
        chunks.insert(PNGChunks.Chunk("prVt", [UInt8](repeating: 0x5A, count: 40 << 20)), before: "IDAT")
        let body = chunks.bytes
        #expect(try Thumbnailer.validate(body).width == 200)
        let delivered = try process(body, size: 150)
        #expect((delivered.width, delivered.height) == (200, 150))
        expectBounded(delivered)
        #expect(delivered.bytes.count < 1 << 20)
        if let parsed = PNGChunks(parsing: delivered.bytes) {
            #expect(!parsed.chunks.contains { $0.type == "prVt" })
        }
    }

    @Test("a PNG carrying a zTXt decompression bomb is re-encoded without it")
    func zTXtBomb() throws {
        let dos = try #require(PNGChunks(parsing: try Corpus.bytes("png/pillow/png_decompression_dos.png")))
        let bombs = dos.chunks.filter { $0.type == "zTXt" }
        #expect(!bombs.isEmpty)
        var chunks = try #require(PNGChunks(parsing: SyntheticImages.png(width: 200, height: 150)))
        for bomb in bombs { chunks.insert(bomb, before: "IEND") }
        let delivered = try process(chunks.bytes, size: 150)
        #expect(delivered.width == 200)
        #expect(delivered.bytes != chunks.bytes)
        expectBounded(delivered)
        if let parsed = PNGChunks(parsing: delivered.bytes) {
            #expect(!parsed.chunks.contains { $0.type == "zTXt" })
        }
    }

    @Test("scan data padded far beyond what the pixels need is not passed through")
    func paddedScanData() throws {
        let clean = SyntheticImages.jpeg(width: 120, height: 90)
        // Junk before EOI: libjpeg only warns ("extraneous bytes"), the pixels are whole.
        let padded = Array(clean.dropLast(2)) + [UInt8](repeating: 0x11, count: 2 << 20) + [0xFF, 0xD9]
        #expect(try Thumbnailer.validate(padded).width == 120)
        let delivered = try process(padded, size: 100)
        #expect(delivered.width == 120)
        expectBounded(delivered)
    }

    @Test("clean originals narrower than 2 × size are still passed through byte for byte")
    func cleanPassThrough() throws {
        let jpeg = SyntheticImages.jpeg(width: 300, height: 200)
        let png = SyntheticImages.png(width: 300, height: 200)
        for body in [jpeg, png] {
            let delivered = try process(body, size: 200)
            #expect(delivered.bytes == body)
            expectBounded(delivered)
        }
        // An original that carries a profile (even a small sRGB one) is re-encoded,
        // converted through it; a delivered file never carries a profile.
        let smallProfile = try Corpus.bytes("jpeg/jpeg-decoder/mozilla/jpg-srgb-icc.jpg")
        let delivered = try process(smallProfile, size: 200)
        #expect(delivered.bytes != smallProfile)
        #expect(iccProfile(delivered.bytes) == nil)
        expectBounded(delivered)
    }

    @Test("an original with a damaged trailer is delivered re-encoded, whole")
    func damagedTrailerReEncoded() throws {
        let jpeg = Array(SyntheticImages.jpeg(width: 300, height: 200).dropLast(2))
        let delivered = try process(jpeg, size: 200)
        #expect(Array(delivered.bytes.suffix(2)) == [0xFF, 0xD9])
        #expect(delivered.width == 300)
        var png = try #require(PNGChunks(parsing: SyntheticImages.png(width: 300, height: 200)))
        png.chunks.removeAll { $0.type == "IEND" }
        let deliveredPNG = try process(png.bytes, size: 200)
        #expect(deliveredPNG.bytes != png.bytes)
        #expect(deliveredPNG.width == 300)
    }

    @Test("the byte bound saturates on absurd sizes and grows with the pixels")
    func boundArithmetic() {
        #expect(DeliveredFileRules.maxBytes(width: Int.max, height: Int.max) == Int.max)
        #expect(DeliveredFileRules.maxBytes(width: 1 << 40, height: 1 << 40) == Int.max)
        #expect(DeliveredFileRules.maxBytes(width: -5, height: 0) > 0)
        #expect(DeliveredFileRules.maxBytes(width: 16, height: 16) == 6 * 256 + 2048 + DeliveredFileRules.maxMetadataBytes)
        #expect(DeliveredFileRules.maxBytes(width: 400, height: 300) < DeliveredFileRules.maxBytes(width: 800, height: 600))
    }
}
