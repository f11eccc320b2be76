import CPNG
import ImageCacheProtocol

/// Decodes PNG bodies with libpng's simplified `png_image` API, which needs no `setjmp` (so
/// no longjmp ever crosses a Swift frame) and handles every colour type, bit depth and
/// interlacing of PngSuite, converting to 8-bit grey, RGB or RGBA.
///
/// The simplified reader stops after the last row and never checks what follows, so the
/// body must first run whole to IEND: a cut-off file is refused rather than half accepted.
/// Ancillary-chunk limits stay at libpng's defaults (8 MB per chunk), which defuse
/// decompression bombs hidden in text chunks.
enum PNGDecoder {
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(RPCError) -> PixelBuffer {
        guard PNGHeaderParser.reachesIEND(ByteReader(bytes)) else {
            throw ImagingError.decodeFailed("PNG: truncated (the chunks do not reach IEND)", format: .png)
        }
        var image = png_image()
        image.version = IC_PNG_IMAGE_VERSION
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
            throw failure(&image)
        }
        let hasAlpha = image.format & IC_PNG_FORMAT_FLAG_ALPHA != 0
        let channels = hasAlpha ? 4 : (image.format & IC_PNG_FORMAT_FLAG_COLOR != 0 ? 3 : 1)
        let colorFlags = hasAlpha ? IC_PNG_FORMAT_FLAG_ALPHA | IC_PNG_FORMAT_FLAG_COLOR
            : (channels == 3 ? IC_PNG_FORMAT_FLAG_COLOR : 0)
        let width = Int(image.width), height = Int(image.height)
        if image.format & IC_PNG_FORMAT_FLAG_LINEAR != 0 {
            // 16-bit source. libpng 1.6.39's simplified reader scrambles the rows of interlaced
            // 16-bit images when asked for 8-bit output, but reads them right as 16-bit linear;
            // the conversion to 8-bit sRGB is then done here.
            image.format = colorFlags | IC_PNG_FORMAT_FLAG_LINEAR
            var linear = [UInt16](repeating: 0, count: width * height * channels)
            let ok = linear.withUnsafeMutableBytes { target in
                png_image_finish_read(&image, nil, target.baseAddress, 0, nil)
            }
            guard ok != 0 else { throw failure(&image) }
            return PixelBuffer(width: width, height: height, channels: channels,
                               pixels: LinearToSRGB.convert(linear, channels: channels, premultipliedAlpha: hasAlpha))
        }
        image.format = colorFlags
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        let ok = pixels.withUnsafeMutableBytes { target in
            png_image_finish_read(&image, nil, target.baseAddress, 0, nil)
        }
        guard ok != 0 else { throw failure(&image) }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    private static func failure(_ image: inout png_image) -> RPCError {
        let message = withUnsafeBytes(of: &image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return ImagingError.decodeFailed("PNG: \(message.isEmpty ? "not decodable" : message)", format: .png)
    }
}
