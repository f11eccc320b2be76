@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: header probe on partial data", .timeLimit(.minutes(2)))
struct HeaderProbeTests {
    @Test("every prefix of a JPEG answers needMore until the header is complete, then the same header")
    func jpegPrefixes() throws {
        let bytes = try Corpus.bytes("jpeg/exif-orientation-examples/Landscape_6.jpg")
        let full = try ImageHeaderProbe.probe(bytes)
        guard case .header(let header) = full else { Issue.record("no header"); return }
        var firstComplete: Int?
        for length in stride(from: 0, through: min(bytes.count, 70_000), by: 97) {
            let result = try ImageHeaderProbe.probe(Array(bytes.prefix(length)))
            if result == .needMore { #expect(firstComplete == nil, "needMore after a header at \(length)") } else {
                #expect(result == full)
                if firstComplete == nil { firstComplete = length }
            }
        }
        #expect(firstComplete != nil)
        #expect((header.storedWidth, header.width, header.height, header.orientation) == (1200, 1800, 1200, .right))
    }

    @Test("a JPEG header behind a 60 KB APPn segment is found by skipping it, without its bytes")
    func skipsLargeAPPnByLength() throws {
        let original = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        let filler = [UInt8](repeating: 0xAB, count: 60_000)
        let length = filler.count + 2
        let app9: [UInt8] = [0xFF, 0xE9, UInt8(length >> 8), UInt8(length & 0xFF)] + filler
        let bytes = Array(original[0..<2]) + app9 + original[2...]
        #expect(try ImageHeaderProbe.probe(Array(bytes.prefix(30_000))) == .needMore)
        guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { Issue.record("no header"); return }
        #expect((header.width, header.height) == (227, 149))
    }

    @Test("the probe reads nothing past the buffer it is given")
    func neverReadsPastTheBuffer() throws {
        // The header sits in a larger allocation; the probe sees only a prefix of it. If it read
        // past its slice it would find the SOF beyond the end and answer with a header.
        let bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        guard case .header = try ImageHeaderProbe.probe(bytes) else { Issue.record("no header"); return }
        try bytes.withUnsafeBytes { raw in
            for length in 0..<min(raw.count, 700) {
                let result = try ImageHeaderProbe.probe(UnsafeRawBufferPointer(rebasing: raw[0..<length]))
                if case .header(let header) = result {
                    // The header can only be complete once its SOF payload is inside the slice.
                    let sof = try #require(sofEnd(in: bytes))
                    #expect(length >= sof, "header at \(length) before the SOF ends at \(sof)")
                    #expect(header.width == 227)
                    return
                }
            }
        }
    }

    @Test("EXIF orientation 0–8: landscape photos are 1800×1200 upright, portraits 1200×1800")
    func exifOrientationDimensions() throws {
        for orientation in 0...8 {
            for (name, upright) in [("Landscape", (1800, 1200)), ("Portrait", (1200, 1800))] {
                let path = "jpeg/exif-orientation-examples/\(name)_\(orientation).jpg"
                guard case .header(let header) = try ImageHeaderProbe.probe(try Corpus.bytes(path)) else {
                    Issue.record("no header for \(path)"); continue
                }
                #expect((header.width, header.height) == upright, "\(path)")
                #expect(header.orientation == ExifOrientation(tagValue: orientation), "\(path)")
                #expect(header.orientation.swapsDimensions == (orientation >= 5), "\(path)")
                let stored = try CorpusExpectations.shared().entries[path]
                #expect(stored?.width == header.storedWidth && stored?.height == header.storedHeight, "\(path)")
            }
        }
    }

    @Test("EXIF orientation matches the baseline for every JPEG that has EXIF")
    func exifOrientationMatchesBaseline() throws {
        for entry in try CorpusExpectations.shared().entries.values where entry.path.hasPrefix("jpeg/") {
            guard let expected = entry.exifOrientation else { continue } // absent or broken
            guard case .header(let header) = try ImageHeaderProbe.probe(try Corpus.bytes(entry.path)) else {
                Issue.record("no header for \(entry.path)"); continue
            }
            #expect(header.orientation == ExifOrientation(tagValue: expected), "\(entry.path)")
        }
    }

    @Test("broken EXIF blocks read as upright and do not fail the image")
    func brokenExifIsUpright() throws {
        for name in ["invalid-exif", "truncated_exif_dpi", "broken_exif_dpi", "exif-ifd-offset", "multiple_exif"] {
            let bytes = try Corpus.bytes("jpeg/pillow/\(name).jpg")
            guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { Issue.record("\(name)"); continue }
            let baseline = try CorpusExpectations.shared().entries["jpeg/pillow/\(name).jpg"]?.exifOrientation
            #expect(header.orientation == ExifOrientation(tagValue: baseline ?? 1), "\(name)")
            #expect(try Thumbnailer.validate(bytes).storedWidth == header.storedWidth, "\(name)")
        }
    }

    @Test("Pillow's rotated samples report their upright size; a 2×1 with orientation 8 is 1×2")
    func pillowOrientationSamples() throws {
        guard case .header(let rectangle) = try ImageHeaderProbe.probe(try Corpus.bytes("jpeg/pillow/orientation_rectangle.jpg")) else {
            Issue.record("no header"); return
        }
        #expect((rectangle.storedWidth, rectangle.storedHeight, rectangle.width, rectangle.height) == (2, 1, 1, 2))
        for orientation in 2...8 {
            guard case .header(let header) = try ImageHeaderProbe.probe(
                try Corpus.bytes("jpeg/pillow/hopper_orientation_\(orientation).jpg")) else { Issue.record("\(orientation)"); continue }
            #expect(header.orientation.rawValue == orientation)
            #expect((header.width, header.height) == (128, 128))
        }
    }

    @Test("PNG: IHDR gives size, alpha and interlacing after 33 bytes")
    func pngHeader() throws {
        let bytes = try Corpus.bytes("pngsuite/basi6a08.png")
        #expect(try ImageHeaderProbe.probe(Array(bytes.prefix(32))) == .needMore)
        guard case .header(let header) = try ImageHeaderProbe.probe(Array(bytes.prefix(33))) else { Issue.record("no header"); return }
        #expect((header.width, header.height, header.hasAlpha, header.isProgressive, header.components) == (32, 32, true, true, 4))
    }

    @Test("a progressive JPEG is reported as such, with its components")
    func progressiveJPEG() throws {
        guard case .header(let header) = try ImageHeaderProbe.probe(try Corpus.bytes("jpeg/libjpeg-turbo/testimgp.jpg")) else {
            Issue.record("no header"); return
        }
        #expect(header.isProgressive)
        #expect(header.components == 3)
        guard case .header(let cmyk) = try ImageHeaderProbe.probe(try Corpus.bytes("jpeg/pillow/pil_sample_cmyk.jpg")) else {
            Issue.record("no header"); return
        }
        #expect(cmyk.components == 4)
    }

    @Test("damaged headers fail with decode_failed and the sniffed format")
    func damagedHeaders() throws {
        for name in ["xhdn0g08", "xc1n0g08", "xc9n2c08", "xd0n2c08", "xd3n2c08", "xd9n2c08"] {
            let error = expectRPCError(.decodeFailed) { _ = try ImageHeaderProbe.probe(try Corpus.bytes("pngsuite/\(name).png")) }
            #expect(error?.data.format == "png", "\(name)")
        }
        let error = expectRPCError(.decodeFailed) {
            _ = try ImageHeaderProbe.probe(try Corpus.bytes("jpeg/jpeg-decoder/crashtest/null_height.jpg"))
        }
        #expect(error?.data.format == "jpeg")
        // A scan before any frame header.
        expectRPCError(.decodeFailed) { _ = try ImageHeaderProbe.probe([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02]) }
    }

    @Test("a 60000×60000 PNG and a 65000×65000 JPEG header are refused as too_large from the header alone")
    func syntheticBombHeaders() throws {
        let png = SyntheticHeaders.png(width: 60_000, height: 60_000)
        let jpeg = SyntheticHeaders.jpeg(width: 65_000, height: 65_000)
        for bytes in [png, jpeg] {
            guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { Issue.record("no header"); continue }
            expectRPCError(.tooLarge) { try header.checkPixelLimit(Thumbnailer.defaultMaxPixels) }
            expectRPCError(.tooLarge) { _ = try Thumbnailer.validate(bytes) }
            expectRPCError(.tooLarge) { _ = try Thumbnailer.makeThumbnail(from: bytes, width: 256) }
        }
    }

    private func sofEnd(in bytes: [UInt8]) -> Int? {
        var index = 2
        while index + 4 < bytes.count {
            let marker = bytes[index + 1], length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if JPEGMarkerWalker.isStartOfFrame(marker) { return index + 2 + 8 }
            index += 2 + length
        }
        return nil
    }
}

/// Hand-built headers of impossible sizes: only the bytes up to the size are real.
enum SyntheticHeaders {
    static func png(width: UInt32, height: UInt32) -> [UInt8] {
        var ihdr: [UInt8] = Array("IHDR".utf8)
        ihdr += withUnsafeBytes(of: width.bigEndian, Array.init) + withUnsafeBytes(of: height.bigEndian, Array.init)
        ihdr += [8, 2, 0, 0, 0]
        let crc = ihdr.withUnsafeBytes { CRC32.checksum($0) }
        return PNGHeaderParser.signature + [0, 0, 0, 13] + ihdr + withUnsafeBytes(of: crc.bigEndian, Array.init)
            + [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
    }

    static func jpeg(width: Int, height: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 3,
         1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xFF, 0xD9]
    }
}
