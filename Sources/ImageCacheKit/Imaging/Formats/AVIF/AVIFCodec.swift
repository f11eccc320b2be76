import ImageCacheProtocol

/// AVIF, its primary image decoded with libavif and dav1d (`AVIFDecoder`) at full size, any
/// bit depth to 8 bits, then resampled; its header is the `meta` box's (`AVIFHeaderParser`).
/// libavif reads no body as it arrives here, so a streamed body is kept and decoded at its end
/// (`WholeBodyVerifier`).
enum AVIFCodec: WholeBodyCodec {
    static let format = ImageFormat.avif
    static let name = "AVIF"
    static let mimeType = "image/avif"
    static let fileExtensions = ["avif"]

    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult {
        AVIFHeaderParser.sniff(reader)
    }

    static func parseHeader(_ reader: ByteReader) -> HeaderParseOutcome {
        AVIFHeaderParser.parse(reader)
    }

    /// dav1d's picture at up to 16 bits a sample (YUV 4:4:4 and alpha: 8 bytes a pixel),
    /// libavif's copy of it (8), and the RGB(A) output (4); an AV1 frame's work counts four
    /// times a PNG's per sample (its decode costs a few times a JPEG's per pixel).
    static func firstFrameDecode(_ header: ImageHeader) -> DecodeCost.Decode {
        DecodeCost.firstFrameDecode(header, bytesPerPixel: 8 + 8 + 4, workPerSample: 4)
    }

    static func decodeWhole(_ body: UnsafeRawBufferPointer, header: ImageHeader, maxPixels: Int,
                            thumbnailWidth: Int?) throws(ImagingError) -> PixelBuffer {
        try AVIFDecoder.decode(body, header: header, maxPixels: maxPixels)
    }
}
