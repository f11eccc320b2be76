import Foundation
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// The cost model and the CPU limits, from headers and markers alone.
@Suite("Imaging: decode cost and scan limit", .timeLimit(.minutes(2)))
struct DecodeCostTests {
    @Test("a non-interlaced 7000² PNG, 16-bit or 8-bit, is read in bands: it costs its narrowed, box-shrunk rows, not its picture")
    func bandedPNG() throws {
        for bitDepth: UInt8 in [16, 8] {
            let png = HostileImages.png(width: 7000, height: 7000, bitDepth: bitDepth)
            let cost = try Thumbnailer.thumbnailCost(of: png, width: 400)
            // Box-shrunk by 5 on each axis (to three times the target), then narrowed to 400.
            #expect(BoxShrinker.factors(sourceWidth: 7000, sourceHeight: 7000, width: 400, height: 400) == (5, 5))
            let narrowed = 400 * (7000 / 5) * 4
            #expect(cost.bytes >= narrowed && cost.bytes < narrowed + 4 << 20, "\(bitDepth)-bit: \(cost)")
            // Validation keeps one band of rows.
            let validation = try Thumbnailer.validationCost(of: png)
            #expect(validation.bytes < 2 << 20, "\(bitDepth)-bit: \(validation)")
        }
    }

    @Test("an interlaced 7000² RGBA PNG is read whole: 4 B per pixel, 8 B with its premultiplied copy")
    func interlacedPNG() throws {
        let png = HostileImages.png(width: 7000, height: 7000, interlaced: true)
        let pixels = 7000 * 7000
        let cost = try Thumbnailer.thumbnailCost(of: png, width: 400)
        #expect(cost.bytes >= 8 * pixels && cost.bytes < 9 * pixels, "\(cost)")
        let validation = try Thumbnailer.validationCost(of: png)
        #expect(validation.bytes >= 4 * pixels && validation.bytes < 5 * pixels, "\(validation)")
    }

    @Test("a progressive CMYK JPEG holds every coefficient of its 4 components, at any scale")
    func cmykProgressive() throws {
        let jpeg = HostileImages.progressiveJPEGMarkers(width: 7000, height: 7000, components: 4, scans: 10)
        let cost = try Thumbnailer.thumbnailCost(of: jpeg, width: 200)
        let coefficients = 4 * 875 * 875 * 64 * 2
        #expect(cost.bytes >= coefficients && cost.bytes < coefficients + 8 << 20, "\(cost)")
    }

    @Test("a baseline JPEG at 1/8 costs about its scaled output, not its full size")
    func baselineIsCheap() throws {
        let jpeg = try Corpus.bytes("jpeg/libjpeg-turbo/testorig.jpg")
        let cost = try Thumbnailer.thumbnailCost(of: jpeg, width: 32)
        #expect(cost.bytes < 2 << 20, "\(cost)")
        #expect(cost.work < DecodeCost.ordinaryWork)
    }

    @Test("a progressive JPEG with hundreds of scans is refused before decoding, naming the limit")
    func scanBomb() throws {
        let real = try Corpus.bytes("jpeg/libjpeg-turbo/testimgp.jpg")
        #expect(try Thumbnailer.validate(real).width == 227)
        let bomb = HostileImages.repeatingLastScan(of: real, toTotal: 480)
        for error in [expectRPCError(.decodeFailed) { _ = try Thumbnailer.validationCost(of: bomb) },
                      expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(bomb) },
                      expectRPCError(.decodeFailed) { _ = try Thumbnailer.makeThumbnail(from: bomb, width: 64) }] {
            #expect(error?.message.contains("480 scans, over the limit of \(DecodeCost.scanLimit)") == true, "\(String(describing: error))")
        }
        // At the limit the scan count admits it: the cost is computed, and what refuses it
        // then is the decode's own finding (a repeated refinement scan is a bogus progression,
        // which the pixel check refuses), not the limit.
        let atLimit = HostileImages.repeatingLastScan(of: real, toTotal: DecodeCost.scanLimit)
        #expect(try Thumbnailer.validationCost(of: atLimit).work > 0)
        let decoded = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validate(atLimit) }
        #expect(decoded?.message.contains("progression") == true, "\(String(describing: decoded))")
        #expect(decoded?.message.contains("over the limit") == false)
    }

    @Test("within the scan limit, too much work is refused: 64 scans over a 7000² frame")
    func workLimit() throws {
        let jpeg = HostileImages.progressiveJPEGMarkers(width: 7000, height: 7000, components: 3, scans: DecodeCost.scanLimit)
        let error = expectRPCError(.decodeFailed) { _ = try Thumbnailer.validationCost(of: jpeg) }
        #expect(error?.message.contains("block visits") == true, "\(String(describing: error))")
        let smaller = HostileImages.progressiveJPEGMarkers(width: 2000, height: 2000, components: 3, scans: DecodeCost.scanLimit)
        let cost = try Thumbnailer.validationCost(of: smaller)
        #expect(cost.work > DecodeCost.ordinaryWork && cost.work <= DecodeCost.workLimit, "\(cost)")
    }

    @Test("no JPEG of the corpus that decodes today is over the scan limit")
    func corpusWithinLimit() throws {
        var largest = 0
        let root = Corpus.url("jpeg").path
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        for file in files where file.lowercased().hasSuffix(".jpg") || file.lowercased().hasSuffix(".jpeg") {
            guard let bytes = FileManager.default.contents(atPath: root + "/" + file).map(Array.init) else { continue }
            let survey = bytes.withUnsafeBytes { JPEGScanSurvey(ByteReader($0)) }
            largest = max(largest, survey.scanCount)
            if survey.scanCount > DecodeCost.scanLimit { Issue.record("\(file): \(survey.scanCount) scans") }
        }
        #expect(largest > 1 && largest <= DecodeCost.scanLimit)
    }
}
