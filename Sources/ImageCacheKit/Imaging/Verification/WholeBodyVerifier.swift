import ImageCacheProtocol

/// Verification of a GIF, WebP or AVIF body for `StreamingVerifier`: none of their decoders
/// here reads a body as it arrives, so the bytes are kept and `finish()` decodes the header and
/// first frame of the complete file (`Thumbnailer.validate`), under the same pixel limit and
/// decode cost. Downloads save these files as they are; this proves they are pictures.
final class WholeBodyVerifier: StreamingFormatVerifier {
    let header: ImageHeader
    let maxPixels: Int
    /// What decoding the first frame holds (the codec's `DecodeCost.firstFrameDecode`).
    let decodeBytes: Int
    private var body: [UInt8] = []

    init(header: ImageHeader, maxPixels: Int, decodeBytes: Int) {
        self.header = header
        self.maxPixels = maxPixels
        self.decodeBytes = decodeBytes
    }

    /// The body so far plus what decoding its first frame will hold.
    var memoryCost: Int? {
        decodeBytes.addingClamped(body.count).addingClamped(DecodeCost.fixedOverhead)
    }

    var decodesAtFinish: Bool { true }

    /// Keeps the bytes that carried the header as the body's start.
    func start(with held: [UInt8]) {
        body = held
    }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        body.append(contentsOf: bytes)
    }

    /// Decodes the first frame of the complete body.
    func finish() throws(ImagingError) {
        _ = try Thumbnailer.validate(body, maxPixels: maxPixels)
    }
}
