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
        guard let handle = tjInitCompress() else {
            throw ImagingError.library("TurboJPEG could not allocate a compressor")
        }
        defer { tjDestroy(handle) }
        let format = image.channels == 1 ? TJPF_GRAY : TJPF_RGB
        let subsampling = image.channels == 1 ? TJSAMP_GRAY : TJSAMP_420
        precondition(image.channels == 1 || image.channels == 3, "JPEG has no alpha channel")
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = image.pixels.withUnsafeBufferPointer { source in
            tjCompress2(handle, source.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(format.rawValue),
                        &output, &size, Int32(subsampling.rawValue), Int32(min(100, max(1, quality))), TJFLAG_ACCURATEDCT)
        }
        defer { if let output { tjFree(output) } }
        guard rc == 0, let output else {
            throw ImagingError.library("TurboJPEG could not encode a thumbnail: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return [UInt8](UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
