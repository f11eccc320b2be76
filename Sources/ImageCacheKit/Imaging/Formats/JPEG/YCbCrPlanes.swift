import CTurboJPEG

/// A picture as a JPEG file holds it: a luma plane and two chroma planes, one byte a sample.
///
/// A JPEG thumbnail of a JPEG photo stays in this form from decode to encode. TurboJPEG then
/// decodes the planes without upsampling the chroma or converting to RGB, the resampler
/// filters the chroma at a quarter of the luma's samples instead of filtering three full
/// channels, and the encoder takes the planes as they are instead of converting back and
/// subsampling: the RGB road did each of those only to undo it.
///
/// Planes made here (`resized`, `oriented`) are 4:2:0, as every thumbnail is encoded: the
/// chroma planes are `(width + 1) / 2` × `(height + 1) / 2`. Planes from a decode keep the
/// file's own subsampling until resized.
struct YCbCrPlanes: Sendable {
    /// Y, `width` × `height`.
    var luma: PixelBuffer
    /// Cb and Cr.
    var blue: PixelBuffer
    var red: PixelBuffer

    /// The picture's width (the luma plane's).
    var width: Int { luma.width }
    /// The picture's height.
    var height: Int { luma.height }

    /// The chroma planes' side for a 4:2:0 picture of side `side`.
    static func chromaSide(_ side: Int) -> Int { (side + 1) / 2 }

    /// Resized to exactly `width` × `height` (Lanczos-3, as interleaved pixels are), the chroma
    /// to the 4:2:0 size of that.
    func resized(width: Int, height: Int) -> YCbCrPlanes {
        let (chromaWidth, chromaHeight) = (Self.chromaSide(width), Self.chromaSide(height))
        return YCbCrPlanes(luma: Resampler.resize(luma, width: width, height: height),
                           blue: Resampler.resize(blue, width: chromaWidth, height: chromaHeight),
                           red: Resampler.resize(red, width: chromaWidth, height: chromaHeight))
    }

    /// Turned upright per the EXIF orientation, each plane alike.
    func oriented(_ orientation: ExifOrientation) -> YCbCrPlanes {
        if orientation == .up { return self }
        return YCbCrPlanes(luma: luma.oriented(orientation), blue: blue.oriented(orientation), red: red.oriented(orientation))
    }

    /// The planes as TurboJPEG's 4:2:0 calls read them: the luma padded to even sides (its
    /// last column and row repeated), each plane with its row stride.
    func withTurboPlanes<R>(_ body: (_ planes: [UnsafePointer<UInt8>?], _ strides: [Int32]) -> R) -> R {
        let padded = Self.paddedToEven(luma)
        return padded.pixels.withUnsafeBufferPointer { y in
            blue.pixels.withUnsafeBufferPointer { cb in
                red.pixels.withUnsafeBufferPointer { cr in
                    body([y.baseAddress, cb.baseAddress, cr.baseAddress],
                         [Int32(padded.width), Int32(blue.width), Int32(red.width)])
                }
            }
        }
    }

    /// The picture as interleaved RGB (for a placeholder, which is computed from RGB), by
    /// TurboJPEG's own conversion, the one its RGB decode applies.
    func rgb() throws(ImagingError) -> PixelBuffer {
        guard let handle = tjInitDecompress() else {
            throw ImagingError.library("TurboJPEG could not allocate a decompressor")
        }
        defer { tjDestroy(handle) }
        var output = [UInt8](repeating: 0, count: width * height * 3)
        let (width, height) = (self.width, self.height)
        let rc = withTurboPlanes { planes, strides in
            output.withUnsafeMutableBufferPointer { target in
                var planes = planes
                var strides = strides
                return tjDecodeYUVPlanes(handle, &planes, &strides, Int32(TJSAMP_420.rawValue), target.baseAddress,
                                         Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), 0)
            }
        }
        guard rc == 0 else {
            throw ImagingError.library("TurboJPEG could not convert planes to RGB: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return PixelBuffer(width: width, height: height, channels: 3, pixels: output)
    }

    /// `plane` with an odd side padded by repeating its last column or row.
    private static func paddedToEven(_ plane: PixelBuffer) -> PixelBuffer {
        let (width, height) = (plane.width, plane.height)
        let (paddedWidth, paddedHeight) = (width + width % 2, height + height % 2)
        if paddedWidth == width && paddedHeight == height { return plane }
        var pixels = [UInt8](repeating: 0, count: paddedWidth * paddedHeight)
        plane.pixels.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { target in
                for row in 0..<paddedHeight {
                    let from = min(row, height - 1) * width, to = row * paddedWidth
                    for x in 0..<width { target[to + x] = source[from + x] }
                    if paddedWidth > width { target[to + width] = source[from + width - 1] }
                }
            }
        }
        return PixelBuffer(width: paddedWidth, height: paddedHeight, channels: 1, pixels: pixels)
    }
}
