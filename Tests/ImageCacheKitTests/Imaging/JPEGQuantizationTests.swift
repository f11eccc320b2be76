@testable import ImageCacheKit
import Testing
import TestSupport

@Suite("Imaging: how coarse a JPEG's quantization is", .timeLimit(.minutes(1)))
struct JPEGQuantizationTests {
    static func read(_ payload: [UInt8]) -> JPEGQuantization {
        var quantization = JPEGQuantization()
        payload.withUnsafeBytes { quantization.read(ByteReader($0)) }
        return quantization
    }

    /// A table's definition: its precision and slot byte, then 64 steps.
    static func table(slot: UInt8, steps: [Int], sixteenBit: Bool = false) -> [UInt8] {
        [(sixteenBit ? 0x10 : 0) | slot] + steps.flatMap { sixteenBit ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0)] }
    }

    @Test("libjpeg's luminance table at quality 75 is the line, as libjpeg-turbo's progressive test image declares it")
    func quality75() throws {
        #expect(JPEGQuantization.standardLuminance.reduce(0, +) == 3688)
        #expect(JPEGQuantization.quality75LuminanceSum == 1858)
        let survey = try Corpus.bytes(ProgressiveThumbnailScanTests.fine).withUnsafeBytes { JPEGScanSurvey(ByteReader($0)) }
        #expect(survey.quantization.stepSums[0] == 1858)
        #expect(survey.firstComponentIsFinelyQuantized)
        let halved = JPEGQuantization.standardLuminance.map { min(255, max(1, ($0 * 50 + 50) / 100)) }
        #expect(Self.read(Self.table(slot: 0, steps: halved)).isNoCoarserThanQuality75(slot: 0))
        var coarser = halved
        coarser[63] += 1
        #expect(!Self.read(Self.table(slot: 0, steps: coarser)).isNoCoarserThanQuality75(slot: 0))
    }

    @Test("tables of both precisions, several in one segment; the coarsest definition of a slot is kept")
    func tables() {
        let ones = Array(repeating: 1, count: 64), large = Array(repeating: 300, count: 64)
        let quantization = Self.read(Self.table(slot: 1, steps: ones) + Self.table(slot: 3, steps: large, sixteenBit: true))
        #expect(quantization.stepSums == [nil, 64, nil, 19_200])
        #expect(quantization.isNoCoarserThanQuality75(slot: 1))
        #expect(!quantization.isNoCoarserThanQuality75(slot: 3))
        #expect(!quantization.isNoCoarserThanQuality75(slot: 0), "a slot never defined")
        var redefined = quantization
        [Self.table(slot: 1, steps: large.map { $0 / 10 }), Self.table(slot: 1, steps: ones)].forEach { payload in
            payload.withUnsafeBytes { redefined.read(ByteReader($0)) }
        }
        #expect(redefined.stepSums[1] == 64 * 30)
    }

    @Test("any precision but 0 is 16-bit, as libjpeg reads it; a table cut short is unknown; a slot past 3 ends the reading")
    func malformed() {
        let steps = Array(repeating: 2, count: 64)
        let whole = Self.table(slot: 0, steps: steps)
        // Cut short: libjpeg fills the rest with 1s; here the slot is taken as coarse.
        let cut = Self.read(whole + Array(Self.table(slot: 1, steps: steps).dropLast()))
        #expect(cut.stepSums == [128, .max, nil, nil])
        #expect(!cut.isNoCoarserThanQuality75(slot: 1))
        // Precision 2 reads 16-bit steps: the fine 8-bit table is followed by a coarse
        // redefinition, 64 steps of 0x0202.
        let redefined = Self.read(whole + [0x20] + Array(repeating: 2, count: 128))
        #expect(redefined.stepSums == [64 * 0x0202, nil, nil, nil])
        #expect(!redefined.isNoCoarserThanQuality75(slot: 0))
        #expect(Self.read([0x04] + steps.map(UInt8.init) + whole).stepSums == [nil, nil, nil, nil])
        #expect(Self.read([]).stepSums == [nil, nil, nil, nil])
        #expect(!Self.read([]).isNoCoarserThanQuality75(slot: -1))
        #expect(!Self.read([]).isNoCoarserThanQuality75(slot: 9))
    }
}
