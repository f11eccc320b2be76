@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

@Suite("Imaging: a progressive JPEG's thumbnail reads the scans it uses", .timeLimit(.minutes(1)))
struct ProgressiveThumbnailScanTests {
    /// A real progressive photo (1443×1071) with libjpeg's default script of ten scans, whose
    /// last three refine the AC coefficients to their final bit.
    static let photo = "jpeg/jpeg-decoder/crashtest/imagetestsuite_316be81dfdeeb942e904feb3a77f4f83.jpg"

    /// Where each SOS marker starts (`FF DA` appears only as a marker: entropy-coded data
    /// stuffs every `FF` it holds with a `00`).
    static func scanOffsets(_ bytes: [UInt8]) -> [Int] {
        (0..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
    }

    static func survey(_ bytes: [UInt8]) -> JPEGScanSurvey {
        bytes.withUnsafeBytes { JPEGScanSurvey(ByteReader($0)) }
    }

    static func decode(_ bytes: [UInt8], width: Int) throws -> PixelBuffer {
        try bytes.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: width).pixels
        }
    }

    @Test("the trailing scans left out: final-bit refinements at 1/4, every AC scan after the last DC scan at 1/8")
    func droppableTail() throws {
        for path in ["jpeg/libjpeg-turbo/testimgp.jpg", Self.photo] {
            let bytes = try Corpus.bytes(path)
            let scans = Self.scanOffsets(bytes)
            #expect(scans.count == 10, "\(path)")
            // Scan 7 refines the DC coefficients; 8, 9 and 10 bring the AC coefficients' last bit.
            #expect(Self.survey(bytes).droppableTail(usedCoefficients: 63) == scans[7], "\(path)")
            #expect(Self.survey(bytes).droppableTail(usedCoefficients: 0) == scans[7], "\(path)")
        }
        // Its last scans bring AC bands to full precision in one pass each: what 1/4 uses, not 1/8.
        let odd = try Corpus.bytes("jpeg/jpeg-decoder/reftest/progressive3.jpg")
        #expect(Self.survey(odd).droppableTail(usedCoefficients: 63) == nil)
        let lastDC = try #require(Self.scanOffsets(odd).last { offset in odd[offset + 4 + 1 + 2 * Int(odd[offset + 4])] == 0 })
        #expect(Self.survey(odd).droppableTail(usedCoefficients: 0) == Self.scanOffsets(odd).first { $0 > lastDC })
        // Sequential and arithmetic-coded bodies are read whole.
        for path in ["jpeg/libjpeg-turbo/testorig.jpg", "jpeg/libjpeg-turbo-seed-corpora/8bit_testorig_transverse_422_q95_prog_ari.jpg"] {
            let bytes = try Corpus.bytes(path)
            #expect(Self.survey(bytes).droppableTail(usedCoefficients: 0) == nil, "\(path)")
        }
        // Only at 1/8 and 1/4, a thumbnail's scales.
        let survey = Self.survey(try Corpus.bytes(Self.photo))
        #expect(JPEGDecoder.thumbnailEnd(survey, eighths: 2) != nil)
        #expect(JPEGDecoder.thumbnailEnd(survey, eighths: 3) == nil)
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
        let end = Self.scanOffsets(bytes)[7]
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
        let end = Self.scanOffsets(bytes)[7]
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
