import ImageCacheProtocol

/// One image format as Imaging handles it: how its bytes are recognised and its header read,
/// what decoding it costs, how it is decoded (to prove a body is a picture, or scaled for a
/// thumbnail), how a body is verified while it arrives, and how much of it is metadata.
///
/// `ImageHeaderProbe`, `DecodeCost`, `Thumbnailer`, `StreamingVerifier` and
/// `ImageMetadataCensus` ask the format's codec (`ImageFormat.codec`, the registry) instead of
/// each switching over the formats, so a format is one folder under `Formats/` and one line in
/// the registry. The hostile-input rules hold in every conformance: the header is refused
/// where it can be (`parseHeader`), the decode is priced before it starts (`decodeCost`, which
/// `DecodeBudget` admits by), and the body is verified as it streams (`streamingVerifier`).
///
/// Every requirement is static: a codec holds no state, and a call through
/// `any ImageCodec.Type` allocates nothing (`SendableMetatype`: the registry's codecs are
/// shared by every thread).
protocol ImageCodec: SendableMetatype {
    /// What the codec reads of a complete body's structure before decoding it, shared by its
    /// cost and its decode so that the body is walked once: a JPEG's markers
    /// (`JPEGScanSurvey`); nothing for a format whose header says enough. Sendable: the
    /// pipeline reads it with the cost, before the budget admits the decode, and hands it on.
    associatedtype Survey: Sendable = Void

    /// The format this codec reads.
    static var format: ImageFormat { get }
    /// The format's name in messages ("not a JPEG, PNG, … image").
    static var name: String { get }
    /// The MIME type, for thumbnails and downloads.
    static var mimeType: String { get }
    /// The extensions files of the format carry, lower case; a download is saved with the
    /// first.
    static var fileExtensions: [String] { get }

    /// Whether the bytes start with the format's magic number; `.needMore` while they are a
    /// prefix of it, so a probe on a body's first chunk never guesses.
    static func sniff(_ reader: ByteReader) -> ImageFormat.SniffResult

    /// Reads the header from a body that may end anywhere (the probe calls it as chunks
    /// arrive), refusing what no valid file of the format could start with.
    static func parseHeader(_ reader: ByteReader) -> HeaderParseOutcome

    /// Reads the `Survey` of a complete body.
    static func survey(_ body: UnsafeRawBufferPointer) -> Survey

    /// The decode's own part of `DecodeCost` (`DecodeCost.of` adds the colour transform,
    /// resampling, encoding and the body), from the header and structure alone.
    /// - Parameter thumbnailWidth: the stored-orientation width of the thumbnail the pixels
    ///   are for; nil for a validation.
    /// - Throws: `decode_failed` for a body whose decode is refused before it starts (a
    ///   JPEG over `DecodeCost.scanLimit` scans or `DecodeCost.workLimit`).
    static func decodeCost(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Survey,
                           thumbnailWidth: Int?) throws(ImagingError) -> DecodeCost.Decode

    /// Proves a complete body is a picture by decoding it as cheaply as every pixel can be
    /// read (`Thumbnailer.validate`); the header has passed the pixel limit and the cost.
    /// - Returns: pixels the placeholder can be computed from, when `placeholder` asks for
    ///   them or the proof made them anyway; nil otherwise.
    static func validate(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Survey,
                         maxPixels: Int, placeholder: Bool) throws(ImagingError) -> PixelBuffer?

    /// Decodes a complete body to exactly `width`×`height` (stored orientation, at most the
    /// stored size), in sRGB: a thumbnail's pixels before they are turned upright. Interleaved,
    /// or planar where the format stores YCbCr planes a JPEG thumbnail can be encoded from as
    /// they are (`ScaledPicture`).
    /// - Parameter fast: a faster, slightly less exact decode where the format has one.
    static func decodeScaled(_ body: UnsafeRawBufferPointer, header: ImageHeader, survey: Survey, width: Int,
                             height: Int, maxPixels: Int, fast: Bool) throws(ImagingError) -> ScaledPicture

    /// The verifier of a body arriving in chunks, made once its header is read and within
    /// the pixel limit. `held` is the body's start, which carried the header: read here to
    /// choose the decoder, then given to the verifier by `StreamingFormatVerifier.start(with:)`.
    static func streamingVerifier(header: ImageHeader, held: [UInt8],
                                  maxPixels: Int) throws(ImagingError) -> any StreamingFormatVerifier

    /// How much of a body is metadata, and whether it is whole (`DeliveredFileRules`). By
    /// default the census of a file never passed through: clients get JPEG or PNG, so other
    /// formats are always re-encoded.
    static func metadataCensus(_ reader: ByteReader) -> ImageMetadataCensus
}

extension ImageCodec where Survey == Void {
    /// A format whose header says enough reads nothing more.
    static func survey(_ body: UnsafeRawBufferPointer) {}
}

extension ImageCodec {
    static func metadataCensus(_ reader: ByteReader) -> ImageMetadataCensus { ImageMetadataCensus() }
}

/// What a codec's header parser says of the bytes received so far.
enum HeaderParseOutcome {
    /// The header is complete.
    case header(ImageHeader)
    /// The header has not fully arrived.
    case needMore
    /// No valid file of the format starts with these bytes; why, for `decode_failed`.
    case failed(String)
}
