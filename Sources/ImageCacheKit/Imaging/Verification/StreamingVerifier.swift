import ImageCacheProtocol

/// Verifies that a body decodes while its bytes arrive, so a download is proven within milliseconds of its last byte instead of
/// costing a whole decode after it, and a corrupt body is refused before it has all arrived.
///
/// Its verdict is `Thumbnailer.validate`'s on the same bytes (the corpus tests hold them
/// equal, fed in chunks of any size): the header is probed as it arrives, then checked
/// against `maxPixels` (`too_large`); JPEGs are decoded by libjpeg with a suspending source at
/// 1/8 scale, PNGs by libpng's progressive reader; GIF, WebP and AVIF bodies are kept and
/// their first frame decoded by `finish()` (`WholeBodyVerifier`); `finish()` says whether the
/// image was complete.
///
/// Memory: the bytes before the header is complete (a JPEG's markers up to its frame header,
/// normally a few KiB; a hostile file can put megabytes of APPn there), then what the decoder
/// holds (`memoryCost`), never the body. `memoryCost` is known after the feed that completes
/// the decoder's header and before any feed allocates the decode's buffers, so the caller can
/// refuse it (`DecodeBudget`); a progressive JPEG's coefficient buffer is the large part.
///
/// Not `Sendable`: one thread at a time. After an error every call throws the same error;
/// a body restarted from byte 0 needs `reset()` (or a new verifier).
public final class StreamingVerifier {
    /// The pixel limit (`max_image_pixels`) the header is checked against.
    package let maxPixels: Int

    private var prefix: [UInt8] = []
    /// The format's verifier (its codec's `streamingVerifier`), once the header is read.
    private var decoder: (any StreamingFormatVerifier)?
    private var failure: ImagingError?
    private var verdict: ImageHeader?

    /// The image's header, once its bytes have arrived and it passed the pixel limit.
    public private(set) var header: ImageHeader?
    /// Bytes fed since the start of the body.
    package private(set) var bytesFed = 0

    /// - Parameter maxPixels: as `Thumbnailer.validate`'s (0 or less: no limit).
    public init(maxPixels: Int = Thumbnailer.defaultMaxPixels) {
        self.maxPixels = maxPixels
    }

    /// Decode memory the verification will hold at most (bytes), decided from the header
    /// before it is allocated; nil until the decoder has read its header. For a JPEG this is
    /// after libjpeg has seen the first scan (whether the frame has several scans decides
    /// whether every coefficient is kept), for a PNG as soon as IHDR arrived.
    package var memoryCost: Int? { decoder?.memoryCost }

    /// Verifies the next bytes of the body.
    /// - Throws: `too_large` when the header is over `maxPixels`; `decode_failed` as soon as
    ///   the bytes so far cannot be a valid image (with `data.format` once sniffed).
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) {
        if let failure { throw failure }
        guard verdict == nil else {
            throw record(ImagingError.library("StreamingVerifier: bytes fed after finish()"))
        }
        bytesFed = bytesFed.addingClamped(bytes.count)
        do throws(ImagingError) {
            try accept(bytes)
        } catch {
            throw record(error)
        }
    }

    /// Verifies the next bytes of the body, held in an array.
    public func feed(_ bytes: [UInt8]) throws(ImagingError) {
        try withRawBytes(bytes) { (raw) throws(ImagingError) in try feed(raw) }
    }

    /// Ends the body: the image must be complete (JPEG: every scanline decoded and, when EOI
    /// is missing, complete scans, as `validate` accepts; PNG: every row).
    /// - Returns: the header (upright `width`/`height` are what the contract reports).
    /// - Throws: as `feed`, and `decode_failed` for a body that ends too early.
    public func finish() throws(ImagingError) -> ImageHeader {
        if let failure { throw failure }
        if let verdict { return verdict }
        do throws(ImagingError) {
            guard let header, let decoder else {
                // The probe's own refusal of a body that ends before its header.
                let result = try withRawBytes(prefix) { (raw) throws(ImagingError) in try ImageHeaderProbe.header(ofComplete: raw) }
                throw ImagingError.decodeFailed("the body ends before the image header is complete", format: result.format)
            }
            try decoder.finish()
            verdict = header
            return header
        } catch {
            throw record(error)
        }
    }

    /// Whether `finish()` decodes (GIF, WebP, AVIF: the whole file at the end) rather than
    /// checking what the feeds decoded; the caller then holds a decode permit for `memoryCost`.
    package var decodesAtFinish: Bool { decoder?.decodesAtFinish ?? false }

    /// Forgets everything for a body that starts again from byte 0 (a restarted transfer).
    package func reset() {
        prefix = []
        decoder = nil
        failure = nil
        verdict = nil
        header = nil
        bytesFed = 0
    }

    private func accept(_ bytes: UnsafeRawBufferPointer) throws(ImagingError) {
        if let decoder { return try decoder.feed(bytes) }
        prefix.append(contentsOf: bytes)
        guard case .header(let probed) = try ImageHeaderProbe.probe(prefix) else { return }
        try probed.checkPixelLimit(maxPixels)
        header = probed
        let held = prefix
        prefix = []
        let verifier = try probed.format.codec.streamingVerifier(header: probed, held: held, maxPixels: maxPixels)
        decoder = verifier
        try verifier.start(with: held)
    }

    private func record(_ error: ImagingError) -> ImagingError {
        failure = error
        return error
    }
}
