@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// `StreamingVerifier` against `Thumbnailer.validate` on real files: the same verdict and
/// header however the body is cut into chunks, incomplete bodies refused at the end, corrupt
/// ones before it, headers and decode memory known before the decode allocates.
@Suite("Streaming verification", .timeLimit(.minutes(3)))
struct StreamingVerifierTests {
    @Test("every corpus image: the same verdict and header as validate, fed in random chunks of 1 B to 64 KiB")
    func corpusVerdictsMatchValidate() throws {
        let paths = try corpusImages()
        #expect(paths.count > 400)
        var mismatches: [String] = []
        var accepted = 0
        for (index, path) in paths.enumerated() {
            let bytes = try Corpus.bytes(path)
            let whole = wholeFileVerdict(bytes)
            var sizes = ChunkSizes(seed: 0x5EED_0000 + UInt64(index))
            let streamed = streamedVerdict(bytes) { sizes.next() }
            if streamed.verdict != whole {
                mismatches.append("\(path): streamed \(streamed.verdict) (\(streamed.error?.message ?? "-")), validate \(whole)")
            }
            if whole.isImage { accepted += 1 }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches:\n\(mismatches.joined(separator: "\n"))")
        // Both outcomes are exercised: the corpus holds hundreds of good and of broken images.
        #expect(accepted > 200 && accepted < paths.count - 50, "\(accepted) of \(paths.count) accepted")
    }

    @Test("cut at 10, 50 and 99 %: every feed passes, finish refuses as validate does")
    func truncatedBodiesAreIncompleteAtFinish() throws {
        var mismatches: [String] = []
        var refusedCuts = 0
        var cuts = 0
        for path in try corpusImages() {
            let bytes = try Corpus.bytes(path)
            guard wholeFileVerdict(bytes).isImage, bytes.count >= 100 else { continue }
            for percent in [10, 50, 99] {
                let cut = Array(bytes.prefix(bytes.count * percent / 100))
                let whole = wholeFileVerdict(cut)
                var sizes = ChunkSizes(seed: UInt64(bytes.count * percent))
                let streamed = streamedVerdict(cut) { sizes.next() }
                cuts += 1
                if streamed.verdict != whole {
                    mismatches.append("\(path) at \(percent) %: streamed \(streamed.verdict), validate \(whole)")
                }
                // The bytes that arrived were good: only the end can say the body is short.
                if let fed = streamed.refusedAfter {
                    mismatches.append("\(path) at \(percent) %: refused by a feed after \(fed) bytes: \(streamed.error!)")
                }
                if !streamed.verdict.isImage { refusedCuts += 1 }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(refusedCuts > cuts * 3 / 4, "\(refusedCuts) of \(cuts) cuts refused")

        // Photos without a trailer: every cut is refused, at finish.
        for path in try Corpus.files(in: "jpeg/exif-orientation-examples", withExtension: "jpg") {
            let bytes = try Corpus.bytes(path)
            for percent in [10, 50, 99] {
                let run = streamedVerdict(Array(bytes.prefix(bytes.count * percent / 100))) { 4096 }
                #expect(run.verdict == .refused(.decodeFailed, format: "jpeg"), "\(path) at \(percent) %")
                #expect(run.refusedAfter == nil, "\(path) at \(percent) %")
            }
        }
    }

    @Test("a corrupt middle is refused before the end of the body (baseline JPEG, progressive JPEG, PNG)")
    func corruptMiddleIsRefusedEarly() throws {
        let photo = noisyPicture(width: 640, height: 480)
        let baseline = try JPEGEncoder.encode(photo, quality: 90)
        let png = try PNGEncoder.encode(photo)
        let progressive = try Corpus.bytes("jpeg/exif-orientation-examples/Landscape_1.jpg")
        let cases: [(String, [UInt8], ImageFormat)] = [("baseline JPEG", baseline, .jpeg), ("PNG", png, .png),
                                                        ("corpus JPEG", progressive, .jpeg)]
        for (name, bytes, format) in cases {
            #expect(wholeFileVerdict(bytes).isImage, "\(name) is valid before damage")
            var damaged = bytes
            let middle = bytes.count / 2
            if format == .jpeg {
                // A restart marker where the data has none: the decoder stops there and warns.
                damaged[middle] = 0xFF
                damaged[middle + 1] = 0xD5
            } else {
                damaged[middle] ^= 0x55 // inside an IDAT: a zlib error or the chunk's CRC
            }
            #expect(wholeFileVerdict(damaged) == .refused(.decodeFailed, format: format.rawValue), "\(name)")
            let run = streamedVerdict(damaged) { 4096 }
            #expect(run.verdict == .refused(.decodeFailed, format: format.rawValue), "\(name): \(run.verdict)")
            let fed = try #require(run.refusedAfter, "\(name): refused only at finish: \(String(describing: run.error))")
            #expect(fed < bytes.count * 3 / 4, "\(name): refused after \(fed) of \(bytes.count) bytes")
        }
    }

    @Test("byte-at-a-time feeding gives the same verdicts",
          arguments: ["jpeg/libjpeg-turbo/testorig.jpg", "jpeg/libjpeg-turbo/testimgp.jpg",
                      "jpeg/libjpeg-turbo/testimgari.jpg", "jpeg/pillow/pil_sample_cmyk.jpg",
                      "jpeg/pillow/truncated_jpeg.jpg", "jpeg/pillow/junk_jpeg_header.jpg",
                      "pngsuite/basi2c16.png", "pngsuite/basn6a08.png", "png/pillow/truncated_image.png"])
    func byteAtATime(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let whole = wholeFileVerdict(bytes)
        let streamed = streamedVerdict(bytes) { 1 }
        #expect(streamed.verdict == whole, "\(path): \(String(describing: streamed.error))")
    }

    /// libjpeg-turbo decodes an MCU on its fast Huffman path only with 512 bytes per block
    /// buffered, and only its slow path warns of a bad code: the streaming decoder must take
    /// the path a whole-buffer decode takes for every MCU, or the verdict depends on the cuts.
    @Test("a bad Huffman code in a baseline scan: validate's verdict however the body is cut")
    func badHuffmanCodeVerdictIgnoresTheCuts() throws {
        let bytes = try JPEGEncoder.encode(noisyPicture(width: 256, height: 256), quality: 90)
        var middle = bytes.count / 2
        while bytes[middle - 1] == 0xFF || bytes[middle] == 0xFF { middle += 1 }
        // 32 one-bits (each 0xFF stuffed with a zero): no code of a JPEG Huffman table is 16
        // ones, so wherever in them the next code starts, it is a bad one.
        let damaged = Array(bytes[..<middle]) + [0xFF, 0x00, 0xFF, 0x00, 0xFF, 0x00, 0xFF, 0x00] + Array(bytes[middle...])
        let whole = wholeFileVerdict(damaged)
        for chunk in [1, 97, 4096, 65_536] {
            let streamed = streamedVerdict(damaged) { chunk }
            #expect(streamed.verdict == whole, "chunks of \(chunk): \(String(describing: streamed.error))")
        }
    }

    @Test("a header over max_image_pixels is too_large as soon as it arrives")
    func tooLargeAtTheHeader() throws {
        let bytes = try Corpus.bytes("jpeg/exif-orientation-examples/Landscape_1.jpg")
        let run = streamedVerdict(bytes, maxPixels: 10_000) { 512 }
        #expect(run.verdict == .refused(.tooLarge, format: nil))
        #expect(wholeFileVerdict(bytes, maxPixels: 10_000) == run.verdict)
        let fed = try #require(run.refusedAfter)
        #expect(fed < 64 * 1024, "refused after \(fed) bytes")
    }

    @Test("decode memory is known before the decode allocates it, from the header")
    func memoryCostBeforeTheDecode() throws {
        for (path, progressive) in [("jpeg/libjpeg-turbo/testimgp.jpg", true), ("jpeg/libjpeg-turbo/testorig.jpg", false)] {
            let bytes = try Corpus.bytes(path)
            let verifier = StreamingVerifier()
            var fed = 0
            while verifier.memoryCost == nil && fed < bytes.count {
                try verifier.feed(Array(bytes[fed..<(fed + 1)]))
                fed += 1
            }
            let cost = try #require(verifier.memoryCost, "\(path)")
            let header = try #require(verifier.header)
            #expect(fed < bytes.count / 2, "\(path): known after \(fed) of \(bytes.count) bytes")
            let survey = bytes.withUnsafeBytes { JPEGScanSurvey(ByteReader($0)) }
            let coefficients = survey.totalBlocks * 128
            let decodeBytes = cost - DecodeCost.fixedOverhead
            if progressive {
                #expect(decodeBytes >= coefficients, "\(path): \(decodeBytes) < \(coefficients)")
            } else {
                #expect(decodeBytes < coefficients / 2, "\(path): a baseline decode keeps one MCU row, not \(decodeBytes) bytes")
            }
            try verifier.feed(Array(bytes[fed...]))
            #expect(try verifier.finish() == header)
        }
        let png = try Corpus.bytes("pngsuite/basn6a16.png")
        let verifier = StreamingVerifier()
        try verifier.feed(Array(png.prefix(PNGHeaderParser.headerLength)))
        #expect(verifier.memoryCost ?? 0 > 0)
    }

    @Test("a damaged GIF is refused as validate refuses it, once complete (GIF, WebP, AVIF decode whole files)")
    func otherFormatsAsValidate() throws {
        let gif: [UInt8] = Array("GIF89a".utf8) + [16, 0, 8, 0, 0xF7, 0, 0] + [UInt8](repeating: 0, count: 200)
        let verifier = StreamingVerifier()
        let run = streamedVerdict(gif, verifier: verifier) { 3 }
        #expect(run.verdict == wholeFileVerdict(gif))
        #expect(run.verdict == .refused(.decodeFailed, format: "gif"))
        #expect(run.refusedAfter == nil)  // by finish(), which decodes the first frame
        #expect(verifier.decodesAtFinish)
        #expect(streamedVerdict([]) { 1 }.verdict == wholeFileVerdict([]))
        #expect(streamedVerdict([0xFF]) { 1 }.verdict == wholeFileVerdict([0xFF]))
    }

    @Test("reset() starts a new body; an error sticks until then")
    func resetForARestartedBody() throws {
        let jpeg = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        let png = try Corpus.bytes("pngsuite/basn2c08.png")
        let verifier = StreamingVerifier()
        try verifier.feed(Array(jpeg.prefix(jpeg.count / 2)))
        #expect(verifier.bytesFed == jpeg.count / 2)
        verifier.reset()
        #expect(verifier.header == nil && verifier.bytesFed == 0)
        try verifier.feed(png)
        #expect(try verifier.finish().format == .png)

        verifier.reset()
        #expect(throws: ImagingError.self) { try verifier.feed([0x00, 0x01, 0x02, 0x03]) }
        #expect(throws: ImagingError.self) { try verifier.feed(jpeg) }
        #expect(throws: ImagingError.self) { _ = try verifier.finish() }
        verifier.reset()
        try verifier.feed(jpeg)
        #expect(try verifier.finish() == (try Thumbnailer.validate(jpeg)))
    }

    /// A picture of noise (nothing compresses away), so an encoded body is large.
    private func noisyPicture(width: Int, height: Int) -> PixelBuffer {
        var random = SplitMix64(seed: 20)
        let pixels = (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &random) }
        return PixelBuffer(width: width, height: height, channels: 3, pixels: pixels)
    }
}

/// A PNG whose zlib stream ends in a later IDAT chunk than its last row: libpng's pull reader
/// used to read on into that chunk (and refuse a bad CRC or a missing chunk there) while the
/// streaming verifier stopped after the chunk the rows end in. `scripts/fuzz stream-verify`
/// found it on CI (2026-11-26). Both now stop there: nothing after it holds a pixel.
@Suite("Streaming verification: PNG image data ending before its zlib stream", .timeLimit(.minutes(1)))
struct StreamingPNGEndTests {
    /// A 32×32 grey picture, its rows stored uncompressed (zlib stored blocks).
    private static let width = 32, height = 32
    private static let zlib: [UInt8] = {
        var rows: [UInt8] = []
        for y in 0..<height {
            rows.append(0) // filter: none
            for x in 0..<width { rows.append(UInt8((x * 7 + y * 5) & 0xFF)) }
        }
        return PNGChunks.storedZlib(rows)
    }()

    /// IHDR, then the image data cut into chunks at `cuts` (offsets into the zlib stream),
    /// then IEND; the chunk at `badCRC` (an index into those IDATs) gets a wrong CRC.
    private static func png(cuts: [Int], dropTail: Int = 0, badCRC: Int? = nil) -> [UInt8] {
        let header = PNGChunks.bigEndian(UInt32(width)) + PNGChunks.bigEndian(UInt32(height)) + [8, 0, 0, 0, 0]
        var bytes = PNGChunks([PNGChunks.Chunk("IHDR", header)]).bytes
        let data = Array(zlib.dropLast(dropTail))
        let bounds = [0] + cuts + [data.count]
        for index in 0..<(bounds.count - 1) {
            var chunk = PNGChunks.encode(PNGChunks.Chunk("IDAT", Array(data[bounds[index]..<bounds[index + 1]])))
            if index == badCRC { chunk[chunk.count - 1] ^= 0xFF }
            bytes += chunk
        }
        return bytes + PNGChunks.encode(PNGChunks.Chunk("IEND", []))
    }

    private static func verdicts(_ bytes: [UInt8]) -> (whole: VerifierVerdict, streamed: [VerifierVerdict]) {
        let whole = wholeFileVerdict(bytes)
        let streamed = [1, 7, 64, bytes.count].map { chunk in streamedVerdict(bytes) { chunk }.verdict }
        return (whole, streamed)
    }

    @Test("the rows end with the first IDAT; the zlib checksum, in a second one with a bad CRC or missing, costs no pixel")
    func streamEndsInALaterChunk() throws {
        let adler = Self.zlib.count - 4
        for (name, bytes) in [("checksum in an IDAT with a bad CRC", Self.png(cuts: [adler], badCRC: 1)),
                              ("no checksum, IEND next", Self.png(cuts: [], dropTail: 4)),
                              ("checksum in an empty-then-bad pair", Self.png(cuts: [adler, adler], badCRC: 2))] {
            let (whole, streamed) = Self.verdicts(bytes)
            #expect(whole == .image(try Thumbnailer.validate(Self.png(cuts: []))), "\(name): validate \(whole)")
            #expect(streamed.allSatisfy { $0 == whole }, "\(name): streamed \(streamed)")
            // The decode reads the same bytes: every pixel, the same thumbnail as the well-formed file's.
            let thumbnail = try Thumbnailer.makeThumbnail(from: bytes, width: 16)
            let reference = try Thumbnailer.makeThumbnail(from: Self.png(cuts: []), width: 16)
            #expect(thumbnail.bytes == reference.bytes, "\(name)")
        }
    }

    @Test("a bad CRC in the chunk the last row ends in, or a row cut short, is refused by both")
    func theLastRowsChunkIsChecked() throws {
        let adler = Self.zlib.count - 4
        for (name, bytes) in [("the rows' chunk has a bad CRC", Self.png(cuts: [adler], badCRC: 0)),
                              ("the last row ends in the chunk with a bad CRC", Self.png(cuts: [adler - 10], badCRC: 1)),
                              ("the last row is cut short", Self.png(cuts: [], dropTail: 10))] {
            let (whole, streamed) = Self.verdicts(bytes)
            #expect(whole == .refused(.decodeFailed, format: "png"), "\(name): validate \(whole)")
            #expect(streamed.allSatisfy { $0 == whole }, "\(name): streamed \(streamed)")
        }
    }
}

/// Inputs the `stream-verify` fuzz target found (Tests/ImageCacheKitTests/Fuzz/Inputs).
@Suite("Streaming verification: fuzz findings", .timeLimit(.minutes(1)))
struct StreamingVerifierFuzzTests {
    /// Found by `scripts/fuzz 120 stream-verify` (2026-11-26): a 32×32 Adobe CMYK JPEG whose
    /// entropy data holds a bad Huffman code. Fed in the fuzzer's chunks, libjpeg took its slow
    /// Huffman path (few bytes buffered), which warns of the bad code (JWRN_HUFF_BAD_CODE), and
    /// the body was refused; TurboJPEG on the whole buffer takes the fast path, which decodes
    /// it silently, and `validate` accepts it. The streaming decoder now holds back an MCU
    /// until the whole-buffer decode's path is certain (`ic_stream_decode_mcu`), so the two
    /// verdicts agree, byte by byte as in one piece.
    @Test("a CMYK JPEG with a bad Huffman code: streaming and validate agree, whatever the chunks")
    func cmykBadHuffmanCode() throws {
        let bytes = try FuzzRegressionTests.input("stream-verify-cmyk-bad-huffman-code")
        let whole = wholeFileVerdict(bytes, maxPixels: 1 << 20)
        #expect(whole.isImage)
        for chunk in [1, 3, 64, bytes.count] {
            let streamed = streamedVerdict(bytes, maxPixels: 1 << 20) { chunk }
            #expect(streamed.verdict == whole, "chunks of \(chunk): \(String(describing: streamed.error))")
        }
    }

    /// Found by `scripts/fuzz stream-verify` on CI (2026-11-30): a 1×1 grey PNG whose zlib
    /// checksum is wrong. `validate` met the checksum in the inflate call that completed the
    /// row and refused it ("IDAT: incorrect data check"); fed in small pieces, the progressive
    /// reader completed the row first and met the checksum in a later call, where libpng only
    /// warns, and accepted it. CI kept no copy of the input: this one (32×32, rows stored, the
    /// checksum inverted) fails the same way. The streaming verifier now gives libpng the pull
    /// reader's reads of the image data (`PNGImageDataReads`).
    @Test("a PNG with a bad zlib checksum beside its last row: streaming and validate agree, whatever the chunks")
    func pngChecksumWithTheLastRow() throws {
        let bytes = try FuzzRegressionTests.input("stream-verify-png-checksum-with-last-row")
        let whole = wholeFileVerdict(bytes)
        #expect(whole == .refused(.decodeFailed, format: "png"))
        for chunk in [1, 2, 3, 5, 64, bytes.count] {
            let streamed = streamedVerdict(bytes) { chunk }
            #expect(streamed.verdict == whole, "chunks of \(chunk): \(String(describing: streamed.error))")
        }
    }
}
