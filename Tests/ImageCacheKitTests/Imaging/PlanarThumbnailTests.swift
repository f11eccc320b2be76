import CTurboJPEG
@testable import ImageCacheKit
import ProviderSimulator
import Testing
import TestSupport

/// A JPEG thumbnail of a YCbCr JPEG is made from the file's own planes (`YCbCrPlanes`): the
/// same picture as the RGB road gives, at the exact size, for every subsampling and odd sides;
/// files whose colours need converting, and grey ones, keep the RGB road.
@Suite("Imaging: JPEG thumbnails from the file's YCbCr planes", .timeLimit(.minutes(2)))
struct PlanarThumbnailTests {
    /// A JPEG of the synthetic picture with the given TurboJPEG subsampling (and pixel format).
    private func jpeg(width: Int, height: Int, subsampling: TJSAMP, seed: UInt64 = 7) throws -> [UInt8] {
        let source = SyntheticImages.jpeg(width: width, height: height, seed: seed, quality: 95)
        let rgb = try decodePixels(source)
        let grey = subsampling == TJSAMP_GRAY
        let pixels = grey ? stride(from: 0, to: rgb.pixels.count, by: 3).map { rgb.pixels[$0 + 1] } : rgb.pixels
        guard let handle = tjInitCompress() else { throw ImagingError.library("no compressor") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = pixels.withUnsafeBufferPointer {
            tjCompress2(handle, $0.baseAddress, Int32(width), 0, Int32(height), Int32((grey ? TJPF_GRAY : TJPF_RGB).rawValue),
                        &output, &size, Int32(subsampling.rawValue), 92, 0)
        }
        defer { if let output { tjFree(output) } }
        guard rc == 0, let output else { throw ImagingError.library("encode failed") }
        return [UInt8](UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// What the decoder hands a thumbnail of `body` `width` wide.
    private func decoded(_ body: [UInt8], width: Int) throws -> ScaledPicture {
        try body.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            return try JPEGDecoder.decodeForThumbnail(raw, header: header, survey: nil, width: width, fast: false)
        }
    }

    private func isPlanar(_ picture: ScaledPicture) -> Bool {
        if case .planar = picture { return true }
        return false
    }

    /// The thumbnail the RGB road makes of `body`: interleaved decode, resample, encode.
    private func rgbRoad(_ body: [UInt8], width: Int, height: Int) throws -> PixelBuffer {
        let pixels = try body.withUnsafeBytes { raw in
            let header = try ImageHeaderProbe.header(ofComplete: raw)
            return try JPEGDecoder.decode(raw, header: header, thumbnailWidth: width).pixels
        }
        return try decodePixels(try JPEGEncoder.encode(Resampler.resize(pixels, width: width, height: height),
                                                       quality: Thumbnailer.defaultQuality))
    }

    @Test("every subsampling TurboJPEG names decodes to planes, and the thumbnail is the RGB road's picture at the exact size",
          arguments: [TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411])
    func everySubsampling(_ subsampling: TJSAMP) throws {
        let body = try jpeg(width: 1000, height: 750, subsampling: subsampling)
        #expect(isPlanar(try decoded(body, width: 250)))
        let thumbnail = try Thumbnailer.makeThumbnail(from: body, width: 250)
        #expect((thumbnail.width, thumbnail.height) == (250, 188))
        let pixels = try decodePixels(thumbnail.bytes)
        #expect((pixels.width, pixels.height) == (250, 188))
        let difference = meanAbsoluteDifference(pixels, try rgbRoad(body, width: 250, height: 188))
        #expect(difference < 2.0, "mean difference \(difference) per sample")
    }

    @Test("odd sides, in the source and the thumbnail, keep the exact size and the picture",
          arguments: [(1001, 751, 255), (999, 777, 257), (1003, 1001, 333), (641, 479, 319)])
    func oddSides(_ size: (Int, Int, Int)) throws {
        let (width, height, target) = size
        let body = try jpeg(width: width, height: height, subsampling: TJSAMP_420, seed: UInt64(width))
        #expect(isPlanar(try decoded(body, width: target)))
        let thumbnail = try Thumbnailer.makeThumbnail(from: body, width: target)
        let expectedHeight = Thumbnailer.targetSize(of: try body.withUnsafeBytes { try ImageHeaderProbe.header(ofComplete: $0) },
                                                    width: target).1
        let pixels = try decodePixels(thumbnail.bytes)
        #expect((pixels.width, pixels.height) == (target, expectedHeight))
        let difference = meanAbsoluteDifference(pixels, try rgbRoad(body, width: target, height: expectedHeight))
        #expect(difference < 2.0, "mean difference \(difference) per sample")
    }

    @Test("the placeholder computed from the planes is the RGB road's, within the hash's rounding")
    func placeholderFromPlanes() throws {
        let body = try jpeg(width: 1000, height: 750, subsampling: TJSAMP_420)
        let planar = try #require(try Thumbnailer.makeThumbnail(from: body, width: 250, placeholder: true).placeholder)
        let road = try #require(ImagePlaceholder.of(try rgbRoad(body, width: 250, height: 188)))
        let channels = { (hex: String) -> [Int] in
            stride(from: 1, to: 7, by: 2).map { Int(hex.dropFirst($0).prefix(2), radix: 16) ?? -99 }
        }
        for (a, b) in zip(channels(planar.color), channels(road.color)) { #expect(abs(a - b) <= 2, "\(planar) vs \(road)") }
        #expect(planar.blurHash.count == road.blurHash.count)
    }

    @Test("grey JPEGs and JPEGs whose profile converts their colours keep the RGB road")
    func rgbRoadKept() throws {
        let grey = try jpeg(width: 800, height: 600, subsampling: TJSAMP_GRAY)
        #expect(!isPlanar(try decoded(grey, width: 200)))
        let displayP3 = try ColourFixtures.bytes("display-p3.jpg")
        #expect(!isPlanar(try decoded(displayP3, width: 128)))
    }

    @Test("a cut body is refused on the planar road as on the RGB one")
    func truncatedRefused() throws {
        let body = try jpeg(width: 1000, height: 750, subsampling: TJSAMP_420)
        let cut = Array(body.prefix(body.count * 2 / 3))
        #expect(throws: ImagingError.self) { _ = try Thumbnailer.makeThumbnail(from: cut, width: 250) }
    }
}
