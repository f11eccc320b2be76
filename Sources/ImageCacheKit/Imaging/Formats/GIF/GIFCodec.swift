import ImageCacheProtocol

/// GIF, its first frame decoded with giflib on the logical screen (`GIFDecoder`) at full size
/// and then resampled; giflib reads no body as it arrives, so a streamed body is kept and
/// decoded at its end (`WholeBodyVerifier`).
enum GIFCodec: WholeBodyCodec {
    static let format = ImageFormat.gif
    static let name = "GIF"
    static let mimeType = "image/gif"
    static let fileExtensions = ["gif"]

    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult {
        if reader.matches(0, GIFHeaderParser.gif87) || reader.matches(0, GIFHeaderParser.gif89) { return .format(format) }
        return reader.isIncompletePrefix(of: GIFHeaderParser.gif87) || reader.isIncompletePrefix(of: GIFHeaderParser.gif89)
            ? .needMore : .unknown
    }

    static func parseHeader(_ reader: ByteReader) -> HeaderParseOutcome {
        GIFHeaderParser.parse(reader)
    }

    /// The RGBA screen, and its RGB copy when nothing is transparent (7 bytes a pixel; giflib
    /// holds one row of the frame); RGBA whatever the header says, since a transparent index
    /// is only known from the frame.
    static func firstFrameDecode(_ header: ImageHeader) -> DecodeCost.Decode {
        DecodeCost.firstFrameDecode(header, bytesPerPixel: 7, alwaysRGBA: true)
    }

    static func decodeWhole(_ body: UnsafeRawBufferPointer, header: ImageHeader, maxPixels: Int,
                            thumbnailWidth: Int?) throws(ImagingError) -> PixelBuffer {
        try GIFDecoder.decode(body, header: header, maxPixels: maxPixels)
    }
}
