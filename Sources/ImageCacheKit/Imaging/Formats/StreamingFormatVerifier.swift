/// One format's part of `StreamingVerifier`: fed a body's bytes after its header was probed
/// and passed the pixel limit, it decodes them as far as the format allows while they arrive
/// (or keeps them for `finish()`), and says what its decode will hold before allocating it.
protocol StreamingFormatVerifier: AnyObject {
    /// Decode memory the verification will hold at most (bytes), once known: what
    /// `StreamingVerifier.memoryCost` reports, for the caller's `DecodeBudget`.
    var memoryCost: Int? { get }
    /// Whether `finish()` decodes the whole body rather than checking what the feeds decoded.
    var decodesAtFinish: Bool { get }
    /// Takes the body's first bytes, those that carried the header, as `feed` takes the rest.
    func start(with held: [UInt8]) throws(ImagingError)
    /// Verifies the next bytes of the body.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ImagingError)
    /// Ends the body: throws unless it was a whole picture.
    func finish() throws(ImagingError)
}

extension StreamingFormatVerifier {
    var decodesAtFinish: Bool { false }

    func start(with held: [UInt8]) throws(ImagingError) {
        try withRawBytes(held) { (raw) throws(ImagingError) in try feed(raw) }
    }
}
