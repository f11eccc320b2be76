@testable import ImageCacheKit
import ImageCacheProtocol
import ProviderSimulator
import Testing
import TestSupport

/// The pipeline prices a body (`ThumbnailProcessing.cost`) before its budget admits the
/// decode, then processes it by the plan that cost made: the header, metadata census and
/// survey are read once, and the branch priced is the branch taken.
@Suite("Imaging: a thumbnail's plan", .timeLimit(.minutes(1)))
struct ThumbnailPlanTests {
    private func plan(_ body: [UInt8], size: Int, maxPixels: Int = Thumbnailer.defaultMaxPixels) throws -> ThumbnailProcessing.Plan {
        try body.withUnsafeBytes { (raw) throws(ImagingError) -> ThumbnailProcessing.Plan in
            try ThumbnailProcessing.cost(of: raw, size: size, maxPixels: maxPixels)
        }
    }

    @Test("a wide photo is priced and made as a thumbnail, the same bytes as processing it afresh")
    func widePhoto() throws {
        let body = SyntheticImages.jpeg(width: 900, height: 600)
        let plan = try plan(body, size: 256)
        #expect(plan.width == 256)
        let cost = try Thumbnailer.thumbnailCost(of: body, width: 256)
        #expect(plan.cost == cost)
        let planned = try ThumbnailProcessing.process(body, plan: plan, quality: 82, placeholder: true)
        let afresh = try ThumbnailProcessing.process(body, size: 256, quality: 82, maxPixels: Thumbnailer.defaultMaxPixels,
                                                     placeholder: true)
        #expect((planned.width, planned.height, planned.mime) == (256, 171, "image/jpeg"))
        #expect(planned.bytes == afresh.bytes && planned.placeholder == afresh.placeholder && planned.placeholder != nil)
    }

    @Test("a clean narrow original is priced as the validation it gets, and passed through")
    func cleanNarrow() throws {
        let body = SyntheticImages.jpeg(width: 300, height: 200)
        let plan = try plan(body, size: 200)
        #expect(plan.width == nil)
        let cost = try Thumbnailer.validationCost(of: body)
        #expect(plan.cost == cost)
        let output = try ThumbnailProcessing.process(body, plan: plan, quality: 82)
        #expect(output.bytes == body && (output.width, output.height) == (300, 200))
    }

    @Test("a narrow original that is not clean is priced as the re-encode it gets, not as a validation")
    func uncleanNarrow() throws {
        let profile = (0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let body = ICCSegments.inserting(profile, into: SyntheticImages.jpeg(width: 300, height: 200))
        let plan = try plan(body, size: 200)
        #expect(plan.width == 300)
        let thumbnail = try Thumbnailer.thumbnailCost(of: body, width: 300)
        let validation = try Thumbnailer.validationCost(of: body)
        #expect(plan.cost == thumbnail && thumbnail.bytes > validation.bytes)
        let output = try ThumbnailProcessing.process(body, plan: plan, quality: 82)
        #expect(output.bytes != body && (output.width, output.height) == (300, 200))
    }

    @Test("the plan refuses what processing refuses, before any decode")
    func refusals() throws {
        let body = SyntheticImages.jpeg(width: 900, height: 600)
        expectRPCError(.tooLarge) { _ = try plan(body, size: 256, maxPixels: 1000) }
        expectRPCError(.decodeFailed) { _ = try plan(Array(body.prefix(100)), size: 256) }
    }

    @Test("a thumbnail's size from hostile header sides: rounded half up, at least 1, never a trap")
    func targetSizeFromOutsideSides() {
        func size(_ width: Int, _ height: Int, to target: Int, _ orientation: ExifOrientation = .up) -> [Int] {
            let header = ImageHeader(format: .jpeg, storedWidth: width, storedHeight: height, orientation: orientation,
                                     hasAlpha: false, isProgressive: false, components: 3)
            let sized = Thumbnailer.targetSize(of: header, width: target)
            return [sized.storedWidth, sized.storedHeight]
        }
        #expect(size(900, 600, to: 256) == [256, 171])
        #expect(size(4, 3, to: 2) == [2, 2], "1.5 rounds up")
        #expect(size(1000, 1, to: 10) == [10, 1], "never 0 rows")
        #expect(size(100, 50, to: 400) == [100, 50], "never upscaled")
        #expect(size(0, 0, to: 256) == [1, 1])
        #expect(size(Int.max, Int.max, to: 256) == [256, Int.max], "a product past Int.max keeps the height")
        #expect(size(600, 900, to: 256, .right) == [171, 256], "rotated: the upright width is scaled, the stored sides swap")
    }
}
