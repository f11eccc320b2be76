import CJPEGWarnings
import CTurboJPEG
@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// Validation means the pixels are right: bodies whose scans are incomplete
/// or corrupt are refused even where libjpeg only warns and paints grey; complete pixels with
/// a damaged or missing trailer are accepted, as browsers show them.
@Suite("Imaging: validation means the pixels are right", .timeLimit(.minutes(3)))
struct PixelValidationTests {
    static let baseline = "jpeg/libjpeg-turbo/testorig.jpg"
    static let progressive = "jpeg/libjpeg-turbo/testimgp.jpg"

    @Test("a JPEG cut at 60 % with an EOI appended is refused (baseline, progressive, synthetic)")
    func cutWithEOIAppended() throws {
        for bytes in [try Corpus.bytes(Self.baseline), try Corpus.bytes(Self.progressive),
                      SyntheticImages.jpeg(width: 800, height: 600)] {
            let cut = Array(bytes.prefix(bytes.count * 6 / 10)) + [0xFF, 0xD9]
            expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(cut) }
            expectRPCError(.decodeFailed) { _ = try Thumbnailer.makeThumbnail(from: cut, width: 64) }
        }
    }

    @Test("a JPEG whose scans are all present but whose EOI is missing is accepted, with the same pixels")
    func missingEOIAccepted() throws {
        for bytes in [try Corpus.bytes(Self.baseline), try Corpus.bytes(Self.progressive),
                      SyntheticImages.jpeg(width: 300, height: 200)] {
            #expect(Array(bytes.suffix(2)) == [0xFF, 0xD9])
            let headless = Array(bytes.dropLast(2))
            let header = try Thumbnailer.validate(headless)
            #expect(header.width == (try Thumbnailer.validate(bytes)).width)
            #expect(try fullPixels(headless).pixels == (try fullPixels(bytes)).pixels)
        }
    }

    @Test("a frame larger than its data can fill (a small file declaring 7000×7000) is refused")
    func frameLargerThanData() throws {
        let small = SyntheticImages.jpeg(width: 64, height: 48)
        let patched = try patchFrame(small) { bytes, sof in
            bytes[sof + 5] = 0x1B; bytes[sof + 6] = 0x58 // height 7000
            bytes[sof + 7] = 0x1B; bytes[sof + 8] = 0x58 // width 7000
        }
        #expect(patched.count < 4000)
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(patched) }
        #expect(error?.message.contains("cannot fill") == true, "\(String(describing: error))")
        expectRPCError(.decodeFailed) { _ = try Thumbnailer.makeThumbnail(from: patched, width: 200) }
    }

    @Test("an arithmetic-coding SOF over Huffman data is a process mismatch; real arithmetic files decode")
    func processMismatch() throws {
        for source in [try Corpus.bytes(Self.baseline), SyntheticImages.jpeg(width: 300, height: 200)] {
            let patched = try patchFrame(source) { bytes, sof in bytes[sof + 1] = 0xC9 }
            let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(patched) }
            #expect(error?.message.contains("process mismatch") == true, "\(String(describing: error))")
        }
        let progressive = try patchFrame(try Corpus.bytes(Self.progressive)) { bytes, sof in bytes[sof + 1] = 0xCA }
        expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(progressive) }
        #expect(try Thumbnailer.validate(try Corpus.bytes("jpeg/libjpeg-turbo/testimgari.jpg")).width == 227)
    }

    @Test("a progressive JPEG cut between two scans is refused; with an EOI appended it is a coarser picture, accepted")
    func progressiveCutBetweenScans() throws {
        let bytes = try Corpus.bytes(Self.progressive)
        let scans = scanOffsets(bytes)
        #expect(scans.count > 4)
        for offset in scans.dropFirst() {
            let cut = Array(bytes.prefix(offset))
            let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(cut) }
            #expect(error?.message.contains("incomplete") == true, "cut at \(offset): \(String(describing: error))")
            // Indistinguishable from an encoder that stops refining early (progressive-missing-ac.jpg).
            #expect(try Thumbnailer.validate(cut + [0xFF, 0xD9]).width == 227, "cut at \(offset) + EOI")
        }
        // A component whose DC is never scanned is grey whatever the trailer says.
        let missingDC = try Corpus.bytes("jpeg/jpeg-decoder/reftest/progressive-missing-dc.jpg")
        expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(missingDC) }
    }

    @Test("a harmless warning first does not hide missing pixels after it")
    func harmlessWarningDoesNotHideDamage() throws {
        for name in ["junk_jpeg_header", "truncated_app14", "jpeg_ff00_header"] {
            let bytes = try Corpus.bytes("jpeg/pillow/\(name).jpg")
            #expect(try Thumbnailer.validate(bytes).width > 0, "\(name)")
            let cut = Array(bytes.prefix(bytes.count * 6 / 10)) + [0xFF, 0xD9]
            expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(cut) }
        }
    }

    @Test("every warning of a decode is recorded (TurboJPEG 2.1's handle has the layout CJPEGWarnings checks)")
    func warningsAreRecorded() throws {
        let bytes = try Corpus.bytes("jpeg/pillow/junk_jpeg_header.jpg")
        let cut = Array(bytes.prefix(bytes.count * 6 / 10)) + [0xFF, 0xD9]
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var warnings = ic_jpeg_warnings()
        guard case .header(let header) = try ImageHeaderProbe.probe(bytes) else { throw RPCError(.internal, "no header") }
        var output = [UInt8](repeating: 0, count: header.storedWidth * header.storedHeight * 3)
        let rc = cut.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                ic_tj_decompress(handle, source.baseAddress, UInt(source.count), target.baseAddress,
                                 Int32(header.storedWidth), 0, Int32(header.storedHeight), Int32(TJPF_RGB.rawValue), 0, &warnings)
            }
        }
        #expect(rc == -1)
        // If this fails, a libjpeg-turbo upgrade changed TurboJPEG's private layout: only the
        // first warning's text is then known, and a harmless one can hide missing pixels.
        #expect(warnings.recorded == 1)
        let codes = withUnsafeBytes(of: warnings.codes) { Array($0.bindMemory(to: Int32.self).prefix(Int(warnings.codeCount))) }
        #expect(codes.map { UInt32(bitPattern: $0) } == [JWRN_EXTRANEOUS_DATA.rawValue, JWRN_HIT_MARKER.rawValue])
        #expect(String(cString: tjGetErrorStr2(handle)).contains("extraneous bytes"))
    }

    @Test("without recorded codes, the first message decides, refusing whatever it cannot prove harmless")
    func fallbackOnFirstMessage() {
        let unrecorded = ic_jpeg_warnings()
        #expect(TurboJPEGDiagnostics.refusal(unrecorded, firstMessage: "", hasEndOfImage: true) == nil)
        #expect(TurboJPEGDiagnostics.refusal(unrecorded, firstMessage: "Corrupt JPEG data: 4 extraneous bytes before marker 0xdb",
                                             hasEndOfImage: true) == nil)
        for message in ["Corrupt JPEG data: premature end of data segment", "Premature end of JPEG file",
                        "Corrupt JPEG data: bad Huffman code"] {
            #expect(TurboJPEGDiagnostics.refusal(unrecorded, firstMessage: message, hasEndOfImage: false) != nil, "\(message)")
        }
    }

    @Test("an arithmetic-coded JPEG without EOI is refused: cut arithmetic data runs out silently")
    func arithmeticWithoutEOI() throws {
        let bytes = try Corpus.bytes("jpeg/libjpeg-turbo/testimgari.jpg")
        #expect(try Thumbnailer.validate(bytes).width == 227)
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(Array(bytes.dropLast(2))) }
        #expect(error?.message.contains("truncated") == true)
    }

    @Test("corpus JPEGs: a single harmless warning decodes; a first warning of missing or corrupt data is refused")
    func corpusWarnings() throws {
        // "Premature end of JPEG file" alone is a missing EOI after complete scans (accepted);
        // with other warnings after it, the scans were cut too.
        let damaging = ["premature end of data segment", "bad Huffman code", "Inconsistent progression sequence"]
        var harmlessChecked = 0, damagingChecked = 0
        for entry in try CorpusExpectations.shared().under("jpeg") where entry.verdict == "decodes_with_warnings" {
            let bytes = try Corpus.bytes(entry.path)
            let warning = entry.firstWarning ?? ""
            if entry.warnings == 1 && warning.contains("extraneous bytes") {
                #expect(try Thumbnailer.validate(bytes).width > 0, "\(entry.path)")
                harmlessChecked += 1
            } else if damaging.contains(where: warning.contains)
                        || (warning.hasPrefix("Premature end of JPEG file") && entry.warnings > 1) {
                do {
                    _ = try Thumbnailer.validate(bytes)
                    Issue.record("\(entry.path) (\(warning)) was accepted")
                } catch {
                    #expect([.decodeFailed, .tooLarge].contains(error.kind), "\(entry.path): \(error)")
                }
                damagingChecked += 1
            }
        }
        #expect(harmlessChecked >= 5)
        #expect(damagingChecked >= 9)
    }

    @Test("a PNG with every row present but a mangled chunk before IEND, or no IEND, is accepted with its pixels")
    func pngDamagedTrailerAccepted() throws {
        let original = SyntheticImages.png(width: 40, height: 30)
        let chunks = try #require(PNGChunks(parsing: original))
        let reference = try pngPixels(original)

        var noIEND = chunks
        noIEND.chunks.removeAll { $0.type == "IEND" }
        var badCRC = chunks
        badCRC.insert(PNGChunks.Chunk("tEXt", Array("Comment\0mangled".utf8)), before: "IEND")
        var badCRCBytes = badCRC.bytes
        badCRCBytes[badCRCBytes.count - 12 - 1] ^= 0xFF // the tEXt chunk's CRC
        let runaway = noIEND.bytes + [0x7F, 0xFF, 0xFF, 0xFF] + Array("zzZz".utf8) + [1, 2, 3]
        let cutIEND = Array(original.dropLast(5))

        for (name, body) in [("no IEND", noIEND.bytes), ("bad tEXt CRC", badCRCBytes),
                             ("chunk running off the end", runaway), ("IEND cut", cutIEND)] {
            let header = try Thumbnailer.validate(body)
            #expect((header.width, header.height) == (40, 30), "\(name)")
            #expect(try pngPixels(body).pixels == reference.pixels, "\(name)")
        }
    }

    @Test("a PNG cut inside its image data is refused")
    func pngCutInsideImageData() throws {
        for path in ["pngsuite/basn2c08.png", "pngsuite/basi2c08.png"] {
            let bytes = try Corpus.bytes(path)
            let imageDataEnd = bytes.count - 12 // IEND is the last chunk
            for length in stride(from: 33, to: imageDataEnd, by: 5) {
                expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(Array(bytes.prefix(length))) }
            }
        }
        let synthetic = SyntheticImages.png(width: 200, height: 150)
        expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(Array(synthetic.prefix(synthetic.count * 6 / 10))) }
    }

    // MARK: helpers

    private func fullPixels(_ bytes: [UInt8]) throws -> PixelBuffer {
        try bytes.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: header.storedWidth).pixels
        }
    }

    private func pngPixels(_ bytes: [UInt8]) throws -> PixelBuffer {
        try bytes.withUnsafeBytes { try PNGDecoder.decode($0) }
    }

    /// The offset of each SOS marker.
    private func scanOffsets(_ bytes: [UInt8]) -> [Int] {
        bytes.withUnsafeBytes { raw in
            var walker = JPEGMarkerWalker(ByteReader(raw))
            var offsets: [Int] = []
            while case .segment(let segment) = walker.next() {
                if segment.marker == JPEGMarkerWalker.sos { offsets.append(segment.offset) }
                if segment.marker == JPEGMarkerWalker.eoi { break }
            }
            return offsets
        }
    }

    /// `bytes` with `patch` applied at the offset of its frame header's marker.
    private func patchFrame(_ bytes: [UInt8], _ patch: (inout [UInt8], Int) -> Void) throws -> [UInt8] {
        let sof = try bytes.withUnsafeBytes { raw -> Int in
            guard case .header(_, let offset) = JPEGHeaderParser.parse(ByteReader(raw)) else {
                throw RPCError(.internal, "no frame header")
            }
            return offset
        }
        var patched = bytes
        patch(&patched, sof)
        return patched
    }
}
