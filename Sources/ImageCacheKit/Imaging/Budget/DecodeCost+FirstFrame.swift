import ImageCacheProtocol

extension DecodeCost {
    /// A full-size decode of a first frame, for the formats none of whose decoders here
    /// decodes at a reduced scale (GIF, WebP, AVIF): the picture is whole, then resampled like
    /// any other (`resampling`). Each format's codec gives its own figures.
    ///
    /// Work, in the JPEG model's block visits: a pixel's samples count 64 to a block as for
    /// PNG, times `workPerSample` for a format whose decode costs more per pixel.
    /// - Parameters:
    ///   - bytesPerPixel: what the decoder and its copies hold for each pixel of the frame.
    ///   - alwaysRGBA: whether the picture is decoded with alpha even when the header declares none.
    static func firstFrameDecode(_ header: ImageHeader, bytesPerPixel: Int, alwaysRGBA: Bool = false,
                                 workPerSample: Int = 1) -> Decode {
        let pixels = header.storedWidth.multipliedClamped(by: header.storedHeight)
        let channels = header.hasAlpha || alwaysRGBA ? 4 : 3
        let samples = pixels.multipliedClamped(by: channels)
        return Decode(width: header.storedWidth, height: header.storedHeight, channels: channels,
                      bytes: pixels.multipliedClamped(by: bytesPerPixel),
                      work: samples.multipliedClamped(by: workPerSample) / 64)
    }
}
