import ImageCacheProtocol

extension Thumbnailer {
    /// The first frame of a GIF, WebP or AVIF at full size, by its format's
    /// decoder; the header has passed `checkDecodable` and `DecodeCost` (`firstFrameDecode`).
    /// With `thumbnailWidth` (stored orientation), a decoder that can scale while it decodes
    /// (WebP's) stops at twice that width.
    static func decodeFirstFrame(_ raw: UnsafeRawBufferPointer, header: ImageHeader,
                                 maxPixels: Int, thumbnailWidth: Int? = nil) throws(ImagingError) -> PixelBuffer {
        switch header.format {
        case .gif: return try GIFDecoder.decode(raw, header: header, maxPixels: maxPixels)
        case .webp: return try WebPDecoder.decode(raw, header: header, thumbnailWidth: thumbnailWidth)
        case .avif: return try AVIFDecoder.decode(raw, header: header, maxPixels: maxPixels)
        case .jpeg, .png:
            throw ImagingError.library("decodeFirstFrame called for \(header.format.rawValue)")
        }
    }
}
