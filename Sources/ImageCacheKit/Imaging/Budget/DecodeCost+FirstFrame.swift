import ImageCacheProtocol

extension DecodeCost {
    /// A full-size decode of a GIF's, WebP's or AVIF's first frame: none of them
    /// decodes at a reduced scale here, so the picture is whole, then resampled like any
    /// other (`resampling`).
    /// - GIF: the RGBA screen, and its RGB copy when nothing is transparent (7 bytes a pixel;
    ///   giflib holds one row of the frame).
    /// - WebP: the RGB(A) output, and what libwebp holds besides: a lossless image keeps its
    ///   ARGB words (4 bytes a pixel), an animation the canvas and the previous one (8),
    ///   then the RGB copy (3).
    /// - AVIF: dav1d's picture at up to 16 bits a sample (YUV 4:4:4 and alpha: 8 bytes a pixel),
    ///   libavif's copy of it (8), and the RGB(A) output (4).
    ///
    /// Work, in the JPEG model's block visits: a pixel's samples count 64 to a block as for
    /// PNG, and an AV1 frame four times that (its decode costs a few times a JPEG's per pixel).
    static func firstFrameDecode(_ header: ImageHeader) -> (channels: Int, bytes: Int, work: Int) {
        let pixels = header.storedWidth.multipliedClamped(by: header.storedHeight)
        let channels = header.hasAlpha || header.format == .gif ? 4 : 3
        let perPixel: Int
        switch header.format {
        case .gif: perPixel = 7
        case .webp: perPixel = 4 + 8 + 3
        default: perPixel = 8 + 8 + 4
        }
        let samples = pixels.multipliedClamped(by: channels)
        let work = header.format == .avif ? samples.multipliedClamped(by: 4) / 64 : samples / 64
        return (channels, pixels.multipliedClamped(by: perPixel), work)
    }
}
