import CTurboJPEG
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: a progressive JPEG's thumbnail reads the scans it uses", .timeLimit(.minutes(1)))
struct ProgressiveThumbnailScanTests {
    /// A real progressive photo (1443×1071) with libjpeg's default script of ten scans, whose
    /// last three refine the AC coefficients to their final bit.
    static let photo = "jpeg/jpeg-decoder/crashtest/imagetestsuite_316be81dfdeeb942e904feb3a77f4f83.jpg"
    /// libjpeg-turbo's progressive test image (227×149, the same script), written at quality
    /// 75: its luma steps are libjpeg's at that quality, the coarsest a 1/2 decode leaves the
    /// luma's last bit out of.
    static let fine = "jpeg/libjpeg-turbo/testimgp.jpg"

    /// Where each SOS marker starts (`FF DA` appears only as a marker: entropy-coded data
    /// stuffs every `FF` it holds with a `00`).
    static func scanOffsets(_ bytes: [UInt8]) -> [Int] {
        (0..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
    }

    static func survey(_ bytes: [UInt8]) -> JPEGScanSurvey {
        bytes.withUnsafeBytes { JPEGScanSurvey(ByteReader($0)) }
    }

    /// TurboJPEG's reading of the body's colour space (its header call).
    static func turboColourspace(_ bytes: [UInt8]) throws -> TJCS {
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = -1
        let rc = bytes.withUnsafeBytes { raw in
            tjDecompressHeader3(handle, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(raw.count),
                                &width, &height, &subsampling, &colourspace)
        }
        #expect(rc == 0)
        return TJCS(rawValue: UInt32(colourspace))
    }

    static func decode(_ bytes: [UInt8], width: Int) throws -> PixelBuffer {
        try bytes.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: width).pixels
        }
    }

    @Test("the trailing scans left out: the luma's final-bit refinement at 1/4, the AC scans of components with a 1×1 IDCT at 1/8")
    func droppableTail() throws {
        for path in [Self.fine, Self.photo] {
            let bytes = try Corpus.bytes(path)
            let scans = Self.scanOffsets(bytes)
            #expect(scans.count == 10, "\(path)")
            // 4:2:0. Scan 7 refines the DC coefficients; 8 and 9 bring the chroma's AC
            // coefficients' last bit, 10 the luma's. At 1/8 the chroma is decoded with a 2×2
            // IDCT, which reads its AC coefficients: only the luma's scan goes there too.
            let survey = Self.survey(bytes)
            #expect(survey.droppableTail(dcOnly: false) == scans[9], "\(path)")
            #expect(survey.droppableTail(dcOnly: true) == scans[9], "\(path)")
            #expect(!survey.readsAC(atOneEighth: survey.components[0]))
            #expect(survey.readsAC(atOneEighth: survey.components[1]) && survey.readsAC(atOneEighth: survey.components[2]))
        }
        // 4:4:4, its last scans bringing each chroma's AC bands to full precision in one pass
        // each: what 1/4 uses; at 1/8 every component's IDCT is 1×1, and every AC scan after
        // the last DC scan goes.
        let odd = try Corpus.bytes("jpeg/jpeg-decoder/reftest/progressive3.jpg")
        #expect(Self.survey(odd).droppableTail(dcOnly: false) == nil)
        let lastDC = try #require(Self.scanOffsets(odd).last { offset in odd[offset + 4 + 1 + 2 * Int(odd[offset + 4])] == 0 })
        #expect(Self.survey(odd).droppableTail(dcOnly: true) == Self.scanOffsets(odd).first { $0 > lastDC })
        // Sequential and arithmetic-coded bodies are read whole.
        for path in ["jpeg/libjpeg-turbo/testorig.jpg", "jpeg/libjpeg-turbo-seed-corpora/8bit_testorig_transverse_422_q95_prog_ari.jpg"] {
            let bytes = try Corpus.bytes(path)
            #expect(Self.survey(bytes).droppableTail(dcOnly: true) == nil, "\(path)")
        }
        // At 1/8 and 1/4 whatever the quantization; at 3/8 and 1/2 only from a file quantized
        // no coarser than libjpeg's quality 75 (the photo's luma steps sum to 12 279, about
        // quality 15); above, never.
        let coarse = Self.survey(try Corpus.bytes(Self.photo))
        #expect(JPEGDecoder.thumbnailEnd(coarse, eighths: 2) != nil)
        #expect(JPEGDecoder.thumbnailEnd(coarse, eighths: 3) == nil)
        #expect(JPEGDecoder.thumbnailEnd(coarse, eighths: 4) == nil)
        let fine = Self.survey(try Corpus.bytes(Self.fine))
        for eighths in 1...4 { #expect(JPEGDecoder.thumbnailEnd(fine, eighths: eighths) != nil, "\(eighths)") }
        #expect(JPEGDecoder.thumbnailEnd(fine, eighths: 5) == nil)
        #expect(JPEGDecoder.thumbnailEnd(fine, eighths: 8) == nil)
        #expect(JPEGDecoder.eighths(scaledWidth: 361, of: 1443) == 2)
        #expect(JPEGDecoder.eighths(scaledWidth: 181, of: 1443) == 1)
        #expect(JPEGDecoder.eighths(scaledWidth: 1443, of: 1443) == 8)
        // Where two scales round to the same size, TurboJPEG decodes at the larger one: a
        // 4-pixel frame asked 1 pixel wide is decoded at 1/4, unless the height does not fit.
        #expect(JPEGDecoder.eighths(scaledWidth: 1, of: 4, scaledHeight: 1, height: 4) == 2)
        #expect(JPEGDecoder.eighths(scaledWidth: 1, of: 4, scaledHeight: 1, height: 8) == 1)
    }

    @Test("the thumbnail's decode stops after those scans and shows the picture the whole file shows")
    func sameScansSamePicture() throws {
        let bytes = try Corpus.bytes(Self.photo)
        let end = Self.scanOffsets(bytes)[9]
        let kept = Array(bytes[0..<end]) + [0xFF, 0xD9]
        // 160 px is decoded at 1/4 (361 px, at least twice the width).
        let quarter = try Self.decode(bytes, width: 160)
        #expect((quarter.width, quarter.height) == (361, 268))
        #expect(try Self.decode(kept, width: 160).pixels == quarter.pixels)
        // At the thumbnail's size, beside one from every scan (decoded at 1/2, where none is
        // left out): about a level of 255 apart on average.
        let height = 119
        let thumbnail = Resampler.resize(quarter, width: 160, height: height)
        let fromEvery = Resampler.resize(try Self.decode(bytes, width: 300), width: 160, height: height)
        let difference = meanAbsoluteDifference(thumbnail, fromEvery)
        #expect(difference < 1.5, "\(difference)")
        // The scans left out do carry something (it is not an empty tail).
        let fromFewer = Resampler.resize(try Self.decode(kept, width: 300), width: 160, height: height)
        #expect(meanAbsoluteDifference(fromFewer, fromEvery) > 0.1)
    }

    /// The segment with `marker` whose payload starts with `signature` (its marker's offset).
    static func segment(_ bytes: [UInt8], marker: UInt8, signature: [UInt8] = []) -> Int? {
        (0..<(bytes.count - 4 - signature.count)).first { at in
            bytes[at] == 0xFF && bytes[at + 1] == marker && Array(bytes[(at + 4)..<(at + 4 + signature.count)]) == signature
        }
    }

    @Test("at 1/2, a file quantized no coarser than quality 75 leaves the luma's last bit out; one step coarser reads every scan")
    func halfScaleByQuantization() throws {
        let bytes = try Corpus.bytes(Self.fine)
        let cut = { (body: [UInt8]) in Array(body[0..<Self.scanOffsets(body)[9]]) + [0xFF, 0xD9] }
        // 50 px wide is decoded at 1/2 (114 px, at least twice the width).
        let half = try Self.decode(bytes, width: 50)
        #expect((half.width, half.height) == (114, 75))
        #expect(try Self.decode(cut(bytes), width: 50).pixels == half.pixels)
        // The same body with one luma step made coarser: every scan is read at 1/2, still not at 1/4.
        var coarser = bytes
        let dqt = try #require(Self.segment(bytes, marker: 0xDB, signature: [0x00]))
        coarser[dqt + 5 + 63] += 1
        #expect(try Self.decode(coarser, width: 50).pixels != Self.decode(cut(coarser), width: 50).pixels)
        #expect(try Self.decode(coarser, width: 25).pixels == Self.decode(cut(coarser), width: 25).pixels)
    }

    @Test("the luma's last bit goes only where the first component is luma, as libjpeg decides the colour space")
    func firstComponentIsLuma() throws {
        let bytes = try Corpus.bytes(Self.fine)
        let scans = Self.scanOffsets(bytes)
        let survey = { (body: [UInt8]) in Self.survey(body) }
        #expect(survey(bytes).firstComponentIsLuma)
        // Without its JFIF marker, the component ids decide: 1, 2, 3 is YCbCr, R, G, B is RGB.
        var unmarked = bytes
        let app0 = try #require(Self.segment(bytes, marker: 0xE0, signature: Array("JFIF".utf8)))
        unmarked[app0 + 7] = UInt8(ascii: "X")
        #expect(survey(unmarked).firstComponentIsLuma)
        var rgb = unmarked
        let sof = try #require(Self.segment(bytes, marker: 0xC2))
        for (index, id) in "RGB".utf8.enumerated() { rgb[sof + 10 + 3 * index] = id }
        for scan in scans {
            for index in 0..<Int(rgb[scan + 4]) {
                rgb[scan + 5 + 2 * index] = Array("RGB".utf8)[Int(rgb[scan + 5 + 2 * index]) - 1]
            }
        }
        #expect(!survey(rgb).firstComponentIsLuma)
        #expect(survey(rgb).droppableTail(dcOnly: false) == nil)
        // At 1/8 the first component's AC scans still go: its IDCT is 1×1 whatever it holds.
        #expect(survey(rgb).droppableTail(dcOnly: true) == Self.scanOffsets(rgb)[9])
        // An Adobe marker's transform, when no JFIF marker says YCbCr: 0 is RGB, 1 YCbCr.
        let adobe = { (transform: UInt8) -> [UInt8] in
            [0xFF, 0xEE, 0x00, 0x0E] + Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, transform]
        }
        for (transform, luma) in [(UInt8(0), false), (1, true)] {
            let marked = Array(unmarked[0..<2]) + adobe(transform) + unmarked[2...]
            #expect(survey(marked).firstComponentIsLuma == luma, "\(transform)")
            #expect(try Self.turboColourspace(marked) == (luma ? TJCS_YCbCr : TJCS_RGB), "\(transform)")
            #expect(survey(Array(bytes[0..<2]) + adobe(transform) + bytes[2...]).firstComponentIsLuma, "JFIF says YCbCr")
        }
        #expect(try Self.turboColourspace(bytes) == TJCS_YCbCr)
        #expect(try Self.turboColourspace(rgb) == TJCS_RGB)
        // A JFIF marker shorter than JFIF's 14 bytes says nothing, and markers after the first
        // scan say nothing: libjpeg decided the colour space there.
        var short = Array(bytes[0..<2]) + adobe(0) + bytes[2...]
        let jfif = try #require(Self.segment(short, marker: 0xE0, signature: Array("JFIF".utf8)))
        try #require(short[jfif + 2] == 0 && short[jfif + 3] == 16)
        short[jfif + 3] = 2 + 9
        short.removeSubrange((jfif + 4 + 9)..<(jfif + 4 + 14))
        #expect(!survey(short).firstComponentIsLuma)
        #expect(try Self.turboColourspace(short) == TJCS_RGB)
        let late = Array(unmarked[0..<scans[1]]) + adobe(0) + unmarked[scans[1]...]
        #expect(survey(late).firstComponentIsLuma)
        #expect(try Self.turboColourspace(late) == TJCS_YCbCr)
    }

    @Test("a survey made while the body streams in, a byte at a time, decides as the whole body's does")
    func streamedSurvey() throws {
        let bytes = try Corpus.bytes(Self.fine)
        let adobe: [UInt8] = [0xFF, 0xEE, 0x00, 0x0E] + Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 0]
        var unmarked = bytes
        unmarked[try #require(Self.segment(bytes, marker: 0xE0, signature: Array("JFIF".utf8))) + 7] = UInt8(ascii: "X")
        for body in [bytes, try Corpus.bytes(Self.photo), Array(unmarked[0..<2]) + adobe + unmarked[2...]] {
            var walker = JPEGStreamWalker()
            for index in body.indices { [body[index]].withUnsafeBytes { walker.consume($0) } }
            walker.end()
            let (streamed, whole) = (walker.survey, Self.survey(body))
            #expect(streamed.quantization.stepSums == whole.quantization.stepSums)
            #expect(streamed.firstComponentIsLuma == whole.firstComponentIsLuma)
            #expect(streamed.firstComponentIsFinelyQuantized == whole.firstComponentIsFinelyQuantized)
            for dcOnly in [false, true] {
                #expect(streamed.droppableTail(dcOnly: dcOnly) == whole.droppableTail(dcOnly: dcOnly))
            }
        }
    }

    @Test("damage in the scans left out does not reach the thumbnail; a validation, which reads every scan, refuses it")
    func damageInScansLeftOut() throws {
        var bytes = try Corpus.bytes(Self.photo)
        let last = try #require(Self.scanOffsets(bytes).last)
        // A restart marker where the stream defines no restart interval.
        bytes.insert(contentsOf: [0xFF, 0xD3], at: last + (bytes.count - last) / 2)
        #expect(try Self.decode(bytes, width: 160).width == 361)
        expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bytes) }
    }

    @Test("the decode's cost counts the copy of the scans it keeps")
    func costCountsTheCopy() throws {
        let bytes = try Corpus.bytes(Self.photo)
        let end = Self.scanOffsets(bytes)[9]
        try bytes.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            let survey = JPEGCodec.survey(raw)
            let thumbnail = try JPEGCodec.decodeCost(raw, header: header, survey: survey, thumbnailWidth: 160)
            #expect(thumbnail.bytes == DecodeCost.jpegDecode(survey, scaledWidth: 361, scaledHeight: 268) + end + 2)
            let validation = try JPEGCodec.decodeCost(raw, header: header, survey: survey, thumbnailWidth: nil)
            #expect(validation.bytes == DecodeCost.jpegDecode(survey, scaledWidth: validation.width, scaledHeight: validation.height))
        }
    }
}
