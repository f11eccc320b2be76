import ImageCacheProtocol

/// AVIF, its primary image decoded with libavif and dav1d (`AVIFDecoder`) at full size, any
/// bit depth to 8 bits, then resampled; its header is the `meta` box's (`AVIFHeaderParser`).
/// libavif reads no body as it arrives here, so a streamed body is kept and decoded at its end
/// (`WholeBodyVerifier`).
enum AVIFCodec: ImageCodec {
    static let format = ImageFormat.avif
    static let name = "AVIF"
    static let mimeType = "image/avif"

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

    static func decodeCost(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void,
                           thumbnailWidth: Int?) throws(ImagingError) -> DecodeCost.Decode {
        firstFrameDecode(header)
    }

    static func validate(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void,
                         maxPixels: Int, placeholder: Bool) throws(ImagingError) -> PixelBuffer? {
        try AVIFDecoder.decode(body, header: header, maxPixels: maxPixels)
    }

    static func decodeScaled(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void, width: Int,
                             height: Int, maxPixels: Int, fast: Bool) throws(ImagingError) -> PixelBuffer {
        Resampler.resize(try AVIFDecoder.decode(body, header: header, maxPixels: maxPixels), width: width, height: height)
    }

    static func streamingVerifier(header: ImageHeader, held: [UInt8],
                                  maxPixels: Int) throws(ImagingError) -> any StreamingFormatVerifier {
        WholeBodyVerifier(header: header, maxPixels: maxPixels, decodeBytes: firstFrameDecode(header).bytes)
    }
}
