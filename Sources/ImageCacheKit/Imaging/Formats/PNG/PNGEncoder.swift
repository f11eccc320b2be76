import CPNG
import ImageCacheProtocol

/// Encodes thumbnails that keep an alpha channel as PNG, with libpng's simplified writer
/// (no setjmp), in memory.
enum PNGEncoder {
    static func encode(_ image: PixelBuffer) throws(ImagingError) -> [UInt8] {
        var png = png_image()
        png.version = IC_PNG_IMAGE_VERSION
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        switch image.channels {
        case 1: png.format = IC_PNG_FORMAT_GRAY
        case 3: png.format = IC_PNG_FORMAT_RGB
        default: png.format = IC_PNG_FORMAT_RGBA
        }
        defer { png_image_free(&png) }
        var size = 0
        // First call measures, second writes.
        let measured = image.pixels.withUnsafeBytes { source in
            png_image_write_to_memory(&png, nil, &size, 0, source.baseAddress, 0, nil)
        }
        guard measured != 0, size > 0 else { throw failure(&png) }
        var output = [UInt8](repeating: 0, count: size)
        let written = output.withUnsafeMutableBytes { target in
            image.pixels.withUnsafeBytes { source in
                png_image_write_to_memory(&png, target.baseAddress, &size, 0, source.baseAddress, 0, nil)
            }
        }
        guard written != 0 else { throw failure(&png) }
        return Array(output.prefix(size))
    }

    private static func failure(_ image: inout png_image) -> ImagingError {
        let message = withUnsafeBytes(of: &image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return ImagingError.library("libpng could not encode a thumbnail: \(message)")
    }
}
