@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: JPEG decoding", .timeLimit(.minutes(3)))
struct JPEGDecodingTests {
    @Test("libjpeg-turbo's 8-bit test images decode; the 12-bit ones fail with decode_failed")
    func libjpegTurboTestImages() throws {
        for path in try Corpus.files(in: "jpeg/libjpeg-turbo", withExtension: "jpg") {
            let bytes = try Corpus.bytes(path)
            if path.contains("12") {
                let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bytes) }
                #expect(error?.data.format == "jpeg")
                continue
            }
            let header = try Thumbnailer.validate(bytes)
            let expected = path.hasSuffix("testimgcrop.jpg") ? (124, 92) : (227, 149)
            #expect((header.width, header.height) == expected, "\(path)")
        }
    }

    @Test("every baseline, progressive and arithmetic 227×149 test image shows the same picture")
    func variantsShowTheSamePicture() throws {
        let reference = try thumbnailPixels("jpeg/libjpeg-turbo/testorig.jpg", width: 100)
        for name in ["testimgp", "testimgari", "testimgint", "testimgfst", "testimgflt"] {
            let pixels = try thumbnailPixels("jpeg/libjpeg-turbo/\(name).jpg", width: 100)
            #expect(meanAbsoluteDifference(reference, pixels) < 6, "\(name)")
        }
    }

    @Test("CMYK and YCCK JPEGs decode to RGB with the brightness an independent decoder gives them")
    func cmykAndYCCK() throws {
        // Mean RGB of each file as Pillow 13 converts it (its own CMYK path, Adobe inversion
        // included). A missed or doubled inversion turns the picture into its negative, far off.
        let pillowMeans = ["jpeg/pillow/pil_sample_cmyk.jpg": 14.35, "jpeg/jpeg-decoder/mozilla/jpg-cmyk-1.jpg": 99.61,
                           "jpeg/jpeg-decoder/mozilla/jpg-cmyk-2.jpg": 251.97, "jpeg/jpeg-decoder/reftest/ycck.jpg": 116.91]
        for (path, pillowMean) in pillowMeans.sorted(by: { $0.key < $1.key }) {
            let bytes = try Corpus.bytes(path)
            let header = try Thumbnailer.validate(bytes)
            let expected = try CorpusExpectations.shared().entries[path]
            #expect((header.width, header.height) == (expected?.width, expected?.height), "\(path)")
            #expect(header.components == 4, "\(path)")
            let pixels = try bytes.withUnsafeBytes { raw in
                try JPEGDecoder.decode(raw, header: header, thumbnailWidth: header.storedWidth).pixels
            }
            #expect(pixels.channels == 3)
            let mean = Double(pixels.pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.pixels.count)
            #expect(abs(mean - pillowMean) < 6, "\(path): mean \(mean), Pillow \(pillowMean)")
            #expect(try Thumbnailer.makeThumbnail(from: bytes, width: 32).format == .jpeg)
        }
    }

    @Test("Adobe CMYK is read inverted (255 = no ink), other CMYK as stored (0 = no ink)")
    func cmykInversion() throws {
        let paper: [UInt8] = [255, 255, 255, 255], fullBlack: [UInt8] = [0, 0, 0, 0]
        #expect(CMYKConverter.rgb(fromCMYK: paper, pixelCount: 1, inverted: true) == [255, 255, 255])
        #expect(CMYKConverter.rgb(fromCMYK: fullBlack, pixelCount: 1, inverted: false) == [255, 255, 255])
        #expect(CMYKConverter.rgb(fromCMYK: [255, 0, 0, 0], pixelCount: 1, inverted: false) == [0, 255, 255])
        #expect(CMYKConverter.rgb(fromCMYK: [0, 255, 255, 255], pixelCount: 1, inverted: true) == [0, 255, 255])
        let bytes = try Corpus.bytes("jpeg/pillow/pil_sample_cmyk.jpg")
        #expect(bytes.withUnsafeBytes { JPEGMetadata(ByteReader($0)).hasAdobeMarker })
    }

    @Test("progressive JPEGs decode, including ones with odd scan scripts")
    func progressive() throws {
        for path in ["jpeg/libjpeg-turbo/testimgp.jpg", "jpeg/jpeg-decoder/mozilla/jpg-progressive.jpg",
                     "jpeg/jpeg-decoder/reftest/progressive3.jpg"] {
            let header = try Thumbnailer.validate(try Corpus.bytes(path))
            #expect(header.isProgressive, "\(path)")
        }
    }

    // A JPEG missing only its EOI is accepted (an earlier version refused it). Pillow's
    // truncated_jpeg.jpg holds all ten scans of its script, cut after the last one's data
    // (libjpeg raises only "Premature end of JPEG file", never "premature end of data
    // segment"): with an EOI appended it decodes without any warning, to the same pixels.
    @Test("a JPEG cut inside its scans is refused, though libjpeg only warns; one missing only its EOI is not")
    func truncatedJPEG() throws {
        let pillow = try Corpus.bytes("jpeg/pillow/truncated_jpeg.jpg")
        #expect(try Thumbnailer.validate(pillow).width == 100)
        let completed = pillow + [0xFF, 0xD9]
        #expect(try Thumbnailer.validate(completed).width == 100)
        let pixels = { (bytes: [UInt8]) throws -> [UInt8] in
            try bytes.withUnsafeBytes { raw in
                let header = try ImageHeaderProbe.header(ofComplete: raw)
                return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: header.storedWidth).pixels.pixels
            }
        }
        #expect(try pixels(pillow) == pixels(completed))
        let bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        for length in stride(from: 700, to: bytes.count - 1, by: 331) {
            expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(Array(bytes.prefix(length))) }
        }
    }

    @Test("harmless warnings (extraneous bytes, junk before a marker) do not reject a photo")
    func harmlessWarningsPass() throws {
        for name in ["truncated_app14", "jpeg_ff00_header", "junk_jpeg_header"] {
            #expect(try Thumbnailer.validate(try Corpus.bytes("jpeg/pillow/\(name).jpg")).width > 0, "\(name)")
        }
    }

    @Test("every JPEG the baseline decodes cleanly still decodes, and every failure still fails")
    func jpegBaseline() throws {
        // Policy differences, by design: a file over the pixel limit is too_large whatever the
        // library would have done with it; and, here too, a file whose scans cannot carry every
        // pixel (JPEGScanSurvey.problem) is refused although libjpeg decodes it silently.
        var clean = 0, failing = 0
        var mismatches: [String] = []
        for entry in try CorpusExpectations.shared().entries.values.sorted(by: { $0.path < $1.path })
        where entry.path.hasPrefix("jpeg/") {
            let bytes = try Corpus.bytes(entry.path)
            // Content, not extension: mozilla's jpg-size-6x6.jpg is a PNG, and decodes as one.
            if ImageFormat.sniff(bytes) == .png {
                #expect(try Thumbnailer.validate(bytes).format == .png, "\(entry.path)")
                continue
            }
            var outcome = "decodes"
            do { _ = try Thumbnailer.validate(bytes) } catch { outcome = error.kind.rawValue + ": " + error.description }
            switch entry.verdict {
            case "decodes":
                clean += 1
                if outcome != "decodes" { mismatches.append("\(entry.path): baseline decodes, here \(outcome)") }
            case "fails":
                failing += 1
                if outcome == "decodes" { mismatches.append("\(entry.path): baseline fails, here it decodes") }
            default:
                continue
            }
        }
        for mismatch in mismatches { Issue.record("\(mismatch)") }
        #expect(clean > 80)
        #expect(failing > 60)
    }

    private func thumbnailPixels(_ path: String, width: Int) throws -> PixelBuffer {
        try decodePixels(try Thumbnailer.makeThumbnail(from: try Corpus.bytes(path), width: width).bytes)
    }
}
