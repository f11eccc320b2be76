import CWebP
import ImageCacheProtocol

/// Decodes WebP bodies with libwebp: lossy (VP8), lossless (VP8L) and either with alpha;
/// an animation's first frame is composed on its canvas by libwebp's animation decoder
/// (WebPAnimDecoder, from the demuxer).
///
/// The caller has probed the header and checked it against the pixel limit; the features
/// libwebp reads must agree with it (so the budget was decided on the real size). Output is
/// 8-bit RGB, or RGBA (straight alpha) when the file declares alpha, which keeps the
/// thumbnail a PNG. One thread: the decode runs under a `DecodeBudget` slot.
enum WebPDecoder {
    /// Decodes the (first) picture at full size, or, for a still picture wider than twice
    /// `thumbnailWidth` (stored orientation), scaled by libwebp while it decodes to twice that
    /// width: the thumbnail is then made from it with Lanczos-3, as a JPEG's DCT-scaled decode
    /// is (the quality rule: decoded at ≥ 2 × the target). libwebp's rescaler averages whole
    /// areas, so nothing aliases; resampling a 2400-px picture down whole cost more CPU than
    /// decoding it (docs/benchmarks.md, "CPU per thumbnail from WebP and AVIF").
    static func decode(_ bytes: UnsafeRawBufferPointer, header: ImageHeader,
                       thumbnailWidth: Int? = nil) throws(ImagingError) -> PixelBuffer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw failure("empty body") }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw failure(describe(status)) }
        let width = Int(features.width), height = Int(features.height)
        guard width == header.storedWidth, height == header.storedHeight else {
            throw failure("the bitstream says \(width)×\(height), the header \(header.storedWidth)×\(header.storedHeight)")
        }
        if features.has_animation != 0 { return try firstFrame(base, bytes.count, width: width, height: height) }
        let channels = features.has_alpha != 0 ? 4 : 3
        let (outWidth, outHeight) = decodedSize(width: width, height: height, thumbnailWidth: thumbnailWidth)
        var pixels = [UInt8](repeating: 0, count: outWidth * outHeight * channels)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw ImagingError.library("libwebp: version mismatch") }
        config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        config.options.use_threads = 0
        if outWidth != width || outHeight != height {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(outWidth)
            config.options.scaled_height = Int32(outHeight)
        }
        let result = pixels.withUnsafeMutableBufferPointer { target -> VP8StatusCode in
            config.output.u.RGBA.rgba = target.baseAddress
            config.output.u.RGBA.stride = Int32(outWidth * channels)
            config.output.u.RGBA.size = target.count
            let result = WebPDecode(base, bytes.count, &config)
            WebPFreeDecBuffer(&config.output)
            return result
        }
        guard result == VP8_STATUS_OK else { throw failure(describe(result)) }
        return PixelBuffer(width: outWidth, height: outHeight, channels: channels, pixels: pixels)
    }

    /// The size to decode to: twice `thumbnailWidth` wide (the height in proportion, at least
    /// 1) when the picture is wider than that, else the picture's own.
    static func decodedSize(width: Int, height: Int, thumbnailWidth: Int?) -> (width: Int, height: Int) {
        guard let thumbnailWidth, thumbnailWidth >= 1, width > 2 * thumbnailWidth else { return (width, height) }
        let scaledWidth = 2 * thumbnailWidth
        return (scaledWidth, max(1, (height * scaledWidth + width / 2) / width))
    }

    /// An animation's first frame, composed on the canvas (RGBA, as libwebp composes it;
    /// turned into RGB when no pixel of it is translucent and the file declares no alpha).
    private static func firstFrame(_ base: UnsafePointer<UInt8>, _ count: Int, width: Int,
                                   height: Int) throws(ImagingError) -> PixelBuffer {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw ImagingError.library("libwebp: version mismatch") }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        var data = WebPData(bytes: base, size: count)
        guard let decoder = WebPAnimDecoderNew(&data, &options) else { throw failure("the animation cannot be demuxed") }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw failure("the animation cannot be read") }
        guard info.frame_count > 0 else { throw failure("the animation has no frame") }
        guard Int(info.canvas_width) == width, Int(info.canvas_height) == height else {
            throw failure("the animation's canvas disagrees with its header")
        }
        var frame: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
            throw failure("the first frame does not decode")
        }
        let canvas = PixelBuffer(width: width, height: height, channels: 4,
                                 pixels: Array(UnsafeBufferPointer(start: frame, count: width * height * 4)))
        return canvas.hasTranslucentPixels ? canvas : canvas.droppingAlpha()
    }

    private static func describe(_ status: VP8StatusCode) -> String {
        switch status {
        case VP8_STATUS_OUT_OF_MEMORY: return "out of memory"
        case VP8_STATUS_INVALID_PARAM: return "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature"
        case VP8_STATUS_SUSPENDED: return "suspended"
        case VP8_STATUS_USER_ABORT: return "aborted"
        case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)"
        default: return "error \(status.rawValue)"
        }
    }

    private static func failure(_ why: String) -> ImagingError {
        ImagingError.decodeFailed("WebP: \(why)", format: .webp)
    }
}
