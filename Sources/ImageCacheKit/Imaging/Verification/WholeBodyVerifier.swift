import ImageCacheProtocol

/// Verification of a GIF, WebP or AVIF body for `StreamingVerifier`: none of their decoders
/// here reads a body as it arrives, so the bytes are kept and `finish()` decodes the header and
/// first frame of the complete file (`Thumbnailer.validate`), under the same pixel limit and
/// decode cost. Downloads save these files as they are; this proves they are pictures.
final class WholeBodyVerifier {
    let header: ImageHeader
    let maxPixels: Int
    private var body: [UInt8]

    /// - Parameter held: the bytes that carried the header (the body's start).
    init(header: ImageHeader, maxPixels: Int, held: [UInt8]) {
        self.header = header
        self.maxPixels = maxPixels
        body = held
    }

    /// The body so far plus what decoding its first frame will hold.
    var memoryCost: Int {
        DecodeCost.firstFrameDecode(header).bytes.addingClamped(body.count).addingClamped(DecodeCost.fixedOverhead)
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        body.append(contentsOf: bytes)
    }

    /// Decodes the first frame of the complete body.
    func finish() throws(ImagingError) {
        _ = try Thumbnailer.validate(body, maxPixels: maxPixels)
    }
}
