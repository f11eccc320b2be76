/// A format whose library decodes only a whole body, at full size or scaled by the library
/// itself while it decodes: GIF, WebP and AVIF. Their codecs differ only in their figures and
/// their library's call, so the rest is said once here: the decode is priced at full size
/// (the largest it may be), a streamed body is kept and decoded at its end
/// (`WholeBodyVerifier`), a validation is a whole decode, and a thumbnail is the decode
/// resampled to the size asked.
protocol WholeBodyCodec: ImageCodec where Survey == Void {
    /// The first frame's decode: its memory and work, priced at full size.
    static func firstFrameDecode(_ header: ImageHeader) -> DecodeCost.Decode
    /// The library's decode of a complete body.
    /// - Parameter thumbnailWidth: the thumbnail's width, for a library that scales while it
    ///   decodes (libwebp); nil for a validation.
    static func decodeWhole(_ body: UnsafeRawBufferPointer, header: ImageHeader, maxPixels: Int,
                            thumbnailWidth: Int?) throws(ImagingError) -> PixelBuffer
}

extension WholeBodyCodec {
    static func decodeCost(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void,
                           thumbnailWidth: Int?) throws(ImagingError) -> DecodeCost.Decode {
        firstFrameDecode(header)
    }

    static func validate(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void,
                         maxPixels: Int, placeholder: Bool) throws(ImagingError) -> PixelBuffer? {
        try decodeWhole(body, header: header, maxPixels: maxPixels, thumbnailWidth: nil)
    }

    static func decodeScaled(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Void, width: Int,
                             height: Int, maxPixels: Int, fast: Bool) throws(ImagingError) -> ScaledPicture {
        .interleaved(Resampler.resize(try decodeWhole(body, header: header, maxPixels: maxPixels, thumbnailWidth: width),
                                      width: width, height: height))
    }

    static func streamingVerifier(header: ImageHeader, held: [UInt8],
                                  maxPixels: Int) throws(ImagingError) -> any StreamingFormatVerifier {
        WholeBodyVerifier(header: header, maxPixels: maxPixels, decodeBytes: firstFrameDecode(header).bytes)
    }
}
