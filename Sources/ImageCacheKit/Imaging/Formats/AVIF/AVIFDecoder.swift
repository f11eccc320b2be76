import CAVIF
import ImageCacheProtocol

/// Decodes an AVIF's primary image with libavif (AV1 by dav1d in Debian's build), converting
/// 8-, 10- or 12-bit YUV to 8-bit RGB, or RGBA (straight alpha) when it has an alpha plane.
///
/// libavif's own limits are set before it parses: `imageSizeLimit` to the pixel limit (dav1d
/// refuses a larger frame before allocating it), `imageDimensionLimit` to 65 535 (JPEG's
/// largest side), `imageCountLimit` to `frameLimit` (a sequence claiming millions of frames
/// is refused at parse time); one thread, no EXIF or XMP. Strictness is off, as in browsers:
/// files from older encoders lack `pixi` or carry a slightly wrong `clap`, and they display.
/// `irot`/`imir` are not applied here: the header's orientation carries them (as EXIF's for JPEG).
enum AVIFDecoder {
    /// Most images a file may declare (an image sequence's frames); only the first is decoded.
    static let frameLimit: UInt32 = 10_000
    /// Largest width or height libavif may decode.
    static let dimensionLimit: UInt32 = 65_535

    /// Decodes the primary image at full size; the caller has checked `header` against
    /// `maxPixels`, and libavif checks the frame it really finds against it again.
    static func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader, maxPixels: Int) throws(ImagingError) -> PixelBuffer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw failure("empty body") }
        guard let decoder = avifDecoderCreate() else { throw ImagingError.library("libavif: cannot create a decoder") }
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        decoder.pointee.strictFlags = avifStrictFlags(AVIF_STRICT_DISABLED.rawValue)
        decoder.pointee.imageSizeLimit = maxPixels > 0 ? UInt32(clamping: maxPixels) : UInt32(AVIF_DEFAULT_IMAGE_SIZE_LIMIT)
        decoder.pointee.imageDimensionLimit = dimensionLimit
        decoder.pointee.imageCountLimit = frameLimit
        try check(avifDecoderSetIOMemory(decoder, base, bytes.count), "reading")
        try check(avifDecoderParse(decoder), "parsing")
        guard let image = decoder.pointee.image else { throw failure("no image") }
        let width = Int(image.pointee.width), height = Int(image.pointee.height)
        guard width == header.storedWidth, height == header.storedHeight else {
            throw failure("the image is \(width)×\(height), its header says \(header.storedWidth)×\(header.storedHeight)")
        }
        try check(avifDecoderNextImage(decoder), "decoding the first image")
        guard let decoded = decoder.pointee.image else { throw failure("no image") }
        let channels = decoded.pointee.alphaPlane != nil ? 4 : 3
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, decoded)
        rgb.depth = 8
        rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.rowBytes = UInt32(width * channels)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        let result = pixels.withUnsafeMutableBufferPointer { target -> avifResult in
            rgb.pixels = target.baseAddress
            return avifImageYUVToRGB(decoded, &rgb)
        }
        try check(result, "converting to RGB")
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    private static func check(_ result: avifResult, _ stage: String) throws(ImagingError) {
        guard result != AVIF_RESULT_OK else { return }
        let text = avifResultToString(result).map { String(cString: $0) } ?? "error \(result.rawValue)"
        if result == AVIF_RESULT_OUT_OF_MEMORY { throw ImagingError.library("libavif: \(stage): \(text)") }
        throw failure("\(stage): \(text)")
    }

    private static func failure(_ why: String) -> ImagingError {
        ImagingError.decodeFailed("AVIF: \(why)", format: .avif)
    }
}
