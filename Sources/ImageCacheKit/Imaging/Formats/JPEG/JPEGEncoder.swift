import CTurboJPEG
import ImageCacheProtocol

/// Encodes thumbnails as baseline JPEG with TurboJPEG (4:2:0 for colour, the size browsers
/// expect). Thumbnails are sRGB (converted when decoded), so they carry no ICC profile.
///
/// The forward DCT is the accurate one (`TJFLAG_ACCURATEDCT`): TurboJPEG 2.x compresses with
/// the fast, less exact DCT unless told otherwise, where libvips and Pillow use libjpeg's
/// default, the accurate one. With the fast one, thumbnails at quality 82 scored 0.0002 below
/// vipsthumbnail's in mean SSIM though the resize before it was as good as vips' (at quality
/// 100 the two were level): docs/benchmarks.md, "Thumbnail quality and colour".
enum JPEGEncoder {
    static func encode(_ image: PixelBuffer, quality: Int) throws(ImagingError) -> [UInt8] {
        let format = image.channels == 1 ? TJPF_GRAY : TJPF_RGB
        let subsampling = image.channels == 1 ? TJSAMP_GRAY : TJSAMP_420
        precondition(image.channels == 1 || image.channels == 3, "JPEG has no alpha channel")
        return try compress { handle, output, size in
            image.pixels.withUnsafeBufferPointer { source in
                tjCompress2(handle, source.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(format.rawValue),
                            &output, &size, Int32(subsampling.rawValue), clamped(quality), TJFLAG_ACCURATEDCT)
            }
        }
    }

    /// Encodes 4:2:0 planes as they are: no colour conversion, no chroma subsampling.
    static func encode(_ planes: YCbCrPlanes, quality: Int) throws(ImagingError) -> [UInt8] {
        try compress { handle, output, size in
            planes.withTurboPlanes { sources, strides in
                var sources = sources
                var strides = strides
                return tjCompressFromYUVPlanes(handle, &sources, Int32(planes.width), &strides, Int32(planes.height),
                                               Int32(TJSAMP_420.rawValue), &output, &size, clamped(quality), TJFLAG_ACCURATEDCT)
            }
        }
    }

    private static func clamped(_ quality: Int) -> Int32 { Int32(min(100, max(1, quality))) }

    /// Runs one TurboJPEG compression (`call` fills TurboJPEG's output buffer and size) and
    /// returns its bytes.
    private static func compress(_ call: (tjhandle, inout UnsafeMutablePointer<UInt8>?, inout UInt) -> Int32) throws(ImagingError) -> [UInt8] {
        guard let handle = tjInitCompress() else {
            throw ImagingError.library("TurboJPEG could not allocate a compressor")
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = call(handle, &output, &size)
        defer { if let output { tjFree(output) } }
        guard rc == 0, let output else {
            throw ImagingError.library("TurboJPEG could not encode a thumbnail: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return [UInt8](UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
