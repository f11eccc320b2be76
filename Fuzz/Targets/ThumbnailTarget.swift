import ImageCacheProtocol
@testable import ImageCacheKit

/// `thumbnail`: the whole decode path on arbitrary bytes: `Thumbnailer.validate` and
/// `Thumbnailer.makeThumbnail`, with a small pixel limit so that each input decodes fast.
///
/// Properties: each answers or throws `decode_failed`/`too_large`, never a trap or a
/// sanitizer report; a thumbnail is exactly as wide as asked (or as the source, when
/// narrower), at least 1×1, and is itself an image that validates to its stated size.
enum ThumbnailTarget {
    static let target = FuzzTarget(name: "thumbnail", summary: "Thumbnailer.validate and makeThumbnail (1 MP limit)", run: run)

    /// Small enough that a decode takes milliseconds, large enough for every corpus seed
    /// that matters (the PngSuite, libjpeg-turbo's seeds) to decode.
    static let maxPixels = 1 << 20
    /// Thumbnail widths, chosen by the input's length so every width is tried.
    static let widths = [1, 7, 64, 200]

    static func run(_ bytes: UnsafeRawBufferPointer) {
        let body = Array(bytes)
        do {
            _ = try Thumbnailer.validate(body, maxPixels: maxPixels)
        } catch {
            expectImagingError(error, "validate")
        }
        let width = widths[body.count % widths.count]
        let thumbnail: Thumbnail
        do {
            thumbnail = try Thumbnailer.makeThumbnail(from: body, width: width, maxPixels: maxPixels)
        } catch {
            expectImagingError(error, "makeThumbnail")
            return
        }
        FuzzCheck.require(thumbnail.width == min(width, thumbnail.source.width) && thumbnail.height >= 1,
                          "asked \(width) px of \(thumbnail.source): got \(thumbnail.width)×\(thumbnail.height)")
        do {
            let header = try Thumbnailer.validate(thumbnail.bytes, maxPixels: maxPixels)
            FuzzCheck.require(header.width == thumbnail.width && header.height == thumbnail.height && header.format == thumbnail.format,
                              "thumbnail said \(thumbnail.width)×\(thumbnail.height) \(thumbnail.format), holds \(header)")
        } catch {
            FuzzCheck.fail("a thumbnail that does not validate: \(error) (source \(thumbnail.source))")
        }
    }

    static func expectImagingError(_ error: ImagingError, _ step: String) {
        FuzzCheck.require(error.kind == .decodeFailed || error.kind == .tooLarge, "\(step) threw \(error)")
    }
}
