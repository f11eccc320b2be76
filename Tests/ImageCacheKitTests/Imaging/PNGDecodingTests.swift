@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

@Suite("Imaging: PNG decoding", .timeLimit(.minutes(3)))
struct PNGDecodingTests {
    @Test("every PngSuite image decodes with its size, except the x* files, which fail")
    func pngSuite() throws {
        let files = try Corpus.files(in: "pngsuite", withExtension: "png")
        #expect(files.count == 175)
        var decoded = 0, refused = 0
        for path in files {
            let name = String(path.split(separator: "/").last!.dropLast(4))
            let bytes = try Corpus.bytes(path)
            if name.hasPrefix("x") {
                let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bytes) }
                if error != nil { refused += 1 }
                continue
            }
            let header = try Thumbnailer.validate(bytes)
            #expect((header.width, header.height) == Self.expectedSize(name), "\(name)")
            let pixels = try bytes.withUnsafeBytes { try PNGDecoder.decode($0) }
            #expect(pixels.width == header.width && pixels.height == header.height, "\(name)")
            decoded += 1
        }
        #expect((decoded, refused) == (161, 14))
    }

    @Test("alpha is kept: colour types 4 and 6 and tRNS decode to RGBA with translucent pixels")
    func alphaIsKept() throws {
        for name in ["basn6a08", "basn4a16", "tbrn2c08", "tm3n3p02"] {
            let pixels = try Corpus.bytes("pngsuite/\(name).png").withUnsafeBytes { try PNGDecoder.decode($0) }
            #expect(pixels.channels == 4, "\(name)")
            #expect(pixels.hasTranslucentPixels, "\(name)")
        }
        let opaque = try Corpus.bytes("pngsuite/basn2c16.png").withUnsafeBytes { try PNGDecoder.decode($0) }
        #expect(opaque.channels == 3)
        let grey = try Corpus.bytes("pngsuite/basn0g04.png").withUnsafeBytes { try PNGDecoder.decode($0) }
        #expect(grey.channels == 1)
    }

    @Test("interlaced and non-interlaced encodings of one picture decode to the same pixels")
    func interlacedMatchesPlain() throws {
        let suffixes = ["0g01", "0g02", "0g04", "0g08", "0g16", "2c08", "2c16", "3p01", "3p02", "3p04", "3p08",
                        "4a08", "4a16", "6a08", "6a16"]
        for pair in suffixes.map({ ("basn" + $0, "basi" + $0) }) {
            let plain = try Corpus.bytes("pngsuite/\(pair.0).png").withUnsafeBytes { try PNGDecoder.decode($0) }
            let interlaced = try Corpus.bytes("pngsuite/\(pair.1).png").withUnsafeBytes { try PNGDecoder.decode($0) }
            let (a, b) = (Self.visible(plain), Self.visible(interlaced))
            let largest = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(a.count == b.count && largest == 0, "\(pair): largest difference \(largest)")
        }
    }

    @Test("the other PNG folders match the libpng baseline")
    func otherPNGFoldersMatchBaseline() throws {
        let expectations = try CorpusExpectations.shared()
        let entries = expectations.under("png/image-png") + expectations.under("png/libpng-crashers")
            + expectations.under("png/pillow")
        #expect(entries.count == 53)
        // Policy difference, by design: the baseline read to IEND with png_read_end,
        // so complete rows with a damaged trailer failed there; they are accepted here.
        let completeRows: Set<String> = ["png/pillow/truncated_end_chunk.png"]
        for entry in entries {
            let bytes = try Corpus.bytes(entry.path)
            switch entry.verdict {
            case "fails" where completeRows.contains(entry.path):
                #expect(try Thumbnailer.validate(bytes).width == entry.width, "\(entry.path)")
            case "fails":
                let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bytes) }
                #expect(error?.data.format == (ImageFormat.sniff(bytes)?.rawValue), "\(entry.path)")
            default:
                let header = try Thumbnailer.validate(bytes)
                #expect((header.width, header.height) == (entry.width, entry.height), "\(entry.path)")
            }
        }
    }

    // A PNG whose rows are all present but whose IEND is cut off is shown, as browsers show
    // it (its pixels are complete); an earlier version refused it.
    @Test("a PNG whose rows are all present but whose IEND is cut off is accepted")
    func truncatedEndChunk() throws {
        let header = try Thumbnailer.validate(try Corpus.bytes("png/pillow/truncated_end_chunk.png"))
        #expect((header.width, header.height) == (128, 128))
    }

    @Test("a PNG cut anywhere before its last row is refused, never half accepted; a cut in IEND is not damage")
    func truncatedAnywhere() throws {
        let bytes = try Corpus.bytes("pngsuite/basn2c08.png")
        let iend = bytes.count - 12
        for length in stride(from: 33, to: bytes.count, by: 7) {
            if length < iend {
                expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(Array(bytes.prefix(length))) }
            } else {
                #expect(try Thumbnailer.validate(Array(bytes.prefix(length))).width == 32)
            }
        }
    }

    @Test("rows streamed into the resampler give exactly the pixels of a whole decode resized")
    func streamedScalingMatchesWhole() throws {
        var sources = ["pngsuite/basn2c08.png", "pngsuite/basn6a08.png", "pngsuite/basn0g16.png", "pngsuite/basi2c16.png",
                       "pngsuite/PngSuite.png", "pngsuite/tbrn2c08.png"].map { try? Corpus.bytes($0) }.compactMap { $0 }
        sources.append(SyntheticImages.png(width: 1000, height: 37))
        for bytes in sources {
            let whole = try bytes.withUnsafeBytes { try PNGDecoder.decode($0) }
            for (width, height) in [(whole.width, whole.height), (max(1, whole.width / 3), max(1, whole.height / 5)), (1, 1)] {
                let streamed = try bytes.withUnsafeBytes { try PNGDecoder.decode($0, scaledTo: width, height: height) }
                let reference = Resampler.resize(whole, width: width, height: height)
                #expect(streamed.pixels == reference.pixels && streamed.channels == reference.channels,
                        "\(whole.width)×\(whole.height) → \(width)×\(height)")
            }
        }
    }

    /// The pixels with fully transparent ones zeroed: their colour is undefined (libpng's
    /// simplified reader leaves different values there for interlaced 16-bit input).
    static func visible(_ image: PixelBuffer) -> [UInt8] {
        guard image.channels == 4 else { return image.pixels }
        var pixels = image.pixels
        for index in stride(from: 0, to: pixels.count, by: 4) where pixels[index + 3] == 0 {
            pixels[index] = 0; pixels[index + 1] = 0; pixels[index + 2] = 0
        }
        return pixels
    }

    static func expectedSize(_ name: String) -> (Int, Int) {
        switch name {
        case "cdfn2c08": return (8, 32)
        case "cdhn2c08": return (32, 8)
        case "cdsn2c08": return (8, 8)
        case "PngSuite": return (256, 256)
        default:
            if name.hasPrefix("s"), let size = Int(name.dropFirst().prefix(2)) { return (size, size) }
            return (32, 32)
        }
    }
}
