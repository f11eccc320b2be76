import ImageCacheProtocol

/// WebP (lossy, lossless, either with alpha; an animation's first frame), decoded with libwebp
/// (`WebPDecoder`), which scales a still picture while it decodes to twice the thumbnail's
/// width; libwebp's whole-buffer decode reads no body as it arrives, so a streamed body is kept
/// and decoded at its end (`WholeBodyVerifier`).
enum WebPCodec: WholeBodyCodec {
    static let format = ImageFormat.webp
    static let name = "WebP"
    static let mimeType = "image/webp"
    static let fileExtensions = ["webp"]

    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult {
        if reader.matches(0, WebPHeaderParser.riff) && reader.matches(8, WebPHeaderParser.webp) { return .format(format) }
        if reader.count < 12 {
            // RIFF....WEBP: the 4 size bytes in the middle may be anything.
            let prefixOK = (0..<min(reader.count, 4)).allSatisfy { reader.bytes[$0] == WebPHeaderParser.riff[$0] }
            let tailOK = (8..<max(8, reader.count)).allSatisfy { reader.bytes[$0] == WebPHeaderParser.webp[$0 - 8] }
            if prefixOK && tailOK { return .needMore }
        }
        return .unknown
    }

    static func parseHeader(_ reader: ByteReader) -> HeaderParseOutcome {
        WebPHeaderParser.parse(reader)
    }

    /// The RGB(A) output, and what libwebp holds besides: a lossless image keeps its ARGB
    /// words (4 bytes a pixel), an animation the canvas and the previous one (8), then the RGB
    /// copy (3). Priced at full size, the largest a decode may be.
    static func firstFrameDecode(_ header: ImageHeader) -> DecodeCost.Decode {
        DecodeCost.firstFrameDecode(header, bytesPerPixel: 4 + 8 + 3)
    }

    static func decodeWhole(_ body: UnsafeRawBufferPointer, header: ImageHeader, maxPixels: Int,
                            thumbnailWidth: Int?) throws(ImagingError) -> PixelBuffer {
        try WebPDecoder.decode(body, header: header, thumbnailWidth: thumbnailWidth)
    }
}
