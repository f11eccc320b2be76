import CLCMS2
@testable import ImageCacheKit
import ImageCacheProtocol
import Testing
import TestSupport

/// Colour: images that declare their colours (an embedded ICC profile, PNG cHRM and
/// gAMA) are converted to sRGB before scaling, and thumbnails carry no profile. The references
/// are Pillow's ImageCms conversions (LittleCMS 2.19) of the same pixels, made once by
/// `Tests/Fixtures/colour/make_fixtures.py`; the daemon links Debian's LittleCMS 2.14.
///
/// Tolerances (per 8-bit sample, against the reference): decoded pixels, which differ only by
/// LittleCMS' version and rounding, mean ≤ 0.6 and every sample within 3 (CMYK through a
/// 17-point print table: mean ≤ 1.5, within 8); thumbnails, which add a quality-82 4:2:0 JPEG
/// encode and a resize, are compared by the colours of their 8×8 blocks: mean ≤ 1.5 per
/// channel. Every fixture's unconverted pixels are at least 4 off on average, so each
/// comparison can fail.
@Suite("Imaging: colour management (LittleCMS)", .timeLimit(.minutes(3)))
struct ColourManagementTests {
    private func expected(_ name: String) throws -> PixelBuffer {
        try decodePixels(try ColourFixtures.bytes(name))
    }

    /// Full-size decoded pixels of a JPEG or PNG body (converted when it declares colours).
    private func decoded(_ bytes: [UInt8]) throws -> PixelBuffer {
        try decodePixels(bytes)
    }

    /// Mean per-channel difference of the 8×8-block averages of two buffers of the same
    /// geometry: a thumbnail's colours, without the 4:2:0 and quantisation noise of its JPEG
    /// encoding (which alone is 3–5 per sample on the fixture's band of hues, one per row).
    private func blockColourDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.channels == b.channels)
        var total = 0.0, count = 0
        for by in stride(from: 0, to: a.height, by: 8) {
            for bx in stride(from: 0, to: a.width, by: 8) {
                for channel in 0..<a.channels {
                    var sumA = 0, sumB = 0, samples = 0
                    for y in by..<min(by + 8, a.height) {
                        for x in bx..<min(bx + 8, a.width) {
                            let index = (y * a.width + x) * a.channels + channel
                            sumA += Int(a.pixels[index]); sumB += Int(b.pixels[index]); samples += 1
                        }
                    }
                    total += abs(Double(sumA - sumB)) / Double(samples)
                    count += 1
                }
            }
        }
        return total / Double(count)
    }

    /// The largest difference of one sample between two buffers of the same geometry.
    private func maxDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Int {
        zip(a.pixels, b.pixels).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    /// `jpeg` without its APP2 ICC segments: the same pixels, taken as sRGB.
    private func withoutProfile(_ jpeg: [UInt8]) -> [UInt8] {
        var result = Array(jpeg[0..<2])
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF, jpeg[offset + 1] != 0xDA {
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            let isICC = jpeg[offset + 1] == 0xE2 && Array(jpeg[(offset + 4)..<min(jpeg.count, offset + 15)]) == Array("ICC_PROFILE".utf8)
            if !isICC { result += jpeg[offset..<(offset + 2 + length)] }
            offset += 2 + length
        }
        return result + jpeg[offset...]
    }

    private func profile(of jpeg: [UInt8]) -> [UInt8]? {
        jpeg.withUnsafeBytes { JPEGMetadata(ByteReader($0)).iccProfile }
    }

    @Test("a Display P3 JPEG is decoded to sRGB through its profile, as ImageCms converts it")
    func displayP3JPEG() throws {
        let body = try ColourFixtures.bytes("display-p3.jpg")
        let reference = try expected("display-p3.expected.png")
        let pixels = try decoded(body)
        #expect(meanAbsoluteDifference(pixels, reference) <= 0.6, "\(meanAbsoluteDifference(pixels, reference))")
        #expect(maxDifference(pixels, reference) <= 3)
        let unconverted = try decoded(withoutProfile(body))
        #expect(meanAbsoluteDifference(unconverted, reference) >= 4, "the fixture must be able to fail")
    }

    @Test("a Display P3 photo's thumbnail is sRGB, carries no profile, and matches the reference")
    func displayP3Thumbnail() throws {
        let body = try ColourFixtures.bytes("display-p3.jpg")
        #expect(profile(of: body) == (try ColourFixtures.bytes("display-p3.icc")))
        let same = try Thumbnailer.makeThumbnail(from: body, width: 192)
        #expect(same.format == .jpeg)
        #expect(profile(of: same.bytes) == nil)
        let sameDifference = blockColourDifference(try decodePixels(same.bytes), try expected("display-p3.expected.png"))
        #expect(sameDifference <= 1.5, "\(sameDifference)")
        // Scaled: the reference scaled by the same resampler (conversion before scaling).
        let small = try Thumbnailer.makeThumbnail(from: body, width: 96)
        let reference = Resampler.resize(try expected("display-p3.expected.png"), width: small.width, height: small.height)
        let smallDifference = blockColourDifference(try decodePixels(small.bytes), reference)
        #expect(smallDifference <= 1.5, "\(smallDifference)")
    }

    @Test("an Adobe RGB PNG (iCCP) is decoded to sRGB through its profile, in bands and whole")
    func adobeRGBPNG() throws {
        let body = try ColourFixtures.bytes("adobe-rgb.png")
        let reference = try expected("adobe-rgb.expected.png")
        let whole = try decoded(body)
        #expect(meanAbsoluteDifference(whole, reference) <= 0.6, "\(meanAbsoluteDifference(whole, reference))")
        #expect(maxDifference(whole, reference) <= 3)
        // The streamed path (bands converted before the horizontal pass) at full size.
        let streamed = try body.withUnsafeBytes { try PNGDecoder.decode($0, scaledTo: 192, height: 128) }
        #expect(streamed.pixels == whole.pixels)
        let thumbnail = try Thumbnailer.makeThumbnail(from: body, width: 96)
        #expect(thumbnail.format == .jpeg)
        let scaled = Resampler.resize(reference, width: thumbnail.width, height: thumbnail.height)
        let thumbnailDifference = blockColourDifference(try decodePixels(thumbnail.bytes), scaled)
        #expect(thumbnailDifference <= 1.5, "\(thumbnailDifference)")
        var unconverted = try #require(PNGChunks(parsing: body))
        unconverted.chunks.removeAll { $0.type == "iCCP" }
        #expect(meanAbsoluteDifference(try decoded(unconverted.bytes), reference) >= 4, "the fixture must be able to fail")
    }

    @Test("a PNG declaring cHRM and gAMA without iCCP is converted through those primaries and gamma")
    func chrmAndGamma() throws {
        let body = try ColourFixtures.bytes("chrm-gama.png")
        let reference = try expected("chrm-gama.expected.png")
        let pixels = try decoded(body)
        #expect(meanAbsoluteDifference(pixels, reference) <= 0.6, "\(meanAbsoluteDifference(pixels, reference))")
        #expect(maxDifference(pixels, reference) <= 3)
        // The same samples as the iCCP fixture, declared the other way: the same colours.
        #expect(meanAbsoluteDifference(try decoded(ColourFixtures.bytes("adobe-rgb.png")), pixels) <= 1)
    }

    @Test("a broken, mismatched or oversized profile is taken as sRGB, never a failure")
    func unusableProfiles() throws {
        let broken = try ColourFixtures.bytes("broken-profile.jpg")
        let plain = withoutProfile(broken)
        #expect(try decoded(broken).pixels == (try decoded(plain)).pixels)
        #expect(try decoded(broken).pixels == (try expected("broken-profile.expected.png")).pixels)
        #expect(profile(of: try Thumbnailer.makeThumbnail(from: broken, width: 64).bytes) == nil)

        let p3 = try ColourFixtures.bytes("display-p3.icc")
        var cmykClaim = p3
        cmykClaim.replaceSubrange(16..<20, with: Array("CMYK".utf8)) // an RGB profile that says CMYK
        var randomBytes = SplitMix64(seed: 24)
        let noise = (0..<3000).map { _ in UInt8(truncatingIfNeeded: randomBytes.next()) }
        var hugeTagTable = p3
        hugeTagTable.replaceSubrange(128..<132, with: [0xFF, 0xFF, 0xFF, 0xF0]) // 4 billion tags
        let oversized = p3 + [UInt8](repeating: 0, count: ColourTransform.maxProfileBytes)
        for (label, profile) in [("CMYK claim", cmykClaim), ("noise", noise), ("4 billion tags", hugeTagTable),
                                 ("over the cap", oversized), ("empty-ish", Array(p3.prefix(4)))] {
            #expect(ColourTransform(from: .icc(profile), layout: .rgb) == nil, "\(label)")
            #expect(ColourTransform(from: .icc(profile), layout: .cmyk(inverted: true)) == nil, "\(label)")
            let body = ICCSegments.inserting(profile, into: plain)
            #expect(try decoded(body).pixels == (try decoded(plain)).pixels, "\(label)")
        }
        // A grey JPEG carrying an RGB (sRGB) profile: mismatched, so taken as sRGB grey.
        let grey = try Corpus.bytes("jpeg/jpeg-decoder/mozilla/jpg-srgb-icc.jpg")
        #expect(try Thumbnailer.makeThumbnail(from: grey, width: 1).width == 1)
        // cHRM values that describe no colour space.
        let bad: [(Double, Double)] = [(0, 0), (.nan, 0.3), (.infinity, 0.3), (-0.2, 0.5), (1.5, 0.2)]
        for value in bad {
            let source = ColourTransform.Source.primaries(white: value, red: (0.64, 0.33), green: (0.3, 0.6),
                                                          blue: (0.15, 0.06), gamma: 0.45455)
            #expect(ColourTransform(from: source, layout: .rgb) == nil, "\(value)")
        }
        for gamma in [0.0, -1, .nan, .infinity, 1e-300, 1e300] {
            let source = ColourTransform.Source.primaries(white: (0.3127, 0.329), red: (0.64, 0.33), green: (0.3, 0.6),
                                                          blue: (0.15, 0.06), gamma: gamma)
            #expect(ColourTransform(from: source, layout: .rgb) == nil, "gamma \(gamma)")
        }
    }

    /// `pixels` (RGB) converted from `profile` to sRGB by LittleCMS directly, as `ColourTransform`
    /// would have done had it not recognised sRGB.
    private func convertedByLittleCMS(_ pixels: PixelBuffer, from profile: [UInt8]) throws -> PixelBuffer {
        let input = try #require(profile.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) })
        defer { cmsCloseProfile(input) }
        let output = try #require(cmsCreate_sRGBProfile())
        defer { cmsCloseProfile(output) }
        let transform = try #require(cmsCreateTransform(input, IC_TYPE_RGB_8, output, IC_TYPE_RGB_8, IC_INTENT_PERCEPTUAL, 0))
        defer { cmsDeleteTransform(transform) }
        var result = pixels
        result.pixels.withUnsafeMutableBytes { cmsDoTransform(transform, $0.baseAddress, $0.baseAddress, UInt32(pixels.width * pixels.height)) }
        return result
    }

    @Test("a profile that is sRGB already is not converted through: LittleCMS' conversion moves no sample by more than 1")
    func sRGBProfileIsTheIdentity() throws {
        // The "sRGB IEC61966-2.1" profile (3 048 bytes) of a corpus file, put on an RGB picture.
        let sRGB = try #require(profile(of: try Corpus.bytes("jpeg/jpeg-decoder/mozilla/jpg-srgb-icc.jpg")))
        #expect(ColourTransform(from: .icc(sRGB), layout: .rgb) == nil)
        #expect(ColourTransform(from: .icc(sRGB), layout: .rgba) == nil)
        let plain = withoutProfile(try ColourFixtures.bytes("display-p3.jpg"))
        let tagged = ICCSegments.inserting(sRGB, into: plain)
        let pixels = try decoded(tagged)
        #expect(pixels.pixels == (try decoded(plain)).pixels)
        let converted = try convertedByLittleCMS(pixels, from: sRGB)
        #expect(maxDifference(converted, pixels) <= 1, "\(maxDifference(converted, pixels))")
        // cHRM with sRGB's primaries and no gAMA (the sRGB curve) is sRGB too.
        let primaries = (white: (0.3127, 0.329), red: (0.64, 0.33), green: (0.3, 0.6), blue: (0.15, 0.06))
        #expect(ColourTransform(from: .primaries(white: primaries.white, red: primaries.red, green: primaries.green,
                                                 blue: primaries.blue, gamma: nil), layout: .rgb) == nil)
        // Not sRGB: other primaries with sRGB's curve (Display P3), sRGB's primaries with a
        // gamma-2.2 curve, Adobe RGB.
        #expect(ColourTransform(from: .icc(try ColourFixtures.bytes("display-p3.icc")), layout: .rgb) != nil)
        #expect(ColourTransform(from: .primaries(white: primaries.white, red: primaries.red, green: primaries.green,
                                                 blue: primaries.blue, gamma: 1 / 2.2), layout: .rgb) != nil)
        #expect(ColourTransform(from: .icc(try ColourFixtures.bytes("adobe-rgb-1998.icc")), layout: .rgb) != nil)
    }

    @Test("a CMYK (YCCK) JPEG with a print profile is converted through it, not the naive formula")
    func cmykThroughProfile() throws {
        let body = try Corpus.bytes("jpeg/jpeg-decoder/reftest/ycck.jpg")
        let reference = try expected("ycck.expected.png")
        let pixels = try decoded(body)
        #expect(meanAbsoluteDifference(pixels, reference) <= 1.5, "\(meanAbsoluteDifference(pixels, reference))")
        #expect(maxDifference(pixels, reference) <= 8)
        let naive = try decoded(withoutProfile(body))
        #expect(meanAbsoluteDifference(naive, reference) >= 4, "naive \(meanAbsoluteDifference(naive, reference))")
        let thumbnail = try Thumbnailer.makeThumbnail(from: body, width: 100)
        #expect(profile(of: thumbnail.bytes) == nil)
    }

    @Test("an image declaring its colours is re-encoded, not passed through with its profile")
    func taggedOriginalsAreConverted() throws {
        let body = try ColourFixtures.bytes("display-p3.jpg") // 192 px: narrower than 2 × 100
        let delivered = try ThumbnailProcessing.process(body, size: 100, quality: Thumbnailer.defaultQuality,
                                                        maxPixels: Thumbnailer.defaultMaxPixels)
        #expect(delivered.bytes != body)
        #expect(profile(of: delivered.bytes) == nil)
        let deliveredDifference = blockColourDifference(try decodePixels(delivered.bytes), try expected("display-p3.expected.png"))
        #expect(deliveredDifference <= 1.5, "\(deliveredDifference)")
        for name in ["adobe-rgb.png", "chrm-gama.png"] {
            let png = try ColourFixtures.bytes(name)
            let output = try ThumbnailProcessing.process(png, size: 100, quality: Thumbnailer.defaultQuality,
                                                         maxPixels: Thumbnailer.defaultMaxPixels)
            #expect(output.bytes != png, "\(name)")
            #expect(output.mime == "image/jpeg", "\(name)")
        }
        // An untagged original still passes through byte for byte.
        let plain = withoutProfile(try ColourFixtures.bytes("broken-profile.jpg"))
        let passed = try ThumbnailProcessing.process(plain, size: 100, quality: Thumbnailer.defaultQuality,
                                                     maxPixels: Thumbnailer.defaultMaxPixels)
        #expect(passed.bytes == plain)
    }

    @Test("the cost of a thumbnail counts the colour transform of a profiled image")
    func costCountsTheTransform() throws {
        let profiled = try ColourFixtures.bytes("display-p3.jpg")
        let plain = withoutProfile(profiled)
        let with = try Thumbnailer.thumbnailCost(of: profiled, width: 64)
        let without = try Thumbnailer.thumbnailCost(of: plain, width: 64)
        // The transform is held beside the decode; the resize, after it, may be the peak without one.
        #expect(with.bytes - without.bytes >= ColourTransform.workingBytes / 2, "\(with.bytes - without.bytes)")
        #expect(with.bytes >= ColourTransform.memoryBytes(profileBytes: 624))
        let png = try Thumbnailer.thumbnailCost(of: try ColourFixtures.bytes("adobe-rgb.png"), width: 64)
        #expect(png.bytes >= ColourTransform.memoryBytes(profileBytes: ColourTransform.maxProfileBytes))
        // Validation converts nothing, so it costs the same with or without a profile.
        #expect(try Thumbnailer.validationCost(of: profiled).bytes - (try Thumbnailer.validationCost(of: plain).bytes)
                == profiled.count - plain.count)
    }
}
