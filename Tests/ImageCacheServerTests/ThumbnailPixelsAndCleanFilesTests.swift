import Foundation
@testable import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// Thumbnails through a real daemon's socket against a loopback image server that
/// sends exactly the hostile body: wrong pixels are refused (1008), complete pixels with a
/// damaged trailer are shown, 16-bit PNGs have the right brightness, and what reaches a client
/// carries no outsized metadata and has bytes bounded by its pixels.
@Suite("Thumbnails: right pixels, clean files", .timeLimit(.minutes(5)))
struct ThumbnailPixelsAndCleanFilesTests {
    private func show(_ f: ThumbnailFixture, _ client: RawClient, id: Int, path: String, body: [UInt8],
                      contentType: String = "image/jpeg", size: Int, inline: Bool = false) async throws -> [String: Any] {
        f.images.serve(path, body: body, contentType: contentType)
        return try await client.ask(id, "thumbnail.show",
                                    ["slot": id, "url": f.images.url(path), "size": size, "inline": inline], timeout: 120)
    }

    private func deliveredFile(_ result: [String: Any]) throws -> [UInt8] {
        let path = try #require(result["path"] as? String)
        return [UInt8](try #require(FileManager.default.contents(atPath: path)))
    }

    private func expectBounded(_ result: [String: Any], _ file: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let width = result["width"] as? Int ?? 0, height = result["height"] as? Int ?? 0
        #expect(file.count <= DeliveredFileRules.maxBytes(width: width, height: height),
                "\(file.count) bytes for \(width)×\(height)", sourceLocation: sourceLocation)
        #expect(result["bytes"] as? Int == file.count, sourceLocation: sourceLocation)
    }

    @Test("wrong pixels are 1008 decode_failed: cut at 60 % + EOI, a 7000×7000 frame over a small file, arithmetic SOF over Huffman data")
    func wrongPixelsRefused() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let photo = SyntheticImages.jpeg(width: 800, height: 600)
            let cut = Array(photo.prefix(photo.count * 6 / 10)) + [0xFF, 0xD9]
            var huge = SyntheticImages.jpeg(width: 64, height: 48)
            var mismatch = photo
            let sof = try #require(frameOffset(huge)), photoSOF = try #require(frameOffset(photo))
            huge.replaceSubrange((sof + 5)..<(sof + 9), with: [0x1B, 0x58, 0x1B, 0x58]) // 7000×7000
            mismatch[photoSOF + 1] = 0xC9
            for (id, (name, body)) in [("cut", cut), ("huge", huge), ("mismatch", mismatch)].enumerated() {
                let answer = try await show(f, client, id: id + 1, path: "/\(name).jpg", body: body, size: 200)
                #expect(answer.errorCode == 1008, "\(name): \(answer)")
                #expect(answer.errorKind == "decode_failed", "\(name): \(answer)")
            }
            await client.close()
        }
    }

    @Test("complete pixels with a damaged trailer are shown: a JPEG without EOI, a PNG with a mangled chunk before IEND")
    func damagedTrailerShown() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let jpeg = Array(SyntheticImages.jpeg(width: 300, height: 200).dropLast(2))
            var png = try #require(PNGChunks(parsing: SyntheticImages.png(width: 300, height: 200)))
            png.insert(PNGChunks.Chunk("tEXt", Array("Comment\0x".utf8)), before: "IEND")
            var pngBytes = png.bytes
            pngBytes[pngBytes.count - 13] ^= 0xFF // the tEXt chunk's CRC
            for (id, (path, body, type)) in [("/no-eoi.jpg", jpeg, "image/jpeg"), ("/mangled.png", pngBytes, "image/png")].enumerated() {
                let answer = try await show(f, client, id: id + 1, path: path, body: body, contentType: type, size: 200)
                let result = try #require(answer.resultObject, "\(path): \(answer)")
                #expect((result["width"] as? Int, result["height"] as? Int) == (300, 200), "\(path)")
                let file = try deliveredFile(result)
                #expect(file != body, "\(path): a damaged file is re-encoded, not handed on")
                #expect(try Thumbnailer.validate(file).width == 300)
                expectBounded(result, file)
            }
            await client.close()
        }
    }

    @Test("a 16-bit PNG without gAMA is shown with Pillow's brightness, not linear light")
    func sixteenBitBrightness() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let width = 512, height = 64
            var samples: [UInt16] = []
            for _ in 0..<height {
                for x in 0..<width { samples += Array(repeating: UInt16(x * 65_535 / (width - 1)), count: 3) }
            }
            let png = PNGChunks.sixteenBit(width: width, height: height, channels: 3, samples: samples)
            let answer = try await show(f, client, id: 1, path: "/ramp16.png", body: png, contentType: "image/png", size: 128)
            let result = try #require(answer.resultObject, "\(answer)")
            #expect(result["width"] as? Int == 128)
            let file = try deliveredFile(result)
            let pixels = try file.withUnsafeBytes { raw in
                let header = try ImageHeaderProbe.header(ofComplete: raw)
                return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: header.storedWidth).pixels
            }
            // Column x of the thumbnail shows source column ≈ x × 4: Pillow's value is its high byte.
            var total = 0, count = 0
            for x in 2..<(pixels.width - 2) {
                let expected = Int(UInt16((x * 4 + 2) * 65_535 / (width - 1)) >> 8)
                let decoded = Int(pixels.pixels[(pixels.height / 2 * pixels.width + x) * pixels.channels])
                total += abs(decoded - expected)
                count += 1
            }
            // Linear-light decoding was 24–65/255 off in the mid-tones; JPEG adds ±1–2.
            #expect(Double(total) / Double(count) < 3, "mean difference \(Double(total) / Double(count))")
            await client.close()
        }
    }

    @Test("outsized metadata never reaches a client: a 10 MB ICC profile, a 40 MB private chunk, a zTXt bomb")
    func outsizedMetadataStripped() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let profile = (0..<(10 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let iccWide = ICCSegments.inserting(profile, into: SyntheticImages.jpeg(width: 640, height: 480))
            let iccNarrow = ICCSegments.inserting(profile, into: SyntheticImages.jpeg(width: 300, height: 200))
            var privateChunk = try #require(PNGChunks(parsing: SyntheticImages.png(width: 200, height: 150)))
            privateChunk.insert(PNGChunks.Chunk("prVt", [UInt8](repeating: 0x5A, count: 40 << 20)), before: "IDAT")
            var bomb = try #require(PNGChunks(parsing: SyntheticImages.png(width: 200, height: 150)))
            let dos = try #require(PNGChunks(parsing: try Corpus.bytes("png/pillow/png_decompression_dos.png")))
            for chunk in dos.chunks where chunk.type == "zTXt" { bomb.insert(chunk, before: "IEND") }

            let cases: [(String, [UInt8], String, Int, Bool)] = [
                ("/icc-wide.jpg", iccWide, "image/jpeg", 16, true), ("/icc-narrow.jpg", iccNarrow, "image/jpeg", 200, false),
                ("/private.png", privateChunk.bytes, "image/png", 150, false), ("/ztxt.png", bomb.bytes, "image/png", 150, false),
            ]
            for (id, (path, body, type, size, inline)) in cases.enumerated() {
                let answer = try await show(f, client, id: id + 1, path: path, body: body, contentType: type, size: size, inline: inline)
                let result = try #require(answer.resultObject, "\(path): \(answer)")
                let file = try deliveredFile(result)
                expectBounded(result, file)
                #expect(file.count < 1 << 20, "\(path): \(file.count) bytes")
                #expect(file.withUnsafeBytes { JPEGMetadata(ByteReader($0)).iccProfile } == nil, "\(path)")
                if let chunks = PNGChunks(parsing: file) {
                    #expect(!chunks.chunks.contains { ["prVt", "zTXt"].contains($0.type) }, "\(path)")
                }
                if inline {
                    let data = try #require(result["data"] as? String)
                    #expect(data.utf8.count < 40_000, "\(path): inline answer of \(data.utf8.count) bytes")
                }
            }
            await client.close()
        }
    }

    @Test("a clean original narrower than 2 × size is still passed through byte for byte")
    func cleanPassThrough() async throws {
        try await ThumbnailFixture.with { f in
            let client = try await f.connect()
            let body = SyntheticImages.jpeg(width: 300, height: 200)
            let answer = try await show(f, client, id: 1, path: "/clean.jpg", body: body, size: 200)
            let result = try #require(answer.resultObject, "\(answer)")
            #expect(try deliveredFile(result) == body)
            await client.close()
        }
    }

    private func frameOffset(_ jpeg: [UInt8]) -> Int? {
        jpeg.withUnsafeBytes { raw in
            guard case .header(_, let offset) = JPEGHeaderParser.parse(ByteReader(raw)) else { return nil }
            return offset
        }
    }
}
